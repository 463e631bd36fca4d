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
    monkeypatch.setitem(benchmarks.MODULES, "fake", fake.__name__)
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
    drivers = r"(evaluation|render|cli|predictions|report\.build|tracking(\.\w+)?|analysis\.stage)"
    pattern = re.compile(rf"^\s*from \.\.\.{drivers} import|^\s*import idiombench\.{drivers}\b|^\s*from idiombench\.{drivers} import",
                         re.MULTILINE)
    offenders = [f"{path.relative_to(root)}: {m.group(0).strip()}"
                 for path in sorted(root.rglob("*.py")) for m in pattern.finditer(path.read_text(encoding="utf-8"))]
    assert offenders == []


def test_published_prediction_formats_are_registered_by_their_benchmark():
    from pathlib import Path

    from pydantic import ValidationError

    from idiombench.errors import IdiombenchError
    from idiombench.generation.backends.replay import IdiombenchSource, prediction_formats
    from idiombench.generation.config import ReplaySource
    from idiombench.predictions import default_format

    formats = prediction_formats()
    assert formats["idiombench"] is IdiombenchSource
    assert formats["semanticqa"] is get_benchmark("semanticqa").prediction_formats["semanticqa"]
    assert sorted(formats) == ["idiombench", "semanticqa"]
    with pytest.raises(ValidationError, match=r"unknown predictions format 'nope' \(known: idiombench, semanticqa\)"):
        ReplaySource(benchmark="semanticqa", setting="0-shot", path="x.jsonl", format="nope")
    assert default_format("semanticqa", Path("preds.jsonl")) == "semanticqa"
    assert default_format("orderprobe", Path("gens.parquet")) == "idiombench"
    with pytest.raises(IdiombenchError, match=r"preds.jsonl: give --format"):
        default_format("orderprobe", Path("preds.jsonl"))


def test_a_benchmark_says_which_settings_it_scores():
    from idiombench.config import load_params
    from pathlib import Path

    params = load_params(Path(__file__).resolve().parents[3] / "params.yaml")
    sqa = params.benchmark("semanticqa")
    bench = get_benchmark("semanticqa")
    assert bench.scores_setting(sqa, "0-shot") and not bench.scores_setting(sqa, "7-shot")
    sequential = sqa.score.sequential.model_copy(update={"enabled": True})
    with_sequential = sqa.model_copy(update={"score": sqa.score.model_copy(update={"sequential": sequential})})
    assert not bench.scores_setting(sqa, f"{sequential.setting_prefix}0-shot")
    assert bench.scores_setting(with_sequential, f"{sequential.setting_prefix}0-shot")
    op = params.benchmark("orderprobe")
    assert get_benchmark("orderprobe").scores_setting(op, "zero_shot")
    assert not get_benchmark("orderprobe").scores_setting(op, "0-shot")
