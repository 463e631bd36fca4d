"""`idiombench track` at the paper grid's size: traces/s before -> after, into SQLite and into an
`mlflow server`, with the count check (every sampled row's trace in the store exactly once).

    export IDIOMBENCH_MIRROR=<releases>:<authors' code>
    python bench/full_grid.py --until aggregate --workdir /tmp/grid          # the project (scores of one model)
    python bench/tracking.py --project /tmp/grid [--before-ref main] [--server | --stores server] [--kill]
        [--jobs 2] [--benchmarks orderprobe ...] [--json FILE] [--ui]

The project is a kept `bench/full_grid.py` folder: the paper overlay's grid for its stand-in model
("synthetic"), scored and aggregated, with the overlay's trace sample (`tracking.traces.sample`).
For each side (--before-ref: that git ref's src/, from `git archive`; then this checkout's) and
each store (a fresh SQLite file, `sqlite:///`, what `track` uses by default; with --server also a
fresh `mlflow server` on a free loopback port, one worker, SQLite behind it, as in
docs/scaling-out.md), `idiombench track <benchmark> --model synthetic` runs for every benchmark in a
fresh process, as Snakemake runs it: --jobs N at a time (`snakemake --cores N`; the largest
first), with the wall time of them all. Per run: traces written, wall seconds, CPU seconds (user +
sys of the track process; for the server, its process tree's too), traces/s (written / wall).

This checkout's side is then checked: every scope's traces in the store are exactly the rows the
sample draws (track_traces.setting_rows, the stage's own draw), each once, with its span and its
assessments; a re-track writes nothing. With --kill, first: the largest benchmark's track is killed
with SIGKILL once half its traces are in the store, and rerun (the check follows the rerun).
--ui: `mlflow ui` on the SQLite store and headless Chromium (Debian's chromium): seconds until the
largest run's traces tab shows its first rows.

The machine's load average is printed with the figures: on a shared machine wall seconds are
not the machine's speed (CPU seconds hardly depend on the load).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from idiombench.core.yamlfile import load_yaml_file
from idiombench.stages import track_check

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests"), str(ROOT / "tests" / "support")]

MODEL = "synthetic"  # bench/full_grid.py's stand-in model
BENCHMARKS = ("orderprobe", "g-idiomalign", "semanticqa", "chengyu-bench")
TICKS = os.sysconf("SC_CLK_TCK")


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + sys) of a process and its descendants, live and reaped."""
    total, stack = 0.0, [pid]
    while stack:
        current = stack.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15]) / TICKS  # utime stime cutime cstime
            for task in os.listdir(f"/proc/{current}/task"):
                stack.extend(int(c) for c in Path(f"/proc/{current}/task/{task}/children").read_text().split())
        except (OSError, ValueError):
            continue
    return total


@dataclass
class Run:
    store: str
    side: str
    benchmark: str
    traces: int  # written by this run
    rows: int
    wall_s: float
    cpu_s: float  # the track process
    server_cpu_s: float | None
    returncode: int

    @property
    def traces_per_s(self) -> float:
        return self.traces / self.wall_s if self.wall_s else 0.0


