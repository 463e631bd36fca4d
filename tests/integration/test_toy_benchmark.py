"""A fifth benchmark added through the registry alone (issue 14): a package outside the
project (tests/fixtures/toy_benchmark, installed with pip into a folder of its own) registers
itself under the entry-point group `idiombench.benchmarks` and runs acquire -> build -> render
-> generate -> score -> aggregate -> report with the CLI, no file of idiombench touched.
tests/integration/test_plugin_workflow.py runs it under Snakemake and DVC."""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from helpers import run, tool_env
from plugin import FIXTURE, install_plugin

ROOT = Path(__file__).resolve().parents[2]
BUILTIN = ("orderprobe", "g-idiomalign", "semanticqa", "chengyu-bench")


@pytest.fixture
def toy_project(tmp_path: Path):
    site, mirror, project = tmp_path / "site", tmp_path / "mirror", tmp_path / "project"
    site.mkdir()
    install_plugin(site)
    (mirror / "toy").mkdir(parents=True)
    shutil.copy2(FIXTURE / "capitals.csv", mirror / "toy" / "capitals.csv")
    project.mkdir()
    shutil.copy2(ROOT / "params.yaml", project / "params.yaml")
    # The grid for this test only: the built-in benchmarks off, the oracle model; the toy's
    # section is absent from params (its config_model's defaults apply).
    overlay = {
        "overlay_of": "params.yaml",
        "replace": ["models"],
        "benchmarks": {name: {"enabled": False} for name in BUILTIN},
        "models": {"oracle": {"backend": "oracle", "display_name": "oracle (gold answers)"}},
    }
    (project / "toy.yaml").write_text(yaml.safe_dump(overlay), encoding="utf-8")
    env = tool_env(mirror)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH", "")]))
    env["MLFLOW_TRACKING_URI"] = f"sqlite:///{tmp_path / 'mlflow.db'}"
    return project, env


def cli(project: Path, env: dict[str, str], *args: str) -> str:
    result = run(["idiombench", *args, "--params", "toy.yaml"], project, env)
    return result.stdout + result.stderr


def test_a_registered_fifth_benchmark_runs_acquire_to_report(toy_project):
    project, env = toy_project
    assert "toy" in run(["idiombench", "build", "--help"], project, env).stdout  # listed with the built-in ones
    cli(project, env, "check-params")
    assert "1 files verified" in cli(project, env, "acquire", "toy")
    cli(project, env, "build", "toy")
    assert json.loads((project / "data/processed/toy/build_stats.json").read_text())["tasks"] == {"capitals": 4}
    assert "4 prompts" in cli(project, env, "render", "toy")
    cli(project, env, "generate", "--model", "oracle")
    cli(project, env, "score", "toy", "--model", "oracle")
    cli(project, env, "aggregate", "toy", "--model", "oracle")
    metrics = json.loads((project / "results/metrics/toy/oracle.json").read_text(encoding="utf-8"))
    assert metrics["status"] == "scored" and metrics["settings"]["zero_shot"]["metrics"] == {"accuracy": 100.0}
    cli(project, env, "track", "toy", "--model", "oracle")
    cli(project, env, "report")
    with open(project / "reports/tables/toy_accuracy.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[1][:2] == ["oracle (gold answers)", "100.00"], rows
    assert (project / "reports/all_tables.pdf").stat().st_size > 0
    # its item_outcomes hook puts it on the summary page (4 items: too few for an interval)
    with open(project / "reports/tables/summary.csv", encoding="utf-8", newline="") as handle:
        summary = [row for row in csv.reader(handle) if row and row[0] == "toy"]
    assert summary and summary[0][1:3] == ["zero_shot", "accuracy"], summary
    # the DAG takes the benchmark from the registry too, named by its module and distribution
    text = run(["idiombench", "dvc-yaml", "--out", "dvc.yaml"], project, env) and (project / "dvc.yaml").read_text()
    assert "      toy: {module: toybench, distribution: toybench}" in text
    assert str(project.parent) not in text


def test_the_registry_refuses_a_name_registered_twice(tmp_path: Path):
    site = tmp_path / "site"
    site.mkdir()
    install_plugin(site)
    entry = site / "toybench-0.1.dist-info" / "entry_points.txt"
    entry.write_text("[idiombench.benchmarks]\norderprobe = toybench\n", encoding="utf-8")
    env = tool_env()
    env["PYTHONPATH"] = str(site)
    result = __import__("subprocess").run(
        ["python", "-c", "import idiombench.benchmarks.registry"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert result.returncode != 0 and "benchmark 'orderprobe' is registered twice" in result.stderr
