"""Traces into the store a batch at a time (stages/track_store.py).

The SQL writer's rows are MLflow's own: the same records written by MLflow's tracing client
(`start_trace` per trace, then `log_spans`) and by the SQL writer leave the same rows in every
trace table, for new traces and for traces written again (merged, a person's feedback kept);
an MLflow upgrade that changes what its writers store fails here. A batch is one transaction
(a failure in it leaves none of it), a trace without its spans is written again, writes run one
batch behind the preparation and a failed write stops the run. And why MLflow's asynchronous
trace export is not used: it drops traces when its queue is full and swallows a failed write."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from idiombench.core.progress import Progress
from idiombench.stages import track_store, track_traces
from idiombench.stages.track_traces import ItemRow

TABLES = {
    "trace_info": "request_id",
    "trace_tags": "request_id, key",
    "trace_request_metadata": "request_id, key",
    "assessments": "assessment_id",
    "spans": "trace_id, span_id",
}


def item_row(i: int, *, failed: bool = False, tokens: tuple[int | None, int | None] = (48, 512)) -> ItemRow:
    """A row as track_traces builds it: chat prompt, a long non-ASCII output, boolean and float
    metrics with their sources, a list-valued expectation, filter tags."""
    item_id = f"zh-CN/{i:04d}/BADC"
    output = "比喻做事情要有始有终，不能半途而废。" * 20 if not failed else ""
    source = {"id": "bge (cross_encoder)", "role": "cross_encoder", "model": "bge", "status": "paper"}
    return ItemRow(
        key=f"orderprobe/m/zero_shot/orderprobe/restore/zero_shot/{item_id}/main/0",
        item_id=item_id,
        output_sha=f"{i:064x}",
        inputs={
            "item_id": item_id,
            "task": "restore",
            "pass": "main",
            "sample_index": 0,
            "input": "鸣一惊人",
            "messages": [{"role": "system", "content": "复原并解释成语。"}, {"role": "user", "content": "鸣一惊人"}],
        },
        outputs={"text": output, "answer": "一鸣惊人", "parse_ok": not failed, "finish_reason": "stop"},
        expectations={"expected_answer": "一鸣惊人", "references": ["比喻平时没有表现，一下子做出惊人的成绩"]},
        metrics=[("ce", 0.25 + i / 100, source), ("recovered", i % 2 == 0, {"id": "idiombench score orderprobe"})],
        tags={
            "benchmark": "orderprobe",
            "model": "m",
            "setting": "zero_shot",
            "task": "restore",
            "language": "zh-CN",
            "pass": "main",
            "sample": "0",
            "status": "ok",
            "item_id": item_id,
        },
        request_preview=f"[{item_id}] 鸣一惊人",
        response_preview=output[:1000],
        failed=failed,
        tokens=tokens,
    )


def rows() -> list[ItemRow]:
    return [item_row(0), item_row(1), item_row(2, failed=True), item_row(3, tokens=(None, None)), item_row(4)]


def new_store(path: Path) -> tuple[str, Any, str]:
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{path}"
    client = MlflowClient(uri)
    return uri, client, client.create_experiment("orderprobe")


def dump(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    with sqlite3.connect(path) as connection:
        return {
            table: connection.execute(f"SELECT * FROM {table} ORDER BY {key}").fetchall()
            for table, key in TABLES.items()
        }


def mlflow_writes(uri: str, experiment_id: str, records: list[track_store.TraceRecord]) -> None:
    """What MLflow's own client stores for the records: start_trace per trace, then log_spans."""
    from mlflow.tracing.client import TracingClient

    tracing = TracingClient(uri)
    pairs = [track_store.entities(record) for record in records]
    for info, _ in pairs:
        tracing.start_trace(info)
    tracing.log_spans(experiment_id, [span for _, span in pairs])


def human_feedback(uri: str, trace_id: str) -> None:
    """A person's feedback on the trace, with a fixed id and time (so two stores can be compared)."""
    from mlflow.entities import AssessmentSource, Feedback
    from mlflow.tracing.client import TracingClient

    feedback = Feedback(
        name="looks_right", value=False, source=AssessmentSource(source_type="HUMAN", source_id="a researcher")
    )
    feedback.trace_id = trace_id
    created = TracingClient(uri).log_assessment(trace_id, feedback)
    with sqlite3.connect(uri.removeprefix("sqlite:///")) as connection:
        connection.execute(
            "UPDATE assessments SET assessment_id = 'a-human', created_timestamp = 1, last_updated_timestamp = 1 "
            "WHERE assessment_id = ?",
            (created.assessment_id,),
        )


