"""The benchmark registry: adding a benchmark means adding its subpackage here."""

from __future__ import annotations

import importlib
from typing import Any

# benchmark name (as used in paths, params.yaml and the CLI) -> subpackage
MODULES: dict[str, str] = {
    "orderprobe": "orderprobe",
    "g-idiomalign": "g_idiomalign",
    "semanticqa": "semanticqa",
    "chengyu-bench": "chengyu_bench",
}
NAMES: tuple[str, ...] = tuple(MODULES)


def get_benchmark(name: str) -> Any:
    """The module-level BENCHMARK object of a benchmark subpackage."""
    if name not in MODULES:
        raise KeyError(f"unknown benchmark {name!r} (known: {', '.join(NAMES)})")
    return importlib.import_module(f"{__name__}.{MODULES[name]}").BENCHMARK
