"""The benchmark contract (benchmarks/base.py): every registered benchmark implements it,
drivers call its hooks, and a package that does not is refused with a clear message."""

from __future__ import annotations

import inspect
import sys
import types

import pytest

from idiombench.benchmarks import registry
from idiombench.benchmarks.base import Benchmark
from idiombench.benchmarks.registry import NAMES, get_benchmark


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

        def file_specs(self, config):
            return []

        def build(self, raw_dir, config): ...
        def render(self, tasks, config, raw_dir): ...
        def aggregate(self, ctx):
            return {}

        def report_section(self, ctx):
            return None

        def prediction_metrics(self, body, task, setting):
            return {}

    with pytest.raises(TypeError, match="score"):
        NoScore()


def test_registry_names_the_known_benchmarks_on_a_miss_and_refuses_a_package_without_the_contract(monkeypatch):
    with pytest.raises(KeyError, match=r"unknown benchmark 'nope' \(known: orderprobe, g-idiomalign"):
        get_benchmark("nope")
    fake = types.ModuleType("idiombench.benchmarks.fake_pkg")
    fake.BENCHMARK = object()
    monkeypatch.setitem(sys.modules, fake.__name__, fake)
    monkeypatch.setitem(registry.MODULES, "fake", fake.__name__)
    with pytest.raises(TypeError, match=r"fake_pkg.BENCHMARK must be an instance of a base.Benchmark subclass"):
        get_benchmark("fake")


def test_defaults_of_the_optional_hooks():
    bench = get_benchmark("orderprobe")
    assert bench.acquire_notes(None) == [] and not bench.constructs
    with pytest.raises(NotImplementedError, match="orderprobe has no construction pipeline"):
        bench.run_construction(None, [], None)  # type: ignore[arg-type]


def test_published_prediction_formats_are_registered_by_their_benchmark():
    from pathlib import Path

    from idiombench.benchmarks.registry import prediction_formats
    from idiombench.core.errors import ConfigError, IdiombenchError
    from idiombench.generation.backends.replay import IdiombenchSource, known_formats
    from idiombench.pipeline.config import load_params, parse_params
    from idiombench.stages.predictions import default_format

    formats = known_formats(prediction_formats())
    assert formats["idiombench"] is IdiombenchSource
    assert formats["semanticqa"] is get_benchmark("semanticqa").prediction_formats["semanticqa"]
    assert sorted(formats) == ["idiombench", "semanticqa"]
    raw = load_params(Path(__file__).resolve().parents[3] / "params.yaml").model_dump(mode="json", by_alias=True)
    raw["models"]["published"] = {
        "backend": "replay",
        "sources": [{"benchmark": "semanticqa", "setting": "0-shot", "path": "x.jsonl", "format": "nope"}],
    }
    with pytest.raises(
        ConfigError,
        match=r"models.published.sources.0.format: unknown predictions format 'nope' "
        r"\(known: idiombench, semanticqa\)",
    ):
        parse_params(raw)
    assert default_format("semanticqa", Path("preds.jsonl")) == "semanticqa"
    assert default_format("orderprobe", Path("gens.parquet")) == "idiombench"
    with pytest.raises(IdiombenchError, match=r"preds.jsonl: give --format"):
        default_format("orderprobe", Path("preds.jsonl"))


def test_a_benchmark_says_which_settings_it_scores():
    from pathlib import Path

    from idiombench.pipeline.config import load_params

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
