"""Traces into the tracking store, a batch at a time (stages/track_traces.py decides what to write).

MLflow 3.17 writes a trace's info (tags, metadata, previews, assessments) with `start_trace`, one
transaction of ORM objects per trace (~10 ms of CPU on SQLite), and its spans with `log_spans`,
whose bulk span upsert (mlflow PR 21954) still merges a tag and updates the trace row one trace at
a time. It has no batched `start_trace`, and its asynchronous trace export is no way round it:
the queue drops traces when it is full and logs a failed write instead of raising it
(tests/unit/stages/test_trace_store.py shows both). So:

- an SQLite store (`sqlite:` URIs, what `track` uses by default): `SqlTraceWriter` writes a batch
  in ONE transaction of executemany upserts into MLflow's own tables (its SQLAlchemy models): the
  rows MLflow's `start_trace` and then `log_spans` would leave, for a new trace and for a trace
  written again (merged: same ids replaced, other rows, e.g. a person's feedback, kept).
  tests/unit/stages/test_trace_store.py compares them with MLflow's own writes row by row, so an
  MLflow upgrade that changes the tables fails there, not in a user's store. A killed run leaves
  whole batches: every trace in the store is complete.
- any other store (an `mlflow server`, another database): MLflow's tracing client, `start_trace`
  per trace on a bounded pool of requests, then `log_spans` for the batch; a batch is complete
  before the next is sent (back-pressure: nothing is queued beyond it, nothing dropped) and an
  error stops the run. A batch cut short leaves traces without spans, which the next run finds
  (no `mlflow.trace.spansLocation` tag: `is_complete`) and writes again.
"""

from __future__ import annotations

import base64
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from mlflow.entities import Assessment, Span, TraceInfo
    from mlflow.store.tracking.utils.sql_trace_rollups import RollupFamily
    from mlflow.tracing.client import TracingClient
    from sqlalchemy.orm import Session

SERVER_REQUESTS = 4  # start_trace requests in flight at once to a tracking server
SPANS_LOCATION_TAG = "mlflow.trace.spansLocation"
SPANS_IN_STORE = "TRACKING_STORE"
TABLES = ("trace_info", "trace_tags", "trace_request_metadata", "assessments", "spans")  # MLflow's trace tables


@dataclass(frozen=True)
class AssessmentRecord:
    assessment_id: str
    name: str
    kind: str  # "expectation" | "feedback"
    value: Any
    source_type: str  # "HUMAN" | "CODE"
    source_id: str
    metadata: dict[str, str] | None = None


@dataclass(frozen=True)
class TraceRecord:
    """One trace as plain values: what `entities` makes MLflow's TraceInfo and root Span of, and
    the SQL writer the rows of."""

    trace_id: str
    experiment_id: str
    request_time: int  # ms; also the time of its assessments
    failed: bool
    request_preview: str
    response_preview: str
    client_request_id: str
    metadata: dict[str, str]
    tags: dict[str, str]
    assessments: tuple[AssessmentRecord, ...]
    span: dict[str, Any]  # the root span in MLflow's dict form (Span.from_dict)


def entities(record: TraceRecord) -> tuple[TraceInfo, Span]:
    """(TraceInfo, root Span) of a record, in MLflow's entities."""
    from mlflow.entities import AssessmentSource, Expectation, Feedback, Span, TraceInfo, TraceLocation, TraceState

    assessments: list[Assessment] = []
    for a in record.assessments:
        source = AssessmentSource(source_type=a.source_type, source_id=a.source_id)
        assessment = (
            Expectation(name=a.name, value=a.value, source=source)
            if a.kind == "expectation"
            else Feedback(name=a.name, value=a.value, metadata=a.metadata, source=source)
        )
        assessment.assessment_id = a.assessment_id
        assessment.trace_id = record.trace_id
        assessment.create_time_ms = assessment.last_update_time_ms = record.request_time
        assessments.append(assessment)
    info = TraceInfo(
        trace_id=record.trace_id,
        trace_location=TraceLocation.from_experiment_id(record.experiment_id),
        request_time=record.request_time,
        execution_duration=0,
        state=TraceState.ERROR if record.failed else TraceState.OK,
        request_preview=record.request_preview,
        response_preview=record.response_preview,
        client_request_id=record.client_request_id,
        trace_metadata=dict(record.metadata),
        tags=dict(record.tags),
        assessments=assessments,
    )
    return info, Span.from_dict(record.span)


