"""SemanticQA per-row scores (paper §3.4; docs/METRICS.md#32-tasks-and-metrics).

One row per generation row, per setting; nothing is dropped. What each task kind scores:

- mcq (IED, NCC) and label (LCC): `correct` = the parsed option letter / taxonomy label
  equals the gold (accuracy, ACC); under an option rotation (the option-order pass) the letter
  is read as the prompt showed the options and compared as the option it names; `position` is
  the shown position picked;
- extraction (IEE, LCE, NCE, VPE, LVE, VIE): `correct` = sequence-level exact match (ACC_s)
  of the parsed phrase with ANY reference after normalisation (parse.normalise_answer:
  `<think>` blocks and a leading `Answer:`/`Output:` label removed, NFKC, lower case,
  whitespace collapsed, surrounding quotes and punctuation stripped). A partial span does
  not count (`correct_strict`). `correct_released_code` also applies the containment
  patterns of the authors' scorer (released.PATTERNS); params
  `score.extraction_match` says which one is `correct`;
- interpretation (IEI, LCI, NCI): METEOR (primary), ROUGE-L F and BERTScore F1 of the
  parsed paraphrase, each the max over the item's references.

A row whose output cannot be read (no value; or a failed generation) is wrong: `correct`
0, interpretation metrics 0, with `ok` False and its flags. Items without a gold get
`correct` None (`no_gold`) and are counted, not scored. Neural terms: BERTScore through
the `bertscore_en` role (all pairs of all settings in one call); when the role is not
computed, or METEOR cannot run (no WordNet), those columns are None and a note says why.

Settings named `<score.sequential.setting_prefix><k>-shot` are scored as sequential
compositions when `score.sequential.enabled` (sequential.py): `extracted`,
`extraction_correct`, and the second step in `parsed`/`correct` or the interpretation
metrics.

`score.compatibility: released` reads and compares every output as the authors' released
scorer does instead (released.py): the stored text, stripped, no other reading; an empty
response is not scored (main.py skips it) and is counted.

Provenance columns (template_id, template_hash, exemplar_ids) come from the rendered
prompts (results/prompts/semanticqa/<setting>.parquet) when they are there and their
prompt hash matches the generation's; otherwise they are null.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ...core import paths
from ...core.errors import IdiombenchError
from ...core.generation_types import ItemContext, item_context
from ...core.io import read_parquet
from ...core.items import OPTION_LETTERS, Item, released_position
from ...core.parsing import LETTERS, ParseResult, clean_output, parse_letter
from ...scoring.lexical import rouge_l_f
from . import released
from .adapters import ADAPTERS
from .config import SemanticQAScore
from .parse import normalise_answer, parse_interpretation, parse_output
from .sequential import COMPOSITIONS, Composition, parse_two_parts

if TYPE_CHECKING:
    from ..contexts import ScoreContext
    from .config import SemanticQAConfig

BERTSCORE_ROLE = "bertscore_en"
SORT_KEY = ["prompt_id", "pass", "sample_index"]
COLUMNS = [
    "prompt_id",
    "setting",
    "task",
    "code",
    "kind",
    "item_id",
    "pass",
    "sample_index",
    "rotation",
    "position",
    "n_options",
    "composition",
    "generation_error",
    "parsed",
    "ok",
    "flags",
    "gold",
    "correct",
    "correct_strict",
    "correct_released_code",
    "extracted",
    "extraction_correct",
    "n_references",
    "meteor",
    "rouge_l",
    "bertscore_f1",
    "template_id",
    "template_hash",
    "exemplar_ids",
]


def strict_match(value: str | None, references: Sequence[str]) -> bool:
    if value is None:
        return False
    normal = normalise_answer(value)
    return bool(normal) and any(normal == normalise_answer(ref) for ref in references)


def sequential_setting(setting: str, cfg: SemanticQAScore) -> bool:
    return cfg.sequential.enabled and setting.startswith(cfg.sequential.setting_prefix)


@dataclass
class InterpretationJob:
    """A row whose paraphrase is compared with its references (atomic or second step)."""

    setting: str
    index: int
    prediction: str | None
    references: tuple[str, ...]


@dataclass
class Scored:
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    jobs: list[InterpretationJob] = field(default_factory=list)


def prompt_provenance(benchmark: str, setting: str, directory: Path | None = None) -> dict[str, dict[str, object]]:
    """prompt_id -> {prompt_hash, template_id, template_hash, exemplar_ids}, from the rendered prompts."""
    path = (directory / f"{setting}.parquet") if directory else paths.prompts_file(benchmark, setting)
    if not path.is_file():
        return {}
    table = read_parquet(path).select(["prompt_id", "prompt_hash", "template_id", "template_hash", "exemplar_ids"])
    return {row["prompt_id"]: row for row in table.to_pylist()}


def find_item(items: dict[str, dict[str, Item]], setting: str, row: dict[str, Any]) -> Item:
    task_items = items.get(row["task"])
    if task_items is None:
        raise IdiombenchError(
            f"semanticqa/{setting}: generation {row['prompt_id']} is for task {row['task']!r}, which is not built "
            f"(built: {', '.join(sorted(items))}); rebuild or regenerate"
        )
    item = task_items.get(row["item_id"])
    if item is None:
        raise IdiombenchError(
            f"semanticqa/{setting}: generation {row['prompt_id']} names item {row['item_id']!r}, which is not in the "
            f"built {row['task']} items: the generations are stale (rebuild, render and generate again)"
        )
    return item


def base_row(setting: str, g: dict[str, Any], item: Item, provenance: dict[str, Any] | None) -> dict[str, Any]:
    adapter = ADAPTERS[item.task]
    if provenance is not None and provenance.get("prompt_hash") != g.get("prompt_hash"):
        provenance = None  # the prompts were re-rendered since: not this generation's template
    return {
        "prompt_id": g["prompt_id"],
        "setting": setting,
        "task": item.task,
        "code": adapter.code,
        "kind": adapter.kind,
        "item_id": item.item_id,
        "pass": g["pass"],
        "sample_index": int(g["sample_index"]),
        "rotation": int(g["rotation"]),
        "position": None,
        "n_options": len(item.choices) if adapter.kind == "mcq" else None,
        "composition": None,
        "generation_error": text_or_none(g.get("error")),
        "parsed": None,
        "ok": False,
        "flags": [],
        "gold": item.answer
        if item.answer is not None
        else (item.references[0] if adapter.kind == "extraction" and item.references else None),
        "correct": None,
        "correct_strict": None,
        "correct_released_code": None,
        "extracted": None,
        "extraction_correct": None,
        "n_references": len(item.references) if adapter.kind in ("extraction", "interpretation") else None,
        "meteor": None,
        "rouge_l": None,
        "bertscore_f1": None,
        "template_id": provenance.get("template_id") if provenance else None,
        "template_hash": provenance.get("template_hash") if provenance else None,
        "exemplar_ids": list(provenance.get("exemplar_ids") or []) if provenance else None,
    }


def text_or_none(value: object) -> str | None:
    """A text cell, or None (pandas may hand a missing string back as NaN)."""
    return value if isinstance(value, str) else None


def as_float(flag: bool) -> float:
    return 1.0 if flag else 0.0


def option_picked(context: ItemContext, letter: object) -> tuple[int | None, object]:
    """(the shown position of an option letter read from the output, the letter the item
    released that option under); a value that is no option letter is returned as it is."""
    n = len(context.choices)
    if letter not in OPTION_LETTERS[:n]:
        return None, letter
    shown = OPTION_LETTERS.index(letter)
    return shown, OPTION_LETTERS[released_position(shown, context.rotation, n)]


def score_atomic(
    row: dict[str, Any],
    item: Item,
    context: ItemContext,
    text: str,
    cfg: SemanticQAScore,
    jobs: list[InterpretationJob],
    index: int,
) -> None:
    kind, setting = row["kind"], context.setting
    parsed: ParseResult = parse_output(context, text)
    row["parsed"] = None if parsed.value is None else str(parsed.value)
    row["ok"] = parsed.ok
    row["flags"] = list(parsed.flags)
    usable = parsed.value is not None and (parsed.ok or cfg.count_format_deviations)
    if kind == "interpretation":
        if item.meta.get("no_gold"):
            row["flags"].append("no_gold")
            return
        jobs.append(InterpretationJob(setting, index, row["parsed"] if usable else None, tuple(item.references)))
        return
    if item.meta.get("no_gold"):
        row["flags"].append("no_gold")
        return
    if kind in ("mcq", "label"):
        value = parsed.value
        if kind == "mcq":
            row["position"], value = option_picked(context, value)
        row["correct"] = as_float(usable and value == item.answer)
        return
    strict = usable and strict_match(row["parsed"], item.references)
    cleaned, _ = clean_output(text)
    released_code = strict or any(released.exact_match(cleaned, ref) for ref in item.references)
    row["correct_strict"] = as_float(strict)
    row["correct_released_code"] = as_float(released_code)
    row["correct"] = row["correct_released_code"] if cfg.extraction_match == "released_code" else row["correct_strict"]


def score_atomic_released(
    row: dict[str, Any], item: Item, context: ItemContext, text: str, jobs: list[InterpretationJob], index: int
) -> None:
    """compatibility: released: the authors' compute_metric on the stored text (released.py); under
    an option rotation, against the gold letter as the prompt showed it."""
    kind, adapter, setting = row["kind"], ADAPTERS[item.task], context.setting
    row["parsed"], row["ok"], row["flags"] = text.strip(), True, ["released_reading"]
    if item.meta.get("no_gold"):
        row["flags"].append("no_gold")
        return
    if kind == "interpretation":
        jobs.append(InterpretationJob(setting, index, row["parsed"], tuple(item.references)))
        return
    gold = str(item.fields.get(adapter.gold_field, item.answer or ""))
    if kind == "mcq":
        gold_text = str(item.fields.get(gold, "")) if item.task in released.TEXT_MATCH_TASKS else None
        row["correct"] = as_float(released.mcq_accuracy(text, context.answer or gold, gold_text))
        row["position"], _ = option_picked(context, parse_output(context, text).value)
    elif kind == "label":
        row["correct"] = as_float(released.label_accuracy(text, gold))
    else:
        row["correct_strict"] = as_float(strict_match(parse_extraction_value(item, setting, text), item.references))
        row["correct_released_code"] = row["correct"] = as_float(released.exact_match(text, gold))


def parse_extraction_value(item: Item, setting: str, text: str) -> str | None:
    parsed = parse_output(item_context(item, setting), text)
    return None if parsed.value is None else str(parsed.value)


def score_sequential_released(
    row: dict[str, object],
    item: Item,
    text: str,
    setting: str,
    comp: Composition | None,
    jobs: list[InterpretationJob],
    index: int,
) -> None:
    """compatibility: released: the authors' `*-extract-and-*` metrics (released.py)."""
    if comp is None:
        row["flags"] = ["no_sequential_composition"]
        return
    row["composition"], row["flags"], row["ok"] = comp.name, ["released_reading"], True
    extracted, second = released.sequential_parts(text, comp)
    gold_phrase = item.fields.get(comp.phrase_field)
    row["gold"] = gold_phrase
    row["extracted"] = extracted
    row["extraction_correct"] = released.phrase_match(extracted, str(gold_phrase or ""))
    row["parsed"] = second
    if comp.second == "judgement":
        row["correct"] = as_float(released.option_match(item.task, second, item.answer or ""))
        return
    jobs.append(InterpretationJob(setting, index, second.strip() or None, tuple(item.references)))


