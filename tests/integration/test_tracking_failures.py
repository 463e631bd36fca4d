"""A tracking store that cannot be reached, refuses a write or fails mid-run is the user's
environment: `idiombench track` says so in one line naming the store (credentials scrubbed),
exits 2 and changes nothing but the store; a rerun completes what is missing. Counted against the
sample: after a kill -9 of `track` itself mid-transaction and a rerun, and after a tracking server
killed mid-run and a rerun, every sampled row's trace is in the store exactly once, with its span
and assessments; a further rerun writes nothing.

The kills are placed, not timed: the killed process runs `track` with a patch that sends the
signal at a chosen write (tests/support/kill_during_track.py)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from subprocess import PIPE
from typing import Any

import pytest

import traced_project
from helpers import free_port, tool_env
from idiombench.benchmarks.registry import get_benchmark
from idiombench.pipeline.config import load_params
from idiombench.stages import track_check
from idiombench.stages.inputs import load_items

SUPPORT = Path(__file__).resolve().parents[1] / "support"
MODEL = "echo"
SETTINGS = ("zero_shot", "cot")
# fail fast: MLflow retries a refused connection for minutes by default
FAST = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0", "MLFLOW_HTTP_REQUEST_TIMEOUT": "20"}


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """OrderProbe and G-IdiomAlign generated, scored and aggregated (tests/support/traced_project.py),
    traces sampled: 4 of OrderProbe's 6 zero-shot items (with their consistency samples)."""
    root = traced_project.write_inputs(tmp_path_factory.mktemp("scored"), sample=4)
    with pytest.MonkeyPatch.context() as patch:
        traced_project.run_stages(root, patch, models=(MODEL,))
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


