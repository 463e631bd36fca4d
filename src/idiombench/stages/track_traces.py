"""One MLflow trace per scored row, in the run of its (model, benchmark, setting).

A trace holds what a researcher asks of an item: its inputs (item id, the item's fields, the
rendered prompt as chat messages), its outputs (the raw generation, the parsed answer, the
parse status and flags), its reference as expectations, and one feedback assessment per
item-level metric, whose source is the scorer role and model that computed it (or the
benchmark's own code). Tags (benchmark, model, setting, task, language, pass, sample, status
and the benchmark's own: permutation pattern, distractor type, ...) are what the MLflow UI
filters by. Which columns are metrics and tags is the benchmark's `item_view`.

Idempotent and bounded:
- A trace's id is derived from its row (model, benchmark, setting, prompt, pass, sample) and
  the sha256 of its output, and each of its assessments' ids from the trace id and the
  assessment's name. A trace carries the digest of everything it holds (`idiombench.digest`):
  re-tracking the same scores writes nothing; a changed score rewrites that trace in place
  (MLflow's store merges a trace written again: the assessment with the same id is replaced,
  human feedback on it is kept); a row whose output changed gets a new trace and the old one
  is deleted (its human feedback went to an output that is no longer there: the record counts
  it). A trace is unchanged only when its spans are in the store too (a run cut short
  between a trace's info and its spans left it incomplete: it is written again).
- Writes are batched (stages/track_store.py): into an SQLite store one transaction per batch of
  traces; into a server `start_trace` per trace and one `log_spans` per batch. A killed run
  leaves what it wrote; the next run writes the rest.
- `tracking.traces.sample` caps the traces per run at a seeded draw stratified by the view's
  strata (the same items for every model, so two runs compare item by item); every row is
  still in the run's item table artifact.

The traces are MLflow's own (`TraceInfo`, `Span`, `Feedback`, `Expectation`: what MLflow's
tracing client writes, `start_trace` and `log_spans`; found with `search_traces`, removed with
`delete_traces`), so `mlflow ui` shows them without custom code:
the experiment's Traces view (filter by tag or assessment), each run's Evaluations view, and
its "compare to run" (two models' traces side by side, matched by their request preview, which
is the same for the same item).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pandas as pd

from ..benchmarks.contexts import SCORE_KEYS, ItemMetric, ItemView
from ..core import paths
from ..core.errors import DataError
from ..core.io import read_parquet
from ..core.items import Item
from ..core.progress import Progress
from ..core.sampling import stratified_subset
from .track_store import AssessmentRecord, TraceRecord, is_complete, trace_writer, write_batches

if TYPE_CHECKING:
    from mlflow import MlflowClient
    from mlflow.entities import Assessment, TraceInfo

ValueT = TypeVar("ValueT")

SCOPE_TAG = "idiombench.scope"  # "<benchmark>/<model>/<setting>": the traces of one run
DIGEST_TAG = "idiombench.digest"
ROW_KEYS = SCORE_KEYS[:3]  # (prompt_id, pass, sample_index): the generation row a score row is of
BATCH = 500  # traces per write: one transaction into an SQLite store, a log_spans call into a server
PREVIEW_CHARS = 1000
SEARCH_PAGE = 500  # the most an mlflow server returns per page
RECORDS_AT_ONCE = 20_000  # score rows turned into Python records at a time
# score-table columns that identify a row or repeat the item: never metrics
STRUCTURAL = frozenset({"prompt_id", "task", "setting", "item_id", "pass", "sample_index", "n_references"})


@dataclass
class ItemRow:
    """One scored row, everything its trace shows."""

    key: str  # "<benchmark>/<model>/<setting>/<prompt_id>/<pass>/<sample_index>"
    item_id: str
    output_sha: str
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    expectations: dict[str, Any]
    metrics: list[tuple[str, Any, dict[str, str]]]  # (name, value, source: {"id", "role", "model", "status"})
    tags: dict[str, str]
    request_preview: str
    response_preview: str
    failed: bool = False
    tokens: tuple[int | None, int | None] = (None, None)  # prompt and completion tokens (the UI's Tokens column)


@dataclass
class SyncCounts:
    written: int = 0
    unchanged: int = 0
    deleted: int = 0
    deleted_with_human_feedback: int = 0
    assessments_removed: int = 0
    not_traced: int = 0  # rows left out of a sample (in the item table only)


@dataclass
class SettingRows:
    """The rows of one (model, benchmark, setting), and the item table of all of them."""

    rows: list[ItemRow]
    table: pd.DataFrame
    sampled: bool = False
    strata: dict[str, int] = field(default_factory=dict)


def _text(value: object) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return str(value)


def _plain(value: object) -> object:
    """A JSON-ready value of a score-table cell (numpy scalars and arrays, NaN as None)."""
    if value is None:
        return None
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def _tag_value(value: object) -> str | None:
    value = _plain(value)
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)[:250]
    return str(value)[:250]


def view_metrics(view: ItemView, columns: Sequence[str], dtypes: Mapping[str, object]) -> list[ItemMetric]:
    """The view's metrics that this table has; by default every numeric or boolean column."""
    if view.metrics is not None:
        return [m for m in view.metrics if m.column in columns]
    return [
        ItemMetric(c)
        for c in columns
        if c not in STRUCTURAL and (pd.api.types.is_numeric_dtype(dtypes[c]) or pd.api.types.is_bool_dtype(dtypes[c]))
    ]


