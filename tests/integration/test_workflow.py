"""Snakemake and DVC run the real stages; reruns are free; a param change reruns only its stage."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from idiombench.benchmarks import NAMES

from helpers import run, tool_env

pytestmark = [pytest.mark.mirror, pytest.mark.slow]

BUILT = [f"data/processed/{name}" for name in NAMES]


def test_snakemake_builds_every_benchmark_and_reruns_nothing(make_project, mirror: Path):
    project = make_project()
    env = tool_env(mirror)
    run(["snakemake", "--cores", "2", *BUILT], project, env)
    for name in NAMES:
        stats = json.loads((project / "data" / "processed" / name / "build_stats.json").read_text(encoding="utf-8"))
        assert stats["benchmark"] == name and stats["tasks"], name
        assert all((project / "data" / "processed" / name / f"{task}.parquet").is_file() for task in stats["tasks"])
    again = run(["snakemake", "--cores", "2", *BUILT], project, env)
    assert "Nothing to be done" in again.stdout + again.stderr


def ran_stages(output: str) -> list[str]:
    return re.findall(r"Running stage '([^']+)'", output)


def test_dvc_repro_is_incremental_per_benchmark(make_project, mirror: Path):
    """The data stages (`dvc repro build` reproduces every build@<benchmark> and its acquire).
    Later stages (generate needs render's prompts) are exercised by their own tests."""
    project = make_project()
    env = tool_env(mirror)
    first = run(["dvc", "repro", "build"], project, env)
    assert sorted(ran_stages(first.stdout)) == sorted(
        [f"acquire@{n}" for n in NAMES] + [f"build@{n}" for n in NAMES]
    )
    second = run(["dvc", "repro", "build"], project, env)
    assert ran_stages(second.stdout) == []

    params = yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8"))
    params["benchmarks"]["orderprobe"]["build"]["dedupe"] = True
    (project / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")
    status = json.loads(run(["dvc", "status", "build", "--json"], project, env).stdout)
    assert sorted(status) == ["build@orderprobe"]
    third = run(["dvc", "repro", "build"], project, env)
    assert ran_stages(third.stdout) == ["build@orderprobe"]
    stats = json.loads((project / "data/processed/orderprobe/build_stats.json").read_text(encoding="utf-8"))
    assert stats["details"]["dedupe"] is True
    assert stats["merged"]["duplicate_expression"]["count"] == 110
