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

Neural scorers are called once per role over the pairs of ALL rows of ALL settings
(neural.py); lexical terms are memoised per distinct text.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ... import paths
from ...errors import DataError, IdiombenchError
from ...io import read_parquet, read_parquet_schema
from ...items import Item
from ...parsing import clean_output
from ...prompts import PROMPT_SCHEMA
from ...scoring.lexical import f_beta as f_beta_score
from ...scoring.lexical import lexical_cosine, rouge_l_precision, token_length
from .polarity import lexicon_for, polarity_contradicts
from ...scoring.tokenize import content_tokens
from . import lexicon, metrics, released
from .config import OrderProbeScore
from .neural import CE_ROLE, NLI_ROLE, ROLES, PairCache, Requests, Results, bert_role, run_requests, sts_role
from .parse import parse_explanation
from .recovery import recovered_default, recovered_strict

BENCHMARK = "orderprobe"
MAIN_PASS = "main"
SORT_KEY = ["prompt_id", "pass", "sample_index"]
# Column -> dtype, fixed so that every run writes the same Parquet schema (a column that is
# all null, e.g. `bert` when no BERTScore model is configured, stays float64, not Arrow null).
COLUMN_TYPES = {
    "prompt_id": "string", "task": "string", "setting": "string", "item_id": "string", "pass": "string",
    "sample_index": "int64",
    "language": "string", "expression_id": "string", "expression": "string", "input": "string", "pattern": "string",
    "category": "string", "is_canonical": "bool", "is_identity": "bool", "n_references": "int64",
    "prompt_hash": "string", "template_id": "string", "template_hash": "string", "finish_reason": "string",
    "generation_error": "string",
    "explanation": "string", "format_ok": "bool", "parse_flags": "string",
    "recovered": "bool", "recovered_strict": "bool",
    "ce": "float64", "bert": "float64", "sts": "float64", "lex": "float64", "f_beta": "float64",
    "f_beta_halved": "bool", "s_acc": "float64",
    "s_logic": "float64", "s_info": "float64", "score_flags": "string",
}
COLUMNS = list(COLUMN_TYPES)
FLAG_SEPARATOR = ","  # parse_flags / score_flags: flag names joined ("" when none)


@dataclass
class LexicalMemo:
    """Token lists and ROUGE-L / lengths, computed once per distinct input."""

    content: dict[tuple[str, str, str], list[str]] = field(default_factory=dict)
    lengths: dict[tuple[str, str, str], int] = field(default_factory=dict)
    rouge: dict[tuple[str, str, str, str], float] = field(default_factory=dict)

    def content_tokens(self, text: str, language: str, expression: str) -> list[str]:
        key = (text, language, expression)
        if key not in self.content:
            self.content[key] = content_tokens(text, language, keep=[expression])
        return self.content[key]

    def length(self, text: str, language: str, expression: str) -> int:
        key = (text, language, expression)
        if key not in self.lengths:
            self.lengths[key] = token_length(text, language, keep=[expression])
        return self.lengths[key]

    def rouge_precision(self, explanation: str, reference: str, language: str, expression: str) -> float:
        key = (explanation, reference, language, expression)
        if key not in self.rouge:
            self.rouge[key] = rouge_l_precision(explanation, reference, language, keep=[expression])
        return self.rouge[key]


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
        raise DataError(paths.task_items(BENCHMARK, item.task), f"item {item.item_id}: meta lacks {', '.join(missing)}",
                        expected=f"OrderProbe's build output (meta keys {', '.join(ITEM_META)})")


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
    model: str, generations: Mapping[str, pd.DataFrame], items: Mapping[str, Mapping[str, Item]],
    prompt_index: Mapping[str, Mapping[str, str]], notes: list[str], first_row: int = 0,
) -> list[RowWork]:
    """Parse every generation row and compute Recovery; nothing neural yet. `first_row`: the
    position of the frames' first row in their file (a chunk's), for the errors."""
    work: list[RowWork] = []
    stale = 0
    for setting, frame in sorted(generations.items()):
        source = paths.generations_file(model, BENCHMARK, setting)
        for position, row in enumerate(frame.to_dict("records"), start=first_row):  # position: the row in the file
            if row["setting"] != setting:
                raise DataError(source, f"row of setting {row['setting']!r} in the {setting!r} table", row=position,
                                expected=f"setting {setting}")
            task_items = items.get(row["task"])
            item = task_items.get(row["item_id"]) if task_items is not None else None
            if item is None:
                raise DataError(source, f"item {row['task']}/{row['item_id']} is not among the built items", row=position,
                                expected="generations of the current build (rerun render and generate)")
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
                "prompt_id": row["prompt_id"], "task": row["task"], "setting": setting, "item_id": row["item_id"],
                "pass": row["pass"], "sample_index": int(row["sample_index"]),
                **_item_columns(item),
                "prompt_hash": row["prompt_hash"], "template_id": prompt.get("template_id"),
                "template_hash": prompt.get("template_hash"), "finish_reason": row["finish_reason"],
                "generation_error": error if isinstance(error, str) and error else None,
                "explanation": parsed.value, "format_ok": bool(parsed.ok), "parse_flags": FLAG_SEPARATOR.join(parsed.flags),
                "recovered": recovered_default(cleaned, expression),
                "recovered_strict": recovered_strict(parsed.value, expression),
            }
            work.append(RowWork(record, item, parsed.value or None))
    if stale:
        notes.append(f"orderprobe: {stale} generation rows have a prompt hash that differs from the current prompts "
                     "table (generations older than the last render)")
    return work


