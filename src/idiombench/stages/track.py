"""Track aggregated results in MLflow, laid out for browsing in `mlflow ui`.

One experiment per benchmark, tagged as a model-development experiment
(`mlflow.experimentKind`), so MLflow 3's UI opens it on its runs rather than on the GenAI
traces overview. In it, one parent run per model (the model's identity, the headline
metric of every setting: the runs table and the chart view compare models at a glance)
with one child run per setting (every metric, the per-item scores, figures, a sample of
generations, and the setting's items and prompts as MLflow dataset inputs whose digest is
the file's sha256). Runs carry MLflow's own source tags (`mlflow.source.git.commit` ...)
and the parent is linked to an external logged model named after the model, for the
Models column.

Every scored row of a setting is a trace in that setting's run (stages/track_traces.py: inputs,
output, reference, one assessment per item-level metric, filter tags), and the run's
`items/<setting>.parquet` artifact holds every row; params `tracking.traces` (off: no trace is
logged or removed; `sample`: a stratified draw of items).

A run is found again by its key tag (`idiombench.key`: "<benchmark>/<model>" for the
parent, "<benchmark>/<model>/<setting>" for a child): re-tracking the same results
updates that run (metrics, tags, artifacts) instead of adding a duplicate. When the run's
parameters changed (another model revision, other decoding...), the old run is deleted
and a new one records the new configuration (MLflow parameters are immutable).

The store is MLFLOW_TRACKING_URI when set, else a local SQLite database
`mlflow.db` in the working directory (what `mlflow ui` opens by default).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import re
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

import pyarrow as pa

from ..benchmarks.contexts import ReportContext
from ..benchmarks.registry import get_benchmark
from ..core import paths
from ..core.environment import environment_info
from ..core.errors import IdiombenchError
from ..core.io import parquet_rows, read_json_object, read_parquet, sha256_file, write_json, write_parquet
from ..core.ownership import earlier_json_file, stamp, stamped_by
from ..core.progress import Progress
from ..core.redact import scrub, scrub_message
from ..metrics import evaluate
from ..metrics.body import AnyBody, SettingResult, framed, plain
from ..params.schema import Params
from . import track_traces as traces
from .inputs import SCORED, load_items, score_tables
from .labels import offer_labels
from .noise import MEASURED, read_figures
from .report import collect_metrics, failed_models, git_commit
from .report_noise import NoiseFloors, noise_figures
from .reproduction import Scorecard, reproduce

if TYPE_CHECKING:
    from mlflow import MlflowClient
    from mlflow.entities import DatasetInput

DEFAULT_TRACKING_URI = "sqlite:///mlflow.db"
KEY_TAG = "idiombench.key"
PARENT_TAG = "mlflow.parentRunId"
# MLflow 3's UI picks an experiment's landing page from this tag: custom_model_development
# opens on the runs table ("Model training"), genai_development on the traces overview.
EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
EXPERIMENT_KIND = "custom_model_development"
DIGEST_LENGTH = 16  # hex digits of the sha256 shown as a dataset's digest (as on the report's title page)
SAMPLE_GENERATIONS = 25
FLIPPED_TAG = "serving_noise_flipped"  # on a trace: the perturbations under which its outcome flipped
TRACES_TAG = "idiombench.traces"  # on each setting's run: which of its rows are traces (all, or a sample)
MAX_PARAM_LENGTH = 6000


def ui_url(experiment_id: str, base: str = "http://127.0.0.1:5000") -> str:
    """The `mlflow ui` link that opens an experiment on its runs table. MLflow 3.17's UI
    chooses the page from its global GenAI / Model training switch (this URL parameter,
    else the browser's last choice, GenAI by default), not from the experiment-kind tag."""
    return f"{base}/#/experiments/{experiment_id}/runs?workflowType=machine_learning"


def items_url(experiment_id: str, run_id: str, base: str = "http://127.0.0.1:5000") -> str:
    """The `mlflow ui` link to a run's items (its traces tab; "compare to" puts another model's run
    beside it, item by item)."""
    return f"{base}/#/experiments/{experiment_id}/runs/{run_id}/evaluations"


def tracking_uri() -> str:
    return os.environ.get("MLFLOW_TRACKING_URI") or DEFAULT_TRACKING_URI


def flatten(prefix: str, value: object, out: dict[str, object]) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            flatten(f"{prefix}.{key}" if prefix else str(key), inner, out)
    else:
        out[prefix] = value


def metric_name(name: str) -> str:
    """MLflow metric names allow letters, digits and _ - . space : /; map anything else to _."""
    return re.sub(r"[^\w\-. :/]", "_", name)


def run_params(params: Params, *, benchmark: str, model: str, setting: str, body: AnyBody) -> dict[str, str]:
    info = body.model_info
    raw: dict[str, object] = {}
    if info is not None:
        flatten("model", scrub(info.config), raw)  # metrics JSON of an older run may hold a credential
        flatten("model.identity", scrub(info.identity or {}), raw)
    flatten("decoding", params.benchmark(benchmark).model_dump(mode="json").get("generate", {}), raw)
    if body.provenance is not None:
        flatten("provenance", body.provenance.model_dump(mode="json"), raw)
    raw["setting"] = setting
    raw["profile"] = params.profile
    raw["git_commit"] = git_commit()
    flatten("env", environment_info(), raw)
    data_record = paths.acquired_record(benchmark)
    if data_record.exists():
        raw["data.acquired_record"] = json.dumps(
            sorted({(f["source_repo"], f["source_commit"]) for f in read_json_object(data_record)["files"]})
        )
    return {
        key[:250]: json.dumps(value, ensure_ascii=False)[:MAX_PARAM_LENGTH]
        if not isinstance(value, str)
        else value[:MAX_PARAM_LENGTH]
        for key, value in sorted(raw.items())
    }


NOISE_FIGURES = ("items", "changed_share", "flipped_share", "difference", "low", "high")


def noise_metrics(*, benchmark: str, model: str, setting: str) -> dict[str, float]:
    """The model's serving-noise figures of one setting (results/noise/<model>/figures.json) as
    metrics `serving_noise/<perturbation>/<metric>/<figure>`."""
    body = read_figures(model) or {}
    out: dict[str, float] = {}
    for row in body.get("figures", []):
        if row["status"] != MEASURED or row["benchmark"] != benchmark or row["setting"] != setting:
            continue
        for figure in NOISE_FIGURES:
            value = row.get(figure)
            if value is not None and math.isfinite(float(value)):
                out[metric_name(f"serving_noise/{row['perturbation']}/{row['metric']}/{figure}")] = float(value)
    return out


def noise_flips(*, benchmark: str, model: str, setting: str) -> dict[str, str]:
    """prompt_id -> the perturbations under which its outcome flipped (a trace tag)."""
    flipped: dict[str, list[str]] = {}
    root = paths.noise_dir(model)
    for path in sorted(root.glob(f"*/{benchmark}.parquet")):
        frame = read_parquet(path, what="serving-noise items").to_pandas()
        for prompt_id in frame.loc[(frame["setting"] == setting) & frame["flipped"].astype(bool), "prompt_id"]:
            flipped.setdefault(str(prompt_id), []).append(path.parent.name)
    return {prompt_id: ",".join(sorted(names)) for prompt_id, names in flipped.items()}


def run_metrics(setting_body: SettingResult) -> dict[str, float]:
    flat: dict[str, object] = {}
    flatten("", setting_body.metrics, flat)
    flatten("count", setting_body.counts, flat)
    return {
        metric_name(k): float(v)
        for k, v in sorted(flat.items())
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v))
    }


