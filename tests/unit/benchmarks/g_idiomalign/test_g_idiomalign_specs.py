"""G-IdiomAlign's metric specs: what is derived from them (the headline, the item outcomes, the
intervals) is what the paper tables, the parent run and the serving-noise pass need."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from g_idiomalign_fixtures import gen_scores, mcq_scores
from idiombench.benchmarks.g_idiomalign import BENCHMARK
from idiombench.benchmarks.g_idiomalign.aggregate import setting_bodies
from idiombench.benchmarks.g_idiomalign.config import GIdiomAlignConfig, GIdiomAlignScore
from idiombench.metrics import evaluate
from idiombench.metrics.units import display

GROUPS = {"en->zh": "Zh-target", "de->zh": "Zh-target", "zh->en": "En-target", "de->fr": "Other targets"}
# the parent run's headline before the specs (regexes on the flattened metric names)
OLD_HEADLINE = (r"accuracy\.macro\.overall", r"Acc@0\.80", r"EM")


def scores() -> dict[str, pd.DataFrame]:
    """Task 1 with idioms asked in several directions; Task 2 main and additional pairs, both conditions."""
    mcq = mcq_scores(
        {"en->zh": ["Correct", "LT", "Correct"], "de->zh": ["LC", "Correct"], "zh->en": ["Correct"], "de->fr": ["CA"]},
        GROUPS,
        duplicates={("en->zh", 1)},
    )
    mcq["idiom"] = ["en:a", "en:b", "en:c", "de:x", "de:y", "zh:z", "de:x"]  # de:x asked into zh and fr
    no, with_ = (
        pd.concat(
            [
                gen_scores({"zh->en": [0.9, 0.6, 0.85], "en->zh": [0.7, 0.95]}, em={"zh->en": [True, False, True]}),
                gen_scores({"ko->en": [0.2, 0.81]}, additional=True),
            ],
            ignore_index=True,
        )
        for _ in range(2)
    )
    with_["setting"] = "with_gloss"
    with_["similarity"] = with_["similarity"].to_numpy()[::-1]
    return {"mcq": mcq, "no_gloss": no, "with_gloss": with_}


def body(config: GIdiomAlignConfig | None = None) -> dict:
    settings, breakdowns = setting_bodies(scores(), config or GIdiomAlignConfig())
    return {"settings": settings, "breakdowns": breakdowns}


def test_the_headline_is_the_papers_table_3_and_4_cells():
    """accuracy.macro.overall, Acc@<last headline threshold> and EM of every setting: what the
    regexes matched on the metric names (Acc@0.80 included, which they never matched on the
    MLflow names, where `@` reads `_`)."""
    config = GIdiomAlignConfig()
    found = evaluate.headline(body(config), BENCHMARK.metric_specs(config))
    old = {
        f"{setting}/{name}"
        for setting, entry in body(config)["settings"].items()
        for name, value in entry["metrics"].items()
        if value is not None and any(re.fullmatch(p, name) for p in OLD_HEADLINE)
    }
    assert (
        set(found)
        == old
        == {
            "mcq/accuracy.macro.overall",
            *(
                f"{s}/{m}"
                for s in ("no_gloss", "with_gloss", "no_gloss_additional", "with_gloss_additional")
                for m in ("Acc@0.80", "EM")
            ),
        }
    )
    # the last headline threshold, as table 4's delta column
    other = GIdiomAlignConfig(score=GIdiomAlignScore(headline_thresholds=[0.70, 0.75]))
    assert {k for k in evaluate.headline(body(other), BENCHMARK.metric_specs(other)) if "Acc" in k} == {
        f"{s}/Acc@0.75" for s in ("no_gloss", "with_gloss", "no_gloss_additional", "with_gloss_additional")
    }


def test_item_outcomes_come_from_the_headline_specs():
    config = GIdiomAlignConfig()
    frames = scores()
    mcq = BENCHMARK.item_outcomes(frames["mcq"], "mcq", config)
    assert mcq is not None and set(mcq["metric"]) == {"accuracy.macro.overall"}
    # each answer's `correct` (the old micro outcome), resampled over source idioms
    assert mcq["outcome"].tolist() == frames["mcq"]["correct"].astype(float).tolist()
    assert mcq["unit"].tolist() == frames["mcq"]["idiom"].tolist() and mcq["binary"].all()
    gen = BENCHMARK.item_outcomes(frames["no_gloss"], "no_gloss", config)
    assert gen is not None and sorted(set(gen["metric"])) == ["Acc@0.80", "EM"]
    rows = frames["no_gloss"][~frames["no_gloss"]["additional"]]  # the additional pairs are reported apart
    for metric, expected in (("Acc@0.80", rows["similarity"] >= 0.8), ("EM", rows["exact_match"])):
        part = gen[gen["metric"] == metric]
        assert part["prompt_id"].tolist() == rows["prompt_id"].tolist()  # one outcome per answer and metric
        assert part["outcome"].tolist() == expected.astype(float).tolist()
        assert part["unit"].tolist() == rows["idiom"].tolist()


def test_every_cell_has_the_interval_of_its_stored_value():
    """Each spec's estimand (resampled over source idioms) reproduces the value the metrics JSON
    holds, in every scope; the corpus scores and the deltas have none, and say why."""
    config = GIdiomAlignConfig()
    found = evaluate.estimands({"m": BENCHMARK.metric_scopes(scores(), config)})["m"]
    stored = body(config)
    checked = 0
    for name in found:
        spec, estimand = found[name]
        c = found.cells[name]
        value = evaluate.read(stored, c.path)
        if value is None:
            assert estimand is None or np.isnan(estimand.value()), name
            continue
        assert estimand is not None and estimand.unit == "idiom", name
        assert estimand.value() * spec.unit.scale == pytest.approx(value, abs=1e-9), name
        checked += 1
    assert checked == 36 + 4 * 16  # mcq: 16 accuracies, 20 outcome shares; 16 per Task 2 scope
    overall = found["mcq/accuracy.macro.overall"][1]
    assert overall is not None and overall.n == 6  # 7 answers, 6 source idioms
    assert found["no_gloss_additional/EM"][1].n == 2
    assert not any(key.startswith("delta.") for key in (c.spec.key for c in found.cells.values()))
    corpus = GIdiomAlignConfig(score=GIdiomAlignScore(surface_aggregation="corpus"))
    in_corpus = evaluate.estimands({"m": BENCHMARK.metric_scopes(scores(), corpus)})["m"]
    spec, estimand = in_corpus["no_gloss/BLEU"]
    assert estimand is None and spec.no_interval is not None and "corpus" in spec.no_interval
    assert in_corpus["no_gloss/EM"][1] is not None


def test_corpus_mode_scores_each_direction_then_averages():
    frames = scores()
    corpus = GIdiomAlignConfig(score=GIdiomAlignScore(surface_aggregation="corpus"))
    metrics = setting_bodies(frames, corpus)[0]["no_gloss"]["metrics"]
    # the fixture's outputs "p" against golds "g": corpus BLEU 0 in each direction
    assert metrics["BLEU"] == 0.0 and metrics["BLEU.micro"] is None and metrics["chrF.micro"] is None


def test_table_cells_print_as_before():
    """A metric cell prints its stored value with the paper's two decimals (as `{:.2f}` did)."""
    config = GIdiomAlignConfig()
    specs = BENCHMARK.metric_specs(config)
    for key in ("accuracy.macro.overall", "MeanSim", "BLEU"):
        spec = next(s for s in specs if s.key == key)
        assert display(66.66666666666667, spec.unit, 2) == f"{66.66666666666667:.2f}"
