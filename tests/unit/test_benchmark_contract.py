"""The benchmark contract (benchmarks/base.py): every registered benchmark implements it,
drivers call its hooks, and a package that does not is refused with a clear message."""

from __future__ import annotations

import inspect
import sys
import types

import pytest

from idiombench import benchmarks
from idiombench.benchmarks import NAMES, get_benchmark
from idiombench.benchmarks.base import Benchmark


@pytest.mark.parametrize("name", NAMES)
def test_every_registered_benchmark_implements_the_contract(name: str):
    bench = get_benchmark(name)
    assert isinstance(bench, Benchmark) and bench.name == name
    assert not inspect.isabstract(type(bench))
    assert bench.render_templates
    # the reference backends' hook is a plain function (its module's source is hashed into
    # the reference backends' identity), not a method bound to the instance
    assert bench.format_reference_answer is None or inspect.isfunction(bench.format_reference_answer)
    if bench.constructs:
        assert type(bench).run_construction is not Benchmark.run_construction


def test_a_class_missing_a_required_hook_cannot_be_instantiated():
    class NoScore(Benchmark):
        name = "no-score"
        render_templates = "prompts"

        def file_specs(self, config): return []
        def build(self, raw_dir, config): ...
        def render(self, tasks, config, raw_dir): ...
        def aggregate(self, ctx): return {}
        def report_section(self, ctx): return None
        def prediction_metrics(self, body, task, setting): return {}

    with pytest.raises(TypeError, match="score"):
        NoScore()


def test_registry_names_the_known_benchmarks_on_a_miss_and_refuses_a_package_without_the_contract(monkeypatch):
    with pytest.raises(KeyError, match=r"unknown benchmark 'nope' \(known: orderprobe, g-idiomalign"):
        get_benchmark("nope")
    fake = types.ModuleType("idiombench.benchmarks.fake_pkg")
    fake.BENCHMARK = object()
    monkeypatch.setitem(sys.modules, fake.__name__, fake)
    monkeypatch.setitem(benchmarks.MODULES, "fake", "fake_pkg")
    with pytest.raises(TypeError, match=r"fake_pkg.BENCHMARK must be an instance of a base.Benchmark subclass"):
        get_benchmark("fake")


def test_defaults_of_the_optional_hooks():
    bench = get_benchmark("orderprobe")
    assert bench.acquire_notes(None) == [] and not bench.constructs
    with pytest.raises(NotImplementedError, match="orderprobe has no construction pipeline"):
        bench.run_construction(None, [], None)  # type: ignore[arg-type]


def test_benchmark_packages_do_not_import_the_stage_drivers():
    """Context types live beside the contract (benchmarks/contexts.py): a benchmark package
    depends on the contract, never on the drivers that call it."""
    import re
    from pathlib import Path

    root = Path(benchmarks.__file__).parent
    drivers = r"(evaluation|render|cli|predictions|report\.build|tracking(\.\w+)?)"
    pattern = re.compile(rf"^\s*from \.\.\.{drivers} import|^\s*import idiombench\.{drivers}\b|^\s*from idiombench\.{drivers} import",
                         re.MULTILINE)
    offenders = [f"{path.relative_to(root)}: {m.group(0).strip()}"
                 for path in sorted(root.rglob("*.py")) for m in pattern.finditer(path.read_text(encoding="utf-8"))]
    assert offenders == []