def record_of(project: Path, benchmark: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((project / "results/tracking" / benchmark / f"{MODEL}.json").read_text())
    return body


def track(
    project: Path,
    benchmark: str,
    uri: str,
    src: Path,
    server_pid: int | None,
    kill_at: int | None = None,
    options: tuple[str, ...] = (),
    database: Path | None = None,
) -> tuple[int, float, float, float | None]:
    """One `idiombench track` process: (return code, wall s, its CPU s, the server's CPU s). With
    kill_at: SIGKILL it once that many traces of the benchmark are in the store's SQLite file
    (`database`: the store's own, or the one behind the server)."""
    env = {**os.environ, "PYTHONPATH": str(src), "MLFLOW_TRACKING_URI": uri, "TQDM_DISABLE": "1"}
    server_before = tree_cpu(server_pid) if server_pid else None
    started = time.perf_counter()
    with open(project / "bench-logs" / f"track-{benchmark}.log", "ab") as log:
        child = subprocess.Popen(
            [sys.executable, "-m", "idiombench.cli", "track", benchmark, "--model", MODEL, *options],
            cwd=project,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        ended: tuple[int, int, Any] | None = None
        if kill_at is not None and database is not None:
            while True:  # wait4 with WNOHANG, not Popen.poll: poll would reap the child and lose its rusage
                ended = os.wait4(child.pid, os.WNOHANG)
                if ended[0] != 0 or stored_count(database, benchmark) >= kill_at:
                    break
                time.sleep(0.5)
            if ended[0] == 0:
                child.send_signal(signal.SIGKILL)
                ended = None
        _, status, usage = ended or os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    server_cpu = tree_cpu(server_pid) - server_before if server_pid and server_before is not None else None
    return os.waitstatus_to_exitcode(status), wall, usage.ru_utime + usage.ru_stime, server_cpu


def stored_count(database: Path, benchmark: str) -> int:
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30) as connection:
            found = connection.execute(
                "SELECT COUNT(*) FROM trace_tags WHERE key = 'idiombench.scope' AND value LIKE ?", (f"{benchmark}/%",)
            ).fetchone()
        return int(found[0])
    except sqlite3.Error:
        return 0  # not created yet


def sample_of(project: Path, benchmarks: list[str], params_file: Path) -> track_check.Sample:
    """scope -> {trace id: its own assessments}: the rows the stage's draw traces."""
    from idiombench.benchmarks.registry import get_benchmark
    from idiombench.core.io import read_json_object
    from idiombench.pipeline.config import load_params
    from idiombench.stages.inputs import load_items

    os.chdir(project)  # the stages' paths are relative to the project
    traces = load_params(params_file).tracking.traces
    out: track_check.Sample = {}
    for benchmark in benchmarks:
        scores = project / "results/scores" / MODEL / benchmark
        out |= track_check.sampled_traces(
            benchmark=benchmark,
            model=MODEL,
            settings=[path.stem for path in sorted(scores.glob("*.parquet"))],
            view=get_benchmark(benchmark).item_view,
            items=load_items(benchmark),
            roles=read_json_object(scores / "scoring_meta.json").get("roles", {}),
            traces=traces,
        )
    return out


def count_check(database: Path, expected: track_check.Sample) -> list[str]:
    """What is wrong with the store against the sample ([] when every sampled row's trace is there
    once, with its span and its assessments, and nothing else)."""
    return track_check.count_problems(track_check.stored_traces(database), expected)


def params_variant(project: Path, name: str, base: Path | None = None) -> Path:
    """The project's params (or `base`) with tracking.traces changed: "one-item" (a sample of one
    item per run), "off" (no traces) or "sample-N" (N items per run)."""
    import yaml  # to write the variant (reading goes through the bounded loader)

    raw = load_yaml_file(base or project / "params.yaml")
    change: dict[str, Any] = {"one-item": {"sample": 1}, "off": {"enabled": False}}.get(name) or {
        "sample": int(name.removeprefix("sample-"))
    }
    raw["tracking"] = {**raw.get("tracking", {}), "traces": {**raw.get("tracking", {}).get("traces", {}), **change}}
    path = project / f"params-track-{name}.yaml"
    path.write_text(yaml.safe_dump(raw, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def cost_run(project: Path, benchmark: str, name: str, work: Path, echo: Any) -> dict[str, float]:
    """One run of the benchmark's track job into a fresh SQLite store, with the params' sample
    ("sample") or a variant: wall and CPU seconds, traces written, rows gone through."""
    options: tuple[str, ...] = ()
    if name != "sample":
        options = ("--params", str(params_variant(project, name)))
    record = project / "bench-logs" / f"track-{benchmark}-{name}-{time.time_ns()}.json"
    database = work / f"costs-{benchmark}-{name}.db"
    database.unlink(missing_ok=True)
    code, wall, cpu, _ = track(
        project, benchmark, f"sqlite:///{database}", ROOT / "src", None, options=(*options, "--out", str(record))
    )
    if code != 0:
        raise SystemExit(f"track {benchmark} ({name}) failed (exit {code}): {project}/bench-logs")
    runs = json.loads(record.read_text(encoding="utf-8"))["runs"].values()
    traces = sum((run.get("traces") or {}).get("written", 0) for run in runs)
    rows = sum((run.get("traces") or {}).get("rows", 0) for run in runs)
    echo(f"  track {benchmark} ({name}): {traces:,} traces, {wall:.1f} s wall, {cpu:.1f} s CPU; load {load()}")
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "traces": traces, "rows": rows}


def cost_entry(full: dict[str, float], one: dict[str, float], off: dict[str, float]) -> dict[str, Any]:
    """Track's cost drivers of a benchmark from its three runs, in CPU seconds (user + sys of the
    process: on a shared machine wall seconds measure the other work too; on a quiet one track's
    wall is at most its CPU, its writer thread overlapping the rest): per_trace_s = (C1 - C2) /
    (T1 - T2), per_row_s = (C2 - C0 - T2 per_trace_s) / rows, job_s = C0 (the process, the store,
    the runs and their artifacts, traces off); each at least 0 (a difference within the noise).
    `idiombench plan` reads these (stages/plan.py TrackCost)."""
    per_trace = max(0.0, (full["cpu_s"] - one["cpu_s"]) / max(full["traces"] - one["traces"], 1))
    per_row = max(0.0, (one["cpu_s"] - off["cpu_s"] - one["traces"] * per_trace) / max(full["rows"], 1))
    return {
        "rows": int(full["rows"]),
        "traces": int(full["traces"]),
        "wall_s": round(full["wall_s"], 2),
        "cpu_s": round(full["cpu_s"], 2),
        "rows_per_s": round(full["rows"] / full["wall_s"], 2),
        "traces_per_s": round(full["traces"] / full["wall_s"], 2),
        "job_s": off["cpu_s"],
        "per_row_s": round(per_row, 8),
        "per_trace_s": round(per_trace, 6),
        "runs": {"one_item": one, "traces_off": off},
    }


def track_costs(project: Path, benchmarks: list[str], work: Path, echo: Any) -> dict[str, dict[str, Any]]:
    """Per benchmark, track's cost drivers: three runs of its job (cost_run, cost_entry)."""
    out = {}
    for benchmark in benchmarks:
        full, one, off = (cost_run(project, benchmark, name, work, echo) for name in ("sample", "one-item", "off"))
        out[benchmark] = entry = cost_entry(full, one, off)
        echo(
            f"  track {benchmark}: {entry['job_s']:.1f} s a job + {entry['per_row_s'] * 1e6:.1f} us a row + "
            f"{entry['per_trace_s'] * 1e3:.2f} ms a trace"
        )
    return out


def write_costs(path: Path, costs: dict[str, dict[str, Any]], started_load: list[float]) -> None:
    """Track's entries of a rates file (bench/full_grid.py's format), measured here; its other
    stages are kept as they were measured."""
    import full_grid

    body = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"format": full_grid.RATES_FORMAT}
    cpu = body.setdefault("cpu", {"stages": {}}) or {"stages": {}}
    body["cpu"] = cpu
    cpu.setdefault("stages", {}).setdefault("track", {}).update(costs)
    cpu["track_measured"] = {
        "machine": full_grid.machine(),
        "date": time.strftime("%Y-%m-%d"),
        "commit": full_grid.git_commit(),
        "what": "bench/tracking.py " + " ".join(sys.argv[1:]),
        "load_average_start": started_load,
        "load_average_end": list(os.getloadavg()),
    }
    path.write_text(json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def export_source(ref: str, into: Path) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "src"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


@contextmanager
def store(kind: str, work: Path, name: str) -> Iterator[tuple[str, Path, int | None]]:
    """(tracking URI, its SQLite file, the server's pid) of a fresh store."""
    database = work / f"{name}.db"
    database.unlink(missing_ok=True)
    if kind == "sqlite":
        yield f"sqlite:///{database}", database, None
        return
    from helpers import free_port

    port = free_port()
    log = open(work / f"{name}-server.log", "w", encoding="utf-8")  # noqa: SIM115 - closed below
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mlflow",
            "server",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            "1",
            "--backend-store-uri",
            f"sqlite:///{database}",
            "--artifacts-destination",
            str(work / f"{name}-artifacts"),
        ],
        cwd=work,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        import urllib.request

        for _ in range(600):
            try:
                urllib.request.urlopen(base + "/health", timeout=2)
                break
            except OSError:
                if server.poll() is not None:
                    raise SystemExit(f"mlflow server did not start: see {log.name}") from None
                time.sleep(0.5)
        yield base, database, server.pid
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)
        log.close()