def section_artifacts(params: Params, *, benchmark: str, model: str, body: dict[str, object], staging: Path) -> None:
    """The benchmark's report tables and figures for this model alone, rendered by the same
    hook as the PDF section, so each run carries the figures of its model."""
    figures = staging / "figures"
    figures.mkdir(parents=True, exist_ok=True)
    section = get_benchmark(benchmark).report_section(
        ReportContext(params=params, benchmark=benchmark, metrics={model: body}, figures_dir=figures)
    )
    if section is not None:
        for table in section.tables:
            table.write(staging / "tables")


def _artifacts(benchmark: str, model: str, setting: str, staging: Path, shared: Path) -> Path:
    scores = paths.scores_dir(benchmark=benchmark, model=model) / f"{setting}.parquet"
    if scores.exists():
        (staging / "scores").mkdir(parents=True, exist_ok=True)
        (staging / "scores" / scores.name).write_bytes(scores.read_bytes())
    generations = paths.generations_dir(model) / benchmark / f"{setting}.parquet"
    if paths.generations_complete(model) and generations.exists():  # never from a partial folder
        rows = read_parquet(generations).slice(0, SAMPLE_GENERATIONS).to_pylist()
        (staging / "generations_sample.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in rows), encoding="utf-8"
        )
    for kind in ("figures", "tables"):
        for path in sorted((shared / kind).glob("*")) if (shared / kind).is_dir() else []:
            (staging / kind).mkdir(exist_ok=True)
            (staging / kind / path.name).write_bytes(path.read_bytes())
    return staging


