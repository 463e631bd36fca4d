"""The aggregate stage: per-item scores -> the metrics JSON body (the benchmark's `aggregate`
hook: {"settings": {setting: {"metrics": ..., "counts": ...}}, "breakdowns": ...,
"provenance": ...}), with what the report and MLflow say about the model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..benchmarks.contexts import AggregateContext
from ..benchmarks.registry import get_benchmark
from ..core import paths
from ..core.errors import DataError, IdiombenchError
from ..core.io import parquet_rows, read_json, read_json_object, read_parquet, write_json
from ..core.ownership import earlier_json_file, stamp, stamped_by
from ..core.progress import Progress
from ..core.redact import scrub
from ..metrics.body import FrameBody, off_model
from ..params.schema import Params
from .inputs import SCORED, SKIPPED, load_items

METRICS_KEYS = ("benchmark", "model", "status")  # in every metrics file
# every top-level key a metrics file of an earlier version (before its ownership record) had:
# such a file is recognised only when it has no other (ownership.earlier_json_file)
EARLIER_METRICS_KEYS = (*METRICS_KEYS, "reason", "model_info", "settings", "breakdowns", "provenance")


def is_metrics_file(path: Path, benchmark: str, model: str) -> bool:
    """A metrics file `idiombench aggregate` wrote (its record matches), or one of an earlier
    version for this benchmark and model (cli: aggregate replaces only these)."""
    return stamped_by(path, paths.AGGREGATE_OUTPUT) or earlier_json_file(
        path, METRICS_KEYS, EARLIER_METRICS_KEYS, benchmark=benchmark, model=model
    )


def run_aggregate(params: Params, *, benchmark: str, model: str, out: Path | None = None) -> dict[str, Any]:
    out = out or paths.metrics_file(benchmark=benchmark, model=model)
    scores_dir = paths.scores_dir(benchmark=benchmark, model=model)
    meta_path = scores_dir / "scoring_meta.json"
    if not meta_path.exists():
        raise IdiombenchError(f"{meta_path} is missing: run `idiombench score {benchmark} --model {model}` first")
    meta = read_json_object(meta_path)
    if meta.get("status") not in (SCORED, SKIPPED):
        raise DataError(
            meta_path,
            f"status {meta.get('status')!r}",
            expected=f"a record of `idiombench score` (status {SCORED!r} or {SKIPPED!r})",
        )
    body: dict[str, object] = {"benchmark": benchmark, "model": model, "status": meta["status"]}
    if meta["status"] == SKIPPED:
        body["reason"] = meta.get("reason", "skipped")
    else:
        files = sorted(scores_dir.glob("*.parquet"))
        with Progress(
            sum(parquet_rows(f, what="score table") for f in files), f"aggregate {benchmark} {model}", unit="row"
        ) as progress:
            scores = {}
            for path in files:
                scores[path.stem] = read_parquet(path, what="score table").to_pandas()
                progress.update(len(scores[path.stem]))
            ctx = AggregateContext(
                params=params,
                model=model,
                benchmark=benchmark,
                config=params.benchmark(benchmark),
                scores=scores,
                items=load_items(benchmark),
                scoring_meta=meta,
            )
            body.update(get_benchmark(benchmark).aggregate(ctx))  # the summary line's time includes this
        body["model_info"] = model_info(params, model)
    results = get_benchmark(benchmark).results_model
    shape = results or FrameBody  # a plugin's or declaration's body: the frame every body shares
    try:
        checked = shape.model_validate(body)
    except ValidationError as error:
        raise IdiombenchError(
            f"{benchmark}: its aggregate returned a metrics body that does not fit "
            f"metrics.body.{shape.__name__}: {off_model(error)}; {out} is left as it was"
        ) from None
    if results is not None:  # written through the benchmark's typed body; a plugin's as it returned it
        body = checked.dump()
    write_json(out, stamp(body, paths.AGGREGATE_OUTPUT))
    return body


def model_info(params: Params, model: str) -> dict[str, object]:
    """What the report and MLflow say about a model: its config, and the identity the
    generate stage recorded (revision or weight-file hash) when there is one."""
    config = params.models[model]
    info: dict[str, object] = {
        "name": model,
        "display_name": config.display_name or model,
        "config": scrub(json.loads(config.model_dump_json())),  # never a credential from base_url
    }
    identity_file = paths.generations_dir(model) / "identity.json"
    if paths.generations_complete(model) and identity_file.exists():  # never from a partial folder
        info["identity"] = scrub(read_json(identity_file))
    return info
