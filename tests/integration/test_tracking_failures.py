"""A tracking store that cannot be reached, refuses a write or fails mid-run is the user's
environment: `idiombench track` says so in one line naming the store (credentials scrubbed),
exits 2 and changes nothing but the store; a rerun completes what is missing. Counted against the
sample: after a kill -9 of `track` itself mid-transaction and a rerun, and after a tracking server
killed mid-run and a rerun, every sampled row's trace is in the store exactly once, with its span
and assessments; a further rerun writes nothing.

The kills are placed, not timed: the killed process runs `track` with a patch that sends the
signal at a chosen write (tests/support/kill_during_track.py)."""

from __future__ import annotations

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
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

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


def expected(project: Path) -> track_check.Sample:
    """The traces the sample draws, by track's own draw (score tables read from the working
    directory: the project, chdir'd by its fixture)."""
    return track_check.sampled_traces(
        benchmark="orderprobe",
        model=MODEL,
        settings=SETTINGS,
        view=get_benchmark("orderprobe").item_view,
        items=load_items("orderprobe", project / "data/processed/orderprobe"),
        roles=json.loads((project / "results/scores/echo/orderprobe/scoring_meta.json").read_text())["roles"],
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


def track(project: Path, uri: str, *, wrapper: list[str] | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """`idiombench track orderprobe --model echo` as a user runs it (or under the kill wrapper)."""
    command = [sys.executable, str(SUPPORT / "kill_during_track.py"), *wrapper] if wrapper else ["idiombench"]
    return subprocess.run(
        [*command, "track", "orderprobe", "--model", MODEL],
        cwd=project,
        env={**tool_env(), "MLFLOW_TRACKING_URI": uri, "TQDM_DISABLE": "1", **FAST, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )


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