def track_all(
    project: Path,
    benchmarks: list[str],
    uri: str,
    src: Path,
    server_pid: int | None,
    options: tuple[str, ...],
    jobs: int,
) -> tuple[list[tuple[int, float, float, float | None]], float]:
    """The benchmarks' track jobs, `jobs` at a time in the order given (as `snakemake --cores <jobs>`
    runs them): each job's figures (`track`; a server's CPU seconds overlap when jobs > 1), and the
    wall seconds from the first start to the last end."""
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(lambda b: track(project, b, uri, src, server_pid, options=options), benchmarks))
    return results, time.perf_counter() - started


def run_side(
    project: Path,
    side: str,
    src: Path,
    kind: str,
    work: Path,
    benchmarks: list[str],
    kill: bool,
    expected: track_check.Sample | None,
    echo: Any,
    options: tuple[str, ...] = (),
    jobs: int = 1,
) -> tuple[list[Run], list[str]]:
    runs: list[Run] = []
    problems: list[str] = []
    shutil.rmtree(project / "results" / "tracking", ignore_errors=True)
    with store(kind, work, f"{kind}-{side}") as (uri, database, server_pid):
        if kill and expected is not None:
            largest = max(benchmarks, key=lambda b: sum(len(v) for k, v in expected.items() if k.startswith(f"{b}/")))
            half = sum(len(v) for k, v in expected.items() if k.startswith(f"{largest}/")) // 2
            code, wall, cpu, _ = track(
                project, largest, uri, src, server_pid, kill_at=half, options=options, database=database
            )
            echo(
                f"  {kind} {side}: track {largest} killed (SIGKILL, exit {code}) after {wall:.1f} s with "
                f"{stored_count(database, largest):,} of {2 * half:,} traces in the store; rerunning"
            )
        results, grid_wall = track_all(project, benchmarks, uri, src, server_pid, options, jobs)
        for benchmark, (code, wall, cpu, server_cpu) in zip(benchmarks, results, strict=True):
            traced = {"written": 0, "rows": 0}
            if code == 0:
                for run in record_of(project, benchmark)["runs"].values():
                    traced["written"] += (run.get("traces") or {}).get("written", 0)
                    traced["rows"] += (run.get("traces") or {}).get("rows", 0)
            result = Run(kind, side, benchmark, traced["written"], traced["rows"], wall, cpu, server_cpu, code)
            runs.append(result)
            echo(line(result))
            if code != 0:
                problems.append(f"{kind} {side}: track {benchmark} exit {code} (log: {project}/bench-logs)")
        echo(f"  {kind} {side}: the {len(benchmarks)} track jobs, {jobs} at a time: {grid_wall:.1f} s wall")
        if expected is not None and not problems:
            problems += [f"{kind} {side}: {p}" for p in count_check(database, expected)]
            retracked, cpu_seconds = 0, 0.0
            results, seconds = track_all(project, benchmarks, uri, src, server_pid, options, jobs)
            for benchmark, (code, _, cpu, server_cpu) in zip(benchmarks, results, strict=True):
                cpu_seconds += cpu + (server_cpu or 0)
                if code != 0:
                    problems.append(f"{kind} {side}: re-track {benchmark} exit {code} (log: {project}/bench-logs)")
                    continue
                retracked += sum(
                    (r.get("traces") or {}).get("written", 0) for r in record_of(project, benchmark)["runs"].values()
                )
            verdict = "passed" if not problems else "FAILED"
            echo(
                f"  {kind} {side}: count check {verdict}; re-track wrote {retracked} traces "
                f"({seconds:.1f} s wall, {cpu_seconds:.1f} s CPU)"
            )
            if retracked:
                problems.append(f"{kind} {side}: a re-track wrote {retracked} traces")
            problems += [f"{kind} {side} after re-track: {p}" for p in count_check(database, expected)]
    return runs, problems