def test_the_sql_writer_stores_what_mlflows_own_writers_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from mlflow.tracking import MlflowClient

    monkeypatch.chdir(tmp_path)  # both stores' artifact locations: ./mlruns/<experiment>
    theirs, ours = tmp_path / "mlflow-client.db", tmp_path / "sql-writer.db"
    (uri_a, _, experiment_a), (uri_b, client_b, experiment_b) = new_store(theirs), new_store(ours)
    assert experiment_a == experiment_b
    first = [
        track_traces.trace_record(row, experiment_a, "run-1", "orderprobe/m/zero_shot", 10_000 - i)
        for i, row in enumerate(rows())
    ]
    mlflow_writes(uri_a, experiment_a, first)
    writer = track_store.trace_writer(uri_b, experiment_b)
    assert isinstance(writer, track_store.SqlTraceWriter)
    track_store.write_batches(writer, [first[:2], first[2:]], {}, lambda n: None)
    stored = dump(ours)
    assert len(stored["trace_info"]) == 5 and len(stored["spans"]) == 5
    assert len(stored["assessments"]) == 5 * 4  # two expectations, two metrics each
    assert dump(theirs) == stored

    # written again (another run of the same scores, one metric changed): MLflow merges into the
    # same trace, replacing what has the same id and keeping the rest (a person's feedback)
    for uri in (uri_a, uri_b):
        human_feedback(uri, first[1].trace_id)
    changed = rows()
    changed[1].metrics[0] = ("ce", 0.875, changed[1].metrics[0][2])
    again = [
        track_traces.trace_record(row, experiment_a, "run-2", "orderprobe/m/zero_shot", 20_000 - i)
        for i, row in enumerate(changed)
    ]
    existing = {t.info.trace_id: t.info for t in client_b.search_traces(locations=[experiment_b], max_results=50)}
    mlflow_writes(uri_a, experiment_a, again)
    track_store.write_batches(track_store.trace_writer(uri_b, experiment_b), [again], existing, lambda n: None)
    merged = dump(ours)
    assert dump(theirs) == merged
    assert len(merged["assessments"]) == 5 * 4 + 1  # the person's feedback kept
    info = MlflowClient(uri_b).get_trace(first[1].trace_id).info
    assert {a.name: a.value for a in info.assessments}["ce"] == 0.875


def test_a_failed_batch_leaves_none_of_its_traces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """One transaction per batch: a failure while writing its spans (the last table) rolls back its
    trace infos, tags and assessments too; the batch before it stays, and the next sync completes it."""
    from mlflow.tracking import MlflowClient

    monkeypatch.chdir(tmp_path)
    uri, client, experiment_id = new_store(tmp_path / "mlflow.db")
    run_id = client.create_run(experiment_id).info.run_id
    upsert = track_store.upsert
    calls = {"spans": 0}

    def failing(session: Any, model: Any, rows: Any) -> None:
        if model.__tablename__ == "spans":
            calls["spans"] += 1
            if calls["spans"] == 2:
                raise OSError("disk full")
        upsert(session, model, rows)

    monkeypatch.setattr(track_store, "upsert", failing)
    monkeypatch.setattr(track_traces, "BATCH", 2)
    written: list[int] = []
    with pytest.raises(Exception, match="disk full"), Progress(5, "t") as progress:
        progress.update = written.append  # type: ignore[method-assign]
        track_traces.sync_traces(MlflowClient(uri), experiment_id, run_id, "orderprobe/m/zero_shot", rows(), progress)
    assert written == [2]  # the first batch only
    stored = dump(tmp_path / "mlflow.db")
    assert {len(stored[t]) for t in ("trace_info", "spans")} == {2}
    assert {r[2] for r in stored["trace_tags"]} == {r[0] for r in stored["trace_info"]}  # no tag of a lost trace

    monkeypatch.setattr(track_store, "upsert", upsert)
    with Progress(5, "t") as progress:
        counts = track_traces.sync_traces(client, experiment_id, run_id, "orderprobe/m/zero_shot", rows(), progress)
    assert (counts.written, counts.unchanged) == (3, 2)
    assert len(dump(tmp_path / "mlflow.db")["spans"]) == 5


