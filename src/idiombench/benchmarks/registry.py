"""The benchmark registry: the four built-in benchmarks, plus any installed package that
registers one under the entry-point group `idiombench.benchmarks` (name = benchmark name,
value = the module holding its `BENCHMARK`), plus the project's declarative benchmarks
(`benchmarks/<name>.yaml` in the working directory, the project root: benchmarks/declared/).
Every stage, the params schema, the Snakemake rules and dvc.yaml (`idiombench dvc-yaml`) take
the list from here.

It sits above the benchmark packages (it loads them) and below the stage drivers: what a
lower layer needs from the benchmarks (the scorer roles' paper facts, the reference and
replay backends' hooks) is collected here and handed down by the caller, never looked up
from below (docs/ARCHITECTURE.md, "Layers")."""

from __future__ import annotations

import importlib
import importlib.metadata
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError
from ..core.schema import name_problem
from ..generation.backends import BenchmarkHooks
from ..scoring.provenance import PaperRole
from .base import Benchmark
from .contexts import PlotSpec

ENTRY_POINT_GROUP = "idiombench.benchmarks"
_PACKAGE = __name__.rpartition(".")[0]
# benchmark name (as used in paths, params.yaml and the CLI) -> module holding its BENCHMARK
BUILTIN: dict[str, str] = {
    "orderprobe": f"{_PACKAGE}.orderprobe",
    "g-idiomalign": f"{_PACKAGE}.g_idiomalign",
    "semanticqa": f"{_PACKAGE}.semanticqa",
    "chengyu-bench": f"{_PACKAGE}.chengyu_bench",
}


# the package every declaration's benchmark is made by; loaded as the other benchmark packages are
# (importlib), so that no benchmark package's imports reach another through the registry
DECLARED_MODULE = f"{_PACKAGE}.declared"


def _declared() -> Any:
    """The declared benchmarks' package (benchmarks/declared/)."""
    return importlib.import_module(DECLARED_MODULE)


# a registered benchmark's distribution (name, version), as its packaging metadata says: how the
# DAG names a plugin's code (pipeline/records.py), never by the folder it is installed in
DISTRIBUTIONS: dict[str, tuple[str, str]] = {}


def _discover() -> dict[str, str]:
    """The built-in benchmarks, then the registered ones in name order (a stable DAG)."""
    found = dict(BUILTIN)
    plugins = sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)
    for entry in plugins:
        problem = name_problem(entry.name, key=True)  # a path component, wildcard and command word
        if problem:
            raise RuntimeError(f"benchmark {problem} (entry-point group {ENTRY_POINT_GROUP}, module {entry.value})")
        if entry.name in found:
            raise RuntimeError(
                f"benchmark {entry.name!r} is registered twice ({found[entry.name]} and {entry.value}, "
                f"entry-point group {ENTRY_POINT_GROUP})"
            )
        found[entry.name] = entry.value
        dist = getattr(entry, "dist", None)
        if dist is not None:
            DISTRIBUTIONS[entry.name] = (dist.metadata["Name"] or dist.name, dist.version)
    return found


def _declarations(modules: dict[str, str]) -> tuple[dict[str, Path], list[str]]:
    """(name -> declaration file, why the others are not registered) of the project's
    benchmarks/<name>.yaml. Their files are not read here (importing the registry reads no
    declaration); a name that is not a valid benchmark name, or that another benchmark (or its
    params section's key) already has, is refused: `declaration_problems` says it."""
    found: dict[str, Path] = {}
    refused: list[str] = []
    sections = {name.replace("-", "_"): name for name in modules}
    package = _declared()
    discovered: dict[str, Path] = package.discover()
    for name, path in discovered.items():
        problem = name_problem(name, key=True)
        if problem is None and name in package.RESERVED:
            problem = f"{name!r} is reserved (data/{name}/ is the project's own folder)"
        other = sections.get(name.replace("-", "_"))
        if problem is None and other is not None:
            problem = f"{name!r} is already the name of benchmark {other!r}" + (
                "" if other == name else " (a params section's key)"
            )
        if problem is not None:
            refused.append(f"{path}: the benchmark's name (the file's name) {problem}")
            continue
        sections[name.replace("-", "_")] = name
        found[name] = path
    return found, refused


