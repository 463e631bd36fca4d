"""Two OrderProbe score jobs at once against one after the other, on the same cores (issue 38).

    python bench/score_jobs.py --project /tmp/score-jobs                 # 4,800 rows per job, paper mode
    python bench/score_jobs.py --project /tmp/score-jobs --repeat 3      # each arrangement 3 times, interleaved

Snakemake grants a score job threads and exports them as OMP_NUM_THREADS; the job starts one
worker process per thread granted, never more than its usable cores (core.workers.worker_count;
tests/integration/test_score_threads.py checks the real rule). This runs the real CLI,
`idiombench score orderprobe`, for two models on the same realistic outputs (bench/orderprobe_corpus.py:
--expressions per language x 24 inputs, ~--chars characters, zero-shot main pass, the neural
roles off) in three arrangements over --cores cores (default: the usable cores):

- `one after the other`: job A, then job B, each granted all --cores threads (what
  `snakemake --cores N` does: an OrderProbe score job's threads are every core);
- `at once`: A and B together, each granted half (`snakemake --cores N --set-threads score=N/2`,
  or two such Slurm jobs on one node);
- `at once, before issue 38`: A and B together, each with one worker per usable core, whatever
  it was granted (IDIOMBENCH_SCORE_WORKERS set to the usable cores: what every score job did
  before, so two at once ran twice the workers the cores hold).

Per arrangement it prints the wall time of the pair and the CPU time of every process of both
jobs (the CLI processes and their worker processes, summed from /proc every 0.1 s: worker
processes are not the CLI's waited-for children, so rusage misses them), with the load average
before and after: on a shared machine compare CPU times, and wall times only between
arrangements run close together (--repeat interleaves them). The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

import orderprobe_corpus as corpus  # noqa: E402
from score_speed import load, prepare, set_mode  # noqa: E402

from idiombench.core.workers import usable_cores  # noqa: E402
from idiombench.core.yamlfile import load_yaml_file

MODELS = (corpus.MODEL, f"{corpus.MODEL}-b")


def add_second_model(project: Path) -> None:
    """The second job's model: the same outputs under another name."""
    raw = load_yaml_file(project / "params.yaml")
    raw["models"] = {name: {"backend": "echo"} for name in MODELS}
    (project / "params.yaml").write_text(yaml.safe_dump(raw, allow_unicode=True, sort_keys=False), encoding="utf-8")
    generations = project / "results" / "generations"
    if not (generations / MODELS[1]).exists():
        shutil.copytree(generations / MODELS[0], generations / MODELS[1])


class Job:
    """`idiombench score orderprobe --model <model>` with an environment, its process tree's CPU
    time sampled until it ends."""

    def __init__(self, project: Path, model: str, env: dict[str, str]):
        self.cpu: dict[int, float] = {}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "idiombench.cli", "score", "orderprobe", "--model", model],
            cwd=project,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.root = psutil.Process(self.proc.pid)
        self.output = ""

    def sample(self) -> bool:
        """Record the CPU time of every live process of the job; False once it has ended."""
        try:
            family = [self.root, *self.root.children(recursive=True)]
        except psutil.NoSuchProcess:
            family = []
        for process in family:
            try:
                times = process.cpu_times()
                self.cpu[process.pid] = max(self.cpu.get(process.pid, 0.0), times.user + times.system)
            except psutil.NoSuchProcess:
                pass
        return self.proc.poll() is None

    def finish(self) -> None:
        self.output = self.proc.communicate()[0]
        if self.proc.returncode:
            raise SystemExit(f"score failed ({self.proc.returncode}):\n{self.output[-4000:]}")

    @property
    def workers_line(self) -> str:
        return next((line.strip() for line in self.output.splitlines() if "worker processes" in line), "?")


def run_jobs(project: Path, groups: list[list[tuple[str, dict[str, str]]]]) -> tuple[float, float, list[str]]:
    """Run the groups one after the other, the jobs of a group at once; (wall s, CPU s, the
    jobs' worker lines)."""
    shutil.rmtree(project / "results" / "scores", ignore_errors=True)
    started = time.perf_counter()
    cpu = 0.0
    lines = []
    for group in groups:
        jobs = [Job(project, model, env) for model, env in group]
        while any([job.sample() for job in jobs]):
            time.sleep(0.1)
        for job in jobs:
            job.finish()
            cpu += sum(job.cpu.values())
            lines.append(job.workers_line)
    return time.perf_counter() - started, cpu, lines


def environment(**values: int | None) -> dict[str, str]:
    env = corpus.cli_env()
    for name in ("OMP_NUM_THREADS", "IDIOMBENCH_SCORE_WORKERS"):
        env.pop(name, None)
    env.update({name: str(value) for name, value in values.items() if value is not None})
    return env


def arrangements(cores: int) -> dict[str, list[list[tuple[str, dict[str, str]]]]]:
    half = max(1, cores // 2)
    a, b = MODELS
    return {
        "one after the other": [
            [(a, environment(OMP_NUM_THREADS=cores))],
            [(b, environment(OMP_NUM_THREADS=cores))],
        ],
        "at once": [[(a, environment(OMP_NUM_THREADS=half)), (b, environment(OMP_NUM_THREADS=half))]],
        "at once, before issue 38": [
            [
                (a, environment(OMP_NUM_THREADS=half, IDIOMBENCH_SCORE_WORKERS=usable_cores())),
                (b, environment(OMP_NUM_THREADS=half, IDIOMBENCH_SCORE_WORKERS=usable_cores())),
            ]
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", type=Path, help="project folder (reused when it holds the same corpus)")
    parser.add_argument("--expressions", type=int, default=50, help="expressions per language (50: 4,800 rows a job)")
    parser.add_argument("--chars", type=int, default=700)
    parser.add_argument("--mode", default="paper", choices=["paper", "released"])
    parser.add_argument("--cores", type=int, default=usable_cores(), help="the cores Snakemake shares (--cores)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of the three arrangements, interleaved")
    args = parser.parse_args()
    spec = {"expressions": args.expressions, "samples": 0, "settings": ["zero_shot"], "chars": args.chars}
    with tempfile.TemporaryDirectory(prefix="idiombench-score-jobs-") as scratch:
        project = args.project or Path(scratch)
        rows = prepare(project, spec)
        set_mode(project, args.mode)
        add_second_model(project)
        print(
            f"bench/score_jobs.py: 2 jobs x {rows:,} rows ({args.mode} mode), --cores {args.cores}; "
            f"{os.cpu_count()} CPUs ({usable_cores()} usable); load {load()}",
            flush=True,
        )
        results = []
        for round_ in range(1, args.repeat + 1):
            for name, groups in arrangements(args.cores).items():
                before = load()
                wall, cpu, lines = run_jobs(project, groups)
                entry = {
                    "round": round_,
                    "arrangement": name,
                    "wall_s": round(wall, 1),
                    "cpu_s": round(cpu, 1),
                    "load_before": before,
                    "load_after": load(),
                    "jobs": lines,
                }
                print(
                    f"round {round_}, {name}: 2 x {rows:,} rows in {wall:.1f} s wall, {cpu:.1f} s CPU "
                    f"(load {before} -> {entry['load_after']}); {lines[0]}",
                    flush=True,
                )
                results.append(entry)
        print(json.dumps(results))


if __name__ == "__main__":
    main()
