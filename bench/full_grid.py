"""Every stage of one model's paper grid, on this machine's CPU: wall time, CPU time, rows/s and
peak memory per stage and benchmark.

    export IDIOMBENCH_MIRROR=<releases>:<authors' code>
    .venv/bin/python bench/full_grid.py [--fraction 1.0] [--benchmarks orderprobe ...]
        [--roles cpu|lexical|default] [--workdir DIR] [--json FILE] [--write-rates bench/rates.json]
        [--merge-rates EARLIER.json]

A project in a fresh folder (--workdir, else a temporary one, removed unless --keep): the four
releases acquired from the mirror and built, then overlays/paper.yaml's grid for ONE model
through the real stages, each a fresh process (the CLI, as Snakemake runs it):

  render <b>      the paper's sizes: every item, all 23 OrderProbe permutations, every option
                  rotation of the option-order pass (--fraction < 1: a seeded share of the items,
                  through the render sample knobs, e.g. 0.02 for a check in minutes);
  generate        the real generate stage (requests, batching, cache shards, generations tables)
                  with a stand-in model (bench/synthetic_outputs.py): outputs of realistic length
                  (50-100 % of max_new_tokens: a 512-token Chinese answer is ~700 characters) built
                  from the releases' own text, five distinct consistency samples, deterministic;
  score <b>       with the scorer roles of --roles (below);
  aggregate <b>, track <b> (MLflow in <workdir>/mlflow.db, the overlay's trace sample of 2,000
                  items per setting), report (every table, the bootstrap intervals, the PDF).

--roles: `cpu` (default) runs the neural roles the embedded default can run offline on a CPU
for SemanticQA (BERTScore, all-MiniLM-L6-v2) and G-IdiomAlign (Task 2 similarity,
multilingual-e5-small) and leaves OrderProbe's neural roles off (CPU embedding of 1.5 M
512-token texts takes days; issue 29 part 5 is their GPU figure); `lexical`: every neural role
off; `default`: every role of params.yaml's embedded default (OrderProbe's too: slow).

Per stage it prints rows, wall seconds, rows/s, CPU seconds (user + sys of the process and its
children: a process pool's workers count) and peak memory, sampled every 0.2 s: the largest
single process's peak (VmHWM) and the whole process tree's (summed RSS: a pool's workers count).
The machine's load average is printed before and after: on a shared machine wall times are not
the machine's speed.
--write-rates writes the measured rates for `idiombench plan` (docs/performance.md); with
--merge-rates, together with an earlier run's on the other benchmarks (each benchmark's own
fraction is kept: e.g. the three smaller benchmarks at full size, OrderProbe at 0.1).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "bench")]

import tracking  # noqa: E402  (bench/tracking.py: track's cost drivers)

from idiombench.core.hardware import cpu_flags  # noqa: E402

BENCHMARKS = ("orderprobe", "g-idiomalign", "semanticqa", "chengyu-bench")
MODEL = "synthetic"
STAGES = ("render", "generate", "score", "aggregate", "track", "report")
PAGE = os.sysconf("SC_PAGE_SIZE")  # bytes
RATES_FORMAT = 1
# what a merged rates file keeps of each run (--merge-rates)
RUN_KEYS = ("benchmarks", "fraction", "commit", "date", "command", "load_average_start", "load_average_end", "setup_s")


# --------------------------------------------------------------------------- measuring one process


def process_tree(pid: int) -> list[int]:
    """A process and all its descendants (those still running)."""
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        found.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as handle:
                    stack.extend(int(child) for child in handle.read().split())
        except (OSError, ValueError):
            continue
    return found


def memory_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process in KiB: its resident memory now and its peak since exec
    (getrusage's ru_maxrss of a child also counts the parent's pages before the exec)."""
    values = {}
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    values[line[:5]] = int(line.split()[1])
    except (OSError, ValueError):
        pass
    return values.get("VmRSS", 0), values.get("VmHWM", 0)


