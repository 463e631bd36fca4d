"""Hand-written G-IdiomAlign items, generations, score rows and a hand-made embedder, shared by
the unit tests of scoring, aggregation, construction and the report."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from idiombench.benchmarks.g_idiomalign.aggregate import setting_bodies
from idiombench.benchmarks.g_idiomalign.config import GIdiomAlignConfig, GIdiomAlignConstruct, GIdiomAlignScore
from idiombench.core.items import Item
from idiombench.pipeline.config import load_params
from idiombench.scoring.registry import Embeddings, PairScores
from idiombench.scoring.roles import RoleInfo

ROOT = Path(__file__).resolve().parents[2]
LETTERS = ("A", "B", "C", "D")


def mcq_item(
    direction: str,
    row: int,
    group: str,
    types: str = "reference LT LC CA",
    options: tuple[str, ...] = (),
    answer: str | None = None,
    duplicate: bool = False,
) -> Item:
    """types: the decoded option type of A..D; options default to the type names (target = 'gold')."""
    kinds = types.split()
    texts = options or tuple("gold" if k == "reference" else f"{k.lower()} option" for k in kinds)
    reference = LETTERS[kinds.index("reference")]
    target_letters = [LETTERS[i] for i, t in enumerate(texts) if t == texts[LETTERS.index(reference)]]
    source, target = direction.split("->")
    return Item(
        item_id=f"mcq/{source}-{target}/{row:05d}",
        benchmark="g-idiomalign",
        task="mcq",
        language=target,
        input="source idiom",
        choices=texts,
        answer=answer or reference,
        references=(texts[LETTERS.index(reference)],),
        fields={"instruction": "...", "source_idiom": "source idiom", "target_idiom": texts[LETTERS.index(reference)]},
        meta={
            "group": group,
            "direction": direction,
            "source_lang": source,
            "target_lang": target,
            "option_types": dict(zip(LETTERS, kinds, strict=False)),
            "reference_letter": reference,
            "target_letters": target_letters,
            "duplicate_option": duplicate,
        },
    )


def gen_item(direction: str, row: int, gold: str, gloss: str = "a gloss", task: str = "gloss_generation") -> Item:
    source, target = direction.split("->")
    return Item(
        item_id=f"gen/{source}-{target}/{row:05d}",
        benchmark="g-idiomalign",
        task=task,
        language=target,
        input="source idiom",
        references=(gold,),
        fields={
            "source_idiom": "source idiom",
            "source_language": "Chinese",
            "target_language": "English",
            "gloss": gloss,
        },
        meta={
            "direction": direction,
            "pair": "Chinese_English",
            "source_lang": source,
            "target_lang": target,
            "row": row,
            "no_gloss_available": not gloss,
            "other_references": [],
        },
    )


def generations(setting: str, outputs: list[tuple[Item, str]], error: str | None = None) -> pd.DataFrame:
    rows = []
    for item, text in outputs:
        rows.append(
            {
                "prompt_id": f"{setting}:{item.item_id}",
                "benchmark": "g-idiomalign",
                "task": item.task,
                "setting": setting,
                "item_id": item.item_id,
                "prompt_hash": "h",
                "pass": "main",
                "sample_index": 0,
                "rotation": 0,
                "text": text,
                "prompt_tokens": None,
                "completion_tokens": None,
                "finish_reason": "error" if error else "stop",
                "error": error,
                "request_key": "k",
            }
        )
    return pd.DataFrame(rows)


class FakeScorers:
    """cosine() from a table of hand-chosen values; records the calls."""

    def __init__(self, values: dict[tuple[str, str], float], status: str = "substitute"):
        self.values = values
        self.calls: list[list[tuple[str, str]]] = []
        self._info = RoleInfo(
            "embedder_multilingual",
            "embedder",
            None if status == "not_computed" else "fake-e5",
            "Qwen/Qwen3-Embedding-8B",
            True,
            status,
            {"substitute": "†", "not_computed": "‡", "paper": ""}[status],
            None if status == "paper" else f"embedder_multilingual: {status}.",
        )

    def info(self, role: str) -> RoleInfo:
        assert role == "embedder_multilingual"
        return self._info

    def cosine(self, role: str, pairs):
        self.calls.append(list(pairs))
        return PairScores(self._info, np.array([self.values[p] for p in pairs], dtype=float))


@dataclass
class Ctx:
    generations: dict[str, pd.DataFrame]
    items: dict[str, dict[str, Item]]
    scorers: Any = None
    config: GIdiomAlignConfig = field(default_factory=GIdiomAlignConfig)
    notes: list[str] = field(default_factory=list)


def index(*items: Item) -> dict[str, dict[str, Item]]:
    out: dict[str, dict[str, Item]] = {}
    for item in items:
        out.setdefault(item.task, {})[item.item_id] = item
    return out


def mcq_scores(
    correct_by_direction: dict[str, list[str]], groups: dict[str, str], duplicates: set[tuple[str, int]] = frozenset()
) -> pd.DataFrame:
    """Score rows from outcomes written by hand ('Correct', 'LT', 'invalid', ...)."""
    rows = []
    for direction, outcomes in correct_by_direction.items():
        for i, outcome in enumerate(outcomes):
            rows.append(
                {
                    "prompt_id": f"{direction}/{i}",
                    "task": "mcq",
                    "setting": "mcq",
                    "item_id": f"{direction}/{i}",
                    "idiom": f"{direction}/{i}",
                    "pass": "main",
                    "sample_index": 0,
                    "group": groups[direction],
                    "direction": direction,
                    "duplicate_option": (direction, i) in duplicates,
                    "ok": outcome != "invalid",
                    "generation_failed": False,
                    "correct": outcome == "Correct",
                    "invalid": outcome == "invalid",
                    "outcome": outcome,
                }
            )
    return pd.DataFrame(rows)


def gen_scores(
    values: dict[str, list[float]], em: dict[str, list[bool]] | None = None, additional: bool = False
) -> pd.DataFrame:
    rows = []
    for direction, sims in values.items():
        for i, sim in enumerate(sims):
            rows.append(
                {
                    "prompt_id": f"{direction}/{i}",
                    "task": "gloss_generation_additional" if additional else "gloss_generation",
                    "setting": "no_gloss",
                    "item_id": f"{direction}/{i}",
                    "pass": "main",
                    "sample_index": 0,
                    "idiom": f"{direction}/{i}",
                    "direction": direction,
                    "target_lang": direction.split("->")[1],
                    "additional": additional,
                    "prediction_clean": "p",
                    "gold_clean": "g",
                    "ok": True,
                    "invalid": False,
                    "generation_failed": False,
                    "similarity": sim,
                    "exact_match": (em or {}).get(direction, [False] * len(sims))[i],
                    "bleu": 10.0 * (i + 1),
                    "chrf": 20.0,
                    "bleu_tokenize": "13a",
                }
            )
    return pd.DataFrame(rows)


def mcq_body(frame: pd.DataFrame, cfg: GIdiomAlignScore | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The mcq setting's body (metrics, counts) and its breakdown, as aggregate writes them."""
    settings, breakdowns = setting_bodies({"mcq": frame}, GIdiomAlignConfig(score=cfg or GIdiomAlignScore()))
    return settings["mcq"], breakdowns["mcq"]