def _source(benchmark: str, metric: ItemMetric, row: Mapping[str, Any], roles: Mapping[str, Any]) -> dict[str, str]:
    """Who computed a metric: the scorer role and its model (scoring_meta.json), else the code."""
    role = metric.role(row) if callable(metric.role) else metric.role
    if role is None:
        return {"id": f"idiombench score {benchmark}"}
    status = roles.get(role, {})
    model = status.get("model")
    return {
        "id": f"{model} ({role})" if model else f"{role}: not computed",
        "role": role,
        "model": str(model),
        "status": str(status.get("status", "unknown")),
    }


def _messages(path: object, raw: str) -> list[dict[str, str]]:
    try:
        messages = json.loads(raw)
    except ValueError:
        raise DataError(
            path, "a messages cell is not JSON", expected="a prompts table of `idiombench render`"
        ) from None
    return messages if isinstance(messages, list) else []


def _count(value: object) -> int | None:
    value = _plain(value)
    return int(value) if isinstance(value, (int, float)) else None


def _status(failed: bool, parse_ok: object) -> str:
    if failed:
        return "generation_failed"
    if parse_ok is None:
        return "scored"
    return "ok" if bool(parse_ok) else "parse_failed"


def setting_rows(
    *,
    benchmark: str,
    model: str,
    setting: str,
    view: ItemView,
    items: Mapping[str, Mapping[str, Item]],
    roles: Mapping[str, object],
    sample: int | None = None,
    seed: int = 0,
) -> SettingRows:
    """Join the setting's score table with its generations, prompts and items into ItemRows
    (the traced ones) and the item table (every row)."""
    scores_path = paths.scores_dir(benchmark=benchmark, model=model) / f"{setting}.parquet"
    scores = read_parquet(scores_path, what="score table").to_pandas()
    generations_path = paths.generations_file(benchmark=benchmark, model=model, setting=setting)
    generations = read_parquet(
        generations_path,
        what="generations table",
        columns=[
            "prompt_id",
            "pass",
            "sample_index",
            "text",
            "finish_reason",
            "error",
            "prompt_tokens",
            "completion_tokens",
        ],
    ).to_pandas()
    prompts_path = paths.prompts_file(benchmark, setting)
    prompts = (
        read_parquet(prompts_path, what="prompts table", columns=["prompt_id", "messages", "template_id"]).to_pandas()
        if prompts_path.is_file()
        else pd.DataFrame(columns=["prompt_id", "messages", "template_id"])
    )
    missing = [c for c in SCORE_KEYS if c not in scores.columns]
    if missing:
        raise DataError(scores_path, f"no column {', '.join(missing)}", expected="a score table of `idiombench score`")
    scores["sample_index"] = scores["sample_index"].astype("int64")
    generations["sample_index"] = generations["sample_index"].astype("int64")
    joined = scores.merge(generations, on=list(ROW_KEYS), how="left", suffixes=("", "_generation"), indicator=True)
    lost = joined[joined["_merge"] != "both"]
    if not lost.empty:
        first = lost.iloc[0]
        raise DataError(
            generations_path,
            f"no generation row for score row {first['prompt_id']} "
            f"[{first['pass']} #{first['sample_index']}] of {scores_path}",
            expected="the generations the scores were computed from (rerun score)",
        )
    joined = joined.drop(columns="_merge").merge(prompts, on="prompt_id", how="left", suffixes=("", "_prompt"))
    metrics = view_metrics(view, list(scores.columns), scores.dtypes.to_dict())
    answer_column = next((c for c in view.answer if c in scores.columns), None)
    item_of = _row_items(joined, items, scores_path)
    units = _sampled_units(joined, items, view, sample, benchmark, setting, seed)
    traced = joined if units is None else joined[joined["item_id"].isin(units)]
    rows = []
    for start in range(0, len(traced), RECORDS_AT_ONCE):  # a slice at a time: a setting can have 500,000 rows
        for record in traced.iloc[start : start + RECORDS_AT_ONCE].to_dict("records"):
            item = item_of[(record["task"], record["item_id"])]
            rows.append(
                _item_row(benchmark, model, setting, record, item, view, metrics, answer_column, roles, prompts_path)
            )
    table = item_table(joined, item_of, view, metrics, answer_column, f"{benchmark}/{model}/{setting}")
    strata: dict[str, int] = defaultdict(int)
    for row in rows:
        strata["/".join(row.tags.get(t, "-") for t in view.strata)] += 1
    return SettingRows(rows, table, sampled=units is not None, strata=dict(sorted(strata.items())))


