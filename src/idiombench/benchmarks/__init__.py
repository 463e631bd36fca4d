"""The benchmark registry: adding a benchmark means adding its subpackage here."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import Benchmark

# benchmark name (as used in paths, params.yaml and the CLI) -> subpackage
MODULES: dict[str, str] = {
    "orderprobe": "orderprobe",
    "g-idiomalign": "g_idiomalign",
    "semanticqa": "semanticqa",
    "chengyu-bench": "chengyu_bench",
}
NAMES: tuple[str, ...] = tuple(MODULES)


def get_benchmark(name: str) -> Benchmark:
    """The module-level BENCHMARK object of a benchmark subpackage (a base.Benchmark)."""
    from .base import Benchmark

    if name not in MODULES:
        raise KeyError(f"unknown benchmark {name!r} (known: {', '.join(NAMES)})")
    module = importlib.import_module(f"{__name__}.{MODULES[name]}")
    bench = getattr(module, "BENCHMARK", None)
    if not isinstance(bench, Benchmark):
        raise TypeError(f"{module.__name__}.BENCHMARK must be an instance of a base.Benchmark subclass, "
                        f"got {type(bench).__name__}")
    return bench
