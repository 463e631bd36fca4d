"""The count check of stored traces (stages/track_check.py) finds each kind of wrong store: a
sampled row without its trace, a trace outside the sample, a trace stored twice, a row with two
traces, a trace without its span or with other assessments; and an SQLite file without the
trace tables reads as no traces."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from idiombench.stages.track_check import StoredTrace, count_problems, stored_traces

SCOPE = "orderprobe/echo/zero_shot"
SAMPLE = {SCOPE: {"t1": 2, "t2": 3}}


def trace(trace_id: str, row: str, spans: int = 1, assessments: int | None = None) -> StoredTrace:
    return StoredTrace(trace_id, row, spans, SAMPLE[SCOPE].get(trace_id, 0) if assessments is None else assessments)


def test_the_sample_exactly_has_no_problem() -> None:
    assert count_problems({SCOPE: [trace("t1", "r1"), trace("t2", "r2")]}, SAMPLE) == []


def test_each_kind_of_wrong_store_is_named() -> None:
    cases = {
        "missing": [trace("t1", "r1")],
        "extra": [trace("t1", "r1"), trace("t2", "r2"), trace("t9", "r9")],
        "twice": [trace("t1", "r1"), trace("t2", "r2"), trace("t2", "r3")],
        "one row, two traces": [trace("t1", "r1"), trace("t2", "r1")],
        "no span": [trace("t1", "r1", spans=0), trace("t2", "r2")],
        "other assessments": [trace("t1", "r1", assessments=1), trace("t2", "r2")],
    }
    found = {name: count_problems({SCOPE: traces}, SAMPLE) for name, traces in cases.items()}
    assert found["missing"] == [f"{SCOPE}: 1 sampled rows without a trace, 0 traces not in the sample, 0 stored twice"]
    assert found["extra"] == [f"{SCOPE}: 0 sampled rows without a trace, 1 traces not in the sample, 0 stored twice"]
    assert f"{SCOPE}: 0 sampled rows without a trace, 0 traces not in the sample, 1 stored twice" in found["twice"]
    assert found["one row, two traces"] == [f"{SCOPE}: a row with two traces"]
    assert found["no span"] == found["other assessments"] == [f"{SCOPE}: 1 traces without their span or assessments"]
    # a scope the store has and the sample lacks, or the other way round
    assert count_problems({"other/echo/x": [trace("t1", "r1")]}, {}) != []
    assert count_problems({}, SAMPLE) != []


def test_a_store_without_traces_reads_as_none(tmp_path: Path) -> None:
    assert stored_traces(tmp_path / "absent.db") == {}
    with sqlite3.connect(tmp_path / "empty.db") as connection:
        connection.execute("CREATE TABLE runs (id TEXT)")
    assert stored_traces(tmp_path / "empty.db") == {}
