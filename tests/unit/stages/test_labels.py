"""`idiombench labels pull`: labels a person gave G-IdiomAlign Task 2 items in the MLflow UI
(HUMAN feedback on their traces, logged here through MLflow's client) become the attention
stage's annotation file, validated by its own reader; a hand-written file is never replaced."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import traced_project
from idiombench.benchmarks.g_idiomalign.attention import read_annotations
from idiombench.cli import app
from idiombench.pipeline.config import load_params
from idiombench.pipeline.dag import dvc_yaml


@pytest.fixture(scope="module")
def tracked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """G-IdiomAlign Task 2 generated, scored and tracked for oracle and echo (once per module)."""
    from idiombench.stages.track import track

    root = traced_project.write_inputs(tmp_path_factory.mktemp("tracked"))
    with pytest.MonkeyPatch.context() as patch:
        params = traced_project.run_stages(root, patch)
        patch.setenv("MLFLOW_TRACKING_URI", traced_project.empty_store(root))
        for model in traced_project.MODELS:
            track(params, benchmark="g-idiomalign", model=model)
    return root


@pytest.fixture
def project(tracked: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return traced_project.working_copy(tracked, tmp_path, monkeypatch)


def label(model: str, item: str, setting: str, value, who: str = "annotator-1") -> str:
    """A person's label on one trace, as the UI logs it (HUMAN feedback through MLflow's client)."""
    import mlflow
    from mlflow.entities import AssessmentSource
    from mlflow.tracking import MlflowClient

    client = MlflowClient()
    experiment = client.get_experiment_by_name("g-idiomalign").experiment_id
    (trace,) = client.search_traces(
        locations=[experiment],
        filter_string=(f"tags.model = '{model}' AND tags.setting = '{setting}' AND tags.item_id = '{item}'"),
    )
    mlflow.log_feedback(
        trace_id=trace.info.trace_id,
        name="idiom_type",
        value=value,
        source=AssessmentSource(source_type="HUMAN", source_id=who),
    )
    return trace.info.tags["prompt_id"]


def pull(*args: str):
    return CliRunner().invoke(app, ["labels", "pull", "g-idiomalign", *args])


def test_labels_given_in_the_ui_become_the_annotation_file(project: Path) -> None:
    from mlflow.genai.label_schemas import get_label_schema
    from mlflow.tracking import MlflowClient

    experiment = MlflowClient().get_experiment_by_name("g-idiomalign").experiment_id
    offered = get_label_schema("idiom_type", experiment_id=experiment)  # track offers the paper's types in the UI
    assert offered.input.options[2] == "2 literal"

    literal = label("echo", "gen/zh-en/00001", "no_gloss", "2 literal")
    correct = label("echo", "gen/zh-en/00002", "with_gloss", "1 correct")
    label("echo", "gen/zh-en/00002", "with_gloss", 3, who="annotator-2")  # a second opinion, later: it stands
    oracle = label("oracle", "gen/zh-ja/00003", "no_gloss", "correct")
    result = pull("--model", "echo", "--out", "data/annotations/g-idiomalign-labels.csv")
    assert result.exit_code == 0, result.output
    assert "2 labelled of 6 traces (1 with labellers disagreeing" in " ".join(result.output.split())
    path = project / "data/annotations/g-idiomalign-labels.csv"
    assert read_annotations(str(path), "echo") == {literal: 2, correct: 3}

    assert pull("--model", "oracle", "--out", str(path)).exit_code == 0  # the echo rows are kept
    assert read_annotations(str(path), "oracle") == {oracle: 1}
    assert read_annotations(str(path), "echo") == {literal: 2, correct: 3}
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "prompt_id,label,model,trace_id,labeller" and len(lines) == 4

    # the file params name is the default destination (the attention stage's input)
    params = (
        (project / "params.yaml")
        .read_text(encoding="utf-8")
        .replace("annotations: null", "annotations: data/annotations/g-idiomalign-labels.csv")
    )
    (project / "params.yaml").write_text(params, encoding="utf-8")
    assert load_params(project / "params.yaml").benchmark("g-idiomalign").attention.annotations
    again = pull("--model", "echo")
    assert again.exit_code == 0 and "g-idiomalign-labels.csv (3 rows)" in " ".join(again.output.split())


def test_bad_labels_and_foreign_files_stop_the_pull(project: Path) -> None:
    hand_written = project / "data/annotations/mine.csv"
    hand_written.parent.mkdir(parents=True, exist_ok=True)
    hand_written.write_text("prompt_id,label\nx,1\n", encoding="utf-8")
    refused = pull("--model", "echo", "--out", str(hand_written))
    assert refused.exit_code == 2 and "not an annotation file written by `idiombench labels pull`" in " ".join(
        refused.output.split()
    )
    assert hand_written.read_text(encoding="utf-8") == "prompt_id,label\nx,1\n"

    no_file = pull("--model", "echo")  # params name no annotation file
    assert no_file.exit_code == 2 and "benchmarks.g-idiomalign.attention.annotations names no file" in " ".join(
        no_file.output.split()
    )

    label("echo", "gen/zh-en/00001", "no_gloss", "a wonderful translation")
    bad = pull("--model", "echo", "--out", "data/annotations/labels.csv")
    assert bad.exit_code == 2 and "feedback 'idiom_type' = 'a wonderful translation'" in " ".join(bad.output.split())
    assert not (project / "data/annotations/labels.csv").exists()  # nothing written

    other = CliRunner().invoke(app, ["labels", "pull", "orderprobe", "--model", "echo"])
    assert other.exit_code == 2 and "reads no human labels" in other.output


def test_only_the_attention_stages_read_the_annotations() -> None:
    """DVC reruns what depends on data/annotations: the attention stages, nothing else."""
    import yaml

    stages = yaml.safe_load(dvc_yaml())["stages"]
    readers = sorted(
        name
        for name, stage in stages.items()
        if "data/annotations" in (stage.get("deps") or stage.get("do", {}).get("deps") or [])
    )
    assert readers == ["attention"]