def is_complete(info: TraceInfo) -> bool:
    """A trace whose spans are in the store (log_spans, or this module's SQL writer, set the tag
    in the transaction that wrote them)."""
    return bool(info.tags.get(SPANS_LOCATION_TAG) == SPANS_IN_STORE)


class TraceWriter(Protocol):
    """Writes batches of records: `prepare` (CPU work, on the caller's thread) then `write` (the
    store's transaction or requests, on the writer thread)."""

    def prepare(self, batch: Sequence[TraceRecord], existing: Mapping[str, TraceInfo]) -> object:
        """What `write` sends; `existing`: the store's TraceInfo of the records already there."""

    def write(self, prepared: Any) -> None: ...

    def close(self) -> None: ...


def trace_writer(tracking_uri: str, experiment_id: str) -> TraceWriter:
    """The SQL writer for an SQLite store, else MLflow's tracing client."""
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore
    from mlflow.tracing.client import TracingClient

    tracing = TracingClient(tracking_uri)
    store = tracing.store
    if isinstance(store, SqlAlchemyStore) and store.engine.dialect.name == "sqlite":
        return SqlTraceWriter(store, experiment_id)
    return ClientTraceWriter(tracing, experiment_id)


def write_batches(
    writer: TraceWriter,
    batches: Iterable[Sequence[TraceRecord]],
    existing: Mapping[str, TraceInfo],
    written: Callable[[int], None],
) -> None:
    """Prepare each batch here while the previous one is written on a second thread: at most one
    batch waits (back-pressure, nothing dropped), and a failed write raises here and stops the run
    (`written` has then been told only of the batches the store took)."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="idiombench-trace-writer") as pool:
        pending: tuple[Future[None], int] | None = None
        try:
            for batch in batches:
                prepared = writer.prepare(batch, existing)
                if pending is not None:
                    pending[0].result()
                    written(pending[1])
                pending = (pool.submit(writer.write, prepared), len(batch))
            if pending is not None:
                pending[0].result()
                written(pending[1])
        finally:
            writer.close()


class ClientTraceWriter:
    """MLflow's tracing client: a trace info per request (a few at once), then the batch's spans."""

    def __init__(self, tracing: TracingClient, experiment_id: str) -> None:
        self.tracing = tracing
        self.experiment_id = experiment_id
        remote = str(tracing.tracking_uri).startswith(("http://", "https://"))
        # a server takes several requests at once; a local database is written by one connection
        self.pool = ThreadPoolExecutor(max_workers=SERVER_REQUESTS if remote else 1)

    def prepare(self, batch: Sequence[TraceRecord], existing: Mapping[str, TraceInfo]) -> list[tuple[TraceInfo, Span]]:
        return [entities(record) for record in batch]

    def write(self, prepared: list[tuple[TraceInfo, Span]]) -> None:
        # infos first: a trace that log_spans created would make start_trace take its slower merge path
        list(self.pool.map(self.tracing.start_trace, [info for info, _ in prepared]))
        self.tracing.log_spans(self.experiment_id, [span for _, span in prepared])

    def close(self) -> None:
        self.pool.shutdown(wait=True)


@dataclass
class SqlBatch:
    """The rows of a batch, per table, and what the transaction needs besides."""

    rows: dict[str, list[dict[str, object]]]
    ids: list[str]
    merged: list[TraceRecord]  # records of traces already in the store
    partitions: list[tuple[RollupFamily, int, list[int]]]


class SqlTraceWriter:
    """A batch of traces as one transaction of upserts into an SQLite store's trace tables."""

    def __init__(self, store: Any, experiment_id: str) -> None:
        self.store = store
        self.experiment_id = int(experiment_id)
        experiment = store.get_experiment(experiment_id)
        store._check_experiment_is_active(experiment)  # what start_trace checks per trace
        self.experiment = experiment

    def close(self) -> None:
        return None

    def prepare(self, batch: Sequence[TraceRecord], existing: Mapping[str, TraceInfo]) -> SqlBatch:
        from mlflow.store.tracking.utils.sql_trace_rollups import RollupFamily

        rows: dict[str, list[dict[str, object]]] = {table: [] for table in TABLES}
        partitions: list[tuple[RollupFamily, int, list[int]]] = []
        for record in batch:
            info, tags, metadata = self._info_rows(record)
            rows["trace_info"].append(info)
            rows["trace_tags"].extend(tags)
            rows["trace_request_metadata"].extend(metadata)
            rows["assessments"].extend(assessment_row(a, record, self.experiment_id) for a in record.assessments)
            rows["spans"].append(span_row(record, self.experiment_id))
            times = [record.request_time]
            if record.trace_id in existing:
                times.append(existing[record.trace_id].request_time)
            partitions += [
                (family, self.experiment_id, times) for family in (RollupFamily.TRACE_METRIC, RollupFamily.ASSESSMENT)
            ]
            partitions.append((RollupFamily.SPAN_COST, self.experiment_id, [record.request_time]))
        merged = [record for record in batch if record.trace_id in existing]
        return SqlBatch(rows, [record.trace_id for record in batch], merged, partitions)

    def write(self, batch: SqlBatch) -> None:
        from mlflow.store.tracking.dbmodels.models import (
            SqlAssessments,
            SqlSpan,
            SqlTraceInfo,
            SqlTraceMetadata,
            SqlTraceTag,
        )
        from mlflow.store.tracking.utils.sql_trace_rollups import enqueue_rollup_rebuild_partitions
        from sqlalchemy import bindparam, update

        models = (SqlTraceInfo, SqlTraceTag, SqlTraceMetadata, SqlAssessments, SqlSpan)
        with self.store.ManagedSessionMaker(read_only=False) as session:
            enqueue_rollup_rebuild_partitions(session, batch.partitions)  # a no-op unless MLflow's rollups are on
            # start_trace's merge refuses a trace whose spans left the database (archived) and bumps
            # its payload generation; log_spans bumps every trace's once more (below)
            self.store._advance_db_payload_generations_for_db_span_writes(session, [r.trace_id for r in batch.merged])
            for model in models:
                upsert(session, model, batch.rows[model.__tablename__])
            if batch.merged:  # start_trace's merge moves every assessment of the trace (a person's too) to its time
                table = SqlAssessments.__table__
                session.connection().execute(
                    update(table)
                    .where(table.c.trace_id == bindparam("tid"))
                    .values(experiment_id=bindparam("eid"), trace_timestamp_ms=bindparam("ts")),
                    [{"tid": r.trace_id, "eid": self.experiment_id, "ts": r.request_time} for r in batch.merged],
                )
            self.store._advance_db_payload_generations_for_db_span_writes(session, batch.ids)

    def _info_rows(
        self, record: TraceRecord
    ) -> tuple[dict[str, object], list[dict[str, object]], list[dict[str, object]]]:
        """The trace_info row, tags and metadata start_trace writes (and the tag log_spans adds)."""
        from mlflow.store.tracking.utils.trace_analytics import (
            PROMOTED_TRACE_METADATA_KEYS,
            analytics_columns_from_metadata,
            validate_trace_name,
        )
        from mlflow.tracing.constant import TraceMetadataKey, TraceTagKey

        tid = record.trace_id
        request_metadata = dict(record.metadata)
        row: dict[str, object] = {
            "request_id": tid,
            "experiment_id": self.experiment_id,
            "timestamp_ms": record.request_time,
            "execution_time_ms": 0,
            "status": "ERROR" if record.failed else "OK",
            "client_request_id": record.client_request_id,
            "request_preview": record.request_preview,
            "response_preview": record.response_preview,
            "trace_name": validate_trace_name(record.tags.get(TraceTagKey.TRACE_NAME)),
            **analytics_columns_from_metadata(request_metadata),
        }
        location = self.store._get_trace_artifact_location_tag(self.experiment, tid)
        tags: list[dict[str, object]] = [
            {"request_id": tid, "key": k, "value": v} for k, v in record.tags.items() if k != TraceTagKey.TRACE_NAME
        ]
        tags.append({"request_id": tid, "key": location.key, "value": location.value})
        tags.append({"request_id": tid, "key": SPANS_LOCATION_TAG, "value": SPANS_IN_STORE})
        for key in PROMOTED_TRACE_METADATA_KEYS:
            request_metadata.pop(key, None)
        request_metadata[TraceMetadataKey.TRACE_INFO_FINALIZED] = "true"
        metadata: list[dict[str, object]] = [
            {"request_id": tid, "key": k, "value": v} for k, v in sorted(request_metadata.items())
        ]
        return row, tags, metadata