def source_tags(benchmark: str) -> dict[str, str]:
    """MLflow's own source tags (the runs table's Source column; the commit is clickable
    where the remote is known). A dirty checkout is said in idiombench.git_state."""
    described = git_commit()
    commit = described.split(" ")[0]
    tags = {
        "mlflow.source.type": "PROJECT",
        "mlflow.source.name": f"idiombench track {benchmark}",
        "idiombench.git_state": described,
    }
    if re.fullmatch(r"[0-9a-f]{40}", commit):
        tags["mlflow.source.git.commit"] = commit
    return tags


def headline_metrics(params: Params, benchmark: str, body: dict[str, object]) -> dict[str, float]:
    """The parent run's metrics: each setting's headline metrics (the specs marked headline), as
    "<setting>/<metric>"."""
    bench = get_benchmark(benchmark)
    specs = bench.metric_specs(params.benchmark(benchmark))
    return {metric_name(name): value for name, value in evaluate.headline(body, specs).items()}


def reproduction_metrics(params: Params, benchmark: str, model: str, body: dict[str, object]) -> dict[str, float]:
    """Where the model reproduces a paper model (report.published.reproduces): its scorecard against
    the paper (stages/reproduction.py), as the parent run's metrics."""
    if model not in params.report.published.reproduces:
        return {}
    floors = NoiseFloors.of(noise_figures(params))
    rows = reproduce(params, benchmark, model, body, score_tables(benchmark, model), floors)
    return Scorecard.of(model, params.report.published.reproduces[model], rows).metrics() if rows else {}


def dataset_inputs(benchmark: str, setting: str, setting_body: dict[str, object]) -> list[DatasetInput]:
    """The setting's items (data/processed/<benchmark>/<task>.parquet) and prompts
    (results/prompts/<benchmark>/<setting>.parquet) as MLflow dataset inputs; digest: the
    file's sha256 (first 16 hex digits), so a run shows exactly which data it scored."""
    from mlflow.entities import Dataset, DatasetInput, InputTag

    files = []
    task = setting_body.get("task")
    if task and (paths.processed_dir(benchmark) / f"{task}.parquet").is_file():
        files.append(("items", f"{benchmark}/{task} items", paths.processed_dir(benchmark) / f"{task}.parquet"))
    if paths.prompts_file(benchmark, setting).is_file():
        files.append(("prompts", f"{benchmark}/{setting} prompts", paths.prompts_file(benchmark, setting)))
    inputs = []
    for context, name, path in files:
        dataset = Dataset(
            name=name,
            digest=sha256_file(path)[:DIGEST_LENGTH],
            source_type="local",
            source=json.dumps({"uri": path.as_posix()}),
        )
        inputs.append(DatasetInput(dataset, tags=[InputTag("mlflow.data.context", context)]))
    return inputs