def score_sequential(
    row: dict[str, Any],
    item: Item,
    text: str,
    setting: str,
    comp: Composition | None,
    jobs: list[InterpretationJob],
    index: int,
) -> None:
    if comp is None:
        row["flags"] = ["no_sequential_composition"]
        return
    row["composition"] = comp.name
    parts = parse_two_parts(text, comp)
    row["flags"] = list(parts.flags)
    row["extracted"] = parts.extracted
    gold_phrase = item.fields.get(comp.phrase_field)
    row["gold"] = gold_phrase
    row["extraction_correct"] = strict_match(parts.extracted, [gold_phrase] if isinstance(gold_phrase, str) else [])
    if comp.second == "judgement":
        valid = LETTERS[: len(item.choices) or 4]
        if "json_object" in parts.flags:
            # an already-parsed value (the authors' result files): a letter, or unreadable (as their scorer)
            bare = re.fullmatch(r"\(?([A-Za-z])\)?[.:]?", (parts.second or "").strip())
            value = bare.group(1).upper() if bare and bare.group(1).upper() in valid else None
            row["parsed"], row["ok"] = value, parts.ok and value is not None
            if value is None and parts.second is not None:
                row["flags"] = sorted(set(row["flags"]) | {"option_not_a_letter"})
        else:
            letter = parse_letter(parts.second or "", valid, item.choices)
            row["parsed"], row["ok"] = letter.value, parts.ok and letter.ok
            row["flags"] = sorted(set(row["flags"]) | {f"option:{f}" for f in letter.flags})
        row["correct"] = as_float(row["parsed"] is not None and row["parsed"] == item.answer)
        return
    paraphrase = parse_interpretation(parts.second) if parts.second is not None else None
    row["parsed"] = paraphrase.value if paraphrase is not None else None
    row["ok"] = parts.ok and paraphrase is not None and paraphrase.ok
    jobs.append(InterpretationJob(setting, index, row["parsed"], tuple(item.references)))


