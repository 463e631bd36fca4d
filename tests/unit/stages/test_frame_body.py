"""A benchmark without a results model (a plugin, a declaration): its metrics body is checked
against the frame every body shares on read (one error line naming the key), handed on as the
JSON it wrote, and read by track through that frame with its own keys kept."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from idiombench.core import paths
from idiombench.core.errors import DataError, IdiombenchError
from idiombench.core.io import write_json
from idiombench.core.ownership import stamp
from idiombench.metrics.body import FrameBody, framed, plain
from idiombench.stages import inputs
from idiombench.stages.track import run_metrics


def plugin_body() -> dict[str, object]:
    return {
        "benchmark": "toy",
        "model": "oracle",
        "status": "scored",
        "model_info": {"name": "oracle", "display_name": "oracle", "config": {"backend": "oracle"}},
        "settings": {
            "zero_shot": {
                "metrics": {"accuracy": 75.0, "macro_f1": None},
                "counts": {"rows": 4, "items": 4},
                "task": "capitals",  # the plugin's own key
            }
        },
        "provenance": {"seed": 3},
        "accuracy_overall": 75.0,
    }


@pytest.fixture
def plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    untyped = SimpleNamespace(results_model=None, migrate_body=lambda body: body)
    monkeypatch.setattr(inputs, "get_benchmark", lambda name: untyped)


def test_a_plugin_body_is_handed_on_as_its_json_and_read_by_track_through_the_frame(tmp_path: Path, plugin) -> None:
    path = tmp_path / "oracle.json"
    written = stamp(plugin_body(), paths.AGGREGATE_OUTPUT)
    write_json(path, written)
    read = inputs.read_metrics(path, "toy")
    assert read == written  # the plugin's API: its own JSON, ownership record included
    body = framed(read)
    assert isinstance(body, FrameBody) and body.model_info is not None
    assert body.model_info.display_name == "oracle" and sorted(body.settings) == ["zero_shot"]
    assert run_metrics(body.settings["zero_shot"]) == {"accuracy": 75.0, "count.items": 4.0, "count.rows": 4.0}
    dumped = plain(body)  # what generic code flattens: the plugin's keys kept, the stamp not
    assert dumped["accuracy_overall"] == 75.0 and dumped["settings"]["zero_shot"]["task"] == "capitals"
    assert dumped["provenance"] == {"seed": 3, "coverage": {}} and dumped["schema_version"] == 2
    assert plain(body) == plain(framed(dumped))


@pytest.mark.parametrize(
    ("broken", "key", "why"),
    [
        (lambda body: body["settings"]["zero_shot"].pop("counts"), "settings.zero_shot.counts", "Field required"),
        (lambda body: body.update(status="done"), "status", "Input should be 'scored' or 'skipped'"),
        (lambda body: body["model_info"].update(secret="x"), "model_info.secret", "Extra inputs are not permitted"),
    ],
)
def test_a_plugin_body_off_the_frame_is_one_line_naming_the_file_and_key(tmp_path: Path, plugin, broken, key, why):
    body = plugin_body()
    broken(body)
    path = tmp_path / "oracle.json"
    write_json(path, body)
    with pytest.raises(DataError) as raised:
        inputs.read_metrics(path, "toy")
    message = str(raised.value)
    assert "\n" not in message and str(path) in message and f"key {key}: {why}" in message


def test_a_plugin_aggregate_off_the_frame_is_refused_before_anything_is_written(tmp_path: Path, monkeypatch) -> None:
    from idiombench.pipeline.config import load_params
    from idiombench.stages import aggregate

    # a built-in benchmark's name (its params section), its hooks a plugin's without a results model
    params = load_params(Path(__file__).resolve().parents[3] / "params.yaml")
    model = next(iter(params.models))
    monkeypatch.chdir(tmp_path)
    scores = paths.scores_dir(benchmark="chengyu-bench", model=model)
    scores.mkdir(parents=True)
    write_json(scores / "scoring_meta.json", {"status": "scored"})
    untyped = SimpleNamespace(
        results_model=None, aggregate=lambda ctx: {"settings": {"zero_shot": {"metrics": {"accuracy": 1.0}}}}
    )
    monkeypatch.setattr(aggregate, "get_benchmark", lambda name: untyped)
    monkeypatch.setattr(aggregate, "load_items", lambda name: [])
    out = paths.metrics_file(benchmark="chengyu-bench", model=model)
    with pytest.raises(IdiombenchError) as raised:
        aggregate.run_aggregate(params, benchmark="chengyu-bench", model=model)
    assert "key settings.zero_shot.counts: Field required" in str(raised.value) and not out.exists()