HEADER = (
    f"{'store':<7} {'side':<7} {'benchmark':<14} {'traces':>8} {'rows':>10} {'wall s':>8} {'CPU s':>7} "
    f"{'server CPU s':>12} {'traces/s':>9}"
)


def line(r: Run) -> str:
    server = f"{r.server_cpu_s:.1f}" if r.server_cpu_s is not None else "-"
    return (
        f"{r.store:<7} {r.side:<7} {r.benchmark:<14} {r.traces:>8,} {r.rows:>10,} {r.wall_s:>8.1f} {r.cpu_s:>7.1f} "
        f"{server:>12} {r.traces_per_s:>9.1f}   load {load()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", type=Path, required=True, help="a kept bench/full_grid.py folder, scored")
    parser.add_argument("--benchmarks", nargs="+", choices=BENCHMARKS)
    parser.add_argument("--before-ref", help="also time this git ref's code (e.g. main)")
    parser.add_argument("--before-benchmarks", nargs="+", choices=BENCHMARKS, help="the before side on these only")
    parser.add_argument("--server", action="store_true", help="also through an `mlflow server`")
    parser.add_argument(
        "--stores", nargs="+", choices=("sqlite", "server"), help="these stores only (default: sqlite, and server)"
    )
    parser.add_argument(
        "--jobs", type=int, default=1, help="track jobs at once, largest first (snakemake --cores N; default 1)"
    )
    parser.add_argument("--kill", action="store_true", help="kill -9 the largest track half-way, then rerun")
    parser.add_argument("--ui", action="store_true", help="the UI's load time of the largest run (needs chromium)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--sample", type=int, help="trace this many items per run (default: the project's params)")
    parser.add_argument(
        "--write-rates", type=Path, help="measure track's costs per benchmark into this rates file (idiombench plan)"
    )
    parser.add_argument("--costs-only", action="store_true", help="with --write-rates: skip the before/after runs")
    args = parser.parse_args()
    project = args.project.resolve()
    benchmarks = [
        b for b in (args.benchmarks or BENCHMARKS) if (project / "results/metrics" / b / f"{MODEL}.json").is_file()
    ]
    if not benchmarks:
        parser.error(
            f"{project}: no aggregated benchmark of model {MODEL!r} (run bench/full_grid.py --until aggregate)"
        )
    (project / "bench-logs").mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="idiombench-bench-tracking-"))
    print(f"bench/tracking.py: {os.cpu_count()} CPUs; load {load()}; project {project}; stores in {work}", flush=True)
    params_file = params_variant(project, f"sample-{args.sample}") if args.sample else project / "params.yaml"
    options = ("--params", str(params_file)) if args.sample else ()
    expected: track_check.Sample = {}
    if not args.costs_only:
        print("the sample: ", end="", flush=True)
        expected = sample_of(project, benchmarks, params_file)
        print(f"{sum(len(v) for v in expected.values()):,} traces in {len(expected)} runs", flush=True)
    sides: list[tuple[str, Path, list[str]]] = []
    if args.before_ref:
        sides.append(("before", export_source(args.before_ref, work / "before"), args.before_benchmarks or benchmarks))
    sides.append(("after", ROOT / "src", benchmarks))
    runs: list[Run] = []
    problems: list[str] = []
    started_load = list(os.getloadavg())
    try:
        if args.write_rates:
            write_costs(args.write_rates, track_costs(project, benchmarks, work, print), started_load)
            print(f"track's costs -> {args.write_rates}", flush=True)
        print(HEADER, flush=True)
        stores = args.stores or (["sqlite", "server"] if args.server else ["sqlite"])
        for kind in () if args.costs_only else stores:
            for side, src, chosen in sides:
                after = side == "after"
                found, wrong = run_side(
                    project,
                    side,
                    src,
                    kind,
                    work,
                    chosen,
                    args.kill and after,
                    expected if after else None,
                    lambda text: print(text, flush=True),
                    options,
                    args.jobs,
                )
                runs += found
                problems += wrong
        summary(runs)
        if args.ui and shutil.which("chromium"):
            ui_seconds(project, work, benchmarks)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps({"runs": [asdict(r) for r in runs], "problems": problems}, indent=2) + "\n")
    for problem in problems:
        print(f"PROBLEM: {problem}", flush=True)
    subprocess.run(["uptime"], check=False)
    if problems:
        raise SystemExit(1)


