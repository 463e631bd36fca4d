"""MLflow tracking: a parent run per (model, benchmark) with one child run per setting,
updated in place when re-tracked; dataset inputs, source tags, logged models and the
experiment kind for browsing; found through a real `mlflow server`'s REST API."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from pathlib import Path

import pyarrow as pa
import pytest
import yaml

from helpers import mlflow_server
from idiombench.core.io import sha256_file, write_json, write_parquet
from idiombench.pipeline.config import parse_params

ROOT = Path(__file__).resolve().parents[2]


def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A working directory with params (two reference models) and their metrics and scores."""
    raw = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    raw["models"] = {"oracle": {"backend": "oracle"}, "echo": {"backend": "echo"}}
    raw["tracking"] = {"traces": {"enabled": False}}  # runs only: the hand-written scores have no generations
    params = parse_params(raw)
    monkeypatch.chdir(tmp_path)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(
        ["git", "-c", "user.email=t@e", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "x"],
        cwd=tmp_path,
        check=True,
    )
    for model, value in (("oracle", 1.0), ("echo", 0.0)):
        write_json(
            tmp_path / "results" / "metrics" / "orderprobe" / f"{model}.json",
            {
                "benchmark": "orderprobe",
                "model": model,
                "status": "scored",
                "settings": {
                    s: {
                        "metrics": {"recovery": value, "s_acc": {"mean": value / 2}},
                        "counts": {"items": 24},
                        "task": "restore",
                    }
                    for s in ("zero_shot", "cot")
                },
                "provenance": {"roles": {"cross_encoder": "substitute"}},
                "model_info": {
                    "name": model,
                    "display_name": model,
                    "config": {"backend": model},
                    "identity": {"backend": model, "loaded": model},
                },
            },
        )
        for setting in ("zero_shot", "cot"):
            write_parquet(
                tmp_path / "results" / "scores" / model / "orderprobe" / f"{setting}.parquet",
                pa.table({"prompt_id": ["a", "b"], "recovered": [value, value]}),
            )
    write_parquet(tmp_path / "data" / "processed" / "orderprobe" / "restore.parquet", pa.table({"item_id": ["a", "b"]}))
    for setting in ("zero_shot", "cot"):
        write_parquet(
            tmp_path / "results" / "prompts" / "orderprobe" / f"{setting}.parquet",
            pa.table({"prompt_id": ["a", "b"], "setting": [setting, setting]}),
        )
    return params


def runs_in(client, experiment_id: str) -> list:
    return list(client.search_runs([experiment_id], max_results=100))


def test_a_skipped_pair_logs_nothing_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from idiombench.stages.track import track

    params = project(tmp_path, monkeypatch)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    write_json(
        tmp_path / "results" / "metrics" / "semanticqa" / "oracle.json",
        {"benchmark": "semanticqa", "model": "oracle", "status": "skipped", "reason": "disabled"},
    )
    record = track(params, benchmark="semanticqa", model="oracle")
    assert record["status"] == "skipped" and record["runs"] == {}
    assert not (tmp_path / "mlflow.db").exists()  # no store was even opened