def _row_items(
    joined: pd.DataFrame, items: Mapping[str, Mapping[str, Item]], scores_path: object
) -> dict[tuple[str, str], Item]:
    """(task, item id) -> the built item of every row; a row whose item is not built is an error."""
    found: dict[tuple[str, str], Item] = {}
    for task, item_id in joined[["task", "item_id"]].drop_duplicates().itertuples(index=False):
        item = items.get(task, {}).get(item_id)
        if item is None:
            raise DataError(
                scores_path,
                f"item {task}/{item_id} is not among the built items",
                expected="scores of the current build (rerun render, generate and score)",
            )
        found[(task, item_id)] = item
    return found


def cached(values: pd.Series, convert: Callable[[Any], Any]) -> list[Any]:
    """convert(value) of each cell, once per distinct value (by type too: 1 is not True)."""
    seen: dict[object, object] = {}
    out = []
    for value in values.tolist():
        try:
            key = (type(value), value)
            out.append(seen[key] if key in seen else seen.setdefault(key, convert(value)))
        except TypeError:  # unhashable (a list): converted each time
            out.append(convert(value))
    return out


def item_table(
    joined: pd.DataFrame,
    item_of: Mapping[tuple[str, str], Item],
    view: ItemView,
    metrics: list[ItemMetric],
    answer_column: str | None,
    scope: str,
) -> pd.DataFrame:
    """The run's item table (every row, traced or not), column by column: what each row's trace
    shows of it (a traced row's table row equals its ItemRow's: tests/unit/stages/test_traces.py).
    A setting can have 500,000 rows: per-row Python here was most of track's time."""
    n = len(joined)
    item_keys = list(zip(joined["task"].tolist(), joined["item_id"].tolist(), strict=True))

    def per_item(value: Any) -> pd.Series:
        of_item = {key: value(item) for key, item in item_of.items()}
        return pd.Series([of_item[key] for key in item_keys], index=joined.index, dtype=object)

    text = joined["text"].astype(object).where(joined["text"].map(lambda v: isinstance(v, str)), "")
    error = joined["error"].map(_text) if "error" in joined.columns else pd.Series([None] * n, index=joined.index)
    failed = error.map(bool)
    parse_ok = (
        pd.Series(cached(joined[view.parse_ok], _plain), index=joined.index, dtype=object)
        if view.parse_ok and view.parse_ok in joined.columns
        else pd.Series([None] * n, index=joined.index, dtype=object)
    )
    status = pd.Series(
        [_status(bad, ok) for bad, ok in zip(failed.tolist(), parse_ok.tolist(), strict=True)], index=joined.index
    )
    passes = joined["pass"].astype(str)
    samples = joined["sample_index"].astype("int64").astype(str)
    prompt_ids = joined["prompt_id"].astype(str)
    columns: dict[str, object] = {
        "key": scope + "/" + prompt_ids + "/" + passes + "/" + samples,
        "tag.benchmark": scope.split("/")[0],
        "tag.model": scope.split("/")[1],
        "tag.setting": scope.split("/", 2)[2],
        "tag.task": per_item(lambda item: item.task),
        "tag.language": per_item(lambda item: item.language),
        "tag.pass": passes,
        "tag.sample": samples,
        "tag.status": status,
        "tag.item_id": per_item(lambda item: item.item_id),
        "tag.prompt_id": prompt_ids,
    }
    for name in view.tags:
        tagged = (
            pd.Series(cached(joined[name], _tag_value), index=joined.index, dtype=object)
            if name in joined.columns
            else per_item(lambda item, name=name: _tag_value(item.meta.get(name)))
        )
        if tagged.notna().any():  # a tag no row has is no column (as no trace has it)
            columns[f"tag.{name}"] = tagged
    columns["input"] = per_item(lambda item: item.input)
    columns["output"] = text
    answers = joined[answer_column] if answer_column else pd.Series([None] * n, index=joined.index, dtype=object)
    columns["answer"] = cached(answers, lambda value: json.dumps(_plain(value), ensure_ascii=False))
    columns["parse_ok"] = parse_ok
    columns["expected"] = per_item(lambda item: json.dumps(_expectations(item), ensure_ascii=False, sort_keys=True))
    for metric in metrics:
        values = metric_column(joined[metric.column])
        if values.notna().any():
            columns[f"metric.{metric.column}"] = values
    return pd.DataFrame(columns, index=joined.index).reset_index(drop=True)