def test_a_trace_without_its_spans_is_written_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Through a server a batch is start_trace per trace, then log_spans: a run cut between them
    leaves trace infos without spans, which the next sync writes again (and then leaves alone)."""
    from mlflow.tracing.client import TracingClient

    monkeypatch.chdir(tmp_path)
    uri, client, experiment_id = new_store(tmp_path / "mlflow.db")
    run_id = client.create_run(experiment_id).info.run_id
    scope = "orderprobe/m/zero_shot"
    for i, row in enumerate(rows()[:3]):
        TracingClient(uri).start_trace(
            track_store.entities(track_traces.trace_record(row, experiment_id, run_id, scope, i))[0]
        )
    with Progress(5, "t") as progress:
        counts = track_traces.sync_traces(client, experiment_id, run_id, scope, rows(), progress)
    assert (counts.written, counts.unchanged) == (5, 0)
    with Progress(5, "t") as progress:
        counts = track_traces.sync_traces(client, experiment_id, run_id, scope, rows(), progress)
    assert (counts.written, counts.unchanged) == (0, 5)
    assert all(len(client.get_trace(t).data.spans) == 1 for t in (track_traces.trace_id(r) for r in rows()))


class SlowWriter:
    """Writes block until released; records what was prepared meanwhile."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.prepared: list[int] = []
        self.written: list[int] = []
        self.release = threading.Semaphore(0)
        self.fail_at = fail_at
        self.closed = False

    def prepare(self, batch: Any, existing: Any) -> int:
        self.prepared.append(batch[0])
        return int(batch[0])

    def write(self, prepared: int) -> None:
        self.release.acquire()
        if prepared == self.fail_at:
            raise ConnectionError("the store went away")
        self.written.append(prepared)

    def close(self) -> None:
        self.closed = True


def test_writes_run_one_batch_behind_and_a_failed_write_stops_the_run():
    writer = SlowWriter()
    told: list[int] = []

    def batches():
        for i in range(5):
            # back-pressure: batch i is prepared only once batch i - 2 is written
            assert len(writer.prepared) - len(writer.written) <= 1
            writer.release.release()
            yield [i, i]

    track_store.write_batches(writer, batches(), {}, told.append)
    assert writer.written == [0, 1, 2, 3, 4] and told == [2] * 5 and writer.closed

    failing = SlowWriter(fail_at=2)
    for _ in range(5):
        failing.release.release()
    told.clear()
    with pytest.raises(ConnectionError, match="went away"):
        track_store.write_batches(failing, ([i] for i in range(5)), {}, told.append)
    assert failing.written == [0, 1] and told == [1, 1] and failing.closed
    assert failing.prepared == [0, 1, 2, 3]  # nothing beyond the batch after the failed one


def test_mlflows_async_export_queue_drops_and_swallows(monkeypatch: pytest.MonkeyPatch):
    """Why track_store does not use MLflow's asynchronous trace export (MLFLOW_ENABLE_ASYNC_TRACE_LOGGING):
    a full queue drops the trace, and a failed export is a log line, not an error."""
    import logging

    from mlflow.tracing.export import async_export_queue
    from mlflow.tracing.export.async_export_queue import AsyncTraceExportQueue, Task

    monkeypatch.setenv("MLFLOW_ASYNC_TRACE_LOGGING_MAX_QUEUE_SIZE", "1")
    monkeypatch.setenv("MLFLOW_ASYNC_TRACE_LOGGING_MAX_WORKERS", "1")
    gate = threading.Event()
    done: list[int] = []

    def export(i: int) -> None:
        gate.wait(30)
        done.append(i)

    queue = AsyncTraceExportQueue()
    for i in range(6):
        queue.put(Task(export, (i,)))  # returns at once, queued or not
    gate.set()
    queue.flush(terminate=True)
    assert 0 < len(done) < 6  # the rest were dropped

    def fail() -> None:
        raise ConnectionError("the store went away")

    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logging.getLogger(async_export_queue.__name__).addHandler(handler)
    try:
        queue = AsyncTraceExportQueue()
        queue.put(Task(fail, (), "export failed."))  # no exception here
        queue.flush(terminate=True)  # nor here
    finally:
        logging.getLogger(async_export_queue.__name__).removeHandler(handler)
    assert any("the store went away" in record.getMessage() for record in records)