def generation_metrics(
    frame: pd.DataFrame, cfg: GIdiomAlignScore | None = None, similarity_computed: bool = True
) -> dict[str, Any]:
    """The metrics of a Task 2 score table's main pairs, as aggregate writes them (setting no_gloss)."""
    config = GIdiomAlignConfig(score=cfg or GIdiomAlignScore())
    settings, _ = setting_bodies({"no_gloss": frame}, config, similarity_computed)
    return dict(settings["no_gloss"]["metrics"])


@dataclass
class AggCtx:
    scores: dict[str, pd.DataFrame]
    items: dict[str, dict[str, Item]]
    config: GIdiomAlignConfig = field(default_factory=GIdiomAlignConfig)
    params: Any = None
    benchmark: str = "g-idiomalign"
    scoring_meta: dict[str, Any] = field(default_factory=dict)


def pair_item(pair: str, row: int, source: tuple[str, str], target: tuple[str, str]) -> Item:
    a, b = pair.split("_")
    return Item(
        item_id=f"pairs/{pair}/{row:05d}",
        benchmark="g-idiomalign",
        task="aligned_pairs",
        language="x",
        input=source[0],
        references=(target[0],),
        fields={
            "source_idiom": source[0],
            "source_meaning": source[1],
            "target_idiom": target[0],
            "target_meaning": target[1],
            "source_language": a,
            "target_language": b,
        },
        meta={"pair": pair, "row": row},
    )


class HandEmbedder:
    """Glosses map to hand-chosen 2-D directions (angle in degrees)."""

    def __init__(self, angles: dict[str, float], computed: bool = True, kind: str = "embedder"):
        self.angles = angles
        self.calls = 0
        status = "substitute" if computed else "not_computed"
        self._info = RoleInfo(
            "embedder_en",
            kind,
            "hand" if computed else None,
            "text-embedding-3-large",
            True,
            status,
            "†" if computed else "‡",
            f"embedder_en: {status}",
        )

    def info(self, role: str) -> RoleInfo:
        return self._info

    def embed(self, role: str, texts):
        self.calls += 1
        radians = np.deg2rad([self.angles[t] for t in texts])
        return Embeddings(self._info, np.stack([np.cos(radians), np.sin(radians)], axis=1))


ANGLES = {
    # English_French: rows 0-2 align by gloss; row 3's glosses point elsewhere
    "rain": 0,
    "pluie": 1,
    "joy": 40,
    "joie": 41,
    "anger": 80,
    "colere": 79,
    "sleep": 150,
    "chat": 170,
    # English_German
    "water": 0,
    "wasser": 0,
}


def items() -> list[Item]:
    ef = [
        pair_item("English_French", 0, ("raining cats", "rain"), ("pleuvoir", "pluie")),
        pair_item("English_French", 1, ("over the moon", "joy"), ("aux anges", "joie")),
        pair_item("English_French", 2, ("see red", "anger"), ("voir rouge", "colere")),
        pair_item("English_French", 3, ("hit the sack", "sleep"), ("avoir un chat", "chat")),
        pair_item("English_French", 4, ("no gloss", ""), ("sans glose", "")),
    ]
    ed = [pair_item("English_German", 0, ("Adam's ale", "water"), ("nasses Element", "wasser"))]
    return ef + ed


def params_for(pairs: list[str] | None, tmp_path: Path, **construct):
    params = load_params(ROOT / "params.yaml")
    bench = params.benchmark("g-idiomalign")
    cfg = GIdiomAlignConstruct(pairs=pairs, **construct)

    class Params:
        scoring = params.scoring

        def benchmark(self, name: str):
            return bench.model_copy(update={"construction": cfg})

    return Params()
