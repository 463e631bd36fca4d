"""`score` hook: per-answer scores of one model on G-IdiomAlign, one table per setting.

- mcq (Task 1): the parsed letter, whether it is correct, invalid, and the outcome type
  (task1.py); under an option rotation (the option-order pass) the letter is read as the prompt
  showed the options and judged as the option it names (its released letter); `position` is the
  shown position picked;
- no_gloss / with_gloss (Task 2): the cleaned idiom (task2.py), the cosine similarity to
  the gold target idiom under `score.similarity_role` (one batched call for the rows of
  both conditions, each distinct text embedded once), EM, sentence BLEU and chrF. Rows of
  the additional language pairs (task gloss_generation_additional) are scored the same way
  and kept apart by their `task` column; aggregate.py never mixes them into the main numbers.

Every generation row gives one score row (nothing is dropped): an output that cannot be
read is a row with `invalid` true. Rows are sorted by (prompt_id, pass, sample_index).
Column `idiom` names the item's source idiom (`<language>:<idiom>`): the cluster the report's
intervals resample (one idiom asked in several directions is drawn whole; specs.py).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ...core.errors import IdiombenchError
from ...core.generation_types import item_context
from ...core.items import Item, released_position
from .config import GIdiomAlignScore
from .mcq import LETTERS
from .parse import GENERATION_SETTINGS, parse_output
from .task1 import judge
from .task2 import choose_tokenizer, clean_idiom, exact_match, sentence_bleu, sentence_chrf

if TYPE_CHECKING:
    from ..contexts import ScoreContext
    from .config import GIdiomAlignConfig

MCQ_SETTING = "mcq"
ADDITIONAL_TASK = "gloss_generation_additional"
ID_COLUMNS = ["prompt_id", "task", "setting", "item_id", "pass", "sample_index"]
SORT_KEY = ["prompt_id", "pass", "sample_index"]


def lookup_item(items: dict[str, dict[str, Item]], row: dict[str, Any], setting: str) -> Item:
    item = items.get(row["task"], {}).get(row["item_id"])
    if item is None:
        raise IdiombenchError(
            f"g-idiomalign {setting}: generation row {row['prompt_id']} names item {row['item_id']} of task "
            f"{row['task']}, which is not in data/processed/g-idiomalign (rebuild, rerender and regenerate)"
        )
    return item


def generation_failed(row: dict[str, object]) -> bool:
    error = row.get("error")
    return bool(error) and not (isinstance(error, float) and math.isnan(error))


def id_values(row: dict[str, object]) -> dict[str, object]:
    return {key: row[key] for key in ID_COLUMNS}


def idiom_key(item: Item) -> str:
    """The source idiom an item asks about, as `<language>:<idiom>`: the resampling cluster."""
    return f"{item.meta['source_lang']}:{str(item.fields['source_idiom']).strip()}"


def score_mcq(generations: pd.DataFrame, items: dict[str, dict[str, Item]], cfg: GIdiomAlignScore) -> pd.DataFrame:
    rows = []
    for row in generations.to_dict("records"):
        item = lookup_item(items, row, MCQ_SETTING)
        rotation, n = int(row["rotation"]), len(item.choices)
        parsed = parse_output(item_context(item, MCQ_SETTING, rotation), row["text"])
        position = LETTERS.index(parsed.value) if parsed.value in LETTERS[:n] else None
        released = LETTERS[released_position(position, rotation, n)] if position is not None else parsed.value
        verdict = judge(released, item.answer or "", item.meta, cfg.duplicate_option_target_correct)
        rows.append(
            {
                **id_values(row),
                "rotation": rotation,
                "position": position,
                "n_options": n,
                "idiom": idiom_key(item),
                "group": item.meta["group"],
                "direction": item.meta["direction"],
                "source_lang": item.meta["source_lang"],
                "target_lang": item.meta["target_lang"],
                "duplicate_option": bool(item.meta["duplicate_option"]),
                "target_in_several_options": len(item.meta.get("target_letters") or []) > 1,
                "answer": item.answer,
                "parsed": parsed.value,
                "ok": parsed.ok,
                "flags": ",".join(parsed.flags),
                "generation_failed": generation_failed(row),
                "correct": verdict.correct,
                "invalid": verdict.invalid,
                "chosen_type": verdict.chosen_type,
                "outcome": verdict.outcome,
            }
        )
    frame = sorted_frame(rows, MCQ_COLUMNS)
    frame["rotation"] = frame["rotation"].astype("int32")
    frame["position"] = frame["position"].astype("float64")
    return frame


MCQ_COLUMNS = [
    *ID_COLUMNS,
    "rotation",
    "position",
    "n_options",
    "idiom",
    "group",
    "direction",
    "source_lang",
    "target_lang",
    "duplicate_option",
    "target_in_several_options",
    "answer",
    "parsed",
    "ok",
    "flags",
    "generation_failed",
    "correct",
    "invalid",
    "chosen_type",
    "outcome",
]
GENERATION_COLUMNS = [
    *ID_COLUMNS,
    "idiom",
    "direction",
    "source_lang",
    "target_lang",
    "pair",
    "additional",
    "prediction",
    "prediction_clean",
    "gold",
    "gold_clean",
    "ok",
    "flags",
    "invalid",
    "generation_failed",
    "similarity",
    "exact_match",
    "bleu",
    "chrf",
    "bleu_tokenize",
]


def sorted_frame(rows: list[dict[str, object]], columns: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=columns).sort_values(SORT_KEY, kind="stable").reset_index(drop=True)
    for column in frame.columns:  # text columns: plain objects with None for a missing value (not NaN)
        if frame[column].dtype == object or pd.api.types.is_string_dtype(frame[column].dtype):
            frame[column] = frame[column].astype(object).where(frame[column].notna(), None)
    return frame


def score_generation(
    setting: str,
    generations: pd.DataFrame,
    items: dict[str, dict[str, Item]],
    cfg: GIdiomAlignScore,
    tokenizer_notes: set[str],
) -> list[dict[str, object]]:
    """Task 2 rows without the similarity (filled in for all settings at once)."""
    rows = []
    for row in generations.to_dict("records"):
        item = lookup_item(items, row, setting)
        parsed = parse_output(item_context(item, setting), row["text"])
        prediction = clean_idiom(parsed.value)
        gold = clean_idiom(item.references[0] if item.references else "")
        if not gold:
            raise IdiombenchError(f"g-idiomalign {setting}: item {item.item_id} has no gold target idiom")
        target = item.meta["target_lang"]
        tokenizer = choose_tokenizer(target, cfg.bleu_tokenize, cfg.bleu_tokenize_default)
        if tokenizer.note:
            tokenizer_notes.add(f"BLEU, target language {target}: {tokenizer.note}")
        rows.append(
            {
                **id_values(row),
                "idiom": idiom_key(item),
                "direction": item.meta["direction"],
                "source_lang": item.meta["source_lang"],
                "target_lang": target,
                "pair": item.meta["pair"],
                "additional": item.task == ADDITIONAL_TASK,
                "prediction": parsed.value,
                "prediction_clean": prediction,
                "gold": item.references[0],
                "gold_clean": gold,
                "ok": parsed.ok,
                "flags": ",".join(parsed.flags),
                "invalid": not prediction,
                "generation_failed": generation_failed(row),
                "similarity": np.nan,
                "exact_match": exact_match(prediction, gold, cfg.exact_match_casefold),
                "bleu": sentence_bleu(prediction, gold, tokenizer.used),
                "chrf": sentence_chrf(prediction, gold),
                "bleu_tokenize": tokenizer.used,
            }
        )
    return rows


def fill_similarity(rows: list[dict[str, Any]], scorers: Any, role: str, notes: list[str]) -> None:
    """Cosine of (cleaned output, cleaned gold) for every row with an output, in one call.
    An invalid (empty) output gets similarity 0; a role that is not computed leaves NaN."""
    if scorers is None:
        notes.append(f"Task 2 similarity not computed: no `scoring` section in params (role {role})")
        return
    info = scorers.info(role)
    if info.kind != "embedder":
        raise IdiombenchError(
            f"benchmarks.g-idiomalign.score.similarity_role {role!r} has kind {info.kind!r}; "
            "it must be an embedder role"
        )
    if not info.computed:
        notes.append(
            f"Task 2 similarity (MeanSim, Acc@t) not computed: scoring role {role} has no model ({info.footnote})"
        )
        return
    scored = [r for r in rows if not r["invalid"]]
    if scored:
        values = scorers.cosine(role, [(r["prediction_clean"], r["gold_clean"]) for r in scored]).values
        for r, value in zip(scored, values, strict=False):
            r["similarity"] = float(value)
    for r in rows:
        if r["invalid"]:
            r["similarity"] = 0.0
    if info.footnote:
        notes.append(f"Task 2 similarity: {info.footnote}")


def score(ctx: ScoreContext[GIdiomAlignConfig]) -> dict[str, pd.DataFrame]:
    cfg: GIdiomAlignScore = ctx.config.score
    tables: dict[str, pd.DataFrame] = {}
    generation_rows: dict[str, list[dict[str, object]]] = {}
    tokenizer_notes: set[str] = set()
    for setting, generations in sorted(ctx.generations.items()):
        if setting == MCQ_SETTING:
            tables[setting] = score_mcq(generations, ctx.items, cfg)
        elif setting in GENERATION_SETTINGS:
            generation_rows[setting] = score_generation(setting, generations, ctx.items, cfg, tokenizer_notes)
        else:
            raise IdiombenchError(f"g-idiomalign: no scorer for setting {setting!r} (known: mcq, no_gloss, with_gloss)")
    all_rows = [row for rows in generation_rows.values() for row in rows]
    if all_rows:
        fill_similarity(all_rows, ctx.scorers, cfg.similarity_role, ctx.notes)
    for setting, rows in generation_rows.items():
        tables[setting] = sorted_frame(rows, GENERATION_COLUMNS)
    ctx.notes.extend(sorted(tokenizer_notes))
    return dict(sorted(tables.items()))
