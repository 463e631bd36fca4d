"""Small hand-made OrderProbe inputs for the scoring tests: items built by the real build
code from a few expressions written here, generation rows, and a scorer stand-in whose
neural values are set by the test (so every expected number can be computed by hand)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from idiombench.benchmarks.orderprobe.build import Expression, expression_items
from idiombench.benchmarks.orderprobe.lexicon import SACC_FILES, ReleasedLexicon, extract_languages
from idiombench.benchmarks.registry import paper_roles
from idiombench.core.items import Item
from idiombench.scoring import ScoringConfig
from idiombench.scoring.registry import BertScores, NLIScores, PairScores
from idiombench.scoring.roles import all_role_infos

ROOT = Path(__file__).resolve().parents[2]
# Hand-written stand-ins for the released Sacc/*.py scripts (a few words per list, README there)
SACC_FIXTURE = ROOT / "tests" / "fixtures" / "orderprobe"


def fixture_lexicons() -> dict[str, ReleasedLexicon]:
    """The stand-in word lists of the four languages, extracted as the build extracts them."""
    return extract_languages(SACC_FIXTURE, list(SACC_FILES))


def items_for(language: str, row: int, expression: str, references: list[str], category: str | None) -> list[Item]:
    """The 24 inputs of one expression (canonical first, then the 23 permutations)."""
    return expression_items(Expression(language, row, expression, references), category)


def index(*groups: list[Item]) -> dict[str, dict[str, Item]]:
    return {"restore": {item.item_id: item for group in groups for item in group}}


def gen_row(
    item: Item, setting: str, text: str, pass_name: str = "main", sample_index: int = 0, error: str | None = None
) -> dict[str, Any]:
    return {
        "prompt_id": f"orderprobe/restore/{setting}/{item.item_id}",
        "benchmark": "orderprobe",
        "task": "restore",
        "setting": setting,
        "item_id": item.item_id,
        "prompt_hash": "0" * 16,
        "pass": pass_name,
        "sample_index": sample_index,
        "rotation": 0,
        "text": text,
        "prompt_tokens": None,
        "completion_tokens": None,
        "finish_reason": "error" if error else "stop",
        "error": error,
        "request_key": f"{item.item_id}:{pass_name}:{sample_index}",
    }


def frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(rows).sort_values(["prompt_id", "pass", "sample_index"], kind="stable").reset_index(drop=True)


def scoring_config(**roles: dict[str, Any]) -> ScoringConfig:
    """params.yaml's scoring section with some roles changed."""
    raw = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))["scoring"]
    for name, changes in roles.items():
        entry = raw["roles"][name]
        if "kind" in changes and changes["kind"] != entry["kind"]:
            entry = {k: v for k, v in entry.items() if k not in ("prefix_mode", "dtype", "num_layers")}
        entry.update(changes)
        raw["roles"][name] = entry
    return ScoringConfig.model_validate(raw).with_paper_roles(paper_roles())


def paper_like_config() -> ScoringConfig:
    """Every OrderProbe role computed, with a real cross-encoder kind (models never loaded here)."""
    return scoring_config(
        cross_encoder={"kind": "cross_encoder", "model": "test/ce", "dtype": "float32"},
        nli={"model": "test/nli"},
        sts_zh={"model": "test/sts-zh"},
        sts_multilingual={"model": "test/sts-multi"},
        bertscore_zh={"model": "test/bert-zh"},
        bertscore_ja={"model": "test/bert-ja"},
        bertscore_ko={"model": "test/bert-ko"},
    )


class FakeScorers:
    """The Scorers interface with values looked up in tables the test writes.

    cosine: a symmetric table {frozenset({a, b}): value}; cross_encoder: {(reference,
    explanation): value}; bertscore: {(candidate, reference): f1}; nli: {(premise,
    hypothesis): (entailment, neutral, contradiction)}. Every call is recorded."""

    def __init__(
        self,
        config: ScoringConfig,
        cosine: dict | None = None,
        ce: dict | None = None,
        bert: dict | None = None,
        nli: dict | None = None,
        default: float = 0.0,
    ):
        self.config = config
        self._infos = all_role_infos(config)
        self.tables = {"cosine": cosine or {}, "ce": ce or {}, "bert": bert or {}, "nli": nli or {}}
        self.default = default
        self.calls: list[tuple[str, str, int]] = []

    def info(self, role: str):
        return self._infos[role]

    def _check(self, role: str) -> None:
        assert self._infos[role].computed, f"{role} is not computed but was called"

    def cosine(self, role: str, pairs):
        self._check(role)
        self.calls.append(("cosine", role, len(pairs)))
        values = [self.tables["cosine"].get(frozenset(p), self.default) for p in pairs]
        return PairScores(self._infos[role], np.asarray(values, dtype=np.float64))

    def cross_encoder(self, pairs, role: str = "cross_encoder"):
        self._check(role)
        self.calls.append(("cross_encoder", role, len(pairs)))
        values = [self.tables["ce"].get(tuple(p), self.default) for p in pairs]
        return PairScores(self._infos[role], np.asarray(values, dtype=np.float64))

    def bertscore(self, role: str, pairs):
        self._check(role)
        self.calls.append(("bertscore", role, len(pairs)))
        f1 = np.asarray([self.tables["bert"].get(tuple(p), self.default) for p in pairs], dtype=np.float64)
        return BertScores(self._infos[role], f1, f1, f1)

    def nli(self, role: str, pairs):
        self._check(role)
        self.calls.append(("nli", role, len(pairs)))
        probs = [self.tables["nli"].get(tuple(p), (0.0, 1.0, 0.0)) for p in pairs]
        return NLIScores(self._infos[role], np.asarray(probs, dtype=np.float64))