def score_rows(ctx: ScoreContext[SemanticQAConfig], cfg: SemanticQAScore, prompts_dir: Path | None = None) -> Scored:
    scored = Scored()
    for setting, frame in sorted(ctx.generations.items()):
        sequential = sequential_setting(setting, cfg)
        provenance = prompt_provenance(ctx.benchmark, setting, prompts_dir)
        records = frame.sort_values(SORT_KEY, kind="stable").to_dict("records")
        out: list[dict[str, object]] = []
        for g in records:
            item = find_item(ctx.items, setting, g)
            context = item_context(item, setting, int(g["rotation"]))
            row = base_row(setting, g, item, provenance.get(g["prompt_id"]))
            text = text_or_none(g.get("text")) or ""
            index = len(out)
            out.append(row)
            if cfg.compatibility == "released" and row["generation_error"] is None:
                if released.empty_response(text):  # main.py skips it: not scored, not in the denominator
                    row["flags"] = [released.EMPTY_FLAG]
                    comp = COMPOSITIONS.get(item.task) if sequential else None
                    row["composition"] = comp.name if comp else None
                elif sequential:
                    score_sequential_released(row, item, text, setting, COMPOSITIONS.get(item.task), scored.jobs, index)
                else:
                    score_atomic_released(row, item, context, text, scored.jobs, index)
                continue
            if row["generation_error"] is not None:
                row["flags"] = ["generation_failed"]
                if sequential:
                    comp = COMPOSITIONS.get(item.task)
                    row["composition"] = comp.name if comp else None
                    row["extraction_correct"] = False if comp else None
                    if comp and comp.second == "interpretation":
                        scored.jobs.append(InterpretationJob(setting, index, None, tuple(item.references)))
                    elif comp:
                        row["correct"] = 0.0
                elif row["kind"] == "interpretation":
                    scored.jobs.append(InterpretationJob(setting, index, None, tuple(item.references)))
                elif not item.meta.get("no_gold"):
                    row["correct"] = 0.0
                    if row["kind"] == "extraction":
                        row["correct_strict"] = row["correct_released_code"] = 0.0
                continue
            if sequential:
                score_sequential(row, item, text, setting, COMPOSITIONS.get(item.task), scored.jobs, index)
            else:
                score_atomic(row, item, context, text, cfg, scored.jobs, index)
        scored.rows[setting] = out
    return scored


