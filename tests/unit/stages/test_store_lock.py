"""`track` jobs side by side on a local MLflow store: one at a time (a new SQLite store's schema
migration and experiment creation race otherwise: "table _alembic_tmp_experiments already
exists", seen with two Snakemake track jobs on a fresh checkout)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from idiombench.stages.track import local_store

HOLD = textwrap.dedent("""
    import sys, time
    from idiombench.stages.track import store_lock
    uri, log, name = sys.argv[1:4]
    with store_lock(uri):
        with open(log, "a") as f:
            f.write(f"{name} in {time.monotonic()}\\n")
        if len(sys.argv) > 4:  # the real thing: open the store (migration on first use)
            from mlflow.tracking import MlflowClient
            client = MlflowClient(tracking_uri=uri)
            if client.get_experiment_by_name("bench") is None:
                client.create_experiment("bench")
        time.sleep(0.5)
        with open(log, "a") as f:
            f.write(f"{name} out {time.monotonic()}\\n")
""")


def test_local_stores_are_found_and_servers_are_not():
    assert local_store("sqlite:///mlflow.db") == Path("mlflow.db")
    assert local_store("sqlite:////srv/runs/mlflow.db") == Path("/srv/runs/mlflow.db")
    assert local_store("file:///srv/mlruns") == Path("/srv/mlruns")
    assert local_store("mlruns") == Path("mlruns")
    assert local_store("http://127.0.0.1:5000") is None
    assert local_store("https://mlflow.example.org") is None


def test_two_track_processes_take_turns_on_a_new_sqlite_store(tmp_path: Path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    log = tmp_path / "log.txt"
    procs = [
        subprocess.Popen([sys.executable, "-c", HOLD, uri, str(log), name, "open"], stderr=subprocess.PIPE, text=True)
        for name in ("a", "b")
    ]
    errors = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errors
    events = [line.split() for line in log.read_text().splitlines()]
    # in, out, in, out: the second never entered while the first held the store
    assert [e[1] for e in events] == ["in", "out", "in", "out"] and events[0][0] == events[1][0]
    assert float(events[2][2]) >= float(events[1][2])
    assert (tmp_path / ".mlflow.db.lock").exists()