def request_pairs(work: list[RowWork], scorers: Any, cfg: OrderProbeScore) -> Requests:
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


def finish_row(row: RowWork, results: Results, scorers: Any, cfg: OrderProbeScore, memo: LexicalMemo,
               lexicons: Mapping[str, lexicon.ReleasedLexicon]) -> dict[str, Any]:
    """The semantic terms of one row from the batched results, the lexical memo and the
    released word lists (language -> lists; read only by the polarity rule and `released`)."""
    record = row.record
    language, expression = row.item.language, row.item.meta["expression"]
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
        terms = released_terms(row, results, ce_on, sts_on, bert_on, nli_on, cfg, lexicons)
        return {**record, **terms, "score_flags": FLAG_SEPARATOR.join(flags)}
    if row.scorable:
        explanation, references = row.explanation, row.item.references
        assert explanation is not None
        ce = _term(results, CE_ROLE, row.ce, acc.reference_aggregation) if ce_on else None
        sts = _term(results, sts_role(language), row.sts, acc.reference_aggregation) if sts_on else None
        bert = _term(results, bert_role(language), row.bert, acc.reference_aggregation) if bert_on else None
        mine = memo.content_tokens(explanation, language, expression)
        golds = [memo.content_tokens(r, language, expression) for r in references]
        lex = metrics.over_references([lexical_cosine(mine, g) for g in golds], acc.reference_aggregation)
        f_beta = metrics.over_references([f_beta_score(mine, g, acc.beta) for g in golds], acc.reference_aggregation)
        halved = bool(acc.polarity_halving and polarity_contradicts(
            explanation, list(references), lexicon_for(lexicons, language), expression))
        f_beta = metrics.halve_if_contradicting(f_beta, halved)
        length = memo.length(explanation, language, expression)
        s_info = metrics.over_references([
            metrics.info_for_reference(memo.rouge_precision(explanation, r, language, expression), length,
                                       memo.length(r, language, expression), cfg.s_info.bp_mode)
            for r in references
        ], cfg.s_info.reference_aggregation)
        s_logic = None
        if nli_on:
            logic = cfg.s_logic
            per_reference = []
            for i, e_to_r in enumerate(row.nli_e_to_r):
                r_to_e = row.nli_r_to_e[i] if row.nli_r_to_e else None
                per_reference.append(metrics.logic_for_reference(
                    tuple(results.get(NLI_ROLE, e_to_r)),  # type: ignore[arg-type]
                    tuple(results.get(NLI_ROLE, r_to_e)) if r_to_e is not None else None,  # type: ignore[arg-type]
                    logic.entailment_threshold, logic.contradiction_weight,
                ))
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
        "ce": ce, "bert": bert, "sts": sts, "lex": lex, "f_beta": f_beta, "f_beta_halved": halved,
        "s_acc": metrics.s_acc(ce, bert, sts, lex, f_beta, weights),
        "s_logic": s_logic, "s_info": s_info, "score_flags": FLAG_SEPARATOR.join(flags),
    }


