"""The Snakemake workflow and dvc.yaml describe the same stages: the same jobs (matched by
their outputs), the same inputs/dependencies, and the same commands."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from helpers import run, tool_env
from idiombench.pipeline.dag import code_folders

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Job:
    name: str
    command: str
    inputs: frozenset[str]
    outputs: frozenset[str]


def normalise(command: str) -> str:
    return " ".join(command.split())


def snakemake_jobs(project: Path) -> dict[frozenset[str], Job]:
    """Jobs of a forced dry run, parsed from `snakemake -n -p` (the target-less `all` rule excluded)."""
    result = run(["snakemake", "-n", "-p", "--forceall", "--cores", "1", "all"], project, tool_env())
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


def test_snakemake_and_dvc_have_the_same_stages_edges_and_commands(make_project):
    project = make_project()
    snake = snakemake_jobs(project)
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
        results/metrics); Snakemake lists those outputs one by one. A source folder (a
        benchmark package, scoring/) is DVC's directory and Snakemake's files (dag.snakemake_inputs)."""
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
        assert job.inputs == expand(stage.inputs), f"{job.name} vs {stage.name}"
    # Snakemake sees an in-place edit of a benchmark's code: its jobs list the files, not the folder.
    build = next(job for job in snake.values() if job.name == "build benchmark=orderprobe")
    assert "src/idiombench/benchmarks/orderprobe/build.py" in build.inputs
    assert "src/idiombench/benchmarks/orderprobe" not in build.inputs
    # Edges: an input produced by another job is the same dependency in both graphs.
    produced = {path: outputs for outputs in snake for path in outputs}
    snake_edges = {(produced[i], o) for o, j in snake.items() for i in j.inputs if i in produced}
    dvc_edges = {(produced[i], o) for o, s in dvc.items() for i in expand(s.inputs) if i in produced}
    assert snake_edges == dvc_edges and snake_edges


def test_a_configured_label_file_is_an_input_of_snakemakes_attention_jobs(make_project):
    """Besides dvc.yaml's data/annotations directory (which the test above matches), Snakemake
    gets the label file itself: it dates a directory by its own mtime, so an edited file
    inside it would go unnoticed."""
    import yaml

    project = make_project()
    labels = "data/annotations/g-idiomalign-attention.csv"
    (project / labels).write_text("prompt_id,label\n", encoding="utf-8")
    params = yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8"))
    params["benchmarks"]["g-idiomalign"]["attention"]["annotations"] = labels
    (project / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")
    jobs = snakemake_jobs(project)
    attention = [job for job in jobs.values() if job.name.startswith("attention ")]
    assert attention and all({labels, "data/annotations"} <= job.inputs for job in attention), attention


def test_every_dvc_params_key_exists_in_params_yaml(make_project):
    """DVC fails on a params key that is missing from params.yaml: params.yaml spells out every section."""
    import yaml
    from dvc.repo import Repo

    project = make_project()
    params = yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8"))
    with Repo(str(project)) as repo:
        keys = {
            key
            for stage in repo.index.stages
            for dep in stage.deps
            if type(dep).__name__ == "ParamsDependency"
            for key in dep.params
        }
    assert keys
    for key in keys:
        node = params
        for part in key.split("."):
            assert isinstance(node, dict) and part in node, f"params.yaml lacks {key}"
            node = node[part]


def test_dvc_yaml_is_what_the_registry_generates():
    """dvc.yaml is generated (`idiombench dvc-yaml`): the committed file is its output, so a
    benchmark added to the registry reaches DVC only through the generator."""
    from idiombench.pipeline.dag import dvc_yaml

    committed = (ROOT / "dvc.yaml").read_text(encoding="utf-8")
    assert committed == dvc_yaml(), "dvc.yaml differs from `idiombench dvc-yaml`'s output: rerun it"
    check = run(["idiombench", "dvc-yaml", "--check"], ROOT, tool_env())
    assert "up to date" in check.stdout + check.stderr


def test_dvc_yaml_check_fails_on_a_hand_edited_file(tmp_path: Path):
    import subprocess

    edited = tmp_path / "dvc.yaml"
    edited.write_text(
        (ROOT / "dvc.yaml").read_text(encoding="utf-8").replace("- data\n", "- data\n        - seed\n", 1),
        encoding="utf-8",
    )
    result = subprocess.run(
        ["idiombench", "dvc-yaml", "--check", "--out", str(edited)],
        cwd=tmp_path,
        env=tool_env(),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "is not what the registry generates" in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result.stderr


def test_construct_depends_on_its_own_package_only():
    from idiombench.pipeline.dag import benchmark_nodes, construct_deps

    for node in benchmark_nodes():
        if node.constructs:
            deps = construct_deps(node)
            assert node.package in deps and "src/idiombench/benchmarks" not in deps
