"""No value the params schema admits, and no params file path, can change a rule's shell command:
every job's command, as Snakemake prints it and as dvc.yaml gives it, splits (shlex, as the shell
does) into exactly the arguments the stage is called with. The model keys here are valid but as
odd as the schema allows; the params file's path is as hostile as a path can be (Snakemake quotes
it, `{PARAMS_FILE:q}`; DVC always reads params.yaml)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

from helpers import run, tool_env

ROOT = Path(__file__).resolve().parents[2]
# admitted by schema.KEY_PATTERN, each an odd case (64 characters: the longest; not one character 64
# times, which Snakemake takes for a periodic wildcard, an error of its own)
KEYS = ["_", "0", "a-", "A_b-9", "a--b", "abcdefghij" * 6 + "klmn"]
HOSTILE_PARAMS = "my params; $(touch pwned) `touch pwned` 'x\".yaml"
# rule -> how its arguments follow `idiombench <command>`
BENCHMARK_ONLY = {"code", "plugin", "acquire", "build", "render", "construct", "track_comparison"}
WITH_MODEL = {"score", "aggregate", "track", "attention"}
COMMANDS = {
    "plots": "plot-data",
    "code": "code-record",
    "plugin": "code-record",
    "track_comparison": "track-comparison",
}
# the code records read the params DVC reads (a plugin's section with its defaults: pipeline/records.py)
DVC_PARAMS_ONLY = {"code", "plugin"}


def expected_argv(rule: str, wildcards: dict[str, str], params: str) -> list[str]:
    argv = ["idiombench", COMMANDS.get(rule, rule)]
    if rule in BENCHMARK_ONLY | WITH_MODEL:
        argv.append(wildcards["benchmark"])
    if rule in WITH_MODEL | {"generate", "noise"}:
        argv += ["--model", wildcards["model"]]
    return argv + ["--params", "params.yaml" if rule in DVC_PARAMS_ONLY else params]


def write_params(path: Path) -> None:
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    params["models"] = {key: {"backend": "oracle"} for key in KEYS}
    path.write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")


def test_every_snakemake_command_is_the_arguments_it_means(make_project) -> None:
    project = make_project()
    write_params(project / HOSTILE_PARAMS)
    result = run(
        ["snakemake", "-n", "-p", "--forceall", "--cores", "1", "all", "--config", f"params={HOSTILE_PARAMS}"],
        project,
        {**tool_env(), "IDIOMBENCH_DVC_SYNC": "0"},
    )
    seen: dict[str, int] = {}
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", result.stdout):
        header = re.match(r"(?:local)?rule (\w+):", block)
        if not header or header.group(1) == "all":
            continue
        rule = header.group(1)
        wildcards = (
            dict(
                pair.split("=", 1)
                for pair in re.search(r"^    wildcards: (.*)$", block, flags=re.M).group(1).split(", ")
            )
            if "    wildcards: " in block
            else {}
        )
        command = re.search(r"^Shell command: (.*)$", block, flags=re.M)
        assert command, f"no shell command for {rule}\n{block}"
        assert shlex.split(command.group(1)) == expected_argv(rule, wildcards, HOSTILE_PARAMS), command.group(1)
        seen[rule] = seen.get(rule, 0) + 1
    assert set(seen) == BENCHMARK_ONLY - {"plugin"} | WITH_MODEL | {"generate", "noise", "report", "plots"}, seen
    assert seen["generate"] == len(KEYS) and seen["score"] == len(KEYS) * 4, seen
    assert not (project / "pwned").exists()


def test_every_dvc_command_is_the_arguments_it_means(make_project) -> None:
    """dvc.yaml's commands, interpolated by DVC itself from params.yaml: a command naming a model
    runs the params check first (dag.PARAMS_GUARD), so a key the schema refuses never reaches the
    shell (tests/integration/test_bad_input_corpus.py runs those)."""
    from dvc.repo import Repo

    from idiombench.pipeline.dag import PARAMS_GUARD

    project = make_project()
    write_params(project / "params.yaml")
    with Repo(str(project)) as repo:
        stages = list(repo.index.stages)
    assert len([s for s in stages if s.name.startswith("generate@")]) == len(KEYS), [s.name for s in stages]
    for stage in stages:
        name = stage.name.split("@")[0].replace("-", "_")  # a Snakemake rule's name is an identifier
        command = stage.cmd if isinstance(stage.cmd, str) else stage.cmd[-1]
        if not isinstance(stage.cmd, str):
            assert stage.cmd[:-1] == [PARAMS_GUARD], stage.cmd
        argv = shlex.split(command)
        rule = {"plot-data": "plots", "code-record": "code", "track-comparison": "track_comparison"}.get(
            argv[1], argv[1]
        )
        assert rule == name, (stage.name, command)
        wildcards = {"benchmark": argv[2]} if rule in BENCHMARK_ONLY | WITH_MODEL else {}
        if "--model" in argv:
            wildcards["model"] = argv[argv.index("--model") + 1]
            assert wildcards["model"] in KEYS and (isinstance(stage.cmd, list)), stage.cmd
        assert argv == expected_argv(rule, wildcards, "params.yaml"), command
