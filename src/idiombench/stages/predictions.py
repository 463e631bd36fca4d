"""`idiombench evaluate-predictions`: score predictions produced elsewhere with the same code
as the pipeline (lm-eval / inspect users ask for this).

Formats:
- a format a benchmark registers for its published predictions (`Benchmark.prediction_formats`,
  e.g. one JSON object per line, the item's released fields plus `prediction`, matched to
  items BY CONTENT), read by the replay backend's readers.
- `idiombench`: this project's generations table (results/generations/<model>/<bench>/
  <setting>.parquet), matched by item id; main-pass rows of the requested task.
One record answers one item (the replay backend's `match_records`): a record that fits
several items (ambiguous), has no identifying field, or disagrees with another record of its
item (conflicting) answers nothing. Such records, lines that match no item, and items without
a prediction are counted and reported (`coverage`). Size limits: foreign.MAX_FILE_BYTES,
foreign.MAX_LINE_BYTES (docs/troubleshooting.md). Two denominators
(docs/METRICS.md#5-denominators-of-evaluate-predictions):
- `test-set` (default): every item of the task; an item without a prediction is scored as
  a failed (wrong) answer, never dropped;
- `records`: only the items the file has a record for, as an authors' own evaluation
  that divides by the lines of the file does (their paper's cells; a line that matches no
  item cannot be scored and is counted in `coverage`, not in the denominator).
Both are computed on every call; `--denominator` says which one is the headline.
`--compatibility released` scores with the benchmark's `score.compatibility: released` (the
authors' released scorer; SemanticQA, OrderProbe) and makes `records` the default headline, as
the authors' scorers divide by the records they read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
import pyarrow as pa
from pydantic import ValidationError

from ..benchmarks.base import Benchmark
from ..benchmarks.contexts import AggregateContext, ScoreContext
from ..benchmarks.registry import get_benchmark, prediction_formats
from ..core.errors import DataError, IdiombenchError
from ..core.foreign import check_file_size, storable_text
from ..core.generation_types import Request, Sampling, item_context
from ..core.io import read_parquet
from ..core.items import Item
from ..generation.backends.replay import (
    NO_PREDICTION,
    OWN_FORMAT,
    SourceStats,
    known_formats,
    match_records,
    reader_for,
)
from ..generation.config import ReplaySource
from ..generation.table import GENERATION_SCHEMA
from ..params.schema import Params
from .inputs import _make_scorers, load_items

ParamsT = TypeVar("ParamsT", bound=Params)  # the params' own class (the pipeline's adds the benchmarks' sections)

DENOMINATORS = ("test-set", "records")


@dataclass
class PredictionReport:
    metrics: dict[str, float | None]  # with the chosen denominator
    items: int  # the task's items in the test set
    predicted: int  # items with a usable prediction
    lines: int  # records (lines / table rows) read from the file
    unmatched_lines: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    denominator: str = "test-set"
    recorded: int = 0  # items the file has a record for (the `records` denominator)
    by_denominator: dict[str, dict[str, float | None]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # records that answer no item for another reason, in words
    ambiguous_lines: int = 0
    unidentified_lines: int = 0
    conflicting_lines: int = 0
    conflicting_items: int = 0

    def coverage(self) -> dict[str, object]:
        return {
            "test_set_items": self.items,
            "records_read": self.lines,
            "records_matched": self.recorded,
            "records_unmatched": len(self.unmatched_lines),
            "records_ambiguous": self.ambiguous_lines,
            "records_without_identifying_field": self.unidentified_lines,
            "records_conflicting": self.conflicting_lines,
            "items_with_conflicting_records": self.conflicting_items,
            "items_with_prediction": self.predicted,
            "items_without_record": self.items - self.recorded,
            "share_of_test_set": self.recorded / self.items if self.items else None,
        }

    def to_json(self) -> dict[str, object]:
        return {
            "denominator": self.denominator,
            "metrics": self.metrics,
            "metrics_by_denominator": self.by_denominator,
            "coverage": self.coverage(),
        }


def with_compatibility(params: ParamsT, benchmark: str, compatibility: str) -> ParamsT:
    """params with `benchmarks.<benchmark>.score.compatibility` set (validated by the benchmark's model)."""
    config = params.benchmark(benchmark)
    score = getattr(config, "score", None)
    if score is None or "compatibility" not in type(score).model_fields:
        raise IdiombenchError(
            f"--compatibility: {benchmark} has no compatibility modes (its score section has no `compatibility`)"
        )
    try:
        score = type(score).model_validate({**score.model_dump(), "compatibility": compatibility})
    except ValidationError:
        allowed = type(score).model_fields["compatibility"].annotation.__args__
        raise IdiombenchError(f"--compatibility {compatibility!r}: expected one of {', '.join(allowed)}") from None
    sections = params.benchmarks.model_copy(
        update={benchmark.replace("-", "_"): config.model_copy(update={"score": score})}
    )
    return params.model_copy(update={"benchmarks": sections})


def _row(benchmark: str, task: str, setting: str, item: Item, text: str | None) -> dict[str, object]:
    return {
        "prompt_id": f"{benchmark}/{task}/{setting}/{item.item_id}",
        "benchmark": benchmark,
        "task": task,
        "setting": setting,
        "item_id": item.item_id,
        "prompt_hash": "",
        "pass": "main",
        "sample_index": 0,
        "rotation": 0,
        "text": storable_text(text or ""),
        "prompt_tokens": None,
        "completion_tokens": None,
        "finish_reason": "stop" if text is not None else "error",
        "error": None if text is not None else NO_PREDICTION,
        "request_key": "",
    }


@dataclass
class Read:
    """A predictions file read against the task's items."""

    rows: list[dict[str, Any]]  # generation rows, one per item
    lines: int  # records read (for a table: its rows)
    stats: SourceStats  # what became of each record
    recorded: set[str]  # ids of the items the file has a record for (conflicting ones too)


def _from_registered(fmt: str, path: Path, benchmark: str, task: str, setting: str, items: dict[str, Item]) -> Read:
    """A benchmark's published-predictions format, through its registered replay reader and the
    replay backend's one-record-one-item rule (`match_records`)."""
    source = ReplaySource(benchmark=benchmark, task=task, setting=setting, path=str(path), format=fmt)
    stats = SourceStats(source)
    reader = reader_for(fmt, prediction_formats())(source, path, stats)
    requests = {
        item.item_id: Request(
            key=item.item_id,
            prompt_id=f"{benchmark}/{task}/{setting}/{item.item_id}",
            messages=(),
            sampling=Sampling(),
            seed=0,
            sample_index=0,
            item=item_context(item, setting),
        )
        for item in items.values()
    }
    matches = match_records(reader, list(requests.values()))
    rows = [_row(benchmark, task, setting, item, matches.predictions.get(item.item_id)) for item in items.values()]
    return Read(rows, stats.to_json()["lines"], stats, set(matches.recorded))


IDIOMBENCH_COLUMNS = ("benchmark", "setting", "task", "item_id", "pass", "sample_index", "text", "error")


def _column_type_ok(name: str, kind: pa.DataType) -> bool:
    if name == "sample_index":
        return bool(pa.types.is_integer(kind))
    text = bool(pa.types.is_string(kind) or pa.types.is_large_string(kind))
    return text or (name == "error" and bool(pa.types.is_null(kind)))  # a column of nulls only: no error anywhere


def _from_idiombench(path: Path, benchmark: str, task: str, setting: str, items: dict[str, Item]) -> Read:
    """This project's generations table: the main-pass rows of `benchmark`/`setting`/`task`, a
    row answering the item it names (`item_id`). A table whose rows are all of another benchmark
    or setting is refused, naming what it holds (its rows are never scored under the command
    line's labels); rows of one item with different texts answer nothing (conflicting)."""
    check_file_size(path, "generations table")
    table = read_parquet(path, what="generations table")
    missing = [c for c in IDIOMBENCH_COLUMNS if c not in table.column_names]
    if missing:
        raise DataError(path, f"not an idiombench generations table: missing columns {missing}")
    wrong = [
        f"{f.name} is {f.type}"
        for f in table.select(list(IDIOMBENCH_COLUMNS)).schema
        if not _column_type_ok(f.name, f.type)
    ]
    if wrong:
        raise DataError(
            path,
            f"not an idiombench generations table: {'; '.join(wrong)}",
            expected="text columns of strings, sample_index of integers",
        )
    records = table.select(list(IDIOMBENCH_COLUMNS)).to_pylist()
    held = sorted({(str(r["benchmark"]), str(r["setting"])) for r in records})
    if records and (benchmark, setting) not in held:
        holds = ", ".join(f"{b}/{s}" for b, s in held[:10]) + (" ..." if len(held) > 10 else "")
        raise DataError(
            path,
            f"no row of {benchmark}/{setting} (the table holds {holds})",
            expected=f"predictions for --benchmark {benchmark} --setting {setting}, or the "
            "--benchmark / --setting the table was generated for",
        )
    stats = SourceStats(
        ReplaySource(benchmark=benchmark, task=task, setting=setting, path=str(path), format=OWN_FORMAT),
        lines=len(records),
    )
    texts: dict[str, dict[int, str]] = {}
    recorded: set[str] = set()  # a failed generation is a record too: wrong under either denominator
    for number, record in enumerate(records, start=1):
        if (record["benchmark"], record["setting"]) != (benchmark, setting):
            stats.blank_lines.add(number)  # another benchmark's or setting's rows (a table may hold several)
            continue
        if record["task"] != task or record["pass"] != "main" or record["sample_index"] != 0:
            stats.blank_lines.add(number)  # another task's rows, other passes and samples: not this file's answer
            continue
        if record["item_id"] is None:
            stats.unidentified_lines.add(number)
            continue
        if record["item_id"] not in items:
            continue  # unmatched
        recorded.add(record["item_id"])
        if record["error"] is None:
            texts.setdefault(record["item_id"], {})[number] = record["text"] or ""
        else:
            stats.matched_lines.add(number)
    found: dict[str, str] = {}
    for item_id, by_line in texts.items():
        if len(set(by_line.values())) == 1:
            found[item_id] = next(iter(by_line.values()))
            stats.matched_lines.update(by_line)
        else:
            stats.conflicting_lines.update(by_line)
            stats.conflicting_items.add(item_id)
    rows = [_row(benchmark, task, setting, item, found.get(item.item_id)) for item in items.values()]
    return Read(rows, len(records), stats, recorded)


def known_setting(params: Params, benchmark: str, setting: str) -> bool:
    """A setting the benchmark scores under its params (Benchmark.scores_setting)."""
    return get_benchmark(benchmark).scores_setting(params.benchmark(benchmark), setting)


def default_format(benchmark: str, path: Path) -> str:
    """The format of a predictions file given without --format: a Parquet file is this
    project's generations table; another file is the benchmark's published format, when it
    registers exactly one."""
    if path.suffix == ".parquet":
        return OWN_FORMAT
    registered = sorted(get_benchmark(benchmark).prediction_formats)
    if len(registered) != 1:
        raise IdiombenchError(
            f"{path}: give --format (formats: {', '.join(sorted(known_formats(prediction_formats())))})"
        )
    return registered[0]


def _metrics(
    bench: Benchmark[Any],
    params: Params,
    *,
    benchmark: str,
    model: str,
    task: str,
    setting: str,
    scores: dict[str, pd.DataFrame],
    all_items: dict[str, dict[str, Item]],
    meta: dict[str, object],
) -> dict[str, float | None]:
    config = params.benchmark(benchmark)
    body = bench.aggregate(
        AggregateContext(
            params=params,
            model=model,
            benchmark=benchmark,
            config=config,
            scores=scores,
            items=all_items,
            scoring_meta=meta,
        )
    )
    return bench.prediction_metrics(body, bench.metric_scopes(scores, config), task, setting)


def _only_recorded(scores: dict[str, pd.DataFrame], recorded: set[str]) -> dict[str, pd.DataFrame]:
    """The per-item scores of the items the file has a record for (the `records` denominator)."""
    return {setting: frame[frame["item_id"].isin(recorded)].reset_index(drop=True) for setting, frame in scores.items()}


def _checked_benchmark(
    params: Params, *, benchmark: str, setting: str, path: Path, fmt: str, denominator: str
) -> Benchmark[Any]:
    """The benchmark, once the command line's denominator, format, setting and file are known good."""
    if denominator not in DENOMINATORS:
        raise IdiombenchError(f"unknown denominator {denominator!r} (known: {', '.join(DENOMINATORS)})")
    bench = get_benchmark(benchmark)
    formats = known_formats(prediction_formats())
    if fmt not in formats:
        raise IdiombenchError(f"unknown format {fmt!r} (known: {', '.join(formats)})")
    if not known_setting(params, benchmark, setting):
        configured = ", ".join(params.benchmark(benchmark).render.settings) or "none"
        raise IdiombenchError(
            f"--setting {setting!r} is not a setting of {benchmark} "
            f"(benchmarks.{benchmark}.render.settings: {configured})"
        )
    if not path.is_file():
        raise IdiombenchError(f"{path}: no such predictions file")
    return bench


def _read_matching(path: Path, fmt: str, *, benchmark: str, task: str, setting: str, items: dict[str, Item]) -> Read:
    """The file read against the task's items; refused when no record answers any item."""
    read = (_from_idiombench if fmt == OWN_FORMAT else partial(_from_registered, fmt))(
        path, benchmark, task, setting, items
    )
    if not any(r["error"] is None for r in read.rows):
        # An empty file, another task's or benchmark's file: a score of 0 would look like a result.
        unmatched = read.stats.unmatched()
        why = "; ".join([f"{read.lines:,} lines read", f"{len(unmatched):,} naming no item", *read.stats.problems()])
        raise DataError(
            path,
            f"no prediction matches an item of {benchmark}/{task} ({why})",
            expected=f"predictions for the {len(items):,} items of {benchmark}/{task}/{setting}, each "
            "identifying one item (docs/troubleshooting.md#unmatched-and-ambiguous-records)",
        )
    return read


def _score(
    bench: Benchmark[Any],
    params: Params,
    *,
    benchmark: str,
    model: str,
    setting: str,
    rows: list[dict[str, object]],
    all_items: dict[str, dict[str, Item]],
) -> tuple[dict[str, pd.DataFrame], dict[str, Any], list[str]]:
    """The per-item scores of the generation rows, the scoring metadata aggregate reads, and
    the scorer's notes."""
    generations = pd.DataFrame(rows, columns=GENERATION_SCHEMA.names)
    scorers = _make_scorers(params)
    score_ctx = ScoreContext(
        params=params,
        model=model,
        benchmark=benchmark,
        config=params.benchmark(benchmark),
        generations={setting: generations},
        items=all_items,
        scorers=scorers,
    )
    scores = bench.score(score_ctx)
    meta = {
        "status": "scored",
        "roles": scorers.statuses() if scorers is not None and hasattr(scorers, "statuses") else {},
        "notes": score_ctx.notes,
    }
    return scores, meta, score_ctx.notes


def _report(
    read: Read,
    items: dict[str, Item],
    by_denominator: dict[str, dict[str, float | None]],
    *,
    denominator: str,
    notes: list[str],
) -> PredictionReport:
    """The report of a scored file: the headline metrics, both denominators and the coverage counts."""
    return PredictionReport(
        metrics=by_denominator[denominator],
        items=len(items),
        predicted=sum(1 for r in read.rows if r["error"] is None),
        lines=read.lines,
        unmatched_lines=read.stats.unmatched(),
        notes=notes,
        denominator=denominator,
        recorded=len(read.recorded),
        by_denominator=by_denominator,
        problems=read.stats.problems(),
        ambiguous_lines=len(read.stats.ambiguous_lines),
        unidentified_lines=len(read.stats.unidentified_lines),
        conflicting_lines=len(read.stats.conflicting_lines),
        conflicting_items=len(read.stats.conflicting_items),
    )


def evaluate_predictions(
    params: Params,
    *,
    benchmark: str,
    model: str,
    task: str,
    setting: str,
    path: Path,
    fmt: str,
    denominator: str = "test-set",
) -> PredictionReport:
    bench = _checked_benchmark(
        params, benchmark=benchmark, setting=setting, path=path, fmt=fmt, denominator=denominator
    )
    all_items = load_items(benchmark)
    if task not in all_items:
        raise IdiombenchError(f"{benchmark} has no task {task!r} (built tasks: {', '.join(sorted(all_items))})")
    items = all_items[task]
    read = _read_matching(path, fmt, benchmark=benchmark, task=task, setting=setting, items=items)
    scores, meta, notes = _score(
        bench, params, benchmark=benchmark, model=model, setting=setting, rows=read.rows, all_items=all_items
    )
    metrics = partial(
        _metrics,
        bench,
        params,
        benchmark=benchmark,
        model=model,
        task=task,
        setting=setting,
        all_items=all_items,
        meta=meta,
    )
    by_denominator = {"test-set": metrics(scores=scores)}
    # scored once; only the aggregation differs (a complete file gives the same numbers twice)
    by_denominator["records"] = (
        by_denominator["test-set"]
        if len(read.recorded) == len(items)
        else metrics(scores=_only_recorded(scores, read.recorded))
    )
    return _report(read, items, by_denominator, denominator=denominator, notes=list(notes))
