"""What `track` reads from the serving-noise pass: the figures of one setting as run metrics and
the flipped items as a trace tag (stages/track.py), from results/noise/<model>/."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from idiombench.stages.report_noise import NoiseFloors, floor_columns
from idiombench.stages.track import noise_flips, noise_metrics

FIGURES = {
    "model": "m",
    "status": "measured",
    "figures": [
        {
            "model": "m",
            "benchmark": "b",
            "setting": "s",
            "metric": "ACC",
            "perturbation": "batch_size_1",
            "status": "measured",
            "items": 4,
            "changed_share": 0.5,
            "flipped_share": 0.25,
            "difference": -0.25,
            "low": -0.75,
            "high": 0.0,
        },
        {
            "model": "m",
            "benchmark": "b",
            "setting": "other",
            "metric": "ACC",
            "perturbation": "batch_size_1",
            "status": "measured",
            "items": 4,
            "changed_share": 0.0,
            "flipped_share": 0.0,
            "difference": 0.0,
            "low": None,
            "high": None,
        },
        {"model": "m", "benchmark": "b", "perturbation": "float32", "status": "no change", "reason": "same identity"},
    ],
}


@pytest.fixture
def noise_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "results" / "noise" / "m"
    (root / "batch_size_1").mkdir(parents=True)
    (root / "figures.json").write_text(json.dumps(FIGURES), encoding="utf-8")
    pd.DataFrame(
        {"setting": ["s", "s", "other"], "prompt_id": ["p1", "p2", "p3"], "flipped": [True, False, True]}
    ).to_parquet(root / "batch_size_1" / "b.parquet")
    return root


def test_the_settings_figures_become_metrics_of_its_run(noise_results: Path):
    metrics = noise_metrics(benchmark="b", model="m", setting="s")
    assert metrics == {
        "serving_noise/batch_size_1/ACC/items": 4.0,
        "serving_noise/batch_size_1/ACC/changed_share": 0.5,
        "serving_noise/batch_size_1/ACC/flipped_share": 0.25,
        "serving_noise/batch_size_1/ACC/difference": -0.25,
        "serving_noise/batch_size_1/ACC/low": -0.75,
        "serving_noise/batch_size_1/ACC/high": 0.0,
    }
    assert noise_metrics(benchmark="b", model="other", setting="s") == {}


def test_flipped_items_of_the_setting_get_the_perturbations_tag(noise_results: Path):
    assert noise_flips(benchmark="b", model="m", setting="s") == {"p1": "batch_size_1"}
    assert noise_flips(benchmark="b", model="m", setting="other") == {"p3": "batch_size_1"}


def test_the_noise_floor_is_the_largest_shift_and_marks_differences_within_it():
    floors = NoiseFloors.of(
        [{**row, "model": model} for model in ("a", "b") for row in FIGURES["figures"]]
        + [{"model": "a", "benchmark": "b", "setting": "s", "status": "measured", "difference": 0.4}]
    )
    assert floors.get("a", "b", "s") == pytest.approx(0.4) and floors.get("b", "b", "s") == pytest.approx(0.25)
    cells = floor_columns(floors, "b")
    assert [c.text for c in cells("a", "b", "s/ACC", 0.3)] == ["0.400", "0.250", "within"]
    assert [c.text for c in cells("a", "b", "s/ACC", -0.5)] == ["0.400", "0.250", "outside"]
    assert [c.text for c in cells("a", "c", "zz/ACC", 0.1)] == ["—", "—", "—"]