def find_or_create_run(
    client: MlflowClient,
    experiment_id: str,
    key: str,
    new_params: dict[str, str],
    tags: dict[str, str],
    run_name: str,
    counts: dict[str, int],
) -> str:
    """The run with this key and these params (updated), else a new one; runs with the key
    and other params (or another parent) are soft-deleted (recoverable)."""
    from mlflow.entities import Param

    run_id: str | None = None
    for run in client.search_runs([experiment_id], filter_string=f"tags.`{KEY_TAG}` = '{key}'", max_results=10):
        same = run.data.params == new_params and run.data.tags.get(PARENT_TAG) == tags.get(PARENT_TAG)
        if same and run_id is None:
            run_id = run.info.run_id
        else:  # another configuration (params are immutable in MLflow)
            client.delete_run(run.info.run_id)
            counts["replaced"] += 1
    if run_id is None:
        run_id = client.create_run(experiment_id, tags=tags, run_name=run_name).info.run_id
        client.log_batch(run_id, params=[Param(k, v) for k, v in new_params.items()])
        counts["created"] += 1
    else:
        counts["updated"] += 1
    return run_id


def log_to_run(client: MlflowClient, run_id: str, metrics: dict[str, float], tags: dict[str, str]) -> None:
    from mlflow.entities import Metric, RunTag

    now = int(time.time() * 1000)
    client.log_batch(
        run_id, metrics=[Metric(k, v, now, 0) for k, v in metrics.items()], tags=[RunTag(k, v) for k, v in tags.items()]
    )


def _link_model(client: MlflowClient, experiment_id: str, run_id: str, key: str, model: str, body: AnyBody) -> str:
    """An external logged model for the model (its identity as params): the runs table's
    Models column. Found again by key tag and source run, so re-tracking adds none."""
    from mlflow.entities import LoggedModelOutput

    found = client.search_logged_models([experiment_id], filter_string=f"tags.`{KEY_TAG}` = '{key}'", max_results=10)
    for logged in found:
        if logged.source_run_id == run_id:
            linked: str = logged.model_id
            return linked
    recorded = body.model_info.identity if body.model_info is not None else None
    identity = {
        k: v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
        for k, v in sorted(scrub(recorded or {}).items())
    }
    logged = client.create_logged_model(
        experiment_id,
        name=re.sub(r"[^\w\-.]", "_", model)[:250],
        source_run_id=run_id,
        tags={KEY_TAG: key},
        model_type="external",
        params={k[:250]: v[:MAX_PARAM_LENGTH] for k, v in identity.items()},
    )
    client.finalize_logged_model(logged.model_id, "READY")
    client.log_outputs(run_id, [LoggedModelOutput(logged.model_id, 0)])
    created: str = logged.model_id
    return created


@dataclass
class PreparedSetting:
    """A setting's run as computed before anything of it is written (a table that cannot be read
    or joined leaves no run behind): its key, params, tags, metrics and dataset inputs, the rows to
    trace, and its artifacts staged in a folder (the item table of every row among them)."""

    key: str
    run_name: str
    params: dict[str, str]
    tags: dict[str, str]
    metrics: dict[str, float]
    inputs: list[DatasetInput]
    artifacts: Path
    traces: SettingTraces | None  # None: traces off, or the setting has no score table


@dataclass
class SettingTraces:
    """The rows of a setting that are traces, and what its run says of them."""

    rows: list[traces.ItemRow]
    table_rows: int
    sampled: bool
    strata: dict[str, int]