def assessment_row(assessment: AssessmentRecord, record: TraceRecord, experiment_id: int) -> dict[str, object]:
    """The assessments row SqlAssessments.from_mlflow_entity makes and start_trace completes
    (without its ORM object: ~0.15 ms each, 13 per trace)."""
    from mlflow.store.tracking.utils.trace_analytics import assessment_aggregate

    aggregate, numeric = assessment_aggregate(assessment.value)
    return {
        "assessment_id": assessment.assessment_id,
        "trace_id": record.trace_id,
        "name": assessment.name,
        "assessment_type": assessment.kind,
        "value": json.dumps(assessment.value),
        "error": None,
        "created_timestamp": record.request_time,
        "last_updated_timestamp": record.request_time,
        "experiment_id": experiment_id,
        "trace_timestamp_ms": record.request_time,
        "aggregate_value": aggregate,
        "is_numeric_value": numeric,
        "source_type": assessment.source_type,
        "source_id": assessment.source_id,
        "run_id": None,
        "span_id": None,
        "rationale": None,
        "overrides": None,
        "valid": True,
        "assessment_metadata": json.dumps(assessment.metadata) if assessment.metadata else None,
    }


def span_row(record: TraceRecord, experiment_id: int) -> dict[str, object]:
    """The spans row log_spans writes for the record's root span. Its stored form is MLflow's
    translation of the span, which leaves a span like ours as it is (an LLM span with inputs,
    outputs and usage: tests/unit/stages/test_trace_store.py), so it is the span's own dict."""
    from mlflow.tracing.utils import TraceJSONEncoder

    span = record.span
    return {
        "trace_id": record.trace_id,
        "experiment_id": experiment_id,
        "span_id": base64.b64decode(span["span_id"]).hex(),
        "parent_span_id": None,
        "name": span["name"],
        "type": json.loads(span["attributes"]["mlflow.spanType"]),
        "status": span["status"]["code"].removeprefix("STATUS_CODE_"),
        "start_time_unix_nano": span["start_time_unix_nano"],
        "end_time_unix_nano": span["end_time_unix_nano"],
        "content": json.dumps(span, cls=TraceJSONEncoder, ensure_ascii=False),
        "input_cost": None,
        "output_cost": None,
        "total_cost": None,
        "model_name": None,
        "model_provider": None,
    }


def upsert(session: Session, model: Any, rows: Iterable[dict[str, object]]) -> None:
    """INSERT ... ON CONFLICT (primary key) DO UPDATE the given columns: one compiled statement
    executed over all rows of one column set (MLflow's `_bulk_upsert` compiles a multi-row VALUES
    statement per 100 rows: most of its time on these rows)."""
    from sqlalchemy.dialects.sqlite import insert

    table = model.__table__
    keys = [column.name for column in table.primary_key.columns]
    by_columns: dict[tuple[str, ...], list[dict[str, object]]] = defaultdict(list)
    for row in rows:
        by_columns[tuple(row)].append(row)
    for columns, group in by_columns.items():
        statement = insert(table)
        changed = {c: statement.excluded[c] for c in columns if c not in keys}
        statement = (
            statement.on_conflict_do_update(index_elements=keys, set_=changed)
            if changed
            else statement.on_conflict_do_nothing()
        )
        session.connection().execute(statement, group)
