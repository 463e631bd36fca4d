"""The score and aggregate stages: generic drivers around per-benchmark hooks.

A benchmark package's BENCHMARK object may provide (see docs/ARCHITECTURE.md):

    score(ctx: ScoreContext) -> dict[str, pandas.DataFrame]
        per-item scores, one table per setting (rows keyed by prompt_id / item_id);
        unparseable outputs are rows with a flag, never dropped.
    aggregate(ctx: AggregateContext) -> dict
        the metrics JSON body: {"settings": {setting: {"metrics": {...}, "counts": {...}}},
        "breakdowns": {...}, "provenance": {...}}
    report_section(ctx: report.build.ReportContext) -> report.tables.Section | None

A (model, benchmark) pair that does not apply (benchmark disabled, or not in the
model's `benchmarks:` list) is recorded as skipped with the reason, so that every
stage of the static DAG has an explicit, truthful output.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from . import paths
from .benchmarks.registry import construction_names, get_benchmark
from .benchmarks.contexts import SCORE_KEYS, AggregateContext, ScoreContext
from .params_schema import Params
from .errors import DataError, IdiombenchError
from .generation.table import GENERATION_SCHEMA
from .io import (ParquetAppender, parquet_rows, read_json, read_json_object, read_parquet, require_complete,
                 staged_directory, write_json)
from .ownership import earlier_json_file, stamp, stamped_by
from .items import Item, read_items
from .progress import Progress
from .redact import scrub

SKIPPED = "skipped"
SCORED = "scored"
METRICS_KEYS = ("benchmark", "model", "status")  # in every metrics file
# every top-level key a metrics file of an earlier version (before its ownership record) had:
# such a file is recognised only when it has no other (ownership.earlier_json_file)
EARLIER_METRICS_KEYS = (*METRICS_KEYS, "reason", "model_info", "settings", "breakdowns", "provenance")


def is_metrics_file(path: Path, benchmark: str, model: str) -> bool:
    """A metrics file `idiombench aggregate` wrote (its record matches), or one of an earlier
    version for this benchmark and model (cli: aggregate replaces only these)."""
    return stamped_by(path, paths.AGGREGATE_OUTPUT) or earlier_json_file(
        path, METRICS_KEYS, EARLIER_METRICS_KEYS, benchmark=benchmark, model=model)


def applies(params: Params, model: str, benchmark: str) -> str | None:
    """None when `model` runs `benchmark`, else the reason it does not."""
    if model not in params.models:
        raise IdiombenchError(f"unknown model {model!r} (params models: {', '.join(params.models) or 'none'})")
    if not params.benchmark(benchmark).enabled:
        return f"benchmarks.{benchmark}.enabled is false"
    selected = params.models[model].benchmarks
    if selected is not None and benchmark not in selected:
        return f"models.{model}.benchmarks does not include {benchmark}"
    return None


def load_items(benchmark: str, processed_dir: Path | None = None,
               only: Collection[str] | None = None) -> dict[str, dict[str, Item]]:
    """task -> item_id -> Item, from the built Parquet files (only the ids in `only`, given)."""
    directory = processed_dir or paths.processed_dir(benchmark)
    out: dict[str, dict[str, Item]] = {}
    for path in sorted(directory.glob("*.parquet")):
        items = read_items(path, only)
        out[path.stem] = {item.item_id: item for item in items}
    if not out:
        raise IdiombenchError(f"{directory} holds no built items: run `idiombench build {benchmark}` first")
    return out


class GenerationTables(Mapping[str, pd.DataFrame]):
    """setting -> generations table, each read when asked for and only the last one kept: a
    benchmark that scores setting by setting holds one setting's generations at a time."""

    def __init__(self, files: dict[str, Path]) -> None:
        self.files = files
        self._last: tuple[str, pd.DataFrame] | None = None

    def __getitem__(self, setting: str) -> pd.DataFrame:
        if self._last is None or self._last[0] != setting:
            self._last = None  # the previous table is freed before the next one is read
            frame = read_parquet(self.files[setting], GENERATION_SCHEMA, what="generations table").to_pandas()
            self._last = (setting, frame)
        return self._last[1]

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)

    def rows(self) -> int:
        return sum(parquet_rows(path, what="generations table") for path in self.files.values())


def load_generations(model: str, benchmark: str, generations_dir: Path | None = None) -> GenerationTables:
    """setting -> generations table of one model on one benchmark (read on access)."""
    root = require_complete(generations_dir or paths.generations_dir(model), paths.GENERATION_INFO,
                            how=f"run `idiombench generate --model {model}` first")
    directory = root / benchmark
    if not directory.is_dir():
        raise IdiombenchError(f"{directory} is missing: run `idiombench generate --model {model}` first")
    return GenerationTables({path.stem: path for path in sorted(directory.glob("*.parquet"))})


def _make_scorers(params: Params) -> Any:
    scoring = getattr(params, "scoring", None)
    if scoring is None:
        return None
    from .scoring import Scorers

    return Scorers(scoring)


