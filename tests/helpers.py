"""Helpers shared by tests: running the CLI, snakemake and dvc as a user would."""

from __future__ import annotations

import importlib.util
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"
SRC = Path(__file__).resolve().parents[1] / "src"


def project_cli(project: Path, *args: str, timeout: float = 900) -> str:
    """`idiombench <args> --params params.yaml` run in `project` with this checkout's code and no
    GPU, asserted to succeed; its console lines, unwrapped."""
    env = {**os.environ, "PYTHONPATH": str(SRC), "IDIOMBENCH_GPUS": ""}
    result = subprocess.run(
        [sys.executable, "-m", "idiombench.cli", *args, "--params", "params.yaml"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return " ".join((result.stdout + result.stderr).split())


def bench_module(name: str) -> ModuleType:
    """A bench/ script as a module (bench/ is not a package), registered in sys.modules under
    its name (its dataclasses look their module up there)."""
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def mirror_dirs() -> list[Path]:
    """The mirror directories, as `idiombench acquire` finds them when params.yaml names none:
    IDIOMBENCH_MIRROR (directories separated by os.pathsep), resolved; [] when it is unset.
    (CI sets it in .ci/run; a user without a mirror downloads from the pinned upstream.)"""
    from idiombench.data.acquire import resolve_mirror

    return [root.resolve() for root in resolve_mirror(None)]


def in_mirror(relative: str) -> Path | None:
    """The first mirror directory holding `relative` (laid out <benchmark>/<path>), else None."""
    return next((root / relative for root in mirror_dirs() if (root / relative).exists()), None)


PROJECT_FILES = (
    "Snakefile",
    "dvc.yaml",
    "params.yaml",
    "workflow",
    "src",
    "overlays",
    "data/annotations",
    ".dvcignore",
    ".gitignore",
)


def tool_env(mirror: Path | Sequence[Path] | None = None) -> dict[str, str]:
    """Environment for running the CLI, snakemake and dvc as a user would: the venv's
    bin first on PATH (rules call `idiombench`), no DVC analytics, the mirror directories if
    given (as absolute paths: the tools run in a project elsewhere)."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["DVC_NO_ANALYTICS"] = "1"
    if mirror is not None:
        roots = [mirror] if isinstance(mirror, Path) else list(mirror)
        env["IDIOMBENCH_MIRROR"] = os.pathsep.join(str(root) for root in roots)
    return env


def run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 900):
    """Run a command; on failure show its output in the assertion message."""
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{' '.join(cmd)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
    return result


def ran_stages(output: str) -> list[str]:
    """The stages `dvc repro` ran, in its order."""
    return re.findall(r"Running stage '([^']+)'", output)


def planned_rules(output: str) -> list[str]:
    """Rule names of the jobs Snakemake ran or (with -n) plans, one per job, sorted."""
    return sorted(re.findall(r"^\s*(?:local)?rule (\w+):", output, flags=re.MULTILINE))


def pdf_text(path: Path) -> str:
    """The text of every page of a PDF (pypdfium2)."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(path))
    return "\n".join(page.get_textpage().get_text_range() for page in document)


def snakemake_log(output: str, rule: str) -> list[tuple[str, dict[str, str]]]:
    """From Snakemake's output: ("start", the job's fields: wildcards, threads, jobid ...) for each
    `rule` job it started (or, with -n, planned), ("end", {"jobid": ...}) for each it finished,
    in the order it logged them."""
    events: list[tuple[str, dict[str, str]]] = []
    block: dict[str, str] | None = None
    for line in [*output.splitlines(), ""]:
        field = re.match(r"^    (\w+): (.*)$", line)
        if block is not None and field:
            block[field.group(1)] = field.group(2)
            continue
        if block is not None:
            events.append(("start", block))
            block = None
        if re.match(rf"^(?:local)?rule {rule}:$", line):
            block = {}
        finished = re.match(rf"^Finished jobid: (\d+) \(Rule: {rule}\)", line)
        if finished:
            events.append(("end", {"jobid": finished.group(1)}))
    return events


def snakemake_threads(output: str, rule: str) -> dict[str, int]:
    """The threads of each `rule` job in Snakemake's output, by its wildcards (it omits `threads: 1`)."""
    return {
        fields.get("wildcards", ""): int(fields.get("threads", "1"))
        for event, fields in snakemake_log(output, rule)
        if event == "start"
    }


def ran_at_once(output: str, rule: str) -> bool:
    """Whether two `rule` jobs ran at the same time, from Snakemake's output."""
    running = 0
    for event, _ in snakemake_log(output, rule):
        running += 1 if event == "start" else -1
        if running > 1:
            return True
    return False


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def mlflow_server(
    backend_store_uri: str, cwd: Path, *args: str, command: str = "server", start_timeout: float = 120
) -> Iterator[str]:
    """`mlflow <command>` (server or ui) on a free 127.0.0.1 port with one worker; yields its
    base URL once /health answers and stops it on exit. Its output goes to
    cwd/mlflow-<command>.log (a pipe nobody reads could fill and stall the server) and is
    quoted when it does not start."""
    port = free_port()
    log_path = cwd / f"mlflow-{command}.log"
    with log_path.open("w", encoding="utf-8") as log:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mlflow",
                command,
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--backend-store-uri",
                backend_store_uri,
                "--workers",
                "1",
                *args,
            ],
            cwd=cwd,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.time() + start_timeout
            while True:
                try:
                    urllib.request.urlopen(base + "/health", timeout=2)
                    break
                except OSError as err:
                    if time.time() > deadline or server.poll() is not None:
                        tail = log_path.read_text(encoding="utf-8", errors="replace")[-3000:]
                        raise AssertionError(
                            f"mlflow {command} did not answer {base}/health within "
                            f"{start_timeout:.0f} s (exit code {server.poll()}):\n{tail}"
                        ) from err
                    time.sleep(1)
            yield base
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