def metric_column(column: pd.Series) -> pd.Series:
    """A metric column as the traces hold it: _metric_value of each cell, at once where the column
    is of numpy numbers or booleans (the same floats; NaN where _metric_value gives None, a
    non-finite number). Per cell, an OrderProbe setting's 2.4 M metric cells took ~3 s of its
    item table (13.5 s -> 10.6 s)."""
    if isinstance(column.dtype, np.dtype) and column.dtype.kind in "biuf":  # not a nullable pandas dtype
        values = column.astype("float64")
        return values.where(np.isfinite(values))
    return pd.Series(cached(column, _metric_value), index=column.index, dtype="float64")


def _metric_value(value: object) -> float | None:
    """A metric cell as the trace holds it (a number, a boolean as 0/1), else None (not computed)."""
    value = _plain(value)
    return float(value) if isinstance(value, (bool, int, float)) else None


def _expectations(item: Item) -> dict[str, object]:
    expectations: dict[str, object] = {}
    if item.answer is not None:
        expectations["expected_answer"] = item.answer
    if item.references:
        expectations["references"] = list(item.references)
    return expectations


def _sampled_units(
    joined: pd.DataFrame,
    items: Mapping[str, Mapping[str, Item]],
    view: ItemView,
    sample: int | None,
    benchmark: str,
    setting: str,
    seed: int,
) -> set[str] | None:
    """The item ids traced under `sample` (None: all): a seeded draw stratified by the view's
    strata; an item's rows (its consistency samples) are traced together."""
    if sample is None or sample >= joined["item_id"].nunique():
        return None
    columns = list(dict.fromkeys(["task", "item_id", *[t for t in view.strata if t in joined.columns]]))
    units: dict[str, tuple[str, ...]] = {}
    for record in joined[columns].drop_duplicates("item_id").to_dict("records"):
        item = items.get(record["task"], {}).get(record["item_id"])
        units[record["item_id"]] = tuple(str(_stratum_value(t, record, item)) for t in view.strata)
    by_stratum: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for unit, stratum in units.items():
        by_stratum[stratum].append(unit)
    return set(stratified_subset(by_stratum, sample, "tracking.traces", benchmark, setting, seed))


