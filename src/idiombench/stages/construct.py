"""The construct stage: a benchmark's own data-construction pipeline rebuilt from its release."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..benchmarks.registry import construction_names, get_benchmark
from ..core import paths
from ..core.errors import IdiombenchError
from ..core.io import staged_directory, write_json
from ..params.schema import Params
from .inputs import SKIPPED


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
