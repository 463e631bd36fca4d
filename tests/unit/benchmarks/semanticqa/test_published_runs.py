"""The paper's released per-item predictions as a model: `published: <paper model>` on a replay
model becomes one source per released k-shot file of that model's runs (no sequential or scaling
file), restricted to the tasks the build makes, and the model runs only the benchmarks holding
them; a paper model no enabled benchmark releases, or a replay model with nothing to replay, is
refused in one line naming the key."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from idiombench.benchmarks.registry import get_benchmark
from idiombench.benchmarks.semanticqa.published_runs import published_sources
from idiombench.core.errors import ConfigError
from idiombench.data.manifest import load_file_specs
from idiombench.pipeline.config import parse_params

ROOT = Path(__file__).resolve().parents[4]
TASKS = 14  # the twelve test sets and the two oracle-schema VMWE sets


def raw_params() -> dict:
    return yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))


def test_each_paper_run_gets_one_source_per_released_k_shot_file():
    found = published_sources("semanticqa", load_file_specs("idiombench.benchmarks.semanticqa"), Path("raw"))
    deepseek, qwen = found["deepseek-r1"], found["qwen3-235b"]
    # 0/3/5-shot of every task, but idiom detection 0-shot, released only as the sequential study's file
    assert len(deepseek) == 3 * TASKS - 1
    assert ("idiom_detection", "0-shot") not in {(s.task, s.setting) for s in deepseek}
    assert Counter(s.setting for s in qwen) == {"0-shot": 12}  # table 12's zero-shot row
    for sources in (deepseek, qwen):
        assert max(Counter((s.task, s.setting) for s in sources).values()) == 1  # one file answers a job
        for s in sources:
            assert s.path.startswith("raw/published_predictions/") and s.format == "semanticqa"
            assert "multi_step" not in s.path and "sacling" not in s.path
    # DeepSeek-R1's 3/5-shot files carry the name DeepSeek-R1-Instruct: still the paper's deepseek-r1
    assert any(s.path.endswith("_3-shot_DeepSeek-R1-Instruct.json") for s in deepseek)


def test_a_published_replay_model_gets_the_files_of_the_tasks_built():
    raw = raw_params()
    raw["models"] = {
        "r1": {"backend": "replay", "published": "deepseek-r1"},
        "r1-own-too": {
            "backend": "replay",
            "published": "deepseek-r1",
            "benchmarks": ["semanticqa", "orderprobe"],
            "sources": [{"benchmark": "orderprobe", "setting": "zero_shot", "path": "mine.jsonl"}],
        },
    }
    params = parse_params(raw)
    config = params.benchmark("semanticqa")
    built = set(config.build.selected_tasks())
    expected = get_benchmark("semanticqa").published_runs(config)["deepseek-r1"]
    r1 = params.models["r1"]
    assert r1.sources == expected and {s.task for s in expected} == built
    assert all(s.path.startswith("data/raw/semanticqa/published_predictions/") for s in r1.sources)
    assert r1.benchmarks == ["semanticqa"]  # no job of another benchmark, where it has nothing to say
    both = params.models["r1-own-too"]
    assert both.sources[: len(expected)] == expected and both.sources[-1].path == "mine.jsonl"
    assert both.benchmarks == ["semanticqa", "orderprobe"]  # as configured


@pytest.mark.parametrize(
    ("model", "disable", "expected"),
    [
        (
            {"backend": "replay", "published": "gpt-7"},
            None,
            "models.m.published: no enabled benchmark releases per-item predictions of 'gpt-7' "
            "(released: deepseek-r1, qwen3-235b)",
        ),
        (
            {"backend": "replay", "published": "deepseek-r1"},
            "semanticqa",
            "models.m.published: no enabled benchmark releases per-item predictions of 'deepseek-r1' (released: none)",
        ),
        ({"backend": "replay"}, None, "models.m: a replay model needs `sources`, `published` or both"),
    ],
)
def test_nothing_to_replay_is_refused_naming_the_key(model, disable, expected):
    raw = raw_params()
    raw["models"] = {"m": model}
    if disable:
        raw["benchmarks"][disable]["enabled"] = False
    with pytest.raises(ConfigError) as info:
        parse_params(raw)
    assert expected in str(info.value)
    assert len(str(info.value).splitlines()) == 1
