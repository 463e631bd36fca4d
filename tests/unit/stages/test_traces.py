"""One MLflow trace per scored row (stages/track_traces.py), read back through MLflow's client: found
by tag and by assessment, with the item's inputs, the model's output, the reference and one
assessment per item-level metric (its source the scorer role's model); re-tracking writes
nothing, a changed score replaces that assessment (human feedback kept), a vanished row's trace
goes; a sample traces the same items for every model and keeps every row in the item table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

import traced_project
from idiombench.core.io import read_parquet, write_parquet
from idiombench.pipeline.config import load_params


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both benchmarks generated, scored and aggregated for oracle and echo (once per module)."""
    root = traced_project.write_inputs(tmp_path_factory.mktemp("scored"))
    with pytest.MonkeyPatch.context() as patch:
        traced_project.run_stages(root, patch)
    traced_project.empty_store(root)
    return root


@pytest.fixture
def project(scored: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return traced_project.working_copy(scored, tmp_path, monkeypatch)


def search(client, benchmark: str, where: str) -> list:
    experiment = client.get_experiment_by_name(benchmark).experiment_id
    return list(client.search_traces(locations=[experiment], filter_string=where, max_results=1000))


def by_name(trace) -> dict:
    return {a.name: a for a in trace.info.assessments}


def test_traces_round_trip_through_the_client(project: Path) -> None:
    from mlflow.tracking import MlflowClient

    from idiombench.stages.track import track

    params = load_params(project / "params.yaml")
    records = {model: track(params, benchmark="orderprobe", model=model) for model in ("oracle", "echo")}
    zero_shot = records["echo"]["runs"]["orderprobe/echo/zero_shot"]
    assert zero_shot["traces"]["traced"] == zero_shot["traces"]["rows"] == 18  # 6 inputs x (main + 2 samples)
    assert zero_shot["traces"]["written"] == 18 and not zero_shot["traces"]["sampled"]
    client = MlflowClient()

    # found by tag, each model's in its setting's run
    japanese = search(client, "orderprobe", "tags.language = 'ja' AND tags.model = 'echo'")
    assert len(japanese) == 12  # 3 inputs: zero-shot main and 2 samples, CoT
    assert {t.info.trace_metadata["mlflow.sourceRun"] for t in japanese} == {
        records["echo"]["runs"][f"orderprobe/echo/{s}"]["run_id"] for s in ("zero_shot", "cot")
    }
    # and by assessment (the UI's feedback filter)
    recovered = search(client, "orderprobe", "feedback.`recovered` = 'true' AND tags.model = 'oracle'")
    assert len(recovered) == 24  # the oracle restores every input

    # one item: inputs, output, reference, metrics with their sources
    scores = read_parquet(project / "results/scores/echo/orderprobe/zero_shot.parquet").to_pandas()
    row = scores[(scores["pass"] == "main")].iloc[0]
    (trace,) = search(
        client,
        "orderprobe",
        f"tags.model = 'echo' AND tags.setting = 'zero_shot' AND "
        f"tags.item_id = '{row['item_id']}' AND tags.pass = 'main'",
    )
    generations = read_parquet(project / "results/generations/echo/orderprobe/zero_shot.parquet").to_pandas()
    text = generations[(generations["prompt_id"] == row["prompt_id"]) & (generations["pass"] == "main")]["text"].item()
    span = trace.data.spans[0]
    assert span.inputs["item_id"] == row["item_id"] and span.inputs["input"] == row["input"]
    assert [m["role"] for m in span.inputs["messages"]] == ["system", "user"]
    assert span.outputs["text"] == text == row["input"]  # echo copies the scrambled input
    assert trace.info.request_preview.startswith(f"[{row['item_id']}]")
    assessments = by_name(trace)
    assert assessments["expected_answer"].expectation.value == row["expression"]
    assert assessments["recovered"].feedback.value == bool(row["recovered"])
    assert assessments["s_acc"].feedback.value == pytest.approx(row["s_acc"])
    assert assessments["sts"].source.source_id.endswith(
        f"({'sts_zh' if row['language'] == 'zh-CN' else 'sts_multilingual'})"
    )
    assert assessments["sts"].metadata["status"] == "substitute"
    assert "bert" not in assessments and "bert" in span.outputs["not_computed"]  # the role is off in this profile
    assert trace.info.tags["pattern"] == row["pattern"] and trace.info.tags["status"] == "ok"

    # re-tracking writes nothing and duplicates nothing
    again = track(params, benchmark="orderprobe", model="echo")["runs"]["orderprobe/echo/zero_shot"]["traces"]
    assert (again["written"], again["unchanged"], again["deleted"]) == (0, 18, 0)
    assert len(search(client, "orderprobe", "tags.model = 'echo'")) == 24


def test_a_changed_score_replaces_its_assessment_and_keeps_human_feedback(project: Path) -> None:
    import mlflow
    from mlflow.entities import AssessmentSource
    from mlflow.tracking import MlflowClient

    from idiombench.stages.track import track

    params = load_params(project / "params.yaml")
    track(params, benchmark="orderprobe", model="echo")
    client = MlflowClient()
    where = "tags.model = 'echo' AND tags.setting = 'cot'"
    first = sorted(search(client, "orderprobe", where), key=lambda t: t.info.tags["item_id"])[0]
    item = first.info.tags["item_id"]
    mlflow.log_feedback(
        trace_id=first.info.trace_id,
        name="looks_right",
        value=False,
        source=AssessmentSource(source_type="HUMAN", source_id="a researcher"),
    )
    path = project / "results/scores/echo/orderprobe/cot.parquet"
    scores = read_parquet(path).to_pandas()
    changed = scores["item_id"] == item
    scores.loc[changed, "s_acc"] = 0.125
    write_parquet(path, pa.Table.from_pandas(scores, preserve_index=False))

    counts = track(params, benchmark="orderprobe", model="echo")["runs"]["orderprobe/echo/cot"]["traces"]
    assert (counts["written"], counts["unchanged"]) == (1, 5)
    (after,) = [t for t in search(client, "orderprobe", where) if t.info.tags["item_id"] == item]
    assert after.info.trace_id == first.info.trace_id  # the same output: the same trace
    s_acc = [a for a in after.info.assessments if a.name == "s_acc"]
    assert len(s_acc) == 1 and s_acc[0].feedback.value == 0.125
    assert s_acc[0].assessment_id == by_name(first)["s_acc"].assessment_id
    assert by_name(after)["looks_right"].feedback.value is False  # a person's feedback is kept

    # a row that is no longer scored loses its trace, and the record says it had human feedback
    write_parquet(path, pa.Table.from_pandas(scores[~changed], preserve_index=False))
    counts = track(params, benchmark="orderprobe", model="echo")["runs"]["orderprobe/echo/cot"]["traces"]
    assert (counts["deleted"], counts["deleted_with_human_feedback"], counts["traced"]) == (1, 1, 5)
    assert len(search(client, "orderprobe", where)) == 5


def test_a_sample_traces_the_same_items_for_every_model(
    scored: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mlflow.tracking import MlflowClient

    from idiombench.stages.track import TRACES_TAG, track

    root = traced_project.working_copy(scored, tmp_path, monkeypatch)
    traced_project.write_inputs(root, sample=4)  # params only: tracking.traces.sample 4
    params = load_params(root / "params.yaml")
    runs = {
        model: track(params, benchmark="orderprobe", model=model)["runs"][f"orderprobe/{model}/zero_shot"]
        for model in ("oracle", "echo")
    }
    for run in runs.values():
        assert run["traces"]["sampled"] and run["traces"]["rows"] == 18
        assert run["traces"]["traced"] == 12  # 4 items, each with its 2 consistency samples
        assert sum(run["traces"]["strata"].values()) == 12 and len(run["traces"]["strata"]) == 4
    client = MlflowClient()
    items = {
        model: {
            t.info.tags["item_id"]
            for t in search(client, "orderprobe", f"tags.`idiombench.scope` = 'orderprobe/{model}/zero_shot'")
        }
        for model in runs
    }
    assert items["oracle"] == items["echo"] and len(items["echo"]) == 4
    run = client.get_run(runs["echo"]["run_id"])
    assert run.data.tags[TRACES_TAG].startswith("sample of 12 of 18 rows")
    table_path = client.download_artifacts(run.info.run_id, "items/zero_shot.parquet", str(tmp_path))
    table = pd.read_parquet(table_path)
    assert len(table) == 18 and {"output", "metric.s_acc", "tag.language", "expected"} <= set(table.columns)


def reference_table_row(row) -> dict:
    """What the item table says of a row: what its trace shows (key, tags, input, output, parsed
    answer, parse status, expectations, metrics as numbers)."""
    import json

    out = {
        "key": row.key,
        **{f"tag.{k}": v for k, v in row.tags.items()},
        "input": row.inputs.get("input"),
        "output": row.outputs["text"],
        "answer": json.dumps(row.outputs["answer"], ensure_ascii=False),
        "parse_ok": row.outputs["parse_ok"],
        "expected": json.dumps(row.expectations, ensure_ascii=False, sort_keys=True),
    }
    for name, value, _ in row.metrics:
        out[f"metric.{name}"] = float(value)
    return out


@pytest.mark.parametrize(("benchmark", "setting"), [("orderprobe", "zero_shot"), ("g-idiomalign", "with_gloss")])
def test_the_item_table_says_what_the_traces_show(project: Path, benchmark: str, setting: str) -> None:
    """The item table is built column by column (a setting can have 500,000 rows); each traced
    row's table row is what its trace holds, and no column is there that no row has."""
    import json
    import math

    from idiombench.benchmarks.registry import get_benchmark
    from idiombench.stages.inputs import load_items
    from idiombench.stages.track_traces import setting_rows

    roles = json.loads((project / f"results/scores/echo/{benchmark}/scoring_meta.json").read_text())["roles"]
    found = setting_rows(
        benchmark=benchmark,
        model="echo",
        setting=setting,
        view=get_benchmark(benchmark).item_view,
        items=load_items(benchmark),
        roles=roles,
    )
    assert len(found.rows) == len(found.table) > 0
    table = found.table.to_dict("records")
    for row, cells in zip(found.rows, table, strict=True):
        present = {k: v for k, v in cells.items() if not (v is None or isinstance(v, float) and math.isnan(v))}
        assert present == reference_table_row(row)
    assert set(found.table.columns) == set().union(*(reference_table_row(row) for row in found.rows))


def test_disagreeing_items_are_tagged_and_listed_in_the_comparison_run(project: Path, tmp_path: Path) -> None:
    """track-comparison: the report's disagreeing items are an artifact of the benchmark's
    comparison run, with the pair's counts as metrics, and each of them is tagged on both models'
    traces (filterable in the Traces view); a stale tag goes, and a rerun changes nothing."""
    from mlflow.tracking import MlflowClient

    from idiombench.benchmarks.contexts import ReportContext
    from idiombench.stages.report_noise import disagreement_tables, outcomes
    from idiombench.stages.track import KEY_TAG, track
    from idiombench.stages.track_comparison import track_comparison

    params = load_params(project / "params.yaml")
    for model in ("oracle", "echo"):
        track(params, benchmark="orderprobe", model=model)
    record = track_comparison(params, benchmark="orderprobe")

    # the report's tables, computed as the report computes them
    context = ReportContext(params=params, benchmark="orderprobe", metrics={}, figures_dir=tmp_path)
    counts, _, items = disagreement_tables(
        params, "orderprobe", outcomes(params, "orderprobe", ["oracle", "echo"]), context.display_name
    )
    disagreeing = {(row[0].text, row[2].text) for row in items.rows}  # (setting, prompt_id)
    assert disagreeing and all(row[5].text == "oracle" for row in items.rows)  # the oracle is the one right
    assert record["disagreeing_rows"] == len(items.rows) and record["models"] == ["oracle", "echo"]

    client = MlflowClient()
    experiment = client.get_experiment_by_name("orderprobe").experiment_id
    (run,) = client.search_runs([experiment], filter_string=f"tags.`{KEY_TAG}` = 'orderprobe/comparison'")
    assert run.info.run_id == record["run"]["run_id"] and run.data.params == {"models": "oracle,echo"}
    listed = client.download_artifacts(run.info.run_id, "disagreement/orderprobe_disagreement_items.csv", str(tmp_path))
    assert Path(listed).read_text(encoding="utf-8") == items.to_csv()  # the report's full list, as it writes it
    for row in counts.rows:
        setting, metric, _, _, _, only_a, only_b = (cell.text for cell in row[:7])
        prefix = f"disagreement/{setting}/{metric}/oracle_vs_echo"
        assert run.data.metrics[f"{prefix}/a_right_b_wrong"] == int(only_a) > 0
        assert run.data.metrics[f"{prefix}/a_wrong_b_right"] == int(only_b) == 0

    # every disagreeing item's main-pass traces, and only those, carry the tags, on both models
    for model, outcome in (("echo", "wrong"), ("oracle", "right")):
        other = "oracle" if model == "echo" else "echo"
        tagged = search(client, "orderprobe", f"tags.disagreement = 'true' AND tags.model = '{model}'")
        assert {(t.info.tags["setting"], t.info.tags["prompt_id"]) for t in tagged} == disagreeing
        assert {t.info.tags["pass"] for t in tagged} == {"main"}
        assert all(t.info.tags[f"disagrees_with.{other}"] == outcome for t in tagged)
        filtered = search(client, "orderprobe", f"tags.`disagrees_with.{other}` = '{outcome}'")
        assert {t.info.trace_id for t in filtered} == {t.info.trace_id for t in tagged}
    assert record["traces"]["tagged"] == 2 * len(disagreeing)

    # a tag on an item that does not disagree is removed; a rerun on the same scores changes nothing
    agreeing = next(
        t
        for t in search(client, "orderprobe", "tags.model = 'echo' AND tags.pass = 'main'")
        if "disagreement" not in t.info.tags
    )
    client.set_trace_tag(agreeing.info.trace_id, "disagreement", "true")
    again = track_comparison(params, benchmark="orderprobe")
    assert again["traces"] == {"tagged": 2 * len(disagreeing), "changed": 0, "cleared": 1}
    assert "disagreement" not in client.get_trace(agreeing.info.trace_id).info.tags
    assert track_comparison(params, benchmark="orderprobe")["traces"]["cleared"] == 0
    assert again["run"]["run_id"] == record["run"]["run_id"]  # the same run, updated

    # one model left: nothing to compare, so the comparison run and every tag go
    alone = track_comparison(
        params.model_copy(update={"models": {"oracle": params.models["oracle"]}}), benchmark="orderprobe"
    )
    assert alone["run"] is None and alone["traces"] == {"tagged": 0, "changed": 0, "cleared": len(disagreeing)}
    assert client.search_runs([experiment], filter_string=f"tags.`{KEY_TAG}` = 'orderprobe/comparison'") == []


def test_a_numeric_metric_column_is_converted_as_each_cell_would_be() -> None:
    """The item table converts a column of numpy numbers or booleans at once: the same floats as
    the per-cell conversion the traces use (a non-finite number is no value, -0.0 stays)."""
    from idiombench.stages.track_traces import _metric_value, metric_column

    columns = [
        pd.Series([0.5, float("nan"), float("inf"), -float("inf"), -0.0, 1e-300]),
        pd.Series([True, False, True]),
        pd.Series([3, 0, -7], dtype="int64"),
        pd.Series([1.5, None, True, "x", 2], dtype=object),  # not numpy numbers: converted per cell
        pd.Series([True, None], dtype="boolean"),
    ]
    for column in columns:
        converted = metric_column(column)
        per_cell = pd.Series([_metric_value(v) for v in column.tolist()], dtype="float64")
        assert converted.dtype == "float64"
        assert [repr(v) for v in converted.tolist()] == [repr(v) for v in per_cell.tolist()]
