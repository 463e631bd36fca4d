"""The two graphs of a project, as jobs: Snakemake's (a forced dry run) and DVC's (its stages),
and the check that they are the same (tests/integration/test_dag_sync.py, and with a plugin
installed, tests/integration/test_plugin_workflow.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from helpers import run, tool_env
from idiombench.pipeline.dag import RECORDS_CODE, code_folders


@dataclass(frozen=True)
class Job:
    name: str
    command: str
    inputs: frozenset[str]
    outputs: frozenset[str]


def normalise(command: str) -> str:
    return " ".join(command.split())


def snakemake_jobs(project: Path, env: dict[str, str] | None = None) -> dict[frozenset[str], Job]:
    """Jobs of a forced dry run, parsed from `snakemake -n -p` (the target-less `all` rule excluded)."""
    result = run(["snakemake", "-n", "-p", "--forceall", "--cores", "1", "all"], project, env or tool_env())
    jobs: dict[frozenset[str], Job] = {}
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", result.stdout):
        header = re.match(r"(?:local)?rule (\w+):", block)
        if not header or header.group(1) == "all":
            continue
        fields = dict(re.findall(r"^    (input|output|wildcards): (.*)$", block, flags=re.M))
        command = re.search(r"^Shell command: (.*)$", block, flags=re.M)
        assert command, f"no shell command for {header.group(1)}: rules must call the CLI\n{block}"
        outputs = frozenset(p.strip() for p in fields["output"].split(","))
        jobs[outputs] = Job(
            name=f"{header.group(1)} {fields.get('wildcards', '')}".strip(),
            command=normalise(command.group(1)),
            inputs=frozenset(p.strip() for p in fields.get("input", "").split(",") if p.strip()),
            outputs=outputs,
        )
    return jobs


def dvc_stages(project: Path) -> dict[frozenset[str], Job]:
    from dvc.repo import Repo

    stages: dict[frozenset[str], Job] = {}
    with Repo(str(project)) as repo:
        for stage in repo.index.stages:
            if stage.cmd is None:  # data a `dvc add` versions (data/<declared benchmark>): no job
                continue
            outputs = frozenset(str(o.def_path) for o in stage.outs)
            inputs = frozenset(str(d.def_path) for d in stage.deps if type(d).__name__ != "ParamsDependency")
            stages[outputs] = Job(stage.addressing, normalise(stage_command(stage.cmd)), inputs, outputs)
    return stages


def stage_command(cmd: str | list[str]) -> str:
    """The stage's idiombench command: a command naming a model comes after the params check
    (dag.PARAMS_GUARD), which Snakemake does when it parses the params."""
    from idiombench.pipeline.dag import PARAMS_GUARD

    if isinstance(cmd, str):
        assert "--model" not in cmd, f"a command naming a model without the params check first: {cmd}"
        return cmd
    guard, command = cmd
    assert guard == PARAMS_GUARD and "--model" in command, cmd
    return command


def assert_same_graphs(project: Path, env: dict[str, str] | None = None) -> dict[frozenset[str], Job]:
    """The Snakemake jobs and the DVC stages of `project` are the same: outputs, commands, inputs
    and edges (tests/integration/test_plugin_workflow.py calls this with a plugin installed)."""
    snake = snakemake_jobs(project, env)
    dvc = dvc_stages(project)
    assert snake, "no Snakemake jobs parsed"
    assert set(snake) == set(dvc), (
        f"only in Snakemake: {[snake[k].name for k in set(snake) - set(dvc)]}; "
        f"only in DVC: {[dvc[k].name for k in set(dvc) - set(snake)]}"
    )
    produced_paths = {path for outputs in snake for path in outputs}
    code = code_folders()

    def expand(inputs: frozenset[str]) -> frozenset[str]:
        """DVC may depend on a directory that holds other stages' outputs (e.g. report on
        results/metrics); Snakemake lists those outputs one by one. A source folder (scoring/, a
        templates folder) is DVC's directory and Snakemake's files (dag.snakemake_inputs)."""
        out = set()
        for path in inputs:
            if path in code:
                out |= {
                    p.relative_to(project).as_posix()
                    for p in (project / path).rglob("*")
                    if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
                }
                continue
            inside = {p for p in produced_paths if p.startswith(path.rstrip("/") + "/")}
            out |= inside if inside and path not in produced_paths else {path}
        return frozenset(out)

    for outputs, job in snake.items():
        stage = dvc[outputs]
        assert job.command == stage.command, f"{job.name} vs {stage.name}"
        if all(out.startswith(("results/code/", "results/params/")) for out in outputs):
            # The code records: DVC hashes a built-in package (code@<b>; a plugin's plugin@<b> runs
            # every time); the Snakefile refreshes them when it is parsed, and their rules have no
            # inputs, so Snakemake never dates them older than the code.
            assert job.inputs == frozenset(), job
            assert stage.inputs <= code | {RECORDS_CODE}, stage
            continue
        assert job.inputs == expand(stage.inputs), f"{job.name} vs {stage.name}"
    # Edges: an input produced by another job is the same dependency in both graphs.
    produced = {path: outputs for outputs in snake for path in outputs}
    snake_edges = {(produced[i], o) for o, j in snake.items() for i in j.inputs if i in produced}
    dvc_edges = {(produced[i], o) for o, s in dvc.items() for i in expand(s.inputs) if i in produced}
    assert snake_edges == dvc_edges and snake_edges
    return snake
