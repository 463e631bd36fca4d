"""A score job's threads and its worker processes (issue 38): the job declares the threads its
workers use, and its worker count follows what Snakemake grants it, never more than the cores.

- The real workflow (dry runs): an OrderProbe score job declares every core Snakemake has where
  params make its lexical terms run in worker processes (one per thread; OrderProbe at the
  release's size), one thread where they do not (the embedded default) and for the other
  benchmarks; `--max-threads` scales it down and `--set-threads score=K` sets it.
- The grant reaches the job's workers: in a workflow of two jobs that declare their threads as
  the score rule does (pipeline.threads.job_threads) and report core.workers.worker_budget()
  from inside the job, `--cores 2 --set-threads w=1` runs both at once with one worker each,
  and `--cores 8` on a machine with fewer cores runs them one after the other, each with no
  more workers than the cores.
The real score jobs announce the same under Snakemake in tests/integration/test_snakemake_dvc_record.py
(local, `--cores 2`) and tests/integration/test_slurm.py (Slurm, the profile's set-threads); the
unit side is tests/unit/core/test_workers.py; what two jobs at once cost: bench/score_jobs.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from helpers import ran_at_once, run, snakemake_threads, tool_env
from idiombench.benchmarks.registry import NAMES
from idiombench.core.workers import usable_cores

pytestmark = pytest.mark.slow


def test_the_score_rule_declares_every_core_where_the_scoring_runs_workers(make_project):
    project = make_project()
    # OrderProbe at the release's size (every expression: its score stage starts workers), and
    # the embedded default (a first setting of 8 rows: scored in the stage's process)
    params = yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8"))
    params["benchmarks"]["orderprobe"]["render"]["sample"]["expressions_per_language"] = None
    (project / "large.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")
    env = {**tool_env(), "IDIOMBENCH_DVC_SYNC": "0"}  # plans only: DVC's record plays no part
    targets = [f"results/scores/oracle/{name}" for name in NAMES]
    orderprobe = "model=oracle, benchmark=orderprobe"
    others = {f"model=oracle, benchmark={name}": 1 for name in NAMES if name != "orderprobe"}
    for options, granted in {
        "--cores 8 --config params=large.yaml": 8,
        "--cores 8 --max-threads 3 --config params=large.yaml": 3,
        "--cores 2 --set-threads score=1 --config params=large.yaml": 1,
        "--cores 8": 1,  # the embedded default: no workers, one thread
    }.items():
        # the targets before the options that take lists (--set-threads, --config)
        out = run(["snakemake", *targets, "-n", "--forceall", *options.split()], project, env).stdout
        planned = snakemake_threads(out, "score")
        assert planned == {orderprobe: granted, **others}, (options, planned)


SNAKEFILE = """
from idiombench.pipeline.threads import job_threads

rule all:
    input: expand("out/{i}.json", i=range(2))

rule w:
    output: "out/{i}.json"
    threads: lambda wc: job_threads(workflow)
    shell: "PYTHON job.py {threads} > {output}"
"""
# inside the job: the threads Snakemake granted, what it exported, and the workers they give
JOB = """
import json, os, sys, time
from idiombench.core.workers import worker_budget
print(json.dumps({"threads": int(sys.argv[1]), "omp": os.environ.get("OMP_NUM_THREADS"), "workers": worker_budget()}))
time.sleep(1)
"""


def test_the_threads_snakemake_grants_are_the_jobs_workers(tmp_path: Path):
    (tmp_path / "Snakefile").write_text(SNAKEFILE.replace("PYTHON", sys.executable), encoding="utf-8")
    (tmp_path / "job.py").write_text(JOB, encoding="utf-8")
    env = tool_env()
    env.pop("IDIOMBENCH_SCORE_WORKERS", None)  # the threads decide, not a choice made outside
    cores = usable_cores()

    def jobs_report(*options: str) -> tuple[str, list[dict]]:
        for old in (tmp_path / "out").glob("*.json"):
            old.unlink()
        ran = run(["snakemake", *options], tmp_path, env)
        return ran.stdout + ran.stderr, [json.loads(p.read_text()) for p in sorted((tmp_path / "out").glob("*.json"))]

    out, reports = jobs_report("--cores", "2", "--set-threads", "w=1")
    assert ran_at_once(out, "w"), out
    assert [r["threads"] for r in reports] == [1, 1] and [r["omp"] for r in reports] == ["1", "1"], reports
    assert [r["workers"] for r in reports] == [[1, f"OMP_NUM_THREADS=1: the threads granted; {cores} usable cores"]] * 2

    out, reports = jobs_report("--cores", "8")
    assert not ran_at_once(out, "w"), out  # 8 + 8 > 8: one after the other
    assert [r["threads"] for r in reports] == [8, 8] and [r["omp"] for r in reports] == ["8", "8"], reports
    workers = min(8, cores)
    capped = f", capped at the {cores} usable cores" if cores < 8 else f"; {cores} usable cores"
    assert [r["workers"] for r in reports] == [[workers, f"OMP_NUM_THREADS=8: the threads granted{capped}"]] * 2