def prepare_setting(
    params: Params,
    benchmark: str,
    model: str,
    setting: str,
    body: AnyBody,
    parent_id: str,
    shared: Path,
    source: ItemSource,
    staging: Path,
) -> PreparedSetting:
    """Everything of a setting's run that needs no store: reading and joining its tables, most of
    track's work."""
    key = f"{benchmark}/{model}/{setting}"
    tags = {
        KEY_TAG: key,
        PARENT_TAG: parent_id,
        "idiombench.benchmark": benchmark,
        "idiombench.model": model,
        "idiombench.setting": setting,
        "idiombench.profile": params.profile,
        **source_tags(benchmark),
    }
    found = _setting_traces(params, benchmark, model, setting, source)
    artifacts = _artifacts(benchmark, model, setting, staging, shared)
    if found is not None:
        (artifacts / "items").mkdir(exist_ok=True)
        write_parquet(
            artifacts / "items" / f"{setting}.parquet", pa.Table.from_pandas(found.table, preserve_index=False)
        )
    return PreparedSetting(
        key=key,
        run_name=f"{model} / {setting}",
        params=run_params(params, benchmark=benchmark, model=model, setting=setting, body=body),
        tags=tags,
        metrics=run_metrics(body.settings[setting]) | noise_metrics(benchmark=benchmark, model=model, setting=setting),
        inputs=dataset_inputs(benchmark, setting, body.settings[setting].model_dump(mode="json")),
        artifacts=artifacts,
        traces=None
        if found is None
        else SettingTraces(found.rows, len(found.table), sampled=found.sampled, strata=found.strata),
    )


def store_setting(
    client: MlflowClient,
    experiment_id: str,
    prepared: PreparedSetting,
    params: Params,
    counts: dict[str, int],
    progress: Progress,
) -> dict[str, object]:
    """Create or update the child run of one (model, setting), with its items as traces."""
    run_id = find_or_create_run(
        client, experiment_id, prepared.key, prepared.params, prepared.tags, prepared.run_name, counts
    )
    log_to_run(client, run_id, prepared.metrics, prepared.tags)
    if prepared.inputs:  # the same (name, digest) logged again is not duplicated by the store
        client.log_inputs(run_id, datasets=prepared.inputs)
    traced = None
    if prepared.traces is not None:
        traced = _sync_items(client, experiment_id, run_id, params, prepared.key, prepared.traces, progress)
    client.log_artifacts(run_id, str(prepared.artifacts))
    client.set_terminated(run_id)
    return {
        "run_id": run_id,
        "metrics": len(prepared.metrics),
        "datasets": len(prepared.inputs),
        **({"traces": traced, "items_ui": items_url(experiment_id, run_id)} if traced is not None else {}),
    }


@dataclass
class ItemSource:
    """What the traces of one (model, benchmark) read once: the built items and the scorer roles."""

    items: dict[str, dict[str, Any]]
    roles: dict[str, Any]


def item_source(params: Params, *, benchmark: str, model: str, settings: list[str]) -> ItemSource:
    """The built items the settings scored and the scorer roles (scoring_meta.json), when traced."""
    if not params.tracking.traces.enabled:
        return ItemSource({}, {})
    scores = paths.scores_dir(benchmark=benchmark, model=model)
    ids = {
        item
        for s in settings
        if (scores / f"{s}.parquet").is_file()
        for item in read_parquet(scores / f"{s}.parquet", what="score table", columns=["item_id"])[
            "item_id"
        ].to_pylist()
    }
    return ItemSource(load_items(benchmark, only=ids), read_json_object(scores / paths.SCORING_META).get("roles", {}))


def score_rows(params: Params, *, benchmark: str, model: str, settings: list[str]) -> int:
    """The rows track goes through (its progress): every score row of the traced settings."""
    if not params.tracking.traces.enabled:
        return 0
    files = [paths.scores_dir(benchmark=benchmark, model=model) / f"{s}.parquet" for s in settings]
    return sum(parquet_rows(f, what="score table") for f in files if f.is_file())


