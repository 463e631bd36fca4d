"""The benchmark registry: the four built-in benchmarks, plus any installed package that
registers one under the entry-point group `idiombench.benchmarks` (name = benchmark name,
value = the module holding its `BENCHMARK`). Every stage, the params schema, the Snakemake
rules and dvc.yaml (`idiombench dvc-yaml`) take the list from here."""

from __future__ import annotations

import importlib
import importlib.metadata
from typing import TYPE_CHECKING

from ..schema import name_problem

if TYPE_CHECKING:
    from .base import Benchmark

ENTRY_POINT_GROUP = "idiombench.benchmarks"
# benchmark name (as used in paths, params.yaml and the CLI) -> module holding its BENCHMARK
BUILTIN: dict[str, str] = {
    "orderprobe": f"{__name__}.orderprobe",
    "g-idiomalign": f"{__name__}.g_idiomalign",
    "semanticqa": f"{__name__}.semanticqa",
    "chengyu-bench": f"{__name__}.chengyu_bench",
}


def _discover() -> dict[str, str]:
    """The built-in benchmarks, then the registered ones in name order (a stable DAG)."""
    found = dict(BUILTIN)
    plugins = sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)
    for entry in plugins:
        problem = name_problem(entry.name, key=True)  # a path component, wildcard and command word
        if problem:
            raise RuntimeError(f"benchmark {problem} (entry-point group {ENTRY_POINT_GROUP}, module {entry.value})")
        if entry.name in found:
            raise RuntimeError(f"benchmark {entry.name!r} is registered twice ({found[entry.name]} and {entry.value}, "
                               f"entry-point group {ENTRY_POINT_GROUP})")
        found[entry.name] = entry.value
    return found


MODULES: dict[str, str] = _discover()
NAMES: tuple[str, ...] = tuple(MODULES)


def get_benchmark(name: str) -> Benchmark:
    """The module-level BENCHMARK object of a benchmark's module (a base.Benchmark)."""
    from .base import Benchmark

    if name not in MODULES:
        raise KeyError(f"unknown benchmark {name!r} (known: {', '.join(NAMES)})")
    module = importlib.import_module(MODULES[name])
    bench = getattr(module, "BENCHMARK", None)
    if not isinstance(bench, Benchmark):
        raise TypeError(f"{module.__name__}.BENCHMARK must be an instance of a base.Benchmark subclass, "
                        f"got {type(bench).__name__}")
    if bench.name != name:
        raise TypeError(f"{module.__name__}.BENCHMARK is named {bench.name!r}, registered as {name!r}")
    return bench