def rate(runs: list[Run]) -> str:
    traces, wall = sum(r.traces for r in runs), sum(r.wall_s for r in runs)
    cpu = sum(r.cpu_s + (r.server_cpu_s or 0) for r in runs)
    return f"{traces / wall:,.1f} traces/s ({traces:,} traces, {wall:,.1f} s wall, {cpu:,.1f} s CPU)" if wall else "-"


def summary(runs: list[Run]) -> None:
    """Per store: traces/s before -> after on the benchmarks both sides ran, and the whole grid's track."""
    for kind in sorted({r.store for r in runs}):
        before = [r for r in runs if r.store == kind and r.side == "before"]
        after = [r for r in runs if r.store == kind and r.side == "after"]
        common = {r.benchmark for r in before} & {r.benchmark for r in after}
        if common:
            names = ", ".join(sorted(common))
            print(
                f"{kind}: before {rate(before)} -> after {rate([r for r in after if r.benchmark in common])} [{names}]"
            )
        print(f"{kind}: this checkout, every benchmark: {rate(after)}", flush=True)


def ui_seconds(project: Path, work: Path, benchmarks: list[str]) -> None:
    """`mlflow ui` on a fresh SQLite store of this checkout's traces; seconds until the largest run's
    traces tab shows its first rows (a fresh browser profile)."""
    from browser import Browser
    from helpers import mlflow_server

    database = work / "ui.db"
    uri = f"sqlite:///{database}"
    for benchmark in benchmarks:
        track(project, benchmark, uri, ROOT / "src", None)
    largest = max(
        ((b, key, run) for b in benchmarks for key, run in record_of(project, b)["runs"].items() if run.get("traces")),
        key=lambda found: found[2]["traces"]["traced"],
    )
    run = largest[2]
    experiment = run["items_ui"].split("/experiments/")[1].split("/")[0]
    with sqlite3.connect(database) as connection:
        item = connection.execute(  # the newest trace of the run: the UI lists newest first
            "SELECT item.value FROM trace_tags scope JOIN trace_tags item ON item.request_id = scope.request_id "
            "JOIN trace_info info ON info.request_id = scope.request_id WHERE scope.key = 'idiombench.scope' "
            "AND scope.value = ? AND item.key = 'item_id' ORDER BY info.timestamp_ms DESC LIMIT 1",
            (largest[1],),
        ).fetchone()[0]
    with mlflow_server(uri, work, command="ui") as base, Browser() as browser:
        started = time.monotonic()
        browser.open(f"{base}/#/experiments/{experiment}/runs/{run['run_id']}/evaluations")
        browser.wait_for_text(item, timeout=600)
        print(
            f"UI: {largest[1]} ({run['traces']['traced']:,} traces): first rows after "
            f"{time.monotonic() - started:.1f} s; load {load()}",
            flush=True,
        )


if __name__ == "__main__":
    main()
