"""generate inside the pipelines: Snakemake and DVC run render -> generate for reference
models on the real data; reruns do nothing; a generation option reruns only generate,
and the content cache makes that rerun free when the requests did not change."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from helpers import ran_stages, run, tool_env
from idiombench.benchmarks.registry import NAMES

pytestmark = [pytest.mark.mirror, pytest.mark.slow]
MODELS = {
    "oracle": {"backend": "oracle", "gpus": 1},
    "majority": {"backend": "majority", "gpus": 1},
}


def set_models(project: Path) -> dict:
    params = yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8"))
    params["models"] = MODELS
    write(project, params)
    return params


def write(project: Path, params: dict) -> None:
    (project / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")


def summary(project: Path, model: str) -> dict:
    return json.loads((project / "results" / "logs" / f"generate-{model}.json").read_text(encoding="utf-8"))


def test_snakemake_runs_one_generate_job_per_model_on_claimed_gpus(
    rendered_project: tuple[Path, str], mirrors: list[Path], tmp_path: Path
):
    project, _ = rendered_project  # DVC ran the data and prompt stages: Snakemake takes its word
    set_models(project)
    env = {
        **tool_env(mirrors),
        "IDIOMBENCH_GPUS": "0,1",
        "IDIOMBENCH_GPU_LOCK_DIR": str(tmp_path / "locks"),
        "IDIOMBENCH_GPU_WAIT_S": "60",
    }
    targets = [f"results/generations/{m}" for m in MODELS]
    ran = run(["snakemake", *targets, "--cores", "2", "--resources", "gpu=2"], project, env)
    out = ran.stdout + ran.stderr
    assert sorted(re.findall(r"^\s*(?:local)?rule (\w+):", out, flags=re.MULTILINE)) == ["generate", "generate"], out
    for model in MODELS:
        out = project / "results" / "generations" / model
        tables = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.parquet"))
        assert "orderprobe/cot.parquet" in tables or model == "majority"
        assert json.loads((out / "identity.json").read_text(encoding="utf-8"))["backend"] == model
        assert summary(project, model)["gpus"] in (["0"], ["1"])
    assert {p.parent.name for p in (project / "results" / "generations" / "oracle").rglob("*.parquet")} == set(NAMES)
    again = run(["snakemake", *targets, "--cores", "2", "--resources", "gpu=2"], project, env)
    assert "Nothing to be done" in again.stdout + again.stderr


def test_dvc_generate_reruns_only_on_its_params_and_hits_the_cache(
    rendered_project: tuple[Path, str], mirrors: list[Path], tmp_path: Path
):
    project, _ = rendered_project  # after `dvc repro render`
    params = set_models(project)
    env = {**tool_env(mirrors), "IDIOMBENCH_GPUS": "0,1", "IDIOMBENCH_GPU_LOCK_DIR": str(tmp_path / "locks")}
    first = run(["dvc", "repro", "generate"], project, env)
    assert sorted(ran_stages(first.stdout)) == ["generate@majority", "generate@oracle"]
    oracle = summary(project, "oracle")["total"]
    assert oracle["generated"] > 0 and oracle["failed"] == 0
    assert run(["dvc", "repro", "generate"], project, env).stdout.count("Running stage") == 0

    # one consistency sample instead of two: generate reruns (its params changed), every request is cached
    params["benchmarks"]["orderprobe"]["generate"]["extra"]["consistency"]["n"] = 1
    write(project, params)
    # every stage DVC reports changed: the generate stages, plus the downstream stages that
    # have never run in this project (they wait on generate's outputs, not on this param)
    status = json.loads(run(["dvc", "status", "--json"], project, env).stdout)
    assert sorted(
        s
        for s in status
        if not s.startswith(
            (
                "score@",
                "aggregate@",
                "track@",
                "track-comparison@",
                "noise@",
                "attention@",
                "construct@",
                "plots",
                "report",
            )
        )
    ) == ["generate@majority", "generate@oracle"]
    assert not any(s.startswith(("acquire@", "build@", "render@")) for s in status)
    second = run(["dvc", "repro", "generate"], project, env)
    assert sorted(ran_stages(second.stdout)) == ["generate@majority", "generate@oracle"]
    rerun = summary(project, "oracle")["total"]
    assert rerun["generated"] == 0 and rerun["cache_hit_rate"] == 1.0

    # a render option reruns render and then generate, never the builds
    params["benchmarks"]["semanticqa"]["render"]["sample"]["items_per_task"] = 3
    write(project, params)
    third = run(["dvc", "repro", "generate"], project, env)
    assert sorted(ran_stages(third.stdout)) == ["generate@majority", "generate@oracle", "render@semanticqa"]
