"""One record across Snakemake and DVC (issue 10, item 1), both directions on a small grid:
DVC runs the data and prompt stages and Snakemake plans none of them again; Snakemake
runs generate -> score -> aggregate and its `onsuccess` commits exactly the stages of its
DAG to dvc.lock; a params edit makes `dvc repro` rerun exactly the stages it invalidates,
after which Snakemake plans nothing; an edit after that is still seen by Snakemake."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from idiombench.benchmarks import NAMES

from helpers import run, tool_env

pytestmark = [pytest.mark.mirror, pytest.mark.slow]

MODEL = "oracle"
BENCH = "chengyu-bench"
TARGET = f"results/metrics/{BENCH}/{MODEL}.json"
DATA_STAGES = sorted(f"{stage}@{name}" for stage in ("acquire", "build", "render") for name in NAMES)
DATA_TARGETS = [f"{d}/{n}" for d in ("data/processed", "results/prompts") for n in NAMES]
MODEL_STAGES = sorted([f"generate@{MODEL}", f"score@{MODEL}-{BENCH}", f"aggregate@{MODEL}-{BENCH}"])


def write_params(project: Path, params: dict) -> None:
    (project / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")


def dvc_ran(output: str) -> list[str]:
    return sorted(re.findall(r"Running stage '([^']+)'", output))


def snakemake_jobs(output: str) -> list[str]:
    """Rule names of the jobs Snakemake ran or (with -n) plans, one per job."""
    return sorted(re.findall(r"^\s*(?:local)?rule (\w+):", output, flags=re.MULTILINE))


def sync_line(output: str, prefix: str) -> list[str]:
    """The stage list of the dvc-sync line starting with `prefix` ([] when absent)."""
    for line in output.splitlines():
        if line.startswith(prefix):
            return sorted(s.strip() for s in line.split(": ", 2)[-1].split(","))
    return []


def dvc_status(project: Path, env: dict[str, str], *targets: str) -> list[str]:
    args = ["dvc", "status", "--json", *targets] + (["--with-deps"] if targets else [])
    return sorted(json.loads(run(args, project, env).stdout or "{}"))


def test_snakemake_and_dvc_share_one_record(make_project, mirror: Path):
    project = make_project()
    env = tool_env(mirror)
    params = yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8"))
    params["models"] = {MODEL: params["models"][MODEL]}
    write_params(project, params)
    run(["git", "commit", "-qam", "oracle only"], project, env)

    # DVC first: the data and prompt stages. Snakemake then plans none of them: it has no
    # records of them, dvc.lock vouches for them, and DVC ran them in dependency order.
    assert dvc_ran(run(["dvc", "repro", "render"], project, env).stdout) == DATA_STAGES
    planned = run(["snakemake", "-n", "--cores", "2", *DATA_TARGETS], project, env)
    out = planned.stdout + planned.stderr
    assert snakemake_jobs(out) == [] and "Nothing to be done" in out, out
    assert sync_line(out, "dvc-sync: Snakemake records take DVC's word") == DATA_STAGES

    # Snakemake runs the model's stages only; onsuccess commits every stage of its DAG.
    ran = run(["snakemake", "--cores", "2", TARGET], project, env)
    out = ran.stdout + ran.stderr
    assert snakemake_jobs(out) == ["aggregate", "generate", "score"], out
    assert sync_line(out, "dvc-sync: dvc commit recorded") == sorted(DATA_STAGES + MODEL_STAGES)
    assert dvc_status(project, env, f"aggregate@{MODEL}-{BENCH}") == []
    never_run = sorted(
        [f"{s}@{MODEL}-{b}" for s in ("score", "aggregate", "track") for b in NAMES if b != BENCH]
        + [f"track@{MODEL}-{BENCH}", "construct@g-idiomalign", "report"])
    assert dvc_status(project, env) == never_run

    # A scoring option of one benchmark: DVC reruns exactly its score and aggregate.
    params["benchmarks"][BENCH]["score"]["accept_unformatted"] = False
    write_params(project, params)
    assert dvc_status(project, env, f"aggregate@{MODEL}-{BENCH}") == [f"aggregate@{MODEL}-{BENCH}",
                                                                        f"score@{MODEL}-{BENCH}"]
    repro = run(["dvc", "repro", f"aggregate@{MODEL}-{BENCH}"], project, env)
    assert dvc_ran(repro.stdout) == [f"aggregate@{MODEL}-{BENCH}", f"score@{MODEL}-{BENCH}"]
    assert json.loads((project / TARGET).read_text(encoding="utf-8"))["status"] != "skipped"

    # ... after which Snakemake plans nothing (its records of those outputs were of the
    # old params; DVC's verdict replaced them) ...
    planned = run(["snakemake", "-n", "--cores", "2", TARGET], project, env)
    out = planned.stdout + planned.stderr
    assert snakemake_jobs(out) == [] and "Nothing to be done" in out, out
    assert sync_line(out, "dvc-sync: Snakemake records take DVC's word") == [
        f"aggregate@{MODEL}-{BENCH}", f"score@{MODEL}-{BENCH}"]

    # ... and a later edit is still seen by Snakemake on the outputs DVC made.
    params["benchmarks"][BENCH]["score"]["accept_unformatted"] = True
    write_params(project, params)
    planned = run(["snakemake", "-n", "--cores", "2", TARGET], project, env)
    out = planned.stdout + planned.stderr
    assert snakemake_jobs(out) == ["aggregate", "score"], out
    assert sync_line(out, "dvc-sync: DVC reports changed") == [f"aggregate@{MODEL}-{BENCH}",
                                                                f"score@{MODEL}-{BENCH}"]
