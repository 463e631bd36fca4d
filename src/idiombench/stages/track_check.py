"""A tracking store's traces counted against the sample: every sampled row's trace there exactly
once, with its span and its own assessments, and nothing else. The sample is track's own draw
(track_traces.setting_rows), so the check cannot drift from the stage; bench/tracking.py and the
tests of track's failures (kill -9, a server killed mid-run, reruns) both count with it."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..benchmarks.contexts import ItemView
from ..core.items import Item
from ..params.schema import TracesConfig
from . import track_traces

# scope ("<benchmark>/<model>/<setting>") -> {trace id: the number of its own assessments}
Sample = dict[str, dict[str, int]]


@dataclass(frozen=True)
class StoredTrace:
    trace_id: str
    row_key: str  # the client request id: one per scored row
    spans: int
    assessments: int


def sampled_traces(
    *,
    benchmark: str,
    model: str,
    settings: Iterable[str],
    view: ItemView,
    items: Mapping[str, Mapping[str, Item]],
    roles: Mapping[str, object],
    traces: TracesConfig,
) -> Sample:
    """The traces `track` writes for these settings (their score tables read from results/ under
    the working directory, as the stage reads them)."""
    out: Sample = {}
    for setting in settings:
        found = track_traces.setting_rows(
            benchmark=benchmark,
            model=model,
            setting=setting,
            view=view,
            items=items,
            roles=roles,
            sample=traces.sample,
            seed=traces.seed,
        )
        out[f"{benchmark}/{model}/{setting}"] = {
            track_traces.trace_id(row): len(track_traces.own_assessment_ids(row)) for row in found.rows
        }
    return out


def stored_traces(database: Path) -> dict[str, list[StoredTrace]]:
    """scope -> its traces in an SQLite tracking store (the file behind an `mlflow server` too),
    opened read-only; {} where the store has no trace table yet."""
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30) as connection:
            rows = connection.execute(
                "SELECT tag.value, info.request_id, info.client_request_id, "
                "(SELECT COUNT(*) FROM spans WHERE spans.trace_id = info.request_id), "
                "(SELECT COUNT(*) FROM assessments a WHERE a.trace_id = info.request_id) "
                "FROM trace_info info JOIN trace_tags tag ON tag.request_id = info.request_id "
                "AND tag.key = 'idiombench.scope'"
            ).fetchall()
    except sqlite3.OperationalError as error:
        if "no such table" in str(error) or "unable to open" in str(error):
            return {}
        raise
    out: dict[str, list[StoredTrace]] = {}
    for scope, trace_id, row_key, spans, assessments in rows:
        out.setdefault(scope, []).append(StoredTrace(trace_id, row_key, int(spans), int(assessments)))
    return out


def count_problems(stored: Mapping[str, list[StoredTrace]], expected: Sample) -> list[str]:
    """What is wrong with the stored traces against the sample; [] when nothing is."""
    problems = []
    for scope in sorted(set(stored) | set(expected)):
        traces, want = stored.get(scope, []), expected.get(scope, {})
        ids = [t.trace_id for t in traces]
        missing, extra = set(want) - set(ids), set(ids) - set(want)
        if missing or extra or len(ids) != len(set(ids)):
            problems.append(
                f"{scope}: {len(missing)} sampled rows without a trace, {len(extra)} traces not in the sample, "
                f"{len(ids) - len(set(ids))} stored twice"
            )
        if len({t.row_key for t in traces}) != len(traces):
            problems.append(f"{scope}: a row with two traces")
        bad = [t for t in traces if t.spans != 1 or t.trace_id in want and t.assessments != want[t.trace_id]]
        if bad:
            problems.append(f"{scope}: {len(bad)} traces without their span or assessments")
    return problems
