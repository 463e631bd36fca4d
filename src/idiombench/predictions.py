"""`idiombench evaluate-predictions`: score predictions produced elsewhere with the same code
as the pipeline (lm-eval / inspect users ask for this).

Formats:
- `semanticqa`: the SemanticQA published results as released (one JSON object per line:
  the item's released fields plus `prediction`), matched to items BY CONTENT with the
  replay backend's matcher (generation/backends/replay.py).
- `idiombench`: this project's generations table (results/generations/<model>/<bench>/
  <setting>.parquet), matched by item id; main-pass rows of the requested task.
Lines that match no item, and items without a prediction, are counted and reported; an
item without a prediction is scored as a failed (wrong) answer, never dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .benchmarks import get_benchmark
from .config import Params
from .errors import DataError, IdiombenchError
from .evaluation import AggregateContext, ScoreContext, _make_scorers, load_items
from .generation.backends.replay import NO_PREDICTION, SemanticQASource, SourceStats
from .generation.config import ReplaySource
from .generation.stage import item_context
from .generation.table import GENERATION_SCHEMA
from .generation.types import Request, Sampling
from .io import read_parquet
from .items import Item

FORMATS = ("semanticqa", "idiombench")


@dataclass
class PredictionReport:
    metrics: dict[str, float]
    items: int
    predicted: int
    lines: int
    unmatched_lines: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _row(benchmark: str, task: str, setting: str, item: Item, text: str | None) -> dict[str, Any]:
    return {
        "prompt_id": f"{benchmark}/{task}/{setting}/{item.item_id}",
        "benchmark": benchmark, "task": task, "setting": setting, "item_id": item.item_id,
        "prompt_hash": "", "pass": "main", "sample_index": 0,
        "text": text or "", "prompt_tokens": None, "completion_tokens": None,
        "finish_reason": "stop" if text is not None else "error",
        "error": None if text is not None else NO_PREDICTION, "request_key": "",
    }


def _from_semanticqa(path: Path, benchmark: str, task: str, setting: str,
                     items: dict[str, Item]) -> tuple[list[dict[str, Any]], int, list[int]]:
    source = ReplaySource(benchmark=benchmark, task=task, setting=setting, path=str(path), format="semanticqa")
    stats = SourceStats(source)
    matcher = SemanticQASource(source, path, stats)
    rows = []
    for item in items.values():
        request = Request(key="", prompt_id="", messages=(), sampling=Sampling(), seed=0, sample_index=0,
                          item=item_context(item, setting))
        rows.append(_row(benchmark, task, setting, item, matcher.lookup(request)))
    summary = stats.to_json()
    return rows, summary["lines"], stats.unmatched()


def _from_idiombench(path: Path, benchmark: str, task: str, setting: str,
                     items: dict[str, Item]) -> tuple[list[dict[str, Any]], int, list[int]]:
    table = read_parquet(path)
    missing = [c for c in ("task", "item_id", "pass", "sample_index", "text", "error") if c not in table.column_names]
    if missing:
        raise DataError(path, f"not an idiombench generations table: missing columns {missing}")
    found: dict[str, str] = {}
    unmatched = []
    records = table.to_pylist()
    for number, record in enumerate(records, start=1):
        if record["task"] != task or record["pass"] != "main" or record["sample_index"] != 0:
            continue
        if record["item_id"] not in items:
            unmatched.append(number)
        elif record["error"] is None:
            found.setdefault(record["item_id"], record["text"])
    rows = [_row(benchmark, task, setting, item, found.get(item.item_id)) for item in items.values()]
    return rows, len(records), unmatched


def known_setting(params: Params, benchmark: str, setting: str) -> bool:
    """A setting the benchmark renders in params, or (SemanticQA) a sequential or LCC-scaling
    setting its enabled scoring options name."""
    config = params.benchmark(benchmark)
    if setting in config.render.settings:
        return True
    score = getattr(config, "score", None)
    sequential = getattr(score, "sequential", None)
    if sequential is not None and sequential.enabled and setting.startswith(sequential.setting_prefix):
        return setting[len(sequential.setting_prefix):] in config.render.settings
    scaling = getattr(score, "lcc_scaling", None)
    return bool(scaling is not None and scaling.enabled and re.fullmatch(scaling.setting_pattern, setting))


def evaluate_predictions(params: Params, benchmark: str, task: str, setting: str, model: str,
                         path: Path, fmt: str) -> PredictionReport:
    bench = get_benchmark(benchmark)
    if fmt not in FORMATS:
        raise IdiombenchError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    if not known_setting(params, benchmark, setting):
        configured = ", ".join(params.benchmark(benchmark).render.settings) or "none"
        raise IdiombenchError(
            f"--setting {setting!r} is not a setting of {benchmark} (benchmarks.{benchmark}.render.settings: {configured})"
        )
    if not path.is_file():
        raise IdiombenchError(f"{path}: no such predictions file")
    all_items = load_items(benchmark)
    if task not in all_items:
        raise IdiombenchError(f"{benchmark} has no task {task!r} (built tasks: {', '.join(sorted(all_items))})")
    items = all_items[task]
    reader = _from_semanticqa if fmt == "semanticqa" else _from_idiombench
    rows, lines, unmatched = reader(path, benchmark, task, setting, items)
    if not any(r["error"] is None for r in rows):
        # An empty file, another task's or benchmark's file: a score of 0 would look like a result.
        raise DataError(path, f"no prediction matches an item of {benchmark}/{task} ({lines:,} lines read, "
                        f"{len(unmatched):,} naming no item)", expected=f"predictions for the {len(items):,} items "
                        f"of {benchmark}/{task}/{setting}")
    generations = pd.DataFrame(rows, columns=GENERATION_SCHEMA.names)
    scorers = _make_scorers(params)
    score_ctx = ScoreContext(params=params, model=model, benchmark=benchmark, config=params.benchmark(benchmark),
                             generations={setting: generations}, items=all_items, scorers=scorers)
    scores = bench.score(score_ctx)
    meta = {"status": "scored", "roles": scorers.statuses() if scorers is not None and hasattr(scorers, "statuses") else {},
            "notes": score_ctx.notes}
    body = bench.aggregate(AggregateContext(params=params, model=model, benchmark=benchmark,
                                            config=params.benchmark(benchmark), scores=scores, items=all_items,
                                            scoring_meta=meta))
    predicted = sum(1 for r in rows if r["error"] is None)
    return PredictionReport(
        metrics=bench.prediction_metrics(body, task, setting), items=len(items), predicted=predicted,
        lines=lines, unmatched_lines=unmatched, notes=list(score_ctx.notes),
    )
