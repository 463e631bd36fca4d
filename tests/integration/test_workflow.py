"""Snakemake and DVC run the real stages; reruns are free; a param change reruns only its stage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from helpers import ran_stages, run, tool_env
from idiombench.benchmarks.registry import NAMES

pytestmark = [pytest.mark.mirror, pytest.mark.slow]

BUILT = [f"data/processed/{name}" for name in NAMES]
RENDERED = [f"results/prompts/{name}" for name in NAMES]


def test_snakemake_builds_and_renders_every_benchmark_and_reruns_nothing(make_project, mirrors: list[Path]):
    project = make_project()
    env = tool_env(mirrors)
    run(["snakemake", "--cores", "2", *BUILT, *RENDERED], project, env)
    for name in NAMES:
        stats = json.loads((project / "data" / "processed" / name / "build_stats.json").read_text(encoding="utf-8"))
        assert stats["benchmark"] == name and stats["tasks"], name
        assert all((project / "data" / "processed" / name / f"{task}.parquet").is_file() for task in stats["tasks"])
        rendered = json.loads(
            (project / "results" / "prompts" / name / "render_stats.json").read_text(encoding="utf-8")
        )
        assert rendered["benchmark"] == name and rendered["prompts_total"] > 0, name
        for setting, info in rendered["settings"].items():
            assert (project / "results" / "prompts" / name / f"{setting}.parquet").is_file() == bool(info["file"])
    again = run(["snakemake", "--cores", "2", *BUILT, *RENDERED], project, env)
    assert "Nothing to be done" in again.stdout + again.stderr


def test_dvc_repro_is_incremental_per_benchmark(rendered_project: tuple[Path, str], mirrors: list[Path]):
    """The data and prompt stages (`dvc repro render`: every render@<benchmark> and what it
    needs). generate runs a model: tests/integration/test_generate_workflow.py runs it."""
    project, first = rendered_project  # a fresh project's first `dvc repro render`, shared
    env = tool_env(mirrors)
    assert sorted(ran_stages(first)) == sorted(
        [f"{stage}@{n}" for stage in ("code", "acquire", "build", "render") for n in NAMES]
    )
    second = run(["dvc", "repro", "render"], project, env)
    assert ran_stages(second.stdout) == []

    params = yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8"))
    params["benchmarks"]["orderprobe"]["build"]["dedupe"] = True
    (project / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")
    status = json.loads(run(["dvc", "status", "render", "--with-deps", "--json"], project, env).stdout)
    assert sorted(status) == ["build@orderprobe"]
    third = run(["dvc", "repro", "render"], project, env)
    assert ran_stages(third.stdout) == ["build@orderprobe", "render@orderprobe"]
    stats = json.loads((project / "data/processed/orderprobe/build_stats.json").read_text(encoding="utf-8"))
    assert stats["details"]["dedupe"] is True
    assert stats["merged"]["duplicate_expression"]["count"] == 110

    # a render option reruns only that benchmark's render
    params["benchmarks"]["semanticqa"]["render"]["sample"]["items_per_task"] = 3
    (project / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")
    status = json.loads(run(["dvc", "status", "render", "--with-deps", "--json"], project, env).stdout)
    assert sorted(status) == ["render@semanticqa"]
    fourth = run(["dvc", "repro", "render"], project, env)
    assert ran_stages(fourth.stdout) == ["render@semanticqa"]
    rendered = json.loads((project / "results/prompts/semanticqa/render_stats.json").read_text(encoding="utf-8"))
    assert rendered["settings"]["0-shot"]["prompts"] == 3 * 12