# --------------------------------------------------------------------------- interpretation metrics


def meteor_scorer(notes: list[str]) -> Any:
    from ...scoring.meteor import MeteorScorer
    from ...scoring.wordnet import WordNetMissing

    try:
        return MeteorScorer()
    except WordNetMissing as exc:
        notes.append(f"METEOR not computed: {exc}")
        return None


def interpretation_metrics(scored: Scored, cfg: SemanticQAScore, scorers: object, notes: list[str]) -> None:
    jobs = scored.jobs
    if not jobs:
        return
    meteor = meteor_scorer(notes)
    memo_meteor: dict[tuple[str, tuple[str, ...]], float] = {}
    memo_rouge: dict[tuple[str, str], float] = {}
    pairs: list[tuple[str, str]] = []
    owners: list[int] = []
    for position, job in enumerate(jobs):
        row = scored.rows[job.setting][job.index]
        refs = tuple(r for r in job.references if r.strip())
        if not job.prediction or not refs:
            row["meteor"] = 0.0 if meteor is not None else None
            row["rouge_l"] = 0.0
            continue
        if meteor is not None:
            key = (job.prediction, refs)
            if key not in memo_meteor:
                memo_meteor[key] = meteor.score(job.prediction, refs)
            row["meteor"] = memo_meteor[key]
        best = 0.0
        for ref in refs:
            pair = (job.prediction, ref)
            if pair not in memo_rouge:
                memo_rouge[pair] = rouge_l_f(job.prediction, ref, "en", use_stemmer=cfg.rouge_stemmer)
            best = max(best, memo_rouge[pair])
            pairs.append(pair)
            owners.append(position)
        row["rouge_l"] = best
    bertscore_f1(scored, pairs, owners, scorers, notes)