_CODE_MODULES = _discover()
# name -> declaration file of the project's declarative benchmarks (benchmarks/<name>.yaml)
DECLARED, _REFUSED = _declarations(_CODE_MODULES)
# name -> the module of its code (a declared benchmark's: the package every declaration shares)
MODULES: dict[str, str] = {**_CODE_MODULES, **dict.fromkeys(DECLARED, DECLARED_MODULE)}
NAMES: tuple[str, ...] = tuple(MODULES)


def declaration_problems() -> list[str]:
    """One line per declaration that cannot be used: a refused name, or an invalid file (every
    bad key named). Params validation reports them (check-params and every stage: exit 2)."""
    problems = list(_REFUSED)
    for name, path in DECLARED.items():
        try:
            _declared().load(name, path)
        except ConfigError as error:
            problems.append(str(error))
    return problems


def get_benchmark(name: str) -> Benchmark[Any]:
    """The module-level BENCHMARK object of a benchmark's module (a base.Benchmark), or the
    benchmark a declaration makes (a ConfigError naming the file and key when it is invalid)."""
    if name in DECLARED:
        made: Benchmark[Any] = _declared().load(name, DECLARED[name])
        return made
    if name not in MODULES:
        raise KeyError(f"unknown benchmark {name!r} (known: {', '.join(NAMES)})")
    module = importlib.import_module(MODULES[name])
    bench = getattr(module, "BENCHMARK", None)
    if not isinstance(bench, Benchmark):
        raise TypeError(
            f"{module.__name__}.BENCHMARK must be an instance of a base.Benchmark subclass, got {type(bench).__name__}"
        )
    if bench.name != name:
        raise TypeError(f"{module.__name__}.BENCHMARK is named {bench.name!r}, registered as {name!r}")
    return bench


def construction_names() -> list[str]:
    """Benchmarks whose own data-construction pipeline is rebuilt (`run_construction`)."""
    return [name for name in NAMES if get_benchmark(name).constructs]


def attention_names() -> list[str]:
    """Benchmarks with attention diagnostics (`idiombench attention <benchmark> --model <m>`)."""
    return [name for name in NAMES if get_benchmark(name).attention_diagnostics]


def all_plots() -> list[tuple[str, PlotSpec]]:
    """(benchmark, plot) for every curve family the registered benchmarks declare."""
    return [(name, plot) for name in NAMES for plot in get_benchmark(name).plots]


def paper_roles() -> dict[str, PaperRole]:
    """Every scorer role declared by a registered benchmark (`Benchmark.scorer_roles`), by
    name: config.py attaches them to the params' scoring section."""
    roles: dict[str, PaperRole] = {}
    for benchmark in NAMES:
        for role in get_benchmark(benchmark).scorer_roles:
            if role.name in roles:
                raise RuntimeError(f"scorer role {role.name!r} is declared twice (second by {benchmark})")
            roles[role.name] = role
    return roles


def prediction_formats() -> dict[str, type[Any]]:
    """Every predictions format the benchmarks register (`Benchmark.prediction_formats`),
    besides the project's own `idiombench` (generation.backends.replay)."""
    formats: dict[str, type[object]] = {}
    for name in NAMES:
        for fmt, reader in get_benchmark(name).prediction_formats.items():
            if fmt in formats:
                raise RuntimeError(f"predictions format {fmt!r} is registered twice (second by {name})")
            formats[fmt] = reader
    return formats


def backend_hooks() -> BenchmarkHooks:
    """What the reference and replay backends need from the registered benchmarks."""
    benches = {name: get_benchmark(name) for name in NAMES}
    return BenchmarkHooks(
        prediction_formats=prediction_formats(),
        answer_formatters={name: bench.format_reference_answer for name, bench in benches.items()},
        classification_tasks={name: bench.classification_tasks for name, bench in benches.items()},
    )