def run_score(params: Params, model: str, benchmark: str, out: Path | None = None) -> dict[str, Any]:
    out = out or paths.scores_dir(model, benchmark)
    reason = applies(params, model, benchmark)
    with staged_directory(out, paths.SCORE_OUTPUT) as staging:
        if reason is not None:
            meta = {"benchmark": benchmark, "model": model, "status": SKIPPED, "reason": reason}
            write_json(staging / "scoring_meta.json", meta)
            return meta
        bench = get_benchmark(benchmark)
        generations = load_generations(model, benchmark)
        ctx = ScoreContext(
            params=params, model=model, benchmark=benchmark, config=params.benchmark(benchmark),
            generations=generations, items=load_items(benchmark), scorers=_make_scorers(params),
        )
        with Progress(generations.rows(), f"score {benchmark} {model}", unit="row") as progress:
            settings = write_chunks(staging, bench.score_chunks(ctx), progress, benchmark)
        meta = {
            "benchmark": benchmark,
            "model": model,
            "status": SCORED,
            "settings": settings,
            "roles": ctx.scorers.statuses() if ctx.scorers is not None and hasattr(ctx.scorers, "statuses") else {},
            "notes": ctx.notes,
        }
        write_json(staging / "scoring_meta.json", meta)
        return meta


def write_chunks(folder: Path, chunks: Iterable[tuple[str, pd.DataFrame]], progress: Progress,
                 benchmark: str) -> dict[str, int]:
    """Each setting's chunks appended to <folder>/<setting>.parquet as they come (one row group
    each; a setting's chunks are contiguous); the rows per setting. Every chunk carries
    SCORE_KEYS (a benchmark's score hook that drops them fails here, not in a later stage)."""
    counts: dict[str, int] = {}
    writer, current = None, None
    try:
        for setting, frame in chunks:
            missing = [key for key in SCORE_KEYS if key not in frame.columns]
            if missing:
                raise IdiombenchError(
                    f"score {benchmark}: the score table of setting {setting!r} has no column {', '.join(missing)} "
                    f"(a bug of the benchmark's score hook: every row carries {', '.join(SCORE_KEYS)})")
            table = pa.Table.from_pandas(frame, preserve_index=False)
            if setting != current:
                if setting in counts:
                    raise IdiombenchError(f"score: the chunks of setting {setting!r} are not contiguous (a bug of the "
                                          "benchmark's score_chunks)")
                if writer is not None:
                    writer.close()
                writer, current = ParquetAppender(folder / f"{setting}.parquet", table.schema), setting
                counts[setting] = 0
            writer.write(table)
            counts[setting] += table.num_rows
            progress.update(table.num_rows)
    finally:
        if writer is not None:
            writer.close()
    return dict(sorted(counts.items()))


def run_construct(params: Params, benchmark: str, out: Path | None = None) -> dict[str, Any]:
    """Rebuild a benchmark's own data from its release (G-IdiomAlign: the gloss alignment) into
    results/construction/<benchmark>/; a disabled benchmark records "skipped" with the reason."""
    bench = get_benchmark(benchmark)
    if not bench.constructs:
        raise IdiombenchError(
            f"benchmark {benchmark} has no construction pipeline (benchmarks with one: "
            f"{', '.join(construction_names()) or 'none'})"
        )
    out = out or paths.construction_dir(benchmark)
    if not params.benchmark(benchmark).enabled:
        body = {"benchmark": benchmark, "status": SKIPPED, "reason": f"benchmarks.{benchmark}.enabled is false"}
        with staged_directory(out, paths.CONSTRUCT_OUTPUT) as staging:
            write_json(staging / paths.CONSTRUCTION, body)
        return body
    return bench.run_construction(params, paths.processed_dir(benchmark), out)


def run_aggregate(params: Params, model: str, benchmark: str, out: Path | None = None) -> dict[str, Any]:
    out = out or paths.metrics_file(benchmark, model)
    scores_dir = paths.scores_dir(model, benchmark)
    meta_path = scores_dir / "scoring_meta.json"
    if not meta_path.exists():
        raise IdiombenchError(f"{meta_path} is missing: run `idiombench score {benchmark} --model {model}` first")
    meta = read_json_object(meta_path)
    if meta.get("status") not in (SCORED, SKIPPED):
        raise DataError(meta_path, f"status {meta.get('status')!r}",
                        expected=f"a record of `idiombench score` (status {SCORED!r} or {SKIPPED!r})")
    body: dict[str, Any] = {"benchmark": benchmark, "model": model, "status": meta["status"]}
    if meta["status"] == SKIPPED:
        body["reason"] = meta.get("reason", "skipped")
    else:
        files = sorted(scores_dir.glob("*.parquet"))
        with Progress(sum(parquet_rows(f, what="score table") for f in files), f"aggregate {benchmark} {model}",
                      unit="row") as progress:
            scores = {}
            for path in files:
                scores[path.stem] = read_parquet(path, what="score table").to_pandas()
                progress.update(len(scores[path.stem]))
            ctx = AggregateContext(
                params=params, model=model, benchmark=benchmark, config=params.benchmark(benchmark),
                scores=scores, items=load_items(benchmark), scoring_meta=meta,
            )
            body.update(get_benchmark(benchmark).aggregate(ctx))  # the summary line's time includes this
        body["model_info"] = model_info(params, model)
    write_json(out, stamp(body, paths.AGGREGATE_OUTPUT))
    return body


def model_info(params: Params, model: str) -> dict[str, Any]:
    """What the report and MLflow say about a model: its config, and the identity the
    generate stage recorded (revision or weight-file hash) when there is one."""
    config = params.models[model]
    info: dict[str, Any] = {
        "name": model,
        "display_name": config.display_name or model,
        "config": scrub(json.loads(config.model_dump_json())),  # never a credential from base_url
    }
    identity_file = paths.generations_dir(model) / "identity.json"
    if paths.generations_complete(model) and identity_file.exists():  # never from a partial folder
        info["identity"] = scrub(read_json(identity_file))
    return info