def _stratum_value(tag: str, record: Mapping[str, object], item: Item | None) -> str | None:
    if tag in record:
        return _tag_value(record[tag])
    if tag == "language" and item is not None:
        return item.language
    return _tag_value(item.meta.get(tag)) if item is not None else None


def _item_row(
    benchmark: str,
    model: str,
    setting: str,
    record: dict[str, Any],
    item: Item,
    view: ItemView,
    metrics: list[ItemMetric],
    answer_column: str | None,
    roles: Mapping[str, object],
    prompts_path: object | None,
) -> ItemRow:
    recorded_text = record.get("text")
    text = recorded_text if isinstance(recorded_text, str) else ""
    error = _text(record.get("error"))
    failed = bool(error)
    parse_ok = _plain(record.get(view.parse_ok)) if view.parse_ok and view.parse_ok in record else None
    sample_index = int(record["sample_index"])
    key = f"{benchmark}/{model}/{setting}/{record['prompt_id']}/{record['pass']}/{sample_index}"
    # the prompt of the row (prompts_path None: no prompts table)
    messages = (
        _messages(prompts_path, record["messages"])
        if prompts_path is not None and isinstance(record.get("messages"), str)
        else []
    )
    inputs: dict[str, object] = {
        "item_id": item.item_id,
        "task": item.task,
        "pass": record["pass"],
        "sample_index": sample_index,
        "input": item.input,
    }
    if item.choices:
        inputs["choices"] = list(item.choices)
    if item.fields:
        inputs["fields"] = item.fields
    inputs["messages"] = messages
    outputs: dict[str, object] = {
        "text": text,
        "answer": _plain(record.get(answer_column)) if answer_column else None,
        "parse_ok": parse_ok,
    }
    for column in view.flags:
        if column in record and _plain(record[column]) not in (None, "", []):
            outputs[column] = _plain(record[column])
    outputs["finish_reason"] = _text(record.get("finish_reason"))
    if error:
        outputs["error"] = error
    expectations = _expectations(item)
    values, not_computed = [], []
    for metric in metrics:
        value = _plain(record.get(metric.column))
        if value is None:  # its scorer role is not computed in this profile, or it does not apply to this row
            not_computed.append(metric.column)
        elif isinstance(value, (bool, int, float)):
            values.append((metric.column, value, _source(benchmark, metric, record, roles)))
    if not_computed:
        outputs["not_computed"] = not_computed
    tags = {
        "benchmark": benchmark,
        "model": model,
        "setting": setting,
        "task": item.task,
        "language": item.language,
        "pass": str(record["pass"]),
        "sample": str(sample_index),
        "status": _status(failed, parse_ok),
        "item_id": item.item_id,
        "prompt_id": str(record["prompt_id"]),
    }
    for name in view.tags:
        value = record[name] if name in record else item.meta.get(name)
        tagged = _tag_value(value)
        if tagged is not None:
            tags[name] = tagged
    suffix = "" if record["pass"] == "main" and sample_index == 0 else f" ({record['pass']} #{sample_index})"
    request_preview = f"[{item.item_id}]{suffix} {item.input}"[:PREVIEW_CHARS]
    return ItemRow(
        key=key,
        item_id=item.item_id,
        output_sha=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        inputs=inputs,
        outputs=outputs,
        expectations=expectations,
        metrics=values,
        tags=tags,
        request_preview=request_preview,
        response_preview=(text or error or "")[:PREVIEW_CHARS],
        failed=failed,
        tokens=(_count(record.get("prompt_tokens")), _count(record.get("completion_tokens"))),
    )


