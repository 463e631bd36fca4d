"""The idiombench CLI with a kill placed at a chosen write of `track` (tests/integration/test_tracking_failures.py):

    python kill_during_track.py [--batch N] [--kill-self-at-write K] [--kill-group-at-start-trace PID:K] <cli args>

--batch N: traces per write (track_traces.BATCH). --kill-self-at-write K: SIGKILL this process
inside the K-th batch's SQL transaction, after its trace rows and before its spans.
--kill-group-at-start-trace PID:K: SIGKILL the process group PID (a tracking server and its
workers) when the K-th trace info is sent to it. Placed, not timed: the same point every run."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from typing import Any


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int)
    parser.add_argument("--kill-self-at-write", type=int)
    parser.add_argument("--kill-group-at-start-trace")
    options, cli_args = parser.parse_known_args()

    from idiombench.stages import track_store, track_traces

    if options.batch:
        track_traces.BATCH = options.batch
    if options.kill_self_at_write:
        upsert = track_store.upsert
        spans_written = [0]

        def killing_upsert(session: Any, model: Any, rows: Any) -> None:
            if model.__tablename__ == "spans":
                spans_written[0] += 1
                if spans_written[0] == options.kill_self_at_write:
                    os.kill(os.getpid(), signal.SIGKILL)
            upsert(session, model, rows)

        track_store.upsert = killing_upsert  # type: ignore[assignment]
    if options.kill_group_at_start_trace:
        from mlflow.tracing.client import TracingClient

        group, at = (int(part) for part in options.kill_group_at_start_trace.split(":"))
        start_trace = TracingClient.start_trace
        sent = [0]
        lock = threading.Lock()

        def killing_start_trace(self: Any, trace_info: Any) -> Any:
            with lock:
                sent[0] += 1
                if sent[0] == at:
                    os.killpg(group, signal.SIGKILL)
            return start_trace(self, trace_info)

        TracingClient.start_trace = killing_start_trace  # type: ignore[method-assign]

    from idiombench.cli import app

    sys.argv = ["idiombench", *cli_args]
    app()


if __name__ == "__main__":
    main()