def test_retracking_updates_runs_instead_of_duplicating(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from mlflow.tracking import MlflowClient

    from idiombench.stages.track import track

    params = project(tmp_path, monkeypatch)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    first = {model: track(params, benchmark="orderprobe", model=model) for model in ("oracle", "echo")}
    assert all(r["counts"] == {"created": 2, "updated": 0, "replaced": 0} for r in first.values())
    second = {model: track(params, benchmark="orderprobe", model=model) for model in ("oracle", "echo")}
    assert all(r["counts"] == {"created": 0, "updated": 2, "replaced": 0} for r in second.values())
    assert {k: v["run_id"] for r in first.values() for k, v in r["runs"].items()} == {
        k: v["run_id"] for r in second.values() for k, v in r["runs"].items()
    }
    assert (tmp_path / "results" / "tracking" / "orderprobe" / "echo.json").is_file()

    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("orderprobe")
    runs = runs_in(client, experiment.experiment_id)
    assert len(runs) == 6  # per model: a parent and two settings
    assert experiment.tags["mlflow.experimentKind"] == "custom_model_development"
    parents = {r.data.tags["idiombench.key"]: r for r in runs if "mlflow.parentRunId" not in r.data.tags}
    assert sorted(parents) == ["orderprobe/echo", "orderprobe/oracle"]
    assert parents["orderprobe/oracle"].data.metrics == {"cot/recovery": 1.0, "zero_shot/recovery": 1.0}
    assert parents["orderprobe/oracle"].data.params["model.identity.loaded"] == "oracle"
    children = [r for r in runs if "mlflow.parentRunId" in r.data.tags]
    assert (
        sorted(
            (
                parents[f"orderprobe/{r.data.tags['idiombench.model']}"].info.run_id
                == r.data.tags["mlflow.parentRunId"],
                r.data.tags["idiombench.setting"],
            )
            for r in children
        )
        == [(True, "cot")] * 2 + [(True, "zero_shot")] * 2
    )
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True).stdout.strip()
    assert {r.data.tags["mlflow.source.git.commit"] for r in runs} == {commit}
    oracle = next(r for r in runs if r.data.tags["idiombench.key"] == "orderprobe/oracle/zero_shot")
    assert oracle.data.metrics["recovery"] == 1.0
    assert oracle.data.metrics["s_acc.mean"] == 0.5
    assert oracle.data.metrics["count.items"] == 24
    assert oracle.data.params["setting"] == "zero_shot"
    # a role written as a bare status (schema 1) is read as the paper's role with that status
    assert oracle.data.params["provenance.roles.cross_encoder.status"] == "substitute"
    artifacts = {a.path for a in client.list_artifacts(oracle.info.run_id)}
    assert "scores" in artifacts
    datasets = sorted(
        (d.dataset.name, d.dataset.digest, d.tags[0].value)
        for d in client.get_run(oracle.info.run_id).inputs.dataset_inputs
    )
    assert datasets == [
        ("orderprobe/restore items", sha256_file(tmp_path / "data/processed/orderprobe/restore.parquet")[:16], "items"),
        (
            "orderprobe/zero_shot prompts",
            sha256_file(tmp_path / "results/prompts/orderprobe/zero_shot.parquet")[:16],
            "prompts",
        ),
    ]  # re-tracked twice, logged once
    models = client.search_logged_models([experiment.experiment_id])
    assert sorted((m.name, m.source_run_id == parents[f"orderprobe/{m.name}"].info.run_id) for m in models) == [
        ("echo", True),
        ("oracle", True),
    ]

    # A changed configuration replaces the run (MLflow params are immutable); still one per key.
    write_json(
        tmp_path / "results" / "metrics" / "orderprobe" / "oracle.json",
        {
            **json.loads((tmp_path / "results/metrics/orderprobe/oracle.json").read_text(encoding="utf-8")),
            "provenance": {"roles": {"cross_encoder": "paper"}},
        },
    )
    third = track(params, benchmark="orderprobe", model="oracle")
    assert third["counts"] == {"created": 2, "updated": 0, "replaced": 2}
    assert third["parent"]["counts"] == {"created": 1, "updated": 0, "replaced": 1}
    assert len(runs_in(client, experiment.experiment_id)) == 6


def rest(base: str, path: str, body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        base + path,
        data=data,
        headers={"Content-Type": "application/json"},
        method="POST" if body is not None else "GET",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


@pytest.mark.slow
def test_runs_are_found_through_an_mlflow_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from idiombench.stages.track import track

    params = project(tmp_path, monkeypatch)
    with mlflow_server(
        f"sqlite:///{tmp_path / 'server.db'}", tmp_path, "--artifacts-destination", str(tmp_path / "artifacts")
    ) as base:
        monkeypatch.setenv("MLFLOW_TRACKING_URI", base)
        for _ in range(2):  # re-tracking: no duplicates
            track(params, benchmark="orderprobe", model="oracle")
            track(params, benchmark="orderprobe", model="echo")
        experiment = rest(base, "/api/2.0/mlflow/experiments/get-by-name?experiment_name=orderprobe")["experiment"]
        found = rest(
            base,
            "/api/2.0/mlflow/runs/search",
            {
                "experiment_ids": [experiment["experiment_id"]],
                "filter": "tags.`idiombench.model` = 'oracle'",
            },
        )["runs"]
        tags = [{t["key"]: t["value"] for t in r["data"]["tags"]} for r in found]
        assert sorted(t.get("idiombench.setting", "(parent)") for t in tags) == ["(parent)", "cot", "zero_shot"]
        found = [r for r, t in zip(found, tags, strict=True) if "idiombench.setting" in t]
        every = rest(base, "/api/2.0/mlflow/runs/search", {"experiment_ids": [experiment["experiment_id"]]})["runs"]
        assert len(every) == 6  # two parents, four settings
        metrics = {m["key"]: m["value"] for m in found[0]["data"]["metrics"]}
        assert metrics["recovery"] == 1.0