def bertscore_f1(
    scored: Scored, pairs: list[tuple[str, str]], owners: list[int], scorers: Any, notes: list[str]
) -> None:
    info = scorers.info(BERTSCORE_ROLE) if scorers is not None else None
    if info is None or not info.computed:
        notes.append(
            f"BERTScore not computed: scoring role {BERTSCORE_ROLE} "
            + ("has no model in this profile" if info is not None else "unavailable (no scoring section)")
        )
        return
    best = np.full(len(scored.jobs), -np.inf)
    if pairs:
        f1 = np.asarray(scorers.bertscore(BERTSCORE_ROLE, pairs).f1, dtype=np.float64)
        np.maximum.at(best, np.asarray(owners), f1)
    for position, job in enumerate(scored.jobs):
        # no prediction (or no reference): no pair was scored, the row is wrong
        value = float(best[position]) if np.isfinite(best[position]) else 0.0
        scored.rows[job.setting][job.index]["bertscore_f1"] = value
    if info.status != "paper":
        notes.append(f"BERTScore: {info.footnote}")


def to_frame(rows: list[dict[str, object]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=COLUMNS)
    for name in ("correct", "correct_strict", "correct_released_code", "meteor", "rouge_l", "bertscore_f1"):
        frame[name] = frame[name].astype("float64")
    frame["n_references"] = frame["n_references"].astype("Int64")
    frame["sample_index"] = frame["sample_index"].astype("int32")
    frame["rotation"] = frame["rotation"].astype("int32")
    frame["position"] = frame["position"].astype("float64")
    frame["n_options"] = frame["n_options"].astype("Int64")
    frame["ok"] = frame["ok"].astype(bool)
    frame["extraction_correct"] = frame["extraction_correct"].astype("boolean")
    return frame


def score(ctx: ScoreContext[SemanticQAConfig], prompts_dir: Path | None = None) -> dict[str, pd.DataFrame]:
    cfg: SemanticQAScore = ctx.config.score
    scored = score_rows(ctx, cfg, prompts_dir)
    interpretation_metrics(scored, cfg, ctx.scorers, ctx.notes)
    for setting, rows in sorted(scored.rows.items()):
        empty = sum(1 for r in rows if released.EMPTY_FLAG in r["flags"])
        failed = sum(1 for r in rows if r["generation_error"] is not None)
        if failed:
            ctx.notes.append(f"{setting}: {failed} failed generation(s) scored as wrong")
        if empty:
            ctx.notes.append(
                f"{setting}: {empty} empty response(s) not scored (compatibility released: the authors' "
                "main.py skips an empty response, so it is not in the denominator)"
            )
    return {setting: to_frame(rows) for setting, rows in scored.rows.items()}
