"""A fifth benchmark added through the registry alone (issue 14): a package outside the
project (tests/fixtures/toy_benchmark, installed with pip into a folder of its own) registers
itself under the entry-point group `idiombench.benchmarks` and runs acquire -> build -> render
-> generate -> score -> aggregate -> track -> report with the CLI, no file of idiombench
touched. The metric it gains on the way is docs/ARCHITECTURE.md's "Add a metric" block itself,
pasted into its specs: the recipe cannot drift from the code.
tests/integration/test_plugin_workflow.py runs it under Snakemake and DVC."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import textwrap
from pathlib import Path

import pytest
import yaml

from helpers import run, tool_env
from plugin import FIXTURE, install_plugin

ROOT = Path(__file__).resolve().parents[2]
BUILTIN = ("orderprobe", "g-idiomalign", "semanticqa", "chengyu-bench")


def recipe() -> str:
    """The spec block of docs/ARCHITECTURE.md, "Add a metric"."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    found = re.search(r"```python\n# recipe: add a metric\n(.*?)```", text, re.DOTALL)
    assert found, "docs/ARCHITECTURE.md lost its 'Add a metric' example"
    return found.group(1).strip()


def add_metric(site: Path) -> None:
    """The recipe, followed: the spec appended to the benchmark's `metrics` (its statistic reads a
    column the toy's score table already has, so no per-item column is added)."""
    init = site / "toybench" / "__init__.py"
    source = init.read_text(encoding="utf-8")
    start = "    metrics = ("
    assert source.count(start) == 1
    init.write_text(source.replace(start, start + "\n" + textwrap.indent(recipe(), " " * 8) + ",\n", 1))


@pytest.fixture
def toy_project(tmp_path: Path):
    site, mirror, project = tmp_path / "site", tmp_path / "mirror", tmp_path / "project"
    site.mkdir()
    install_plugin(site)
    add_metric(site)
    (mirror / "toy").mkdir(parents=True)
    shutil.copy2(FIXTURE / "capitals.csv", mirror / "toy" / "capitals.csv")
    project.mkdir()
    shutil.copy2(ROOT / "params.yaml", project / "params.yaml")
    # The grid for this test only: the built-in benchmarks off, the oracle model; the toy's
    # section is absent from params (its config_model's defaults apply); its 4 items are enough
    # units for an interval here.
    overlay = {
        "overlay_of": "params.yaml",
        "replace": ["models"],
        "benchmarks": {name: {"enabled": False} for name in BUILTIN},
        "models": {"oracle": {"backend": "oracle", "display_name": "oracle (gold answers)"}},
        "report": {"uncertainty": {"min_units": 2}},
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
    assert metrics["status"] == "scored"
    assert metrics["settings"]["zero_shot"]["metrics"] == {"accuracy": 100.0, "error_rate": 0.0}
    cli(project, env, "track", "toy", "--model", "oracle")
    cli(project, env, "report")
    # the recipe's metric: a report column with its interval, the summary page (headline), MLflow
    # (the setting's run and, as a headline, the parent run), evaluate-predictions
    with open(project / "reports/tables/toy_metrics.csv", encoding="utf-8", newline="") as handle:
        header, *rows = list(csv.reader(handle))
    row = dict(zip(header, rows[0], strict=True))
    assert row["Model"] == "oracle (gold answers)" and row["Accuracy (zero_shot)"].startswith("100.00")
    assert row["Error rate (zero_shot)"].startswith("0.00 ±") and row["Error rate (zero_shot)_lo"] == "0"
    with open(project / "reports/tables/summary.csv", encoding="utf-8", newline="") as handle:
        summary = list(csv.DictReader(handle))
    assert {(r["Benchmark"], r["Cell"]) for r in summary} >= {
        ("toy", "zero_shot: Accuracy"),
        ("toy", "zero_shot: Error rate"),
    }
    assert (project / "reports/all_tables.pdf").stat().st_size > 0
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=env["MLFLOW_TRACKING_URI"])
    runs = client.search_runs([client.get_experiment_by_name("toy").experiment_id])
    child = next(r for r in runs if r.data.tags.get("idiombench.key") == "toy/oracle/zero_shot")
    parent = next(r for r in runs if r.data.tags.get("idiombench.key") == "toy/oracle")
    assert child.data.metrics["error_rate"] == 0.0 and parent.data.metrics["zero_shot/error_rate"] == 0.0
    predictions = project / "results/generations/oracle/toy/zero_shot.parquet"
    evaluated = cli(
        project,
        env,
        "evaluate-predictions",
        str(predictions),
        "--benchmark",
        "toy",
        "--task",
        "capitals",
        "--setting",
        "zero_shot",
        "--format",
        "idiombench",
    )
    assert "accuracy\t100.00" in evaluated and "error_rate\t0.00" in evaluated, evaluated
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
