"""Editing one benchmark's code puts only that benchmark's stages out of date, in both graphs
(issue 37): a change of its scoring code puts its own score and aggregate jobs out of date (and
each model's serving-noise job, which scores every benchmark), never a build, render or generate
job, nor another benchmark's score. (That comments and docstrings change no code record, and
which code each record covers: tests/unit/pipeline/test_records.py.)

No stage runs: every stage's output is a stand-in written in the DAG's order (newer than its
inputs, as after a run) and recorded in dvc.lock by `dvc commit`, so that what each tool then
plans is what the edit invalidated. The tools import the project's own copy of the code
(PYTHONPATH), which the test edits.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest
import yaml

from helpers import run, tool_env
from idiombench.core.yamlfile import load_yaml_file
from idiombench.pipeline import dvc_sync
from idiombench.pipeline.records import refresh

pytestmark = pytest.mark.slow

EDITED = "chengyu-bench"
PACKAGE = "src/idiombench/benchmarks/chengyu_bench"


def stand_in_outputs(project: Path) -> list[list[str]]:
    """Write every stage's outputs (the code records are real: `idiombench dvc-yaml` wrote them)
    and record every stage in dvc.lock; returns the stages' outputs, upstream first."""
    stages = dvc_sync.defined_stages(project)
    deps = {name: stage.deps for name, stage in stages.items()}
    outs = {name: stage.outs for name, stage in stages.items()}
    ordered = [outs[name] for name in dvc_sync.dag_order(stages, deps, outs)]
    for out in (out for group in ordered for out in group if not out.startswith("results/code/")):
        path = project / out
        if path.suffix in (".json", ".pdf"):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"stand_in": out}) + "\n", encoding="utf-8")
        else:
            path.mkdir(parents=True, exist_ok=True)
            (path / "stand_in.txt").write_text(out + "\n", encoding="utf-8")
    dvc_sync.commit_stages(project, sorted(stages))
    return ordered


def in_dag_order(project: Path, ordered: list[list[str]]) -> None:
    """Date the code records before everything, then each stage's outputs after its inputs'
    (`dvc commit` and `dvc repro` re-link outputs from DVC's cache: new times, same content;
    under Snakemake the DVC sync or Snakemake's input checksums see through that, stand-ins
    have neither)."""
    base = time.time() - 600
    for path in (project / "results" / "code").rglob("*.json"):
        os.utime(path, (base - 60, base - 60))
    for index, outs in enumerate(ordered, start=1):
        for out in outs:
            if not out.startswith("results/code/"):
                os.utime(project / out, (base + index, base + index))


def snakemake_plan(project: Path, env: dict[str, str]) -> list[str]:
    """The jobs `snakemake -n` plans, as `rule wildcards` (its parse brings the records in step)."""
    output = run(["snakemake", "-n", "--cores", "1"], project, env).stdout
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", output):
        header = re.match(r"(?:local)?rule (\w+):", block)
        if header and header.group(1) != "all":
            found = re.search(r"^    wildcards: (.*)$", block, flags=re.M)
            wildcards = ", ".join(sorted(found.group(1).split(", "))) if found else ""
            jobs.append(f"{header.group(1)} {wildcards}".strip())
    return sorted(jobs)


def dvc_changed(project: Path, env: dict[str, str]) -> list[str]:
    """The stages `dvc status` reports, after `dvc repro code@<b>` brought its records in step."""
    run(["dvc", "repro", "--single-item", f"code@{EDITED}"], project, env)
    return sorted(json.loads(run(["dvc", "status", "--json"], project, env).stdout or "{}"))


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_editing_one_benchmarks_code_puts_only_its_own_stages_out_of_date(
    make_project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project()
    monkeypatch.chdir(project)  # DVC, in process, works in the project
    # the project's own code, and Snakemake's plan without DVC's verdicts (each tool on its own)
    env = {**tool_env(), "PYTHONPATH": str(project / "src"), "IDIOMBENCH_DVC_SYNC": "0"}
    params = load_yaml_file(project / "params.yaml")
    params["models"] = {model: params["models"][model] for model in ("oracle", "smollm2")}  # fewer jobs
    (project / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")
    models = sorted(params["models"])
    refresh(project)  # the code records, as `idiombench dvc-yaml` writes them (the copy's code is this one)
    ordered = stand_in_outputs(project)
    in_dag_order(project, ordered)

    # Its scoring code: its own score and aggregate jobs, and each model's serving-noise job.
    edit(project / PACKAGE / "score.py", "\n\n\ndef ", "\n\n\ndef _unused() -> int:\n    return 1\n\n\ndef ")
    plan = snakemake_plan(project, env)
    expected = sorted(
        [f"{stage}@{model}-{EDITED}" for stage in ("score", "aggregate") for model in models]
        + [f"noise@{model}" for model in models]
    )
    assert dvc_changed(project, env) == expected
    mine = {f"{rule} benchmark={EDITED}, model={model}" for rule in ("score", "aggregate") for model in models}
    assert mine <= set(plan), plan
    # Snakemake dates files: what reads a rewritten output reruns too (a track job reads its score
    # and metrics, and its model's serving-noise figures, which cover every benchmark), but no
    # data or generation job and no other benchmark's score or aggregate job.
    others = [
        job
        for job in plan
        if job not in mine and not job.startswith(("noise ", "track ", "track_comparison ", "plots", "report"))
    ]
    assert others == [], plan
