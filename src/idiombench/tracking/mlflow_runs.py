"""Track aggregated results in MLflow.

One experiment per benchmark, one run per (model, setting). A run is found again by
its key tag (`idiombench.key` = "<benchmark>/<model>/<setting>"): re-tracking the same
results updates that run (metrics, tags, artifacts) instead of adding a duplicate.
When the run's parameters changed (another model revision, other decoding...), the
old run is deleted and a new one records the new configuration (MLflow parameters
are immutable), tagged with the id of the run it replaces.

The store is MLFLOW_TRACKING_URI when set, else a local SQLite database
`mlflow.db` in the working directory (what `mlflow ui` opens by default).
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from .. import paths
from ..config import Params
from ..evaluation import SCORED
from ..io import read_json, read_parquet, write_json
from ..report.build import collect_metrics, git_commit

DEFAULT_TRACKING_URI = "sqlite:///mlflow.db"
KEY_TAG = "idiombench.key"
SAMPLE_GENERATIONS = 25
MAX_PARAM_LENGTH = 6000


def tracking_uri() -> str:
    return os.environ.get("MLFLOW_TRACKING_URI") or DEFAULT_TRACKING_URI


def flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            flatten(f"{prefix}.{key}" if prefix else str(key), inner, out)
    else:
        out[prefix] = value


def metric_name(name: str) -> str:
    """MLflow metric names allow letters, digits and _ - . space : /; map anything else to _."""
    return re.sub(r"[^\w\-. :/]", "_", name)


def run_params(params: Params, benchmark: str, model: str, setting: str, body: dict[str, Any]) -> dict[str, str]:
    info = body.get("model_info", {})
    provenance = body.get("provenance", {})
    raw: dict[str, Any] = {}
    flatten("model", info.get("config", {}), raw)
    flatten("model.identity", info.get("identity", {}), raw)
    flatten("decoding", params.benchmark(benchmark).model_dump(mode="json").get("generate", {}), raw)
    flatten("provenance", provenance, raw)
    raw["setting"] = setting
    raw["profile"] = params.profile
    raw["git_commit"] = git_commit()
    data_record = paths.acquired_record(benchmark)
    if data_record.exists():
        raw["data.acquired_record"] = json.dumps(
            sorted({(f["source_repo"], f["source_commit"]) for f in read_json(data_record)["files"]}))
    return {key[:250]: json.dumps(value, ensure_ascii=False)[:MAX_PARAM_LENGTH] if not isinstance(value, str)
            else value[:MAX_PARAM_LENGTH] for key, value in sorted(raw.items())}


def run_metrics(setting_body: dict[str, Any]) -> dict[str, float]:
    flat: dict[str, Any] = {}
    flatten("", setting_body.get("metrics", {}), flat)
    flatten("count", setting_body.get("counts", {}), flat)
    return {
        metric_name(k): float(v) for k, v in sorted(flat.items())
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v))
    }


def _artifacts(benchmark: str, model: str, setting: str, staging: Path) -> Path:
    scores = paths.scores_dir(model, benchmark) / f"{setting}.parquet"
    if scores.exists():
        (staging / "scores").mkdir(parents=True, exist_ok=True)
        (staging / "scores" / scores.name).write_bytes(scores.read_bytes())
    generations = paths.generations_dir(model) / benchmark / f"{setting}.parquet"
    if generations.exists():
        rows = read_parquet(generations).slice(0, SAMPLE_GENERATIONS).to_pylist()
        (staging / "generations_sample.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in rows), encoding="utf-8")
    figures = paths.report_figures_dir()
    for figure in sorted(figures.glob(f"{benchmark.replace('-', '_')}*.png")) if figures.is_dir() else []:
        (staging / "figures").mkdir(exist_ok=True)
        (staging / "figures" / figure.name).write_bytes(figure.read_bytes())
    return staging


def track(params: Params, benchmark: str, out: Path | None = None) -> dict[str, Any]:
    import mlflow
    from mlflow.entities import Metric, Param, RunTag
    from mlflow.tracking import MlflowClient

    uri = tracking_uri()
    mlflow.set_tracking_uri(uri)
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name(benchmark)
    experiment_id = experiment.experiment_id if experiment else client.create_experiment(benchmark)
    record: dict[str, Any] = {"benchmark": benchmark, "experiment": benchmark, "runs": {}}
    updated = created = replaced = 0
    for model, body in sorted(collect_metrics(params, benchmark).items()):
        if body.get("status") != SCORED:
            continue
        for setting, setting_body in sorted(body.get("settings", {}).items()):
            key = f"{benchmark}/{model}/{setting}"
            new_params = run_params(params, benchmark, model, setting, body)
            existing = client.search_runs([experiment_id], filter_string=f"tags.`{KEY_TAG}` = '{key}'", max_results=10)
            run_id = None
            for run in existing:
                if run.data.params == new_params and run_id is None:
                    run_id = run.info.run_id
                else:
                    client.delete_run(run.info.run_id)
                    replaced += 1
            tags = {KEY_TAG: key, "idiombench.benchmark": benchmark, "idiombench.model": model,
                    "idiombench.setting": setting, "idiombench.profile": params.profile}
            if run_id is None:
                run = client.create_run(experiment_id, tags=tags, run_name=f"{model} / {setting}")
                run_id = run.info.run_id
                client.log_batch(run_id, params=[Param(k, v) for k, v in new_params.items()])
                created += 1
            else:
                updated += 1
            now = int(time.time() * 1000)
            metrics = run_metrics(setting_body)
            client.log_batch(
                run_id,
                metrics=[Metric(k, v, now, 0) for k, v in metrics.items()],
                tags=[RunTag(k, v) for k, v in tags.items()],
            )
            with tempfile.TemporaryDirectory() as staging:
                client.log_artifacts(run_id, str(_artifacts(benchmark, model, setting, Path(staging))))
            client.set_terminated(run_id)
            record["runs"][key] = {"run_id": run_id, "metrics": len(metrics)}
    record["counts"] = {"created": created, "updated": updated, "replaced": replaced}
    write_json(out or paths.tracking_record(benchmark), record)
    return record