def trace_id(row: ItemRow) -> str:
    return "tr-" + hashlib.sha256(f"{row.key}\x1f{row.output_sha}".encode()).hexdigest()[:32]


def assessment_id(trace: str, kind: str, name: str) -> str:
    return "a-" + hashlib.sha256(f"{trace}\x1f{kind}\x1f{name}".encode()).hexdigest()[:32]


def row_digest(row: ItemRow, run_id: str) -> str:
    body = {
        "run": run_id,
        "inputs": row.inputs,
        "outputs": row.outputs,
        "expectations": row.expectations,
        "metrics": row.metrics,
        "tags": row.tags,
        "previews": [row.request_preview, row.response_preview],
    }
    return hashlib.sha256(json.dumps(body, ensure_ascii=False, sort_keys=True, default=str).encode()).hexdigest()


def own_assessment_ids(row: ItemRow) -> set[str]:
    tid = trace_id(row)
    return {assessment_id(tid, "expectation", name) for name in row.expectations} | {
        assessment_id(tid, "feedback", name) for name, _, _ in row.metrics
    }


def trace_record(row: ItemRow, experiment_id: str, run_id: str, scope: str, now_ms: int) -> TraceRecord:
    """The trace of one row: MLflow's trace info, assessments and root span, as plain values."""
    from mlflow.tracing.constant import TRACE_SCHEMA_VERSION, TRACE_SCHEMA_VERSION_KEY, TraceMetadataKey

    tid = trace_id(row)
    prompt_tokens, completion_tokens = row.tokens
    usage = (
        {
            "input_tokens": prompt_tokens or 0,
            "output_tokens": completion_tokens or 0,
            "total_tokens": (prompt_tokens or 0) + (completion_tokens or 0),
        }
        if prompt_tokens is not None or completion_tokens is not None
        else None
    )
    source = f"{row.tags['benchmark']} release"
    assessments = [
        AssessmentRecord(assessment_id(tid, "expectation", name), name, "expectation", value, "HUMAN", source)
        for name, value in sorted(row.expectations.items())
    ]
    for name, value, metric_source in row.metrics:
        metadata = {k: v for k, v in metric_source.items() if k != "id"}
        assessments.append(
            AssessmentRecord(
                assessment_id(tid, "feedback", name),
                name,
                "feedback",
                value,
                "CODE",
                metric_source["id"],
                metadata or None,
            )
        )
    tags = {**row.tags, SCOPE_TAG: scope, DIGEST_TAG: row_digest(row, run_id), "mlflow.traceName": scope}
    otel_id = bytes.fromhex(tid.removeprefix("tr-"))  # the OTel trace id; the root span's id: its first 8 bytes
    # the root span's dict form as MLflow exports it (Span.to_dict: ids base64-encoded, keys in its order)
    span: dict[str, object] = {
        "trace_id": base64.b64encode(otel_id).decode(),
        "span_id": base64.b64encode(otel_id[:8]).decode(),
        "parent_span_id": None,
        "name": scope,
        "start_time_unix_nano": now_ms * 1_000_000,
        "end_time_unix_nano": now_ms * 1_000_000,
        "events": [],
        "status": {"code": "STATUS_CODE_ERROR" if row.failed else "STATUS_CODE_OK", "message": ""},
        "attributes": {
            "mlflow.traceRequestId": json.dumps(tid),
            "mlflow.spanType": json.dumps("LLM"),
            "mlflow.spanInputs": json.dumps(row.inputs, ensure_ascii=False, default=str),
            "mlflow.spanOutputs": json.dumps(row.outputs, ensure_ascii=False, default=str),
            **({"mlflow.chat.tokenUsage": json.dumps(usage)} if usage else {}),
        },
        "links": [],
    }
    return TraceRecord(
        trace_id=tid,
        experiment_id=experiment_id,
        request_time=now_ms,
        failed=row.failed,
        request_preview=row.request_preview,
        response_preview=row.response_preview,
        client_request_id=row.key,
        metadata={
            TraceMetadataKey.SOURCE_RUN: run_id,
            TRACE_SCHEMA_VERSION_KEY: str(TRACE_SCHEMA_VERSION),
            **({TraceMetadataKey.TOKEN_USAGE: json.dumps(usage)} if usage else {}),
        },
        tags=tags,
        assessments=tuple(assessments),
        span=span,
    )


