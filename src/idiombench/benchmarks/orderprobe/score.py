"""`idiombench score orderprobe`: per generation row, Recovery and the semantic terms.

One output row per generation row (main pass and every sampled `consistency` row), sorted
by (prompt_id, pass, sample_index); nothing is dropped. Columns:

- identity: prompt_id, task, setting, item_id, pass, sample_index, prompt_hash,
  template_id, template_hash (from the prompts table; null when it is not there);
- the item: language, expression_id, expression, input, pattern, category,
  is_canonical, is_identity, n_references;
- the output: finish_reason, generation_error, explanation (parse.py's value),
  format_ok, parse_flags (flag names joined by commas);
- recovered (default test), recovered_strict (recovery.py);
- S_Acc and its five components ce, bert, sts, lex, f_beta (each aggregated over the
  references; null = the term's scorer role is not computed in this profile),
  f_beta_halved (the polarity rule fired), s_acc (metrics.s_acc);
- s_logic (main pass only: no aggregate uses the samples' S_Logic and NLI is the costliest
  scorer; null on consistency rows and when the nli role is not computed), s_info;
- score_flags: why a row's terms are 0 (`empty_explanation`, `no_references`,
  `generation_error`), joined by commas.

Neural scorers are called once per role over the pairs of a chunk's rows (neural.py); the
lexical terms (LEX, Fβ, S_Info) are computed by worker processes meanwhile, each distinct text
analysed once (lexical.py, docs/performance.md).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

import pandas as pd

from ...core import paths
from ...core.errors import DataError, IdiombenchError
from ...core.io import read_parquet, read_parquet_schema
from ...core.items import Item
from ...core.parsing import clean_output
from ...templating.prompts import PROMPT_SCHEMA
from . import lexicon, metrics, released
from .config import OrderProbeScore
from .lexical import LexicalTerms, Pending, RowText, Terms
from .neural import CE_ROLE, NLI_ROLE, ROLES, PairCache, Requests, Results, bert_role, run_requests, sts_role
from .parse import parse_explanation
from .recovery import recovered_default, recovered_strict

if TYPE_CHECKING:
    from ..contexts import ScoreContext
    from .config import OrderProbeConfig

BENCHMARK = "orderprobe"
MAIN_PASS = "main"
SORT_KEY = ["prompt_id", "pass", "sample_index"]
# Column -> dtype, fixed so that every run writes the same Parquet schema (a column that is
# all null, e.g. `bert` when no BERTScore model is configured, stays float64, not Arrow null).
COLUMN_TYPES = {
    "prompt_id": "string",
    "task": "string",
    "setting": "string",
    "item_id": "string",
    "pass": "string",
    "sample_index": "int64",
    "language": "string",
    "expression_id": "string",
    "expression": "string",
    "input": "string",
    "pattern": "string",
    "category": "string",
    "is_canonical": "bool",
    "is_identity": "bool",
    "n_references": "int64",
    "prompt_hash": "string",
    "template_id": "string",
    "template_hash": "string",
    "finish_reason": "string",
    "generation_error": "string",
    "explanation": "string",
    "format_ok": "bool",
    "parse_flags": "string",
    "recovered": "bool",
    "recovered_strict": "bool",
    "ce": "float64",
    "bert": "float64",
    "sts": "float64",
    "lex": "float64",
    "f_beta": "float64",
    "f_beta_halved": "bool",
    "s_acc": "float64",
    "s_logic": "float64",
    "s_info": "float64",
    "score_flags": "string",
}
COLUMNS = list(COLUMN_TYPES)
FLAG_SEPARATOR = ","  # parse_flags / score_flags: flag names joined ("" when none)


@dataclass
class RowWork:
    """One generation row on its way to a score row."""

    record: dict[str, Any]
    item: Item
    explanation: str | None
    # positions of this row's pairs in each role's request list, one per reference
    ce: list[int] = field(default_factory=list)
    sts: list[int] = field(default_factory=list)
    bert: list[int] = field(default_factory=list)
    nli_e_to_r: list[int] = field(default_factory=list)
    nli_r_to_e: list[int] = field(default_factory=list)

    references: list[str] = field(default_factory=list)  # as the compatibility mode splits them

    @property
    def scorable(self) -> bool:
        return bool(self.explanation) and bool(self.item.references)


def mode_references(references: list[str], compatibility: str) -> list[str]:
    """The references a row is scored against: the built `||` split (paper), or the released
    to_refs rule on the re-joined cell, texts cleaned as the released code cleans them."""
    if compatibility == "released":
        return released.split_references(released.reference_cell(references))
    return list(references)


PROMPT_COLUMNS = ["prompt_id", "template_id", "template_hash", "prompt_hash"]


def load_prompt_index(directory: Path) -> dict[str, dict[str, str]]:
    """prompt_id -> template id / hash and prompt hash, from the render stage's tables
    (only these columns are read: the messages of a full render are large)."""
    index: dict[str, dict[str, str]] = {}
    if not directory.is_dir():
        return index
    for path in sorted(directory.glob("*.parquet")):
        if not read_parquet_schema(path, what="prompts table").equals(PROMPT_SCHEMA, check_metadata=False):
            raise DataError(path, "not a prompts table", expected=str(PROMPT_SCHEMA))
        for row in read_parquet(path, what="prompts table", columns=PROMPT_COLUMNS).to_pylist():
            index[row.pop("prompt_id")] = row
    return index


def role_computed(scorers: Any, role: str) -> bool:
    return scorers is not None and scorers.info(role).computed


ITEM_META = ("expression_id", "expression", "pattern", "is_canonical", "is_identity")  # written by build.py


def _check_item_meta(item: Item) -> None:
    missing = [key for key in ITEM_META if key not in item.meta]
    if missing:  # an items table that OrderProbe's build did not write
        raise DataError(
            paths.task_items(BENCHMARK, item.task),
            f"item {item.item_id}: meta lacks {', '.join(missing)}",
            expected=f"OrderProbe's build output (meta keys {', '.join(ITEM_META)})",
        )


def _item_columns(item: Item) -> dict[str, Any]:
    meta = item.meta
    return {
        "language": item.language,
        "expression_id": meta["expression_id"],
        "expression": meta["expression"],
        "input": item.input,
        "pattern": meta["pattern"],
        "category": meta.get("category"),
        "is_canonical": bool(meta["is_canonical"]),
        "is_identity": bool(meta["is_identity"]),
        "n_references": len(item.references),
    }


def prepare_rows(
    model: str,
    generations: Mapping[str, pd.DataFrame],
    items: Mapping[str, Mapping[str, Item]],
    prompt_index: Mapping[str, Mapping[str, str]],
    notes: list[str],
    first_row: int = 0,
) -> list[RowWork]:
    """Parse every generation row and compute Recovery; nothing neural yet. `first_row`: the
    position of the frames' first row in their file (a chunk's), for the errors."""
    work: list[RowWork] = []
    stale = 0
    for setting, frame in sorted(generations.items()):
        source = paths.generations_file(benchmark=BENCHMARK, model=model, setting=setting)
        for position, row in enumerate(frame.to_dict("records"), start=first_row):  # position: the row in the file
            if row["setting"] != setting:
                raise DataError(
                    source,
                    f"row of setting {row['setting']!r} in the {setting!r} table",
                    row=position,
                    expected=f"setting {setting}",
                )
            task_items = items.get(row["task"])
            item = task_items.get(row["item_id"]) if task_items is not None else None
            if item is None:
                raise DataError(
                    source,
                    f"item {row['task']}/{row['item_id']} is not among the built items",
                    row=position,
                    expected="generations of the current build (rerun render and generate)",
                )
            text = row["text"] if isinstance(row["text"], str) else ""
            parsed = parse_explanation(text, setting)
            cleaned, _ = clean_output(text)
            _check_item_meta(item)
            expression = item.meta["expression"]
            prompt = prompt_index.get(row["prompt_id"], {})
            if prompt and prompt.get("prompt_hash") != row["prompt_hash"]:
                stale += 1
            error = row.get("error")
            record = {
                "prompt_id": row["prompt_id"],
                "task": row["task"],
                "setting": setting,
                "item_id": row["item_id"],
                "pass": row["pass"],
                "sample_index": int(row["sample_index"]),
                **_item_columns(item),
                "prompt_hash": row["prompt_hash"],
                "template_id": prompt.get("template_id"),
                "template_hash": prompt.get("template_hash"),
                "finish_reason": row["finish_reason"],
                "generation_error": error if isinstance(error, str) and error else None,
                "explanation": parsed.value,
                "format_ok": bool(parsed.ok),
                "parse_flags": FLAG_SEPARATOR.join(parsed.flags),
                "recovered": recovered_default(cleaned, expression),
                "recovered_strict": recovered_strict(parsed.value, expression),
            }
            work.append(RowWork(record, item, parsed.value or None))
    if stale:
        notes.append(
            f"orderprobe: {stale} generation rows have a prompt hash that differs from the current prompts "
            "table (generations older than the last render)"
        )
    return work


def request_pairs(work: list[RowWork], scorers: object, cfg: OrderProbeScore) -> Requests:
    """Every (explanation, reference) pair each computed role needs, for all rows.
    released: CE/STS/BERT over the released split of the cleaned texts, and ONE NLI pair
    per row, (premise, hypothesis) = (whole reference cell, explanation)."""
    requests = Requests()
    is_released = cfg.compatibility == "released"
    both = cfg.s_logic.directions == "both" and not is_released
    nli = role_computed(scorers, NLI_ROLE)
    ce = role_computed(scorers, CE_ROLE)
    for row in work:
        if not row.scorable:
            continue
        language = row.item.language
        sts, bert = sts_role(language), bert_role(language)
        sts_on, bert_on = role_computed(scorers, sts), role_computed(scorers, bert)
        explanation = row.explanation
        assert explanation is not None
        row.references = mode_references(list(row.item.references), cfg.compatibility)
        if is_released:
            explanation = released.clean_text(explanation)
            if nli and row.record["pass"] == MAIN_PASS:
                cell = released.reference_cell(list(row.item.references)).strip()
                row.nli_r_to_e.append(requests.add(NLI_ROLE, (cell, explanation.strip())))
        for reference in row.references:
            if ce:
                row.ce.append(requests.add(CE_ROLE, (reference, explanation)))
            if sts_on:
                row.sts.append(requests.add(sts, (explanation, reference)))
            if bert_on:
                row.bert.append(requests.add(bert, (explanation, reference)))
            if nli and row.record["pass"] == MAIN_PASS and not is_released:
                row.nli_e_to_r.append(requests.add(NLI_ROLE, (explanation, reference)))
                if both:
                    row.nli_r_to_e.append(requests.add(NLI_ROLE, (reference, explanation)))
    return requests


def _term(results: Results, role: str, positions: list[int], how: str) -> float:
    return metrics.over_references([float(results.get(role, p)) for p in positions], how)


def needs_lexicons(cfg: OrderProbeScore) -> bool:
    """Whether scoring reads the released word lists (the build's released_lexicon.json)."""
    return cfg.compatibility == "released" or cfg.s_acc.polarity_halving


def lexical_rows(work: list[RowWork]) -> list[RowText]:
    """What the lexical terms of the chunk's scorable rows read (lexical.py computes them)."""
    return [
        RowText(
            position,
            row.item.meta["expression_id"],
            row.item.language,
            row.item.meta["expression"],
            row.explanation,
            tuple(row.item.references),
        )
        for position, row in enumerate(work)
        if row.scorable and row.explanation is not None
    ]


def finish_row(
    row: RowWork, results: Results, scorers: object, cfg: OrderProbeScore, terms: Terms | None
) -> dict[str, object]:
    """The semantic terms of one row from the batched neural results and its lexical terms
    (lexical.py; None for a row that is not scorable)."""
    record = row.record
    language = row.item.language
    flags: list[str] = []
    if record["generation_error"]:
        flags.append("generation_error")
    if not row.explanation:
        flags.append("empty_explanation")
    if not row.item.references:
        flags.append("no_references")
    ce_on = role_computed(scorers, CE_ROLE)
    sts_on = role_computed(scorers, sts_role(language))
    bert_on = role_computed(scorers, bert_role(language))
    nli_on = role_computed(scorers, NLI_ROLE) and record["pass"] == MAIN_PASS
    acc = cfg.s_acc
    if row.scorable and cfg.compatibility == "released":
        assert terms is not None
        neural = released_terms(row, results, ce_on, sts_on, bert_on, nli_on, cfg, terms)
        return {**record, **neural, "score_flags": FLAG_SEPARATOR.join(flags)}
    if row.scorable:
        assert terms is not None
        ce = _term(results, CE_ROLE, row.ce, acc.reference_aggregation) if ce_on else None
        sts = _term(results, sts_role(language), row.sts, acc.reference_aggregation) if sts_on else None
        bert = _term(results, bert_role(language), row.bert, acc.reference_aggregation) if bert_on else None
        lex, f_beta, halved, s_info = terms.lex, terms.f_beta, terms.f_beta_halved, terms.s_info
        s_logic = None
        if nli_on:
            logic = cfg.s_logic
            per_reference = []
            for i, e_to_r in enumerate(row.nli_e_to_r):
                r_to_e = row.nli_r_to_e[i] if row.nli_r_to_e else None
                per_reference.append(
                    metrics.logic_for_reference(
                        tuple(results.get(NLI_ROLE, e_to_r)),
                        tuple(results.get(NLI_ROLE, r_to_e)) if r_to_e is not None else None,
                        logic.entailment_threshold,
                        logic.contradiction_weight,
                    )
                )
            s_logic = metrics.over_references(per_reference, logic.reference_aggregation)
    else:
        # A term that cannot be computed for this item counts 0 (flagged above); a role
        # that is not computed in the profile stays None.
        ce = 0.0 if ce_on else None
        sts = 0.0 if sts_on else None
        bert = 0.0 if bert_on else None
        lex = f_beta = s_info = 0.0
        halved = False
        s_logic = 0.0 if nli_on else None
    weights = metrics.SAccWeights(acc.weight_ce, acc.weight_representation, acc.weight_f_beta)
    return {
        **record,
        "ce": ce,
        "bert": bert,
        "sts": sts,
        "lex": lex,
        "f_beta": f_beta,
        "f_beta_halved": halved,
        "s_acc": metrics.s_acc(ce, bert, sts, lex, f_beta, weights),
        "s_logic": s_logic,
        "s_info": s_info,
        "score_flags": FLAG_SEPARATOR.join(flags),
    }


def released_terms(
    row: RowWork,
    results: Results,
    ce_on: bool,
    sts_on: bool,
    bert_on: bool,
    nli_on: bool,
    cfg: OrderProbeScore,
    terms: Terms,
) -> dict[str, object]:
    """The terms of one scorable row as the released code computes them (released.py; the
    lexical ones from lexical.py)."""
    language = row.item.language
    how = cfg.s_acc.reference_aggregation
    ce = _term(results, CE_ROLE, row.ce, how) if ce_on and row.ce else None
    sts = _term(results, sts_role(language), row.sts, how) if sts_on and row.sts else None
    bert = _term(results, bert_role(language), row.bert, how) if bert_on and row.bert else None
    weights = (cfg.s_acc.weight_ce, cfg.s_acc.weight_representation, cfg.s_acc.weight_f_beta)
    s_logic = float(results.get(NLI_ROLE, row.nli_r_to_e[0])[0]) if nli_on and row.nli_r_to_e else None
    return {
        "ce": ce,
        "bert": bert,
        "sts": sts,
        "lex": terms.lex,
        "f_beta": terms.f_beta,
        "f_beta_halved": terms.f_beta_halved,
        "s_acc": released.s_acc(ce, released.representation(bert, sts, terms.lex), terms.f_beta, weights),
        # S_Info and S_Logic read the Sacc output's Prediction column: the cleaned explanation
        "s_logic": s_logic,
        "s_info": terms.s_info,
    }


CHUNK_ROWS = 20_000  # generation rows scored at once: the peak memory of a long setting is one chunk's


class ChunkOptions(TypedDict, total=False):
    """score_chunks' optional inputs after `prompt_index` (score_generations passes them on)."""

    lexicons: Mapping[str, lexicon.ReleasedLexicon] | None
    chunk_rows: int | None
    lexical: LexicalTerms | None


def score_generations(
    model: str,
    generations: Mapping[str, pd.DataFrame],
    items: Mapping[str, Mapping[str, Item]],
    cfg: OrderProbeScore,
    scorers: object,
    notes: list[str],
    prompt_index: Mapping[str, Mapping[str, str]] | None = None,
    **options: Unpack[ChunkOptions],
) -> dict[str, pd.DataFrame]:
    """Score tables per setting (see the module docstring). `lexicons`: the released word
    lists per language (lexicon.load), needed when needs_lexicons(cfg); `chunk_rows` and
    `lexical`: as score_chunks takes them."""
    chunks: dict[str, list[pd.DataFrame]] = {}
    for setting, frame in score_chunks(model, generations, items, cfg, scorers, notes, prompt_index, **options):
        chunks.setdefault(setting, []).append(frame)
    return {
        setting: pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        for setting, frames in chunks.items()
    }


def score_chunks(
    model: str,
    generations: Mapping[str, pd.DataFrame],
    items: Mapping[str, Mapping[str, Item]],
    cfg: OrderProbeScore,
    scorers: Any,
    notes: list[str],
    prompt_index: Mapping[str, Mapping[str, str]] | None = None,
    lexicons: Mapping[str, lexicon.ReleasedLexicon] | None = None,
    chunk_rows: int | None = None,
    lexical: LexicalTerms | None = None,
) -> Iterator[tuple[str, pd.DataFrame]]:
    """The score tables setting by setting, in chunks of at most `chunk_rows` generation rows
    (CHUNK_ROWS): each chunk is parsed, its lexical terms sent to the worker processes
    (`lexical`, by default a LexicalTerms of IDIOMBENCH_SCORE_WORKERS processes), its neural
    pairs scored here meanwhile (one call per role per chunk), and its rows finished once both
    are back. The next chunk is parsed and sent before a chunk is finished, so the workers never
    wait for this process; memory holds one setting's generations and two chunks' work,
    whatever the number of rows. A setting's rows are sorted by SORT_KEY first: its chunks, in
    order, are the sorted table."""
    size = chunk_rows or CHUNK_ROWS
    calls: dict[tuple[str, str], list[int]] = {}
    cache = PairCache()  # a pair met in an earlier chunk (an output repeated across settings) is scored once
    owned = lexical is None
    terms = lexical if lexical is not None else LexicalTerms(cfg, lexicons or {})
    waiting: deque[tuple[str, list[RowWork], Pending]] = deque()  # chunks sent, not finished

    def finish(setting: str, work: list[RowWork], pending: Pending) -> tuple[str, pd.DataFrame]:
        requests = request_pairs(work, scorers, cfg)
        results = run_requests(scorers, requests, cache) if requests.pairs else Results()  # while workers compute
        for call in results.calls:
            counted = calls.setdefault((call.role, call.computed_by), [0, 0, 0])
            counted[0] += call.pairs
            counted[1] += call.computed
            counted[2] += call.computed > 0  # a chunk whose pairs were all scored before calls nothing
        lexical_terms = pending.result()
        rows = [
            finish_row(row, results, scorers, cfg, lexical_terms.get(position)) for position, row in enumerate(work)
        ]
        return setting, pd.DataFrame(rows, columns=COLUMNS).astype(COLUMN_TYPES)

    try:
        for setting in sorted(generations):
            frame = generations[setting].sort_values(SORT_KEY, kind="stable").reset_index(drop=True)
            terms.start(len(frame))  # the first setting decides: workers start while its first chunk is parsed
            for start in range(0, len(frame), size) if len(frame) else [0]:
                chunk = {setting: frame.iloc[start : start + size]}
                work = prepare_rows(model, chunk, items, prompt_index or {}, notes, first_row=start)
                waiting.append((setting, work, terms.submit(lexical_rows(work))))
                if len(waiting) > 1:
                    yield finish(*waiting.popleft())
        while waiting:
            yield finish(*waiting.popleft())
    finally:
        if owned:
            terms.close(cancel=bool(waiting))
    for (role, computed_by), (pairs, computed, count) in sorted(calls.items()):
        if computed_by != role:
            notes.append(
                f"orderprobe: {role}: {pairs:,} pairs, embedded in the same calls as {computed_by} (same model)"
            )
            continue
        shared = sorted(r for r, by in calls if by == role and r != role)
        notes.append(
            f"orderprobe: {role}: {pairs:,} pairs in {count} call(s) (one per setting, or per {size:,} "
            f"rows); {computed:,} distinct pairs scored{' with ' + ', '.join(shared) if shared else ''}, "
            "each once"
        )
    if scorers is not None:
        for role in ROLES:
            if not scorers.info(role).computed:
                notes.append(
                    f"orderprobe: {role} is not computed in this profile: its term is reported as not computed"
                )


def score(ctx: ScoreContext[OrderProbeConfig]) -> dict[str, pd.DataFrame]:
    """The BENCHMARK.score hook (evaluate-predictions): every setting's whole table."""
    chunks: dict[str, list[pd.DataFrame]] = {}
    for setting, frame in score_ctx_chunks(ctx):
        chunks.setdefault(setting, []).append(frame)
    return {setting: pd.concat(frames, ignore_index=True) for setting, frames in chunks.items()}


def score_ctx_chunks(ctx: ScoreContext[OrderProbeConfig]) -> Iterator[tuple[str, pd.DataFrame]]:
    """The BENCHMARK.score_chunks hook (stages.score.run_score writes each chunk as it comes)."""
    if ctx.scorers is None:
        raise IdiombenchError("orderprobe: scoring needs the `scoring` section of params (scorer roles)")
    prompt_index = load_prompt_index(paths.prompts_dir(BENCHMARK))
    if not prompt_index:
        ctx.notes.append(
            f"orderprobe: {paths.prompts_dir(BENCHMARK)} has no prompts tables: template ids and hashes "
            "are not recorded"
        )
    # The released word lists are build output (extracted from the acquired Sacc scripts),
    # read only when the configuration uses them, so that other profiles need no rebuild.
    lexicons = lexicon.load(paths.processed_dir(BENCHMARK)) if needs_lexicons(ctx.config.score) else {}
    yield from score_chunks(
        ctx.model,
        ctx.generations,
        ctx.items,
        ctx.config.score,
        ctx.scorers,
        ctx.notes,
        prompt_index=prompt_index,
        lexicons=lexicons,
    )
