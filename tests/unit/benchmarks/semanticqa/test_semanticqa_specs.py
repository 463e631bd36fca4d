"""SemanticQA's metric specs (specs.py): what is derived from them is what the paper tables and
the report need. The headline (MLflow parent run) is what the old regex
`[^.]+\\.(?:ACC|ACC_s|ROUGE-L)` matched; each item's outcome is `correct` (ACC / ACC_s) or
ROUGE-L (interpretation, graded); every cell's estimand reproduces the stored value, the atomic
ones with the features (the intervals) of the estimands written before the specs, and the
sequential compositions now have estimands too."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_semanticqa_scoring import OUTPUTS, SEQ_ITEMS, SEQ_OUTPUTS, FakeScorers, generations, run

from idiombench import statistics as st
from idiombench.benchmarks.semanticqa import BENCHMARK
from idiombench.benchmarks.semanticqa.specs import (
    INTERPRETATION_STEP,
    JUDGEMENT_STEP,
    PRIMARY,
    predicted_labels,
    scopes,
)
from idiombench.metrics import evaluate
from idiombench.pipeline.config import load_params

OLD_HEADLINE = re.compile(r"[^.]+\.(?:ACC|ACC_s|ROUGE-L)")
ROOT = Path(__file__).resolve().parents[4]


@pytest.fixture(scope="module")
def params():
    return load_params(ROOT / "params.yaml")


@pytest.fixture(scope="module")
def atomic(params):
    scores, body, _ = run(params, {"0-shot": generations(OUTPUTS), "3-shot": generations(OUTPUTS, "3-shot")})
    return scores, body, params.benchmark("semanticqa")


@pytest.fixture(scope="module")
def sequential(params, wordnet_root):
    config = params.benchmark("semanticqa")
    config = config.model_copy(
        update={
            "score": config.score.model_copy(
                update={"sequential": config.score.sequential.model_copy(update={"enabled": True})}
            )
        }
    )
    gens = {"multi_step_0-shot": generations(SEQ_OUTPUTS, "multi_step_0-shot")}
    scores, body, _ = run(params, gens, items=SEQ_ITEMS, config=config, scorers=FakeScorers())
    return scores, body, config


def flattened(body: dict) -> dict[str, float]:
    """Every number of the settings' metrics as "<setting>/<task>.<key>" (the MLflow names)."""
    return {
        f"{setting}/{task}.{key}": value
        for setting, entry in body["settings"].items()
        for task, metrics in entry["metrics"].items()
        for key, value in metrics.items()
        if isinstance(value, float)
    }


def test_the_headline_is_what_the_old_regex_matched(atomic, sequential):
    for _, body, config in (atomic, sequential):
        expected = {
            name: value for name, value in flattened(body).items() if OLD_HEADLINE.fullmatch(name.split("/", 1)[1])
        }
        assert evaluate.headline(body, BENCHMARK.metric_specs(config)) == expected
    assert set(evaluate.headline(atomic[1], BENCHMARK.metric_specs(atomic[2]))) >= {
        "0-shot/idiom_detection.ACC",
        "0-shot/collocation_categorization.ACC",
        "0-shot/idiom_extraction.ACC_s",
        "0-shot/idiom_paraphrase.ROUGE-L",
    }


def test_item_outcomes_are_correct_or_rouge_l_per_task(atomic):
    scores, _, config = atomic
    frame = scores["0-shot"]
    found = BENCHMARK.item_outcomes(frame, "0-shot", config)
    assert found is not None and list(found.columns) == list(evaluate.OUTCOME_COLUMNS)
    rows = frame.set_index("prompt_id")
    by_prompt = found.set_index("prompt_id")
    assert set(by_prompt.index) == set(rows.index)  # one outcome per main-pass row (every item has a gold)
    for prompt_id, outcome in by_prompt.iterrows():
        row = rows.loc[prompt_id]
        kind = row["kind"]
        expected = row["rouge_l"] if kind == "interpretation" else row["correct"]
        assert outcome["outcome"] == pytest.approx(expected), prompt_id
        assert outcome["metric"] == {"interpretation": "ROUGE-L", "extraction": "ACC_s"}.get(kind, "ACC")
        assert outcome["binary"] == (kind != "interpretation")
        assert outcome["unit"] == f"0-shot/{row['task']}/{row['item_id']}"


def test_sequential_settings_have_no_headline_outcome(sequential):
    scores, _, config = sequential
    assert BENCHMARK.item_outcomes(scores["multi_step_0-shot"], "multi_step_0-shot", config) is None
    kinds = {s.task: s.kind for s in scopes(scores, config)}
    assert kinds == {"idiom_detection": JUDGEMENT_STEP, "collocation_interpretation": INTERPRETATION_STEP}


def estimands_of(scores, config):
    return evaluate.estimands({"m": BENCHMARK.metric_scopes(scores, config)})["m"]


def test_every_cell_reproduces_its_stored_value(atomic, sequential):
    checked = 0
    for scores, body, config in (atomic, sequential):
        found = estimands_of(scores, config)
        for name, cell in found.cells.items():
            stored = evaluate.read(body, cell.path)
            spec, estimand = found[name]
            if stored is None:
                assert estimand is None or math.isnan(estimand.value()), name
                continue
            assert estimand is not None and estimand.unit == "item", name
            assert estimand.value() * spec.unit.scale == pytest.approx(stored, abs=1e-9), name
            checked += 1
    assert checked >= 30