@pytest.fixture
def project(scored: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return traced_project.working_copy(scored, tmp_path, monkeypatch)


def expected(project: Path, benchmark: str = "orderprobe") -> track_check.Sample:
    """The traces the sample draws, by track's own draw (score tables read from the working
    directory: the project, chdir'd by its fixture)."""
    scores = project / "results/scores" / MODEL / benchmark
    return track_check.sampled_traces(
        benchmark=benchmark,
        model=MODEL,
        settings=sorted(path.stem for path in scores.glob("*.parquet")),
        view=get_benchmark(benchmark).item_view,
        items=load_items(benchmark, project / "data/processed" / benchmark),
        roles=json.loads((scores / "scoring_meta.json").read_text())["roles"],
        traces=load_params(project / "params.yaml").tracking.traces,
    )


def assert_exactly_the_sample(db: Path, project: Path) -> None:
    want = expected(project)
    assert want and all(want.values())  # a sample to count against
    assert track_check.count_problems(track_check.stored_traces(db), want) == []


def outputs_but_tracking(project: Path) -> dict[str, str]:
    """sha256 of every file under results/ but the tracking records: what track must not touch."""
    return {
        str(path.relative_to(project)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted((project / "results").rglob("*"))
        if path.is_file() and "tracking" not in path.relative_to(project / "results").parts[:1]
    }


def track_command(
    project: Path, uri: str, benchmark: str = "orderprobe", *, wrapper: list[str] | None = None, **env: str
) -> dict[str, Any]:
    """`idiombench track <benchmark> --model echo` as a user runs it (or under the kill wrapper):
    subprocess arguments."""
    command = [sys.executable, str(SUPPORT / "kill_during_track.py"), *wrapper] if wrapper else ["idiombench"]
    return {
        "args": [*command, "track", benchmark, "--model", MODEL],
        "cwd": project,
        "env": {**tool_env(), "MLFLOW_TRACKING_URI": uri, "TQDM_DISABLE": "1", **FAST, **env},
        "text": True,
    }


def track(project: Path, uri: str, *, wrapper: list[str] | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """`idiombench track orderprobe --model echo`, run to its end."""
    return subprocess.run(**track_command(project, uri, wrapper=wrapper, **env), capture_output=True, timeout=600)


def written(project: Path) -> dict[str, tuple[int, int]]:
    record = json.loads((project / "results/tracking/orderprobe/echo.json").read_text(encoding="utf-8"))
    return {key: (run["traces"]["written"], run["traces"]["unchanged"]) for key, run in record["runs"].items()}


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    errors = [line for line in (result.stdout + result.stderr).splitlines() if line.startswith("error:")]
    assert result.returncode == 2 and len(errors) == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    return errors[0]


def test_an_unreachable_store_is_one_line_naming_it(project: Path) -> None:
    before = outputs_but_tracking(project)
    port = free_port()
    result = track(project, f"http://researcher:hunter2secret@127.0.0.1:{port}")
    line = one_error_line(result)
    assert f"tracking store http://[redacted]@127.0.0.1:{port} (MLFLOW_TRACKING_URI) failed" in line
    assert "hunter2secret" not in result.stdout + result.stderr
    assert "rerun of `idiombench track orderprobe --model echo`" in line
    assert outputs_but_tracking(project) == before
    assert not (project / "results/tracking/orderprobe/echo.json").exists()

    (project / "not-a-folder").write_text("", encoding="utf-8")  # a local store under a regular file
    line = one_error_line(track(project, f"sqlite:///{project / 'not-a-folder' / 'mlflow.db'}"))
    assert f"tracking store sqlite:///{project}/not-a-folder/mlflow.db cannot be opened" in line
    assert outputs_but_tracking(project) == before


def test_track_killed_mid_transaction_then_a_rerun_completes(project: Path) -> None:
    """kill -9 of `track` inside its third batch's transaction (batches of 4 traces): two batches
    stay, nothing of the third; the rerun writes the rest; a third run writes nothing."""
    db = project / "mlflow.db"
    uri = f"sqlite:///{db}"
    killed = track(project, uri, wrapper=["--batch", "4", "--kill-self-at-write", "3"])
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    partial = track_check.stored_traces(db)
    assert sum(len(t) for t in partial.values()) == 8  # two whole batches (cot's, zero_shot's first)
    assert all(trace.spans == 1 for traces in partial.values() for trace in traces)

    done = track(project, uri)
    assert done.returncode == 0, done.stdout + done.stderr
    assert_exactly_the_sample(db, project)
    total = sum(len(t) for t in expected(project).values())
    assert sum(w for w, _ in written(project).values()) == total - 8
    assert sum(u for _, u in written(project).values()) == 8
    again = track(project, uri)
    assert again.returncode == 0 and all(w == 0 for w, _ in written(project).values())
    assert_exactly_the_sample(db, project)


def test_two_track_jobs_share_a_new_sqlite_store(project: Path) -> None:
    """Two track jobs at once into one new SQLite store, as Snakemake runs them: both complete, and
    the store holds exactly each one's sample."""
    db = project / "mlflow.db"
    jobs = [
        subprocess.Popen(**track_command(project, f"sqlite:///{db}", benchmark), stdout=PIPE, stderr=PIPE)
        for benchmark in ("orderprobe", "g-idiomalign")
    ]
    outputs = [job.communicate(timeout=600) for job in jobs]
    assert [job.returncode for job in jobs] == [0, 0], outputs
    want = expected(project) | expected(project, "g-idiomalign")
    assert len(want) == 4 and all(want.values())
    assert track_check.count_problems(track_check.stored_traces(db), want) == []


def test_a_track_job_holds_a_local_store_only_while_it_opens_it(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store lock is held while a job opens the store, its experiment and its parent run (a
    new store's migration, an experiment's creation), and free while it reads and joins a setting's
    tables and writes its run and traces, so another job's work goes on meanwhile."""
    from idiombench.stages import track as stage

    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{project / 'mlflow.db'}")
    lock = project / ".mlflow.db.lock"

    def held() -> bool:
        with open(lock, "a", encoding="utf-8") as other:  # another open file: its flock meets the job's
            try:
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(other, fcntl.LOCK_UN)
            return False

    seen: list[tuple[str, bool]] = []

    def noting(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            seen.append((name, held()))
            return real(*args, **kwargs)

        return call

    monkeypatch.setattr(stage, "prepare_setting", noting("prepare", stage.prepare_setting))
    monkeypatch.setattr(stage, "store_setting", noting("store", stage.store_setting))
    monkeypatch.setattr(stage, "_track_parent", noting("parent", stage._track_parent))
    record = stage.track(load_params(project / "params.yaml"), benchmark="orderprobe", model=MODEL)
    assert seen == [("parent", True), ("prepare", False), ("store", False), ("prepare", False), ("store", False)]
    assert sum(run["traces"]["written"] for run in record["runs"].values()) == sum(
        len(traces) for traces in expected(project).values()
    )


@contextmanager
def server(db: Path, cwd: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`mlflow server` on a free loopback port, in its own process group (its uvicorn and job runner
    children die with it); yields its URL and process once /health answers."""
    port = free_port()
    log_path = cwd / f"mlflow-server-{port}.log"
    log = log_path.open("w", encoding="utf-8")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mlflow",
            "server",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--backend-store-uri",
            f"sqlite:///{db}",
            "--artifacts-destination",
            str(cwd / "artifacts"),
            "--workers",
            "1",
        ],
        cwd=cwd,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                urllib.request.urlopen(base + "/health", timeout=2)
                break
            except OSError as error:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"mlflow server did not start: {log_path.read_text()[-2000:]}") from error
                time.sleep(0.5)
        yield base, process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        log.close()


@pytest.mark.slow
def test_a_server_killed_mid_run_then_a_rerun_completes(project: Path, tmp_path: Path) -> None:
    """The server (and its workers) killed with SIGKILL after the fifth trace info it was sent:
    track fails in one line naming it; the traces it had taken stay, some without spans; a rerun
    against a new server on the same database completes them, each once."""
    db = tmp_path / "server.db"
    with server(db, tmp_path) as (base, process):
        killed = track(project, base, wrapper=["--kill-group-at-start-trace", f"{process.pid}:5"])
        process.wait(timeout=60)
    line = one_error_line(killed)
    assert f"tracking store {base} (MLFLOW_TRACKING_URI) failed" in line
    partial = track_check.stored_traces(db)
    taken = [trace for traces in partial.values() for trace in traces]
    assert 0 < len(taken) < sum(len(t) for t in expected(project).values())
    with server(db, tmp_path) as (again, _):
        done = track(project, again)
        assert done.returncode == 0, done.stdout + done.stderr
        assert_exactly_the_sample(db, project)
        assert track(project, again).returncode == 0
        assert all(w == 0 for w, _ in written(project).values())


class RefusingProxy(BaseHTTPRequestHandler):
    """Forwards every request to the server, but answers trace writes (StartTraceV3, OTLP) with
    403 PERMISSION_DENIED: a server that lets this user read and create runs, not write traces."""

    upstream = ""

    def _forward(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.command == "POST" and self.path.split("?")[0] in ("/api/3.0/mlflow/traces", "/v1/traces"):
            self._answer(403, b'{"error_code": "PERMISSION_DENIED", "message": "this user may not write traces"}')
            return
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
        request = urllib.request.Request(
            self.upstream + self.path, data=body or None, headers=headers, method=self.command
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                self._answer(response.status, response.read(), response.headers.get("Content-Type"))
        except urllib.error.HTTPError as error:
            self._answer(error.code, error.read(), error.headers.get("Content-Type"))

    def _answer(self, status: int, body: bytes, content_type: str | None = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type or "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PATCH = do_DELETE = _forward

    def log_message(self, format: str, *args: object) -> None:
        return None


@pytest.mark.slow
def test_a_refused_write_is_one_line_and_a_rerun_completes(project: Path, tmp_path: Path) -> None:
    db = tmp_path / "server.db"
    with server(db, tmp_path) as (base, _):
        handler = type("Proxy", (RefusingProxy,), {"upstream": base})
        proxy = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=proxy.serve_forever, daemon=True).start()
        try:
            refused = track(project, f"http://127.0.0.1:{proxy.server_address[1]}")
        finally:
            proxy.shutdown()
        line = one_error_line(refused)
        assert f"tracking store http://127.0.0.1:{proxy.server_address[1]}" in line
        assert "PERMISSION_DENIED" in line or "may not write traces" in line
        assert track_check.stored_traces(db) == {}  # runs, but no trace
        done = track(project, base)
        assert done.returncode == 0, done.stdout + done.stderr
        assert_exactly_the_sample(db, project)