def _setting_traces(
    params: Params, benchmark: str, model: str, setting: str, source: ItemSource
) -> traces.SettingRows | None:
    """The setting's scored rows (stages/track_traces.py: the traced ones, and the item table of
    every row); None when traces are off or the setting has no score table."""
    config = params.tracking.traces
    if not config.enabled or not (paths.scores_dir(benchmark=benchmark, model=model) / f"{setting}.parquet").is_file():
        return None
    found = traces.setting_rows(
        benchmark=benchmark,
        model=model,
        setting=setting,
        view=get_benchmark(benchmark).item_view,
        items=source.items,
        roles=source.roles,
        sample=config.sample,
        seed=config.seed,
    )
    flips = noise_flips(benchmark=benchmark, model=model, setting=setting)
    for row in found.rows:  # filterable in the UI: tags.serving_noise_flipped
        if row.inputs["pass"] == "main" and row.tags.get("prompt_id") in flips:
            row.tags[FLIPPED_TAG] = flips[row.tags["prompt_id"]]
    return found


def _sync_items(
    client: MlflowClient,
    experiment_id: str,
    run_id: str,
    params: Params,
    scope: str,
    found: SettingTraces,
    progress: Progress,
) -> dict[str, object]:
    """The setting's traced rows as exactly the traces of its run (stages/track_traces.py)."""
    config = params.tracking.traces
    counts = traces.sync_traces(client, experiment_id, run_id, scope, found.rows, progress)
    counts.not_traced = found.table_rows - len(found.rows)
    progress.update(counts.not_traced)
    strata = ", ".join(get_benchmark(scope.split("/")[0]).item_view.strata)
    tags = {
        TRACES_TAG: (
            f"sample of {len(found.rows):,} of {found.table_rows:,} rows (tracking.traces.sample "
            f"{config.sample}, seed {config.seed}, stratified by {strata}); "
            "every row is in the artifact items/"
            if found.sampled
            else f"all {len(found.rows):,} rows"
        )
    }
    log_to_run(client, run_id, {}, tags)
    return {
        "traced": len(found.rows),
        "rows": found.table_rows,
        "sampled": found.sampled,
        "strata": found.strata,
        **vars(counts),
    }


def local_store(uri: str) -> Path | None:
    """The file or folder of a local tracking store (sqlite:///<file>, file:<dir> or a plain
    path); None for a tracking server, which serialises its clients itself."""
    parsed = urlparse(uri)
    if parsed.scheme == "sqlite":
        return Path(uri[len("sqlite:///") :]) if uri.startswith("sqlite:///") else None
    if parsed.scheme in ("", "file"):
        return Path(parsed.path or uri)
    return None


class TrackingStoreError(IdiombenchError):
    """The tracking store could not be reached, refused a request or failed during the run."""