def released_terms(row: RowWork, results: Results, ce_on: bool, sts_on: bool, bert_on: bool, nli_on: bool,
                   cfg: OrderProbeScore, lexicons: Mapping[str, lexicon.ReleasedLexicon]) -> dict[str, Any]:
    """The terms of one scorable row as the released code computes them (released.py)."""
    assert row.explanation is not None
    language, expression = row.item.language, row.item.meta["expression"]
    how = cfg.s_acc.reference_aggregation
    explanation = released.clean_text(row.explanation)
    cell = released.reference_cell(list(row.item.references))
    ce = _term(results, CE_ROLE, row.ce, how) if ce_on and row.ce else None
    sts = _term(results, sts_role(language), row.sts, how) if sts_on and row.sts else None
    bert = _term(results, bert_role(language), row.bert, how) if bert_on and row.bert else None
    lists = lexicon_for(lexicons, language)
    if lists is None:
        raise IdiombenchError(f"orderprobe: compatibility: released has no word lists for language {language!r} "
                              f"(the released code covers {', '.join(lexicon.SACC_FILES)})")
    lex = released.lexical_cosine(explanation, row.references, lists, how)
    f_beta, halved = released.f_beta(explanation, row.references, lists, expression, cfg.s_acc.beta, how)
    weights = (cfg.s_acc.weight_ce, cfg.s_acc.weight_representation, cfg.s_acc.weight_f_beta)
    s_logic = float(results.get(NLI_ROLE, row.nli_r_to_e[0])[0]) if nli_on and row.nli_r_to_e else None
    return {
        "ce": ce, "bert": bert, "sts": sts, "lex": lex, "f_beta": f_beta, "f_beta_halved": halved,
        "s_acc": released.s_acc(ce, released.representation(bert, sts, lex), f_beta, weights),
        # S_Info and S_Logic read the Sacc output's Prediction column: the cleaned explanation
        "s_logic": s_logic, "s_info": released.s_info(explanation, cell),
    }


CHUNK_ROWS = 20_000  # generation rows scored at once: the peak memory of a long setting is one chunk's


def score_generations(
    model: str, generations: Mapping[str, pd.DataFrame], items: Mapping[str, Mapping[str, Item]],
    cfg: OrderProbeScore, scorers: Any, notes: list[str],
    prompt_index: Mapping[str, Mapping[str, str]] | None = None,
    lexicons: Mapping[str, lexicon.ReleasedLexicon] | None = None,
) -> dict[str, pd.DataFrame]:
    """Score tables per setting (see the module docstring). `lexicons`: the released word
    lists per language (lexicon.load), needed when needs_lexicons(cfg)."""
    chunks: dict[str, list[pd.DataFrame]] = {}
    for setting, frame in score_chunks(model, generations, items, cfg, scorers, notes, prompt_index, lexicons):
        chunks.setdefault(setting, []).append(frame)
    return {setting: pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
            for setting, frames in chunks.items()}


