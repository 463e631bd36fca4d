"""The score stage: a benchmark's `score_chunks` hook (per-item score tables, one per setting;
unparseable outputs are rows with a flag, never dropped) written as the chunks come."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from ..benchmarks.contexts import SCORE_KEYS, ScoreContext
from ..benchmarks.registry import get_benchmark
from ..core import paths
from ..core.errors import IdiombenchError
from ..core.io import ParquetAppender, staged_directory, write_json
from ..core.progress import Progress
from ..params.schema import Params
from .inputs import SCORED, SKIPPED, _make_scorers, applies, load_generations, load_items


def run_score(params: Params, *, benchmark: str, model: str, out: Path | None = None) -> dict[str, Any]:
    out = out or paths.scores_dir(benchmark=benchmark, model=model)
    reason = applies(params, benchmark=benchmark, model=model)
    with staged_directory(out, paths.SCORE_OUTPUT) as staging:
        if reason is not None:
            meta: dict[str, object] = {"benchmark": benchmark, "model": model, "status": SKIPPED, "reason": reason}
            write_json(staging / "scoring_meta.json", meta)
            return meta
        bench = get_benchmark(benchmark)
        generations = load_generations(benchmark=benchmark, model=model)
        ctx = ScoreContext(
            params=params,
            model=model,
            benchmark=benchmark,
            config=params.benchmark(benchmark),
            generations=generations,
            items=load_items(benchmark),
            scorers=_make_scorers(params),
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


def write_chunks(
    folder: Path, chunks: Iterable[tuple[str, pd.DataFrame]], progress: Progress, benchmark: str
) -> dict[str, int]:
    """Each setting's chunks appended to <folder>/<setting>.parquet as they come (one row group
    each; a setting's chunks are contiguous); the rows per setting. Every chunk carries
    SCORE_KEYS (a benchmark's score hook that drops them fails here, not in a later stage)."""
    counts: dict[str, int] = {}
    writer: ParquetAppender | None = None
    current: str | None = None
    try:
        for setting, frame in chunks:
            missing = [key for key in SCORE_KEYS if key not in frame.columns]
            if missing:
                raise IdiombenchError(
                    f"score {benchmark}: the score table of setting {setting!r} has no column {', '.join(missing)} "
                    f"(a bug of the benchmark's score hook: every row carries {', '.join(SCORE_KEYS)})"
                )
            table = pa.Table.from_pandas(frame, preserve_index=False)
            if setting != current:
                if setting in counts:
                    raise IdiombenchError(
                        f"score: the chunks of setting {setting!r} are not contiguous (a bug of the "
                        "benchmark's score_chunks)"
                    )
                if writer is not None:
                    writer.close()
                writer, current = ParquetAppender(folder / f"{setting}.parquet", table.schema), setting
                counts[setting] = 0
            assert writer is not None  # opened above at the setting's first chunk
            writer.write(table)
            counts[setting] += table.num_rows
            progress.update(table.num_rows)
    finally:
        if writer is not None:
            writer.close()
    return dict(sorted(counts.items()))
