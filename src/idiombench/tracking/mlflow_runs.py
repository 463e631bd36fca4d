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
from ..benchmarks import get_benchmark
from ..environment import environment_info
from ..redact import scrub
from ..report.build import ReportContext, collect_metrics, git_commit

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
    flatten("model", scrub(info.get("config", {})), raw)  # metrics JSON of an older run may hold a credential
    flatten("model.identity", scrub(info.get("identity", {})), raw)
    flatten("decoding", params.benchmark(benchmark).model_dump(mode="json").get("generate", {}), raw)
    flatten("provenance", provenance, raw)
    raw["setting"] = setting
    raw["profile"] = params.profile
    raw["git_commit"] = git_commit()
    flatten("env", environment_info(), raw)
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


def section_artifacts(params: Params, benchmark: str, model: str, body: dict[str, Any], staging: Path) -> None:
    """The benchmark's report tables and figures for this model alone, rendered by the same
    hook as the PDF section, so each run carries the figures of its model."""
    hook = getattr(get_benchmark(benchmark), "report_section", None)
    if hook is None:
        return
    figures = staging / "figures"
    figures.mkdir(parents=True, exist_ok=True)
    section = hook(ReportContext(params=params, benchmark=benchmark, metrics={model: body}, figures_dir=figures))
    if section is not None:
        for table in section.tables:
            table.write(staging / "tables")


def _artifacts(benchmark: str, model: str, setting: str, staging: Path, shared: Path) -> Path:
    scores = paths.scores_dir(model, benchmark) / f"{setting}.parquet"
    if scores.exists():
        (staging / "scores").mkdir(parents=True, exist_ok=True)
        (staging / "scores" / scores.name).write_bytes(scores.read_bytes())
    generations = paths.generations_dir(model) / benchmark / f"{setting}.parquet"
    if paths.generations_complete(model) and generations.exists():  # never from a partial folder
        rows = read_parquet(generations).slice(0, SAMPLE_GENERATIONS).to_pylist()
        (staging / "generations_sample.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in rows), encoding="utf-8")
    for kind in ("figures", "tables"):
        for path in sorted((shared / kind).glob("*")) if (shared / kind).is_dir() else []:
            (staging / kind).mkdir(exist_ok=True)
            (staging / kind / path.name).write_bytes(path.read_bytes())
    return staging


def _track_setting(client: Any, experiment_id: str, params: Params, benchmark: str, model: str,
                   setting: str, body: dict[str, Any], shared: Path, counts: dict[str, int]) -> dict[str, Any]:
    """Create or update the run of one (model, setting)."""
    from mlflow.entities import Metric, Param, RunTag

    key = f"{benchmark}/{model}/{setting}"
    new_params = run_params(params, benchmark, model, setting, body)
    run_id = None
    for run in client.search_runs([experiment_id], filter_string=f"tags.`{KEY_TAG}` = '{key}'", max_results=10):
        if run.data.params == new_params and run_id is None:
            run_id = run.info.run_id
        else:  # another configuration (params are immutable in MLflow): soft-delete, recoverable
            client.delete_run(run.info.run_id)
            counts["replaced"] += 1
    tags = {KEY_TAG: key, "idiombench.benchmark": benchmark, "idiombench.model": model,
            "idiombench.setting": setting, "idiombench.profile": params.profile}
    if run_id is None:
        run_id = client.create_run(experiment_id, tags=tags, run_name=f"{model} / {setting}").info.run_id
        client.log_batch(run_id, params=[Param(k, v) for k, v in new_params.items()])
        counts["created"] += 1
    else:
        counts["updated"] += 1
    now = int(time.time() * 1000)
    metrics = run_metrics(body["settings"][setting])
    client.log_batch(run_id, metrics=[Metric(k, v, now, 0) for k, v in metrics.items()],
                     tags=[RunTag(k, v) for k, v in tags.items()])
    with tempfile.TemporaryDirectory() as staging:
        client.log_artifacts(run_id, str(_artifacts(benchmark, model, setting, Path(staging), shared)))
    client.set_terminated(run_id)
    return {"run_id": run_id, "metrics": len(metrics)}


def track(params: Params, benchmark: str, model: str, out: Path | None = None) -> dict[str, Any]:
    """Log one model's results on one benchmark: one run per setting."""
    import mlflow
    from mlflow.tracking import MlflowClient

    out = out or paths.tracking_record(benchmark, model)
    record: dict[str, Any] = {"benchmark": benchmark, "model": model, "experiment": benchmark, "runs": {}}
    counts = {"created": 0, "updated": 0, "replaced": 0}
    body = collect_metrics(params, benchmark).get(model)
    if body is None:  # skipped (or not aggregated): nothing to log, and the record says why
        metrics_path = paths.metrics_file(benchmark, model)
        record["status"] = read_json(metrics_path).get("status", "missing") if metrics_path.exists() else "missing"
        record["counts"] = counts
        write_json(out, record)
        return record
    uri = tracking_uri()
    mlflow.set_tracking_uri(uri)
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name(benchmark)
    experiment_id = experiment.experiment_id if experiment else client.create_experiment(benchmark)
    record["status"] = SCORED
    with tempfile.TemporaryDirectory() as shared_dir:
        shared = Path(shared_dir)
        section_artifacts(params, benchmark, model, body, shared)
        for setting in sorted(body.get("settings", {})):
            key = f"{benchmark}/{model}/{setting}"
            record["runs"][key] = _track_setting(client, experiment_id, params, benchmark, model, setting, body,
                                                 shared, counts)
    record["counts"] = counts
    write_json(out, record)
    return record
