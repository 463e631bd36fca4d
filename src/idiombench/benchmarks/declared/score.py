"""A declared benchmark's score stage: one row per generation row, per setting (an unparseable or
failed output is a row with `parse_failed`, never dropped).

Columns:

    prompt_id, task, setting, item_id, pass, sample_index   identity (sorted by these)
    cluster          the row's resampling unit (the declared field's value; None: the item)
    gold             the gold answer (multiple_choice: its letter; label: the label; cloze:
                     the candidate)
    parsed           the parser's value as a list (empty: nothing read)
    ok, flags        the parser's verdict (requested format followed) and what was odd
    answered         a value counted as the answer (params score.accept_unformatted: also
                     one read without the requested format)
    parse_failed     nothing could be read (wrong, counted)
    unformatted      a value read without the requested format
    generation_error the backend produced no text
    prediction       the answer scored (None: none; cloze: the one idiom chosen, normalised,
                     None where the output names several; generation: the output's text)
    correct          the prediction is the gold answer (cloze: compared after normalise_idiom;
                     generation: equal to a reference after normalise_text)

and, for the generation shape only (graded scores in [0, 1]; 0 for an output with nothing to read):

    references       every reference of the item
    rouge_l          ROUGE-L F1 against the best reference (None where the metric is not declared)
    bertscore_f1     BERTScore F1 against the best reference, one scorer call for the whole stage
                     (None where not declared, or where the role has no model: a note says so)

The metrics (library.py) are statistics over these columns; nothing here aggregates.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pandas as pd

from ...core import paths
from ...core.errors import DataError
from ...core.generation_types import ItemContext, item_context
from ...core.items import OPTION_LETTERS
from ...core.parsing import (
    ParseResult,
    normalise_idiom,
    normalise_text,
    parse_candidate_choice,
    parse_free_text,
    parse_label_word,
    parse_letter,
    parse_tag_label,
    result,
)
from ...scoring.lexical import rouge_l
from .library import CLUSTER
from .schema import Declaration

if TYPE_CHECKING:
    from ..contexts import ScoreContext

SORT_KEY = ["prompt_id", "pass", "sample_index"]
GENERATION_COLUMNS = ["references", "rouge_l", "bertscore_f1"]
# the BERTScore role of each language (params scoring.roles); another language has none
BERTSCORE_ROLES = {"en": "bertscore_en", "zh": "bertscore_zh", "ja": "bertscore_ja", "ko": "bertscore_ko"}
COLUMNS = [
    "prompt_id",
    "task",
    "setting",
    "item_id",
    "pass",
    "sample_index",
    CLUSTER,
    "gold",
    "parsed",
    "ok",
    "flags",
    "answered",
    "parse_failed",
    "unformatted",
    "generation_error",
    "prediction",
    "correct",
]


def parser_for(decl: Declaration) -> Callable[[ItemContext, str], ParseResult]:
    """The declared parser (core/parsing.py), bound to what it reads of the item."""
    name = decl.parser_name
    labels = decl.label_names()
    synonyms = decl.synonyms()
    if name == "letter":
        return lambda item, raw: parse_letter(raw, OPTION_LETTERS[: len(item.choices)], item.choices)
    if name == "tag":
        return lambda item, raw: parse_tag_label(raw, labels, synonyms)
    if name == "word":
        return lambda item, raw: parse_label_word(raw, labels, synonyms)
    if name == "candidate":
        return lambda item, raw: parse_candidate_choice(raw, item.choices)
    if name == "text":
        return lambda item, raw: parse_free_text(raw)
    return lambda item, raw: result(None, False, raw, {f"unknown_parser:{name}"})  # schema.problems refuses it


def answer_columns(decl: Declaration, parsed: ParseResult, gold: str, accept: bool) -> dict[str, object]:
    """The prediction and whether it is the gold answer (a label compared case-insensitively)."""
    unformatted = parsed.value is not None and not parsed.ok
    if parsed.value is None or not (parsed.ok or accept):
        return {"unformatted": unformatted, "parse_failed": parsed.value is None, "prediction": None, "correct": False}
    if decl.shape == "cloze":
        # one idiom chosen: several different ones answer nothing (a hedge), as ChID's scorer reads it
        chosen = list(dict.fromkeys(n for n in (normalise_idiom(v) for v in parsed.value) if n))
        one = chosen[0] if len(chosen) == 1 else None
        return {
            "unformatted": unformatted,
            "parse_failed": not chosen,
            "prediction": one,
            "correct": one is not None and one == normalise_idiom(gold),
        }
    said = str(parsed.value)
    if decl.shape == "generation":
        return {"unformatted": unformatted, "parse_failed": False, "prediction": said, "correct": False}
    if decl.shape == "label":
        canonical = {label.lower(): label for label in decl.label_names()}
        said = canonical.get(said.strip().lower(), said.strip().lower())
        return {
            "unformatted": unformatted,
            "parse_failed": False,
            "prediction": said,
            "correct": said.lower() == gold.strip().lower(),
        }
    return {"unformatted": unformatted, "parse_failed": False, "prediction": said, "correct": said == gold}


def bertscore_role(decl: Declaration) -> str | None:
    """The BERTScore role of the declaration's language (None: none for it)."""
    return BERTSCORE_ROLES.get(decl.language.split("-")[0])


