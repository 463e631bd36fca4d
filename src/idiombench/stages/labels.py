"""`idiombench labels pull <benchmark> --model <m>`: human labels given in the MLflow UI, back
into the annotation file an analysis reads (a DVC and Snakemake input: the stages that read
it rerun, nothing else).

A benchmark that reads human labels declares them (`Benchmark.human_labels`: the feedback's
name, its options, the settings whose traces are labelled, the annotation file's params key
and its reader). `track` offers the options in the UI as a categorical label schema of that
name on the benchmark's experiment. The pull reads, through MLflow's client, the valid
HUMAN-source feedback of that name on the model's traces of those settings (the main pass's
first sample: the generation an analysis measures), maps each value to its label, and writes
`prompt_id,label,model,trace_id,labeller` rows: this model's rows replaced, other models'
kept. The file is written to a temporary name, read back with the analysis's own reader
(validated like any annotation file), then renamed into place. An existing file is replaced
only when `labels pull` wrote it (its header is this module's); a hand-written file is left
alone (exit 2).
"""

from __future__ import annotations

import csv
import io as text_io
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from ..benchmarks.contexts import HumanLabels
from ..benchmarks.registry import NAMES, get_benchmark
from ..core.errors import DataError, IdiombenchError
from ..core.io import atomic_path, check_output_file
from ..params.schema import Params
from . import track_traces as traces

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

COLUMNS = ("prompt_id", "label", "model", "trace_id", "labeller")
HEADER = ",".join(COLUMNS)


class LabelCounts(TypedDict):
    traces: int  # the model's traces read
    labelled: int  # with a label taken
    conflicts: int  # labelled by several people differently (the latest stands)
    ignored: int  # labelled, but on another pass or sample


class PullSummary(LabelCounts):
    file: str
    model: str
    rows: int  # the annotation file's rows, every model's


def spec_of(benchmark: str) -> HumanLabels:
    spec = get_benchmark(benchmark).human_labels
    if spec is None:
        readers = [name for name in NAMES if get_benchmark(name).human_labels is not None]
        raise IdiombenchError(
            f"benchmark {benchmark} reads no human labels (benchmarks that do: {', '.join(readers) or 'none'})"
        )
    return spec


def annotation_path(params: Params, benchmark: str, out: Path | None) -> Path:
    """`out`, else the annotation file the benchmark's params name (an error when none is named)."""
    if out is not None:
        return out
    configured = spec_of(benchmark).file(params.benchmark(benchmark))
    if configured is None:
        raise IdiombenchError(
            f"params: benchmarks.{benchmark}.attention.annotations names no file: set it to a file under "
            f"data/annotations/ (e.g. data/annotations/{benchmark}-labels.csv; the attention stage reads it) "
            "or pass --out"
        )
    return Path(configured)


def pulled_by_us(path: Path) -> bool:
    """An annotation file this command wrote: its first line is our header."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            return handle.readline().rstrip("\r\n") == HEADER
    except (OSError, UnicodeDecodeError):
        return False


def check_destination(path: Path) -> Path:
    return check_output_file(
        path, pulled_by_us, f"an annotation file written by `idiombench labels pull` (first line {HEADER})"
    )


def human_labels(
    client: MlflowClient, experiment_id: str, *, benchmark: str, model: str, spec: HumanLabels
) -> tuple[list[dict[str, str]], LabelCounts]:
    """The model's labelled traces as file rows, and counts (traces read, labelled, conflicting,
    ignored: on another pass or sample)."""
    rows: list[dict[str, str]] = []
    counts: LabelCounts = {"traces": 0, "labelled": 0, "conflicts": 0, "ignored": 0}
    for setting in spec.settings:
        for trace_id, info in sorted(
            traces.existing_traces(client, experiment_id, f"{benchmark}/{model}/{setting}").items()
        ):
            counts["traces"] += 1
            feedback = sorted(
                (
                    a
                    for a in info.assessments
                    if a.name == spec.name
                    and a.feedback is not None
                    and a.valid is not False
                    and a.source.source_type == "HUMAN"
                ),
                key=lambda a: (a.last_update_time_ms or 0, a.assessment_id),
            )
            if not feedback:
                continue
            if info.tags.get("pass") != "main" or info.tags.get("sample") != "0":
                counts["ignored"] += 1
                continue
            values = {spec.value(a.feedback.value) for a in feedback if a.feedback is not None}
            latest = feedback[-1]
            assert latest.feedback is not None  # the filter above
            label = spec.value(latest.feedback.value)
            if label is None:
                raise DataError(
                    f"MLflow trace {trace_id}",
                    f"feedback {spec.name!r} = {latest.feedback.value!r} (by {latest.source.source_id})",
                    expected=f"one of: {', '.join(spec.options)}",
                )
            counts["conflicts"] += len(values) > 1  # several labellers disagree: the latest stands
            counts["labelled"] += 1
            rows.append(
                {
                    "prompt_id": info.tags.get("prompt_id", ""),
                    "label": str(label),
                    "model": model,
                    "trace_id": trace_id,
                    "labeller": latest.source.source_id or "",
                }
            )
    return rows, counts


def _kept_rows(path: Path, model: str) -> list[dict[str, str]]:
    """The rows of other models in an annotation file this command wrote."""
    if not path.is_file():
        return []
    with path.open(encoding="utf-8", newline="") as handle:
        return [row for row in csv.DictReader(handle) if row.get("model") != model]


def pull(params: Params, *, benchmark: str, model: str, uri: str, out: Path | None = None) -> PullSummary:
    """Write the model's labels from the MLflow store at `uri` into the annotation file; a summary."""
    from mlflow.tracking import MlflowClient

    spec = spec_of(benchmark)
    path = check_destination(annotation_path(params, benchmark, out))
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name(benchmark)
    if experiment is None:
        raise IdiombenchError(
            f"MLflow store {uri} has no experiment {benchmark!r}: run "
            f"`idiombench track {benchmark} --model {model}` first"
        )
    rows, counts = human_labels(client, experiment.experiment_id, benchmark=benchmark, model=model, spec=spec)
    every = sorted(_kept_rows(path, model) + rows, key=lambda r: (r.get("model", ""), r["prompt_id"]))
    buffer = text_io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(every)
    with atomic_path(path) as temporary:
        temporary.write_text(buffer.getvalue(), encoding="utf-8")
        spec.read(str(temporary), model)  # validated by the analysis's own reader before it replaces the file
    return {"file": str(path), "model": model, "rows": len(every), **counts}


def offer_labels(experiment_id: str, benchmark: str) -> None:
    """The benchmark's labels as a categorical label schema on its experiment (created once), so
    the UI offers its options when a person adds that feedback to a trace."""
    from mlflow.exceptions import MlflowException
    from mlflow.genai.label_schemas import InputCategorical, create_label_schema, get_label_schema

    spec = get_benchmark(benchmark).human_labels
    if spec is None:
        return
    try:
        get_label_schema(spec.name, experiment_id=experiment_id)
    except MlflowException:
        create_label_schema(
            spec.name,
            type="feedback",
            input=InputCategorical(options=list(spec.options)),
            instruction=spec.instruction,
            enable_comment=True,
            experiment_id=experiment_id,
        )