def score_chunks(
    model: str, generations: Mapping[str, pd.DataFrame], items: Mapping[str, Mapping[str, Item]],
    cfg: OrderProbeScore, scorers: Any, notes: list[str],
    prompt_index: Mapping[str, Mapping[str, str]] | None = None,
    lexicons: Mapping[str, lexicon.ReleasedLexicon] | None = None,
    chunk_rows: int | None = None,
) -> Iterator[tuple[str, pd.DataFrame]]:
    """The score tables setting by setting, in chunks of at most `chunk_rows` generation rows
    (CHUNK_ROWS): each chunk is parsed, its neural pairs scored (one call per role per chunk),
    its lexical terms memoised and its rows finished on its own, so memory holds one setting's
    generations and one chunk's work, whatever the number of rows. A setting's rows are sorted
    by SORT_KEY first: its chunks, in order, are the sorted table."""
    size = chunk_rows or CHUNK_ROWS
    calls: dict[tuple[str, str], list[int]] = {}
    cache = PairCache()  # a pair met in an earlier chunk (an output repeated across settings) is scored once
    for setting in sorted(generations):
        frame = generations[setting].sort_values(SORT_KEY, kind="stable").reset_index(drop=True)
        for start in range(0, len(frame), size) if len(frame) else [0]:
            chunk = {setting: frame.iloc[start:start + size]}
            work = prepare_rows(model, chunk, items, prompt_index or {}, notes, first_row=start)
            requests = request_pairs(work, scorers, cfg)
            results = run_requests(scorers, requests, cache) if requests.pairs else Results()
            for call in results.calls:
                counted = calls.setdefault((call.role, call.computed_by), [0, 0, 0])
                counted[0] += call.pairs
                counted[1] += call.computed
                counted[2] += call.computed > 0  # a chunk whose pairs were all scored before calls nothing
            memo = LexicalMemo()  # per chunk: token lists of long outputs are the largest thing kept
            rows = [finish_row(row, results, scorers, cfg, memo, lexicons or {}) for row in work]
            yield setting, pd.DataFrame(rows, columns=COLUMNS).astype(COLUMN_TYPES)
    for (role, computed_by), (pairs, computed, count) in sorted(calls.items()):
        if computed_by != role:
            notes.append(f"orderprobe: {role}: {pairs:,} pairs, embedded in the same calls as {computed_by} (same model)")
            continue
        shared = sorted(r for r, by in calls if by == role and r != role)
        notes.append(f"orderprobe: {role}: {pairs:,} pairs in {count} call(s) (one per setting, or per {size:,} "
                     f"rows); {computed:,} distinct pairs scored{' with ' + ', '.join(shared) if shared else ''}, "
                     "each once")
    if scorers is not None:
        for role in ROLES:
            if not scorers.info(role).computed:
                notes.append(f"orderprobe: {role} is not computed in this profile: its term is reported as not computed")


def score(ctx: Any) -> dict[str, pd.DataFrame]:
    """The BENCHMARK.score hook (evaluate-predictions): every setting's whole table."""
    chunks: dict[str, list[pd.DataFrame]] = {}
    for setting, frame in score_ctx_chunks(ctx):
        chunks.setdefault(setting, []).append(frame)
    return {setting: pd.concat(frames, ignore_index=True) for setting, frames in chunks.items()}


def score_ctx_chunks(ctx: Any) -> Iterator[tuple[str, pd.DataFrame]]:
    """The BENCHMARK.score_chunks hook (evaluation.run_score writes each chunk as it comes)."""
    if ctx.scorers is None:
        raise IdiombenchError("orderprobe: scoring needs the `scoring` section of params (scorer roles)")
    prompt_index = load_prompt_index(paths.prompts_dir(BENCHMARK))
    if not prompt_index:
        ctx.notes.append(f"orderprobe: {paths.prompts_dir(BENCHMARK)} has no prompts tables: template ids and hashes "
                         "are not recorded")
    # The released word lists are build output (extracted from the acquired Sacc scripts),
    # read only when the configuration uses them, so that other profiles need no rebuild.
    lexicons = lexicon.load(paths.processed_dir(BENCHMARK)) if needs_lexicons(ctx.config.score) else {}
    yield from score_chunks(ctx.model, ctx.generations, ctx.items, ctx.config.score, ctx.scorers, ctx.notes,
                            prompt_index, lexicons)