def reference_scores(decl: Declaration, rows: list[dict[str, Any]], scorers: Any, notes: list[str]) -> None:
    """A generation's `correct`, `rouge_l` and `bertscore_f1`, each against its best reference
    (the metrics declared; one BERTScore call for every pair of the stage, each pair once)."""
    for row in rows:
        said = row["prediction"]
        row["correct"] = said is not None and normalise_text(said) in {normalise_text(r) for r in row["references"]}
        row["rouge_l"] = None
        row["bertscore_f1"] = None
    if "rouge_l" in decl.metrics:
        memo: dict[tuple[str, str], float] = {}
        for row in rows:
            said = row["prediction"]
            for ref in row["references"] if said is not None else []:
                if (said, ref) not in memo:
                    memo[(said, ref)] = rouge_l(said, ref, decl.language).fmeasure
            row["rouge_l"] = max((memo[(said, ref)] for ref in row["references"]), default=0.0) if said else 0.0
    if "bertscore" in decl.metrics:
        role = bertscore_role(decl)
        info = scorers.info(role) if scorers is not None and role is not None else None
        if info is None or not info.computed:
            why = "no BERTScore role for language " + decl.language if role is None else f"scoring role {role} "
            notes.append(
                f"BERTScore not computed: {why}"
                + ("" if role is None else "has no model in this profile" if info is not None else "unavailable")
            )
            return
        pairs = sorted({(row["prediction"], ref) for row in rows if row["prediction"] for ref in row["references"]})
        f1 = dict(zip(pairs, scorers.bertscore(role, pairs).f1, strict=True)) if pairs else {}
        for row in rows:
            said = row["prediction"]
            # an output equal to its reference scores 1 up to float error (1.0000000298): capped at 1
            row["bertscore_f1"] = min(1.0, max(float(f1[(said, ref)]) for ref in row["references"])) if said else 0.0
        if info.status != "paper":
            notes.append(f"BERTScore: {info.footnote}")


def score(decl: Declaration, ctx: ScoreContext[Any]) -> dict[str, pd.DataFrame]:
    parse = parser_for(decl)
    accept = bool(ctx.config.score.accept_unformatted)
    generation = decl.shape == "generation"
    columns = COLUMNS + (GENERATION_COLUMNS if generation else [])
    scored: dict[str, list[dict[str, Any]]] = {}
    for setting, frame in sorted(ctx.generations.items()):
        where = paths.generations_file(benchmark=ctx.benchmark, model=ctx.model, setting=setting)
        rows: list[dict[str, object]] = []
        for index, gen in enumerate(frame.to_dict("records")):
            item = ctx.items.get(gen["task"], {}).get(gen["item_id"])
            if item is None:
                raise DataError(
                    where,
                    f"generation {gen['prompt_id']}: no item {gen['item_id']} in task {gen['task']}",
                    row=index,
                    expected="an item of the current build (build, render and generate again after the data changed)",
                )
            parsed = parse(item_context(item, setting), gen["text"])
            value = parsed.value
            error = gen.get("error")
            row: dict[str, Any] = {
                "prompt_id": gen["prompt_id"],
                "task": gen["task"],
                "setting": setting,
                "item_id": gen["item_id"],
                "pass": gen["pass"],
                "sample_index": int(gen["sample_index"]),
                CLUSTER: item.meta.get("cluster"),
                "gold": item.answer or "",
                "parsed": [] if value is None else [str(v) for v in (value if isinstance(value, tuple) else (value,))],
                "ok": parsed.ok,
                "flags": list(parsed.flags),
                "generation_error": error is not None and not pd.isna(error),
            }
            row.update(answer_columns(decl, parsed, row["gold"], accept))
            row["answered"] = row["prediction"] is not None
            if generation:
                row["references"] = list(item.references)
            rows.append(row)
        scored[setting] = rows
    if generation:
        reference_scores(decl, [row for rows in scored.values() for row in rows], ctx.scorers, ctx.notes)
    tables: dict[str, pd.DataFrame] = {}
    for setting, rows in scored.items():
        table = pd.DataFrame(rows, columns=columns)
        tables[setting] = table.sort_values(SORT_KEY, kind="stable").reset_index(drop=True)
    return tables