def existing_traces(client: MlflowClient, experiment_id: str, scope: str) -> dict[str, TraceInfo]:
    """trace id -> TraceInfo (with its assessments) of every trace of one run's scope."""
    found: dict[str, TraceInfo] = {}
    token = None
    while True:
        page = client.search_traces(
            locations=[experiment_id],
            filter_string=f"tags.`{SCOPE_TAG}` = '{scope}'",
            max_results=SEARCH_PAGE,
            page_token=token,
            include_spans=False,
        )
        for trace in page:
            found[trace.info.trace_id] = trace.info
        token = page.token
        if not token:
            return found


def _batches(values: Sequence[ValueT], size: int) -> Iterator[Sequence[ValueT]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def sync_traces(
    client: MlflowClient, experiment_id: str, run_id: str, scope: str, rows: Sequence[ItemRow], progress: Progress
) -> SyncCounts:
    """Make the scope's traces exactly `rows`: write the new, changed and incomplete ones, delete the rest."""
    import time

    from mlflow.tracing.client import TracingClient

    counts = SyncCounts()
    existing = existing_traces(client, experiment_id, scope)
    wanted = {trace_id(row): row for row in rows}
    todo = []
    for tid, row in wanted.items():
        info = existing.get(tid)
        if info is not None and info.tags.get(DIGEST_TAG) == row_digest(row, run_id) and is_complete(info):
            counts.unchanged += 1
            progress.update(1)
            continue
        if info is not None:  # rewritten in place: drop our assessments it no longer has (a metric gone)
            ours = own_assessment_ids(row)
            for assessment in info.assessments:
                found_id = assessment.assessment_id  # not None where _is_ours: it equals the derived id
                if _is_ours(assessment, tid) and found_id is not None and found_id not in ours:
                    TracingClient(client.tracking_uri).delete_assessment(tid, found_id)
                    counts.assessments_removed += 1
        todo.append(row)
    now_ms = int(time.time() * 1000)
    order = {trace_id(row): position for position, row in enumerate(rows)}

    def written(n: int) -> None:
        counts.written += n
        progress.update(n)

    batches = (  # the UI lists newest first: a row's time keeps the table's order
        [trace_record(row, experiment_id, run_id, scope, now_ms - order[trace_id(row)]) for row in batch]
        for batch in _batches(todo, BATCH)
    )
    write_batches(trace_writer(client.tracking_uri, experiment_id), batches, existing, written)
    stale = sorted(set(existing) - set(wanted))
    counts.deleted_with_human_feedback = sum(
        any(a.source.source_type == "HUMAN" and a.feedback is not None for a in existing[tid].assessments)
        for tid in stale
    )
    for batch in _batches(stale, 100):
        counts.deleted += client.delete_traces(experiment_id, trace_ids=list(batch))
    return counts


def _is_ours(assessment: Assessment, tid: str) -> bool:
    """An assessment this module wrote on the trace (its id derives from the trace and its name)."""
    kind = "feedback" if assessment.feedback is not None else "expectation"
    return bool(assessment.assessment_id == assessment_id(tid, kind, assessment.name))