class MemorySampler:
    """Every 0.2 s: the process tree's summed resident memory (its peak: `tree`) and each
    process's own peak (the largest: `process`)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.tree_kib = 0
        self.peaks: dict[int, int] = {}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while not self.done.is_set():
            total = 0
            for pid in process_tree(self.pid):
                rss, hwm = memory_kib(pid)
                total += rss
                self.peaks[pid] = max(self.peaks.get(pid, 0), hwm)
            self.tree_kib = max(self.tree_kib, total)
            self.done.wait(0.2)

    def stop(self) -> tuple[float, float]:
        """(the largest process's peak, the tree's peak) in MiB."""
        self.done.set()
        self.thread.join()
        return max(self.peaks.values(), default=0) / 1024, self.tree_kib / 1024


@dataclass
class Measured:
    stage: str
    benchmark: str
    rows: int = 0
    wall_s: float = 0.0
    cpu_s: float = 0.0
    max_rss_mib: float = 0.0  # the largest single process's peak (VmHWM, sampled)
    tree_rss_mib: float = 0.0  # the process tree's peak (summed VmRSS, sampled)
    returncode: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def rows_per_s(self) -> float | None:
        return self.rows / self.wall_s if self.rows and self.wall_s > 0 else None


def run_measured(stage: str, benchmark: str, argv: list[str], cwd: Path, env: dict[str, str], log: Path) -> Measured:
    with open(log, "wb") as out:
        started = time.perf_counter()
        child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        sampler = MemorySampler(child.pid)
        _, status, usage = os.wait4(child.pid, 0)  # CPU time of the child and the children it waited for
        wall = time.perf_counter() - started
        process_mib, tree_mib = sampler.stop()
        child.returncode = os.waitstatus_to_exitcode(status)
    return Measured(
        stage,
        benchmark,
        wall_s=wall,
        cpu_s=usage.ru_utime + usage.ru_stime,
        max_rss_mib=process_mib,
        tree_rss_mib=tree_mib,
        returncode=child.returncode,
    )


# --------------------------------------------------------------------------- the project's params


def cap_for(sizes: list[int], fraction: float) -> int:
    """The smallest per-group cap c with sum(min(n, c)) >= fraction * sum(n): the render sample
    knobs cap each group (language, direction, task), so this keeps about `fraction` of the items."""
    target = fraction * sum(sizes)
    low, high = 1, max(sizes)
    while low < high:
        middle = (low + high) // 2
        if sum(min(n, middle) for n in sizes) >= target:
            high = middle
        else:
            low = middle + 1
    return low


def sample_caps(processed: Path, fraction: float, benchmarks: list[str]) -> dict[str, dict[str, int]]:
    """benchmark -> {render.sample knob: cap} keeping about `fraction` of each benchmark's items
    (the groups each knob caps: OrderProbe's expressions per language, G-IdiomAlign's items per
    direction, SemanticQA's and Chengyu-Bench's items per task)."""
    from idiombench.core.items import read_items

    def sizes(path: Path, key: Any) -> list[int]:
        return list(Counter(key(item) for item in read_items(path)).values())

    def per_task(benchmark: str) -> list[int]:
        return [len(read_items(path)) for path in sorted((processed / benchmark).glob("*.parquet"))]

    def expressions() -> list[int]:
        per_language: dict[str, set[str]] = defaultdict(set)
        for item in read_items(processed / "orderprobe" / "restore.parquet"):
            per_language[item.language].add(item.meta["expression_id"])
        return [len(e) for e in per_language.values()]

    def direction(item: Any) -> str:
        return str(item.meta["direction"])

    knobs = {
        "orderprobe": lambda: {"expressions_per_language": cap_for(expressions(), fraction)},
        "g-idiomalign": lambda: {
            "mcq_per_direction": cap_for(sizes(processed / "g-idiomalign" / "mcq.parquet", direction), fraction),
            "generation_per_direction": cap_for(
                sizes(processed / "g-idiomalign" / "gloss_generation.parquet", direction), fraction
            ),
        },
        "semanticqa": lambda: {"items_per_task": cap_for(per_task("semanticqa"), fraction)},
        "chengyu-bench": lambda: {"items_per_task": cap_for(per_task("chengyu-bench"), fraction)},
    }
    return {name: knobs[name]() for name in benchmarks}


def scoring_roles(choice: str) -> dict[str, Any]:
    """The roles of the embedded default (what runs offline on a CPU), some switched off."""
    from idiombench.benchmarks.registry import get_benchmark
    from idiombench.params.overlay import read_params_raw

    roles = read_params_raw(ROOT / "params.yaml")["scoring"]["roles"]
    off: set[str] = set()
    if choice == "lexical":
        off = set(roles)
    elif choice == "cpu":
        off = {role.name for role in get_benchmark("orderprobe").scorer_roles}
    for name in off:
        roles[name] = {**roles[name], "model": None, "note": f"off in bench/full_grid.py --roles {choice}"}
    return roles


def project_params(benchmarks: list[str], fraction: float, roles: str, processed: Path | None) -> dict[str, Any]:
    """overlays/paper.yaml merged onto params.yaml, with one stand-in model."""
    from idiombench.params.overlay import read_params_raw

    raw = read_params_raw(ROOT / "overlays" / "paper.yaml")
    raw["data"] = {**raw["data"], "mirror": [], "download": False}  # IDIOMBENCH_MIRROR, never the network
    raw["models"] = {
        MODEL: {"display_name": "synthetic outputs (bench/full_grid.py)", "backend": "oracle", "batch_size": 256}
    }
    raw["report"]["published"]["reproduces"] = {}  # the stand-in reproduces no paper model
    raw["scoring"]["roles"] = scoring_roles(roles)
    raw["benchmarks"]["g-idiomalign"]["attention"] = {
        **raw["benchmarks"]["g-idiomalign"]["attention"],
        "enabled": False,
        "models": None,
    }
    for name in BENCHMARKS:
        raw["benchmarks"][name]["enabled"] = name in benchmarks
    if fraction < 1.0 and processed is not None:
        for name, knobs in sample_caps(processed, fraction, benchmarks).items():
            raw["benchmarks"][name]["render"]["sample"].update(knobs)
    return raw


def write_params(workdir: Path, raw: dict[str, Any]) -> None:
    from idiombench.pipeline.config import parse_params

    parse_params(raw, "bench/full_grid.py params")  # fail here, not in the first stage
    (workdir / "params.yaml").write_text(yaml.safe_dump(raw, allow_unicode=True, sort_keys=False), encoding="utf-8")


# --------------------------------------------------------------------------- the stages


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


class Grid:
    def __init__(self, workdir: Path, benchmarks: list[str], echo: Any, track_costs: bool = False) -> None:
        self.workdir = workdir
        self.track_costs = track_costs
        self.benchmarks = benchmarks
        self.echo = echo
        self.logs = workdir / "bench-logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
            "MLFLOW_TRACKING_URI": f"sqlite:///{workdir / 'mlflow.db'}",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
        }
        self.results: list[Measured] = []

    def cli(self, stage: str, benchmark: str, *args: str) -> Measured:
        return self.child(stage, benchmark, [sys.executable, "-m", "idiombench.cli", *args])

    def child(self, stage: str, benchmark: str, argv: list[str]) -> Measured:
        log = self.logs / f"{stage}-{benchmark}.log"
        measured = run_measured(stage, benchmark, argv, self.workdir, self.env, log)
        if measured.returncode != 0:
            tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-15:]
            raise SystemExit(f"{stage} {benchmark} failed (exit {measured.returncode}); {log}:\n" + "\n".join(tail))
        return measured

    def record(self, measured: Measured) -> Measured:
        self.results.append(measured)
        self.echo(row_line(measured))
        return measured

    def setup(self) -> None:
        for benchmark in self.benchmarks:
            for stage in ("acquire", "build"):
                self.child(stage, benchmark, [sys.executable, "-m", "idiombench.cli", stage, benchmark])

    def run(self, seed: int, length_range: tuple[float, float], until: str) -> None:
        """The stages in order, up to and including `until`."""
        stages = STAGES[: STAGES.index(until) + 1]
        for benchmark in self.benchmarks:
            m = self.cli("render", benchmark, "render", benchmark)
            m.rows = read_json(self.workdir / "results" / "prompts" / benchmark / "render_stats.json")["prompts_total"]
            self.record(m)
        if "generate" not in stages:
            return
        m = self.child(
            "generate",
            "all",
            [
                sys.executable,
                str(Path(__file__).resolve()),
                "_generate",
                "--seed",
                str(seed),
                "--length-range",
                *map(str, length_range),
            ],
        )
        info = read_json(self.workdir / "results" / "generations" / MODEL / "generation_info.json")
        m.rows = sum(info["tables"].values())
        requests, tokens = distinct_requests(self.workdir / "results" / "generations" / MODEL)
        m.extra = {
            "requests": requests,
            "completion_tokens": tokens,
            "rows_by_benchmark": {
                b: sum(n for k, n in info["tables"].items() if k.startswith(f"{b}/")) for b in self.benchmarks
            },
        }
        self.record(m)
        score_rows: dict[str, int] = {}
        for benchmark in self.benchmarks if "score" in stages else ():
            m = self.cli("score", benchmark, "score", benchmark, "--model", MODEL)
            meta = read_json(self.workdir / "results" / "scores" / MODEL / benchmark / "scoring_meta.json")
            m.rows = score_rows[benchmark] = sum(meta["settings"].values())
            m.extra = {"roles": {r: s.get("status") for r, s in sorted(meta.get("roles", {}).items())}}
            self.record(m)
        for benchmark in self.benchmarks if "aggregate" in stages else ():
            m = self.cli("aggregate", benchmark, "aggregate", benchmark, "--model", MODEL)
            m.rows = score_rows[benchmark]
            self.record(m)
        for benchmark in self.benchmarks if "track" in stages else ():
            m = self.cli("track", benchmark, "track", benchmark, "--model", MODEL)
            record = read_json(self.workdir / "results" / "tracking" / benchmark / f"{MODEL}.json")
            m.rows = score_rows[benchmark]
            traced = [run.get("traces") or {} for run in record["runs"].values()]
            m.extra = {"traces": sum(t.get("traced", 0) for t in traced)}
            if self.track_costs:  # its cost drivers for `idiombench plan`: two more runs of the job
                full = {"wall_s": m.wall_s, "cpu_s": m.cpu_s, "traces": sum(t.get("written", 0) for t in traced)}
                full["rows"] = sum(t.get("rows", 0) for t in traced)
                probes = {
                    name: tracking.cost_run(self.workdir, benchmark, name, self.logs, lambda line: None)
                    for name in ("one-item", "off")
                }
                m.extra["costs"] = tracking.cost_entry(full, probes["one-item"], probes["off"])
            self.record(m)
        if "report" in stages:
            m = self.cli("report", "all", "report")
            m.rows = sum(score_rows.values())
            self.record(m)


def distinct_requests(generations: Path) -> tuple[int, int]:
    """(requests, completion tokens) over the distinct request keys of every generations table: what
    the backend got (the run summary adds up each job's, so a request two passes share counts twice)."""
    import pyarrow.parquet as pq

    tokens: dict[str, int] = {}
    for path in sorted(generations.glob("*/*.parquet")):
        table = pq.read_table(path, columns=["request_key", "completion_tokens"])
        tokens.update(
            zip(table.column("request_key").to_pylist(), table.column("completion_tokens").to_pylist(), strict=True)
        )
    return len(tokens), sum(n or 0 for n in tokens.values())


def generate_child(seed: int, length_range: tuple[float, float]) -> None:
    """The generate stage with the stand-in model (run in the project folder, in its own process)."""
    from synthetic_outputs import SyntheticBackend, read_release_text

    from idiombench.benchmarks.registry import backend_hooks
    from idiombench.core import paths
    from idiombench.pipeline.config import load_params
    from idiombench.stages.generate import run_generate, select_benchmarks

    params = load_params("params.yaml")
    benchmarks = select_benchmarks(params, MODEL, params.models[MODEL])
    release = read_release_text(paths.PROCESSED, benchmarks)
    backend = SyntheticBackend(release, backend_hooks().answer_formatters, seed=seed, length_range=length_range)
    run_generate(params, MODEL, backend=backend)


# --------------------------------------------------------------------------- output


HEADER = (
    f"{'stage':<10} {'benchmark':<14} {'rows':>10} {'wall s':>9} {'rows/s':>10} {'CPU s':>9} "
    f"{'max RSS MiB':>11} {'tree MiB':>9}"
)


def row_line(m: Measured) -> str:
    rate = f"{m.rows_per_s:,.1f}" if m.rows_per_s else "-"
    return (
        f"{m.stage:<10} {m.benchmark:<14} {m.rows:>10,} {m.wall_s:>9.1f} {rate:>10} {m.cpu_s:>9.1f} "
        f"{m.max_rss_mib:>11,.0f} {m.tree_rss_mib:>9,.0f}"
    )


def machine() -> dict[str, Any]:
    model = next(
        (
            line.partition(":")[2].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor() or "unknown",
    )
    flags = cpu_flags()
    isa = (
        "AVX512-BF16"
        if "avx512_bf16" in flags
        else ("AVX512" if "avx512f" in flags else ("AVX2" if "avx2" in flags else "no AVX2"))
    )
    return {
        "cpu": model,
        "isa": isa,
        "cores": os.cpu_count(),
        "memory_gib": round(os.sysconf("SC_PHYS_PAGES") * PAGE / 2**30, 1),
        "python": platform.python_version(),
    }


def git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        return out.stdout.strip() + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def rates_body(results: list[Measured], info: dict[str, Any]) -> dict[str, Any]:
    """What `idiombench plan` reads: rows/s per stage and benchmark on this CPU (src/idiombench/stages/plan.py)."""
    stages: dict[str, dict[str, Any]] = defaultdict(dict)
    for m in results:
        stages[m.stage][m.benchmark] = {
            "rows": m.rows,
            "wall_s": round(m.wall_s, 2),
            "cpu_s": round(m.cpu_s, 2),
            "rows_per_s": round(m.rows_per_s, 2) if m.rows_per_s else None,
            **m.extra.get("costs", {}),  # track: a job's, a row's and a trace's seconds (bench/tracking.py)
        }
    return {
        "format": RATES_FORMAT,
        "cpu": {**info, "stages": dict(stages)},
        "gpu": None,  # bench/full_grid.py runs on the CPU; a GPU measurement fills this slot (docs/performance.md)
    }


def merge_rates(earlier: dict[str, Any], later: dict[str, Any]) -> dict[str, Any]:
    """One rates file from two runs on different benchmarks (e.g. three benchmarks at full size,
    then OrderProbe on a fraction): each benchmark's rates as its run measured them; a stage of
    every benchmark together (`all`: generate, report) as one rate over both runs' rows and
    seconds; `fractions` per benchmark and `fraction` the smallest (what `plan` warns about)."""
    a, b = earlier["cpu"], later["cpu"]
    if a["machine"] != b["machine"]:
        raise SystemExit(f"--merge-rates: measured on another machine ({a['machine']} vs {b['machine']})")
    both = set(a["benchmarks"]) & set(b["benchmarks"])
    if both:
        raise SystemExit(f"--merge-rates: both runs measured {sorted(both)}: measure each benchmark once")
    stages: dict[str, dict[str, Any]] = {}
    for stage in sorted(set(a["stages"]) | set(b["stages"])):
        mine, theirs = a["stages"].get(stage, {}), b["stages"].get(stage, {})
        stages[stage] = {**mine, **{k: v for k, v in theirs.items() if k != "all"}}
        if "all" in mine and "all" in theirs:
            rows = mine["all"]["rows"] + theirs["all"]["rows"]
            wall = mine["all"]["wall_s"] + theirs["all"]["wall_s"]
            cpu = mine["all"]["cpu_s"] + theirs["all"]["cpu_s"]
            stages[stage]["all"] = {
                "rows": rows,
                "wall_s": round(wall, 2),
                "cpu_s": round(cpu, 2),
                "rows_per_s": round(rows / wall, 2) if wall else None,
            }
        elif "all" in theirs:
            stages[stage]["all"] = theirs["all"]

    def fractions(info: dict[str, Any]) -> dict[str, float]:
        return info.get("fractions") or {name: info["fraction"] for name in info["benchmarks"]}

    per_benchmark = {**fractions(a), **fractions(b)}
    runs = [*a.get("runs", [{k: a[k] for k in RUN_KEYS if k in a}]), {k: b[k] for k in RUN_KEYS if k in b}]
    cpu = {
        **b,
        "benchmarks": [name for name in BENCHMARKS if name in per_benchmark],
        "fraction": min(per_benchmark.values()),
        "fractions": per_benchmark,
        "date": max(a["date"], b["date"]),
        "load_average_start": [
            max(x, y) for x, y in zip(a["load_average_start"], b["load_average_start"], strict=True)
        ],
        "command": " && ".join(run["command"] for run in runs),
        "runs": runs,
        "stages": stages,
    }
    return {"format": RATES_FORMAT, "cpu": cpu, "gpu": later.get("gpu") or earlier.get("gpu")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fraction", type=float, default=1.0, help="share of each benchmark's items (default 1: full)")
    parser.add_argument("--benchmarks", nargs="+", choices=BENCHMARKS, default=list(BENCHMARKS))
    parser.add_argument("--roles", choices=("cpu", "lexical", "default"), default="cpu")
    parser.add_argument("--workdir", type=Path, help="project folder (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary project folder")
    parser.add_argument("--seed", type=int, default=0, help="seed of the stand-in model's outputs")
    parser.add_argument(
        "--length-range",
        type=float,
        nargs=2,
        default=(0.5, 1.0),
        metavar=("LOW", "HIGH"),
        help="output length as a share of max_new_tokens, drawn uniformly per request",
    )
    parser.add_argument(
        "--until",
        choices=STAGES,
        default="report",
        help="stop after this stage (e.g. generate: the generate stage's time and memory at full size without scoring)",
    )
    parser.add_argument("--json", type=Path, help="also write every figure to this JSON file")
    parser.add_argument("--write-rates", type=Path, help="write the measured rates for `idiombench plan` here")
    parser.add_argument(
        "--merge-rates",
        type=Path,
        help="a rates file of an earlier run on the other benchmarks: --write-rates then writes both runs' rates",
    )
    args = parser.parse_args()
    if not 0 < args.fraction <= 1:
        parser.error("--fraction must be in (0, 1]")
    if args.merge_rates and not args.write_rates:
        parser.error("--merge-rates needs --write-rates")
    if not os.environ.get("IDIOMBENCH_MIRROR"):
        parser.error("set IDIOMBENCH_MIRROR to the mirror of the releases (and the authors' code)")

    temporary = args.workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="full-grid-")) if temporary else args.workdir.resolve()
    if not temporary and workdir.exists() and any(workdir.iterdir()):
        parser.error(f"--workdir {workdir} is not empty")
    workdir.mkdir(parents=True, exist_ok=True)
    info = {
        "machine": machine(),
        "date": time.strftime("%Y-%m-%d"),
        "commit": git_commit(),
        "fraction": args.fraction,
        "roles": args.roles,
        "benchmarks": args.benchmarks,
        "length_range": list(args.length_range),
        "until": args.until,
        "load_average_start": list(os.getloadavg()),
        "command": " ".join(["bench/full_grid.py", *sys.argv[1:]]),
    }
    print(f"machine: {info['machine']}", flush=True)
    print(f"commit {info['commit']}, fraction {args.fraction}, roles {args.roles}, project {workdir}", flush=True)
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in info['load_average_start'])}", flush=True)
    grid = Grid(workdir, args.benchmarks, lambda line: print(line, flush=True), track_costs=bool(args.write_rates))
    try:
        t0 = time.perf_counter()
        write_params(workdir, project_params(args.benchmarks, 1.0, args.roles, None))  # what acquire/build read
        grid.setup()
        info["setup_s"] = round(time.perf_counter() - t0, 1)
        if args.fraction < 1.0:  # the sample caps come from the built items
            write_params(
                workdir, project_params(args.benchmarks, args.fraction, args.roles, workdir / "data" / "processed")
            )
        print(f"acquire + build: {info['setup_s']} s (not in the table)\n{HEADER}", flush=True)
        grid.run(args.seed, tuple(args.length_range), args.until)
        info["load_average_end"] = list(os.getloadavg())
        total_wall = sum(m.wall_s for m in grid.results)
        total_cpu = sum(m.cpu_s for m in grid.results)
        print(
            f"total: {total_wall:,.1f} s wall, {total_cpu:,.1f} s CPU; load average at end: "
            f"{' '.join(f'{x:.2f}' for x in info['load_average_end'])}",
            flush=True,
        )
        for generate in (m for m in grid.results if m.stage == "generate"):
            print(
                f"generate: {generate.extra['requests']:,} requests, {generate.extra['completion_tokens']:,} "
                f"completion tokens (synthetic)",
                flush=True,
            )
        if args.json:
            args.json.write_text(
                json.dumps({**info, "stages": [asdict(m) for m in grid.results]}, indent=2, ensure_ascii=False) + "\n",
                encoding="utf-8",
            )
        if args.write_rates:
            body = rates_body(grid.results, info)
            if args.merge_rates:
                body = merge_rates(read_json(args.merge_rates), body)
            args.write_rates.write_text(
                json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
                encoding="utf-8",
            )
            print(f"rates -> {args.write_rates}", flush=True)
    finally:
        if temporary and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print(f"project kept in {workdir}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_generate":
        child = argparse.ArgumentParser()
        child.add_argument("_generate")
        child.add_argument("--seed", type=int, default=0)
        child.add_argument("--length-range", type=float, nargs=2, default=(0.5, 1.0))
        options = child.parse_args()
        generate_child(options.seed, tuple(options.length_range))
    else:
        main()