def test_sequential_cells_gain_an_interval_over_the_composed_items(sequential):
    scores, body, config = sequential
    found = estimands_of(scores, config)
    metrics = body["settings"]["multi_step_0-shot"]["metrics"]
    assert metrics["idiom_detection"] == {"Ext": 50.0, "Cond": 50.0, "Overall": 25.0}
    for key in ("Ext", "Cond", "Overall"):
        _, estimand = found[f"multi_step_0-shot/idiom_detection/{key}"]
        assert estimand is not None and estimand.n == 4  # every composed item, also for Cond
    _, cond = found["multi_step_0-shot/idiom_detection/Cond"]
    # Cond over the right extractions: resampling s1 (right, right) twice and s3 (wrong extraction) twice
    counts = np.array([[2.0, 0.0, 2.0, 0.0]])
    assert cond.reduce(counts @ cond.features)[0] == 1.0
    assert set(metrics["collocation_interpretation"]) == {
        "Ext",
        "Cond",
        "Overall",
        "Cond ROUGE-L",
        "Overall ROUGE-L",
        "Cond BERTScore",
        "Overall BERTScore",
    }


def legacy_estimands(scores: dict[str, pd.DataFrame], config) -> dict[str, st.Estimand]:
    """The estimands of the deleted uncertainty.py (ACC / ACC_s, the interpretation means, the F1s)."""
    out: dict[str, st.Estimand] = {}
    predicted = predicted_labels(config.score.count_format_deviations)
    for setting, frame in scores.items():
        for task, group in frame[frame["pass"] == "main"].groupby("task"):
            kind = group["kind"].iloc[0]
            key = f"{setting}/{task}"
            if kind != "interpretation":
                out[f"{key}/{PRIMARY[kind].key}"] = st.mean(group["item_id"].astype(str).tolist(), group["correct"])
                if kind == "label":
                    scored = group[group["correct"].notna()]
                    labels = sorted({str(g) for g in scored["gold"]} | {p for p in predicted(scored) if p is not None})
                    for average in ("macro", "micro", "weighted"):
                        out[f"{key}/{average}-F1"] = st.f1(
                            scored["item_id"].astype(str).tolist(),
                            [str(g) for g in scored["gold"]],
                            predicted(scored),
                            labels,
                            average,
                        )
                continue
            gold = group[~group["flags"].apply(lambda f: "no_gold" in list(f))]
            for name, column in (("METEOR", "meteor"), ("ROUGE-L", "rouge_l"), ("BERTScore", "bertscore_f1")):
                if gold[column].notna().any():
                    out[f"{key}/{name}"] = st.mean(gold["item_id"].astype(str).tolist(), gold[column].astype(float))
    return out


def test_atomic_estimands_resample_as_before(atomic):
    """Same units and features as the estimands before the specs: the same intervals (the F1s'
    replicates up to the last digits: the spec's F1 is 2PR/(P+R), the old one 2tp/(2tp+fp+fn))."""
    scores, _, config = atomic
    found = estimands_of(scores, config)
    legacy = legacy_estimands(scores, config)
    assert len(legacy) >= 10
    rng = np.random.default_rng(3)
    for name, old in legacy.items():
        _, new = found[name]
        assert new is not None, name
        assert np.array_equal(new.ids, old.ids) and np.array_equal(new.features, old.features), name
        sums = rng.integers(0, 3, (40, new.n)).astype(float) @ new.features
        if name.endswith("-F1"):
            assert np.allclose(new.reduce(sums), old.reduce(sums), rtol=1e-12, atol=1e-15, equal_nan=True), name
        else:
            assert np.array_equal(new.reduce(sums), old.reduce(sums), equal_nan=True), name


def test_the_sequential_tables_print_intervals(params, sequential, tmp_path):
    """Tables 5 and 6 had no interval (no estimand); their cells now name the specs' cells."""
    from idiombench.stages.inputs import SCORED
    from idiombench.stages.report import ReportContext
    from idiombench.stages.report_uncertainty import Targets, annotate_section

    scores, body, _ = sequential
    # the metrics file as aggregate writes it: the hook's body under the stage's own keys
    metrics = {"benchmark": "semanticqa", "model": "m", "status": SCORED, **body}
    ctx = ReportContext(params=params, benchmark="semanticqa", metrics={"m": metrics}, figures_dir=tmp_path)
    section = BENCHMARK.report_section(ctx)
    tables = {t.table_id: t for t in section.tables}
    targets = {"m": Targets(estimands_of(scores, sequential[2]))}
    config = params.report.uncertainty.model_copy(update={"min_units": 2})
    annotate_section(section, targets, config, ctx.display_name)
    judgement = tables["semanticqa_table6"].rows[0]
    assert [c.text.split(" ±")[0] for c in judgement[3:]] == ["50.0", "50.0", "25.0"]
    assert all(" ±" in c.text for c in judgement[3:])
    interpretation = tables["semanticqa_table5"].rows[0]
    assert all(" ±" in c.text for c in interpretation[3:]), [c.text for c in interpretation]
