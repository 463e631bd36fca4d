"""`mlflow ui` as a researcher sees it (issue 10, item 4): the tracked runs are rendered in
headless Chromium at the link `idiombench track` prints (mlflow_runs.ui_url), which opens
the experiment on its runs table: the parent runs by model name, their headline metrics.

MLflow 3.17's UI picks an experiment's page from its global workflow switch (GenAI /
Model training: the URL's `workflowType`, else the browser's last choice, GenAI by
default), not from the `mlflow.experimentKind` tag; the link names the switch.

Needs Debian's `chromium` (`make browser` installs it); skipped without it. The
screenshot is kept under the test's tmp dir (runs.png) for a person to look at."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pyarrow as pa
import pytest
import yaml

from idiombench.config import parse_params
from idiombench.io import write_json, write_parquet

from helpers import mlflow_server

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not on PATH: `make browser` installs "
                                                "Debian's chromium (needs root or sudo)"),
]


def tracked_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Two reference models tracked on OrderProbe into tmp_path/mlflow.db; returns the store URI."""
    from idiombench.tracking.mlflow_runs import track

    raw = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    raw["models"] = {"oracle": {"backend": "oracle"}, "echo": {"backend": "echo"}}
    params = parse_params(raw)
    monkeypatch.chdir(tmp_path)
    for model, value in (("oracle", 100.0), ("echo", 12.5)):
        write_json(tmp_path / "results" / "metrics" / "orderprobe" / f"{model}.json", {
            "benchmark": "orderprobe", "model": model, "status": "scored",
            "settings": {s: {"metrics": {"recovery": value}, "counts": {"items": 24}} for s in ("zero_shot", "cot")},
            "model_info": {"config": {"backend": model}, "identity": {"backend": model}},
        })
        for setting in ("zero_shot", "cot"):
            write_parquet(tmp_path / "results" / "scores" / model / "orderprobe" / f"{setting}.parquet",
                          pa.table({"prompt_id": ["a"], "recovered": [value]}))
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    for model in ("oracle", "echo"):
        track(params, "orderprobe", model)
    return uri


def chromium(tmp_path: Path, url: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'chromium-profile'}", "--window-size=1600,1000",
         "--virtual-time-budget=30000", *args, url],
        capture_output=True, text=True, timeout=180,
    )


def test_mlflow_ui_opens_the_experiment_on_its_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from mlflow.tracking import MlflowClient

    uri = tracked_project(tmp_path, monkeypatch)
    experiment = MlflowClient(uri).get_experiment_by_name("orderprobe")
    with mlflow_server(uri, tmp_path, command="ui") as base:
        from idiombench.tracking.mlflow_runs import ui_url

        url = ui_url(experiment.experiment_id, base)
        screenshot = tmp_path / "runs.png"
        shot = chromium(tmp_path, url, f"--screenshot={screenshot}")
        assert screenshot.is_file() and screenshot.stat().st_size > 10_000, shot.stderr[-2000:]
        dom = chromium(tmp_path, url, "--dump-dom").stdout
        (tmp_path / "runs.html").write_text(dom, encoding="utf-8")
        where = f"see {tmp_path / 'runs.html'} and {screenshot}"
        assert "Run Name" in dom, f"no runs table rendered; {where}"
        for run_name in ("oracle", "echo"):
            assert f">{run_name}<" in dom, f"run {run_name!r} not rendered; {where}"
        assert "No data available for the selected time range" not in dom, f"the GenAI overview, not the runs; {where}"
        # the Source column (mlflow.source.name) of the two parent runs
        assert dom.count(">idiombench track orderprobe<") == 2, f"no Source column for the two parent runs; {where}"
        # The chart view compares the parent runs' headline metrics (oracle 100, echo 12.5); the
        # table shows no metric columns until they are picked in "Columns".
        charts = tmp_path / "charts.png"
        chromium(tmp_path, url + "&compareRunsMode=CHART", f"--screenshot={charts}")
        chart_dom = chromium(tmp_path, url + "&compareRunsMode=CHART", "--dump-dom").stdout
        (tmp_path / "charts.html").write_text(chart_dom, encoding="utf-8")
        for text in ("cot/recovery", "zero_shot/recovery", "12.50", "100.00"):
            assert text in chart_dom, f"{text!r} not in the chart view; see {tmp_path / 'charts.html'} and {charts}"