@contextlib.contextmanager
def store_lock(uri: str) -> Iterator[None]:
    """One `track` job at a time opens a local store: Snakemake runs track jobs side by side, and two
    processes opening a new SQLite store both run MLflow's schema migration (the second fails:
    "table _alembic_tmp_experiments already exists"); two creating one experiment race too. Held
    while a job opens the store, its experiment and the parent run, not after: what a job writes
    next (its runs, traces, artifacts) is its own, and SQLite takes writers one transaction at a
    time (MLflow waits up to 20 s for the database; a batch of traces is one short transaction),
    so two jobs' reading and writing overlap."""
    store = local_store(uri)
    if store is None:
        yield
        return
    lock_path = store.parent / f".{store.name}.lock" if store.name else store / ".lock"
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(lock_path, "a", encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError as exc:  # the store's folder cannot be made or written: nothing was touched
        raise TrackingStoreError(
            f"tracking store {uri} cannot be opened: {exc.filename}: {exc.strerror or exc}"
        ) from None
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # waits for the other track job (seconds)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def is_store_failure(exc: BaseException) -> bool:
    """An error of the store or of the way to it (MLflow's client, HTTP, the database), as opposed
    to one of idiombench's own."""
    import requests
    import sqlalchemy.exc
    from mlflow.exceptions import MlflowException

    return isinstance(
        exc,
        (MlflowException, requests.RequestException, sqlalchemy.exc.SQLAlchemyError, ConnectionError, TimeoutError),
    )


@contextlib.contextmanager
def store_errors(uri: str, rerun: str) -> Iterator[None]:
    """A store that cannot be reached, refuses a request or fails mid-run is the user's
    environment: one error naming it (credentials scrubbed when the error is made). What was
    written stays (whole batches of traces: track_store.py) and a rerun completes it."""
    try:
        yield
    except Exception as exc:
        if not is_store_failure(exc):
            raise
        origin = "MLFLOW_TRACKING_URI" if os.environ.get("MLFLOW_TRACKING_URI") else "the default store"
        # scrubbed before it is cut: a URL cut short could keep a credential the scrub would not see
        problem = scrub_message(" ".join(str(getattr(exc, "message", None) or exc).split()))[:400] or type(exc).__name__
        raise TrackingStoreError(
            f"tracking store {uri} ({origin}) failed: {problem}; nothing but the store was changed, "
            f"and a rerun of `{rerun}` completes what is missing"
        ) from None


def ensure_experiment(client: MlflowClient, benchmark: str) -> str:
    """The benchmark's experiment (created when missing), tagged to open on its runs."""
    experiment = client.get_experiment_by_name(benchmark)
    experiment_id: str = experiment.experiment_id if experiment else client.create_experiment(benchmark)
    if experiment is None or experiment.tags.get(EXPERIMENT_KIND_TAG) != EXPERIMENT_KIND:
        client.set_experiment_tag(experiment_id, EXPERIMENT_KIND_TAG, EXPERIMENT_KIND)
    return experiment_id


def _track_parent(
    client: MlflowClient,
    experiment_id: str,
    params: Params,
    benchmark: str,
    model: str,
    body: AnyBody,
    counts: dict[str, int],
) -> str:
    """Create or update the parent run of one model on one benchmark."""
    key = f"{benchmark}/{model}"
    model_params = {
        k: v
        for k, v in run_params(params, benchmark=benchmark, model=model, setting="", body=body).items()
        if k != "setting"
    }
    display = body.model_info.display_name if body.model_info is not None else model
    tags = {
        KEY_TAG: key,
        "idiombench.benchmark": benchmark,
        "idiombench.model": model,
        "idiombench.level": "model",
        "idiombench.profile": params.profile,
        **source_tags(benchmark),
        "mlflow.note.content": f"{display} on {benchmark}: one child run per setting; "
        f"metrics here are each setting's headline metrics.",
    }
    run_id = find_or_create_run(client, experiment_id, key, model_params, tags, display, counts)
    dumped = plain(body)
    log_to_run(
        client,
        run_id,
        headline_metrics(params, benchmark, dumped) | reproduction_metrics(params, benchmark, model, dumped),
        tags,
    )
    _link_model(client, experiment_id, run_id, key, model, body)
    client.set_terminated(run_id)
    return run_id


RECORD_KEYS = ("benchmark", "model", "experiment", "runs")  # in every tracking record
# every top-level key a tracking record of an earlier version (before its ownership record) had
EARLIER_RECORD_KEYS = (*RECORD_KEYS, "status", "counts", "parent", "ui")


def is_tracking_record(path: Path, benchmark: str, model: str) -> bool:
    """A tracking record `idiombench track` wrote (its record matches), or one of an earlier
    version for this benchmark and model (cli: track replaces only these)."""
    return stamped_by(path, paths.TRACK_OUTPUT) or earlier_json_file(
        path, RECORD_KEYS, EARLIER_RECORD_KEYS, benchmark=benchmark, model=model
    )


def track(params: Params, *, benchmark: str, model: str, out: Path | None = None) -> dict[str, Any]:
    """Log one model's results on one benchmark: a parent run, one child run per setting."""
    import mlflow
    from mlflow.tracking import MlflowClient

    out = out or paths.tracking_record(benchmark=benchmark, model=model)
    failed = failed_models(params, benchmark).get(model)
    if failed is not None:  # its metrics are an older run's: never logged as this configuration's results
        raise IdiombenchError(
            f"{paths.generate_failure(model)}: the last `idiombench generate --model {model}` "
            f"failed ({failed}); rerun it before tracking (the metrics in "
            f"{paths.metrics_file(benchmark=benchmark, model=model)} are an earlier run's)"
        )
    record: dict[str, Any] = {"benchmark": benchmark, "model": model, "experiment": benchmark, "runs": {}}
    counts = {"created": 0, "updated": 0, "replaced": 0}
    collected = collect_metrics(params, benchmark).get(model)
    if collected is None:  # skipped (or not aggregated): nothing to log, and the record says why
        metrics_path = paths.metrics_file(benchmark=benchmark, model=model)
        record["status"] = (
            read_json_object(metrics_path).get("status", "missing") if metrics_path.exists() else "missing"
        )
        record["counts"] = counts
        write_json(out, stamp(record, paths.TRACK_OUTPUT))
        return record
    body = framed(collected)  # a plugin's plain body read as the frame every body shares
    uri = tracking_uri()
    with store_errors(uri, f"idiombench track {benchmark} --model {model}"):
        with store_lock(uri):
            mlflow.set_tracking_uri(uri)
            client = MlflowClient(tracking_uri=uri)
            experiment_id = ensure_experiment(client, benchmark)
            if params.tracking.traces.enabled:
                offer_labels(experiment_id, benchmark)
            parent_counts = {"created": 0, "updated": 0, "replaced": 0}
            parent_id = _track_parent(client, experiment_id, params, benchmark, model, body, parent_counts)
        record["status"] = SCORED
        record["ui"] = ui_url(experiment_id)
        record["parent"] = {"run_id": parent_id, "counts": parent_counts}
        settings = sorted(body.settings)
        source = item_source(params, benchmark=benchmark, model=model, settings=settings)
        with (
            tempfile.TemporaryDirectory() as shared_dir,
            Progress(
                score_rows(params, benchmark=benchmark, model=model, settings=settings),
                f"track {benchmark} {model}",
                unit="row",
            ) as progress,
        ):
            shared = Path(shared_dir)
            section_artifacts(params, benchmark=benchmark, model=model, body=collected, staging=shared)
            for setting in settings:
                with tempfile.TemporaryDirectory() as staging:
                    prepared = prepare_setting(
                        params, benchmark, model, setting, body, parent_id, shared, source, Path(staging)
                    )
                    record["runs"][prepared.key] = store_setting(
                        client, experiment_id, prepared, params, counts, progress
                    )
    record["counts"] = counts
    record["inputs"] = input_digests(benchmark, model)
    write_json(out, stamp(record, paths.TRACK_OUTPUT))
    return record


def input_digests(benchmark: str, model: str) -> dict[str, dict[str, str]]:
    """The sha256 of the model's score tables and generations of the benchmark, by file: what the
    record was made from, so a stage keyed on the records (track-comparison, which reads them
    too) sees any change of them."""
    folders = {
        "scores": paths.scores_dir(benchmark=benchmark, model=model),
        "generations": paths.generations_dir(model) / benchmark,
    }
    return {
        kind: {p.name: sha256_file(p) for p in sorted(folder.glob("*.parquet"))} for kind, folder in folders.items()
    }
