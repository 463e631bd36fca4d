"""OrderProbe's metric specs (specs.py) on hand-made score rows: what is derived from them (item
outcomes, headline metrics, paper cells) is what the paper tables need; S_Cons and S_Rob are one
formula for the value and its replicates; released mode's S_seq and S_Rob say why they have no
interval."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from idiombench.benchmarks.orderprobe import BENCHMARK, metrics
from idiombench.benchmarks.orderprobe.config import OrderProbeConfig, OrderProbeScore
from idiombench.metrics import SCORE, SHARE, evaluate
from orderprobe_rows import aggregate, cot_rows, table, zero_shot_rows


@pytest.fixture(autouse=True)
def empty_project(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no data/ or results/: provenance says so


def config(**score) -> OrderProbeConfig:
    return OrderProbeConfig.model_validate({"score": score})


def scores() -> dict:
    return {"zero_shot": table(zero_shot_rows()), "cot": table(cot_rows())}


def cells(cfg: OrderProbeConfig) -> dict[str, evaluate.Cell]:
    return {c.name: c for c in evaluate.cells(BENCHMARK.metric_scopes(scores(), cfg))}


def test_item_outcomes_are_the_headline_recovery_of_each_perturbed_input():
    frame = table(zero_shot_rows())
    found = BENCHMARK.item_outcomes(frame, "zero_shot", config())
    # the 10 perturbed main-pass inputs (X1..X5 x 2), one row each, resampled by expression;
    # the canonical inputs and the consistency samples are not Recovery's inputs
    assert len(found) == 10 and set(found["metric"]) == {"recovery"} and found["binary"].all()
    assert set(found["unit"]) == set(frame["expression_id"])
    assert found["outcome"].mean() == pytest.approx(aggregate()["settings"]["zero_shot"]["metrics"]["recovery"])
    # the headline follows score.recovery: the strict test without the identity input (X4 CDAB)
    strict = BENCHMARK.item_outcomes(
        frame, "zero_shot", config(recovery={"headline_mode": "strict", "headline_identity_inputs": "exclude"})
    )
    assert len(strict) == 9 and strict["outcome"].mean() == pytest.approx(1 / 9)


def test_headline_metrics_are_recovery_and_e_perf_of_each_setting():
    body = aggregate()
    found = evaluate.headline(body, BENCHMARK.metric_specs(config()))
    m = body["settings"]["zero_shot"]["metrics"]
    # cot has no consistency pass: its E_perf is not computed, so not a metric of the run
    assert found == {
        "zero_shot/recovery": m["recovery"],
        "zero_shot/e_perf": m["e_perf"],
        "cot/recovery": body["settings"]["cot"]["metrics"]["recovery"],
    }


def test_paper_cells_units_and_kinds():
    specs = {spec.key: spec for spec in BENCHMARK.metric_specs(config())}
    assert {k for k, s in specs.items() if s.paper} == {
        "recovery",
        "s_acc_mean",
        "s_cons",
        "s_logic",
        "s_rob",
        "s_info",
    }
    assert all(s.unit == SHARE for k, s in specs.items() if k.startswith("recovery") or k == "format_failure_rate")
    assert all(
        s.unit == SCORE for k, s in specs.items() if k.startswith(("s_", "e_", "r_", "md")) or k.endswith("_mean")
    )
    assert all(s.resampling.name == "expression" for s in specs.values())
    found = cells(config())
    # table 11's cells are the same diagnostics over the canonical inputs; figure 4's the Recovery variants
    assert {n.rsplit("/", 1)[1] for n in found if n.startswith("zero_shot/canonical/")} == {
        "recovery", "recovery_default", "recovery_strict", "s_acc_mean", "s_info", "s_logic", "s_cons", "e_perf",
        "r_sens", "s_struct",
    }  # fmt: skip
    assert {n.rsplit("/", 1)[1] for n in found if n.startswith("zero_shot/pattern/ABDC/")} == {
        "recovery_default",
        "recovery_strict",
        "recovery_default_excl_identity",
        "recovery_strict_excl_identity",
    }


def test_every_value_is_the_specs_and_s_cons_s_rob_are_bit_identical_with_the_paper_formulas():
    body = aggregate()
    m = body["settings"]["zero_shot"]["metrics"]
    for name, c in cells(config()).items():  # every cell's value is what the metrics body stores at its path
        if c.spec.key != "s_logic":  # nli not computed in this profile: the aggregate says None
            assert evaluate.value(c) == evaluate.read(body, c.path), name
    # S_Cons: the mean over expressions of eqs. 9-11 (the samples of test_orderprobe_aggregate)
    x1 = metrics.consistency([metrics.sample_gap([0.2, 0.6]), metrics.sample_gap([0.5, 0.5, 0.5])])
    x2 = metrics.consistency([metrics.sample_gap([0.3, 0.9, 0.6])])
    assert m["s_cons"] == math.fsum([x1.s_cons, x2.s_cons]) / 2
    # S_Rob: the scalar formulas on S_seq and the category means
    mu = body["settings"]["zero_shot"]["category_means"]
    assert m["s_struct"] == metrics.s_struct(list(mu.values()))
    assert m["s_rob"] == metrics.harmonic_mean(m["s_seq"], m["s_struct"])


def resampled(frame, draws: list[str]):
    """The rows of the drawn expressions, an expression drawn twice as two (renamed) expressions."""
    parts = []
    for k, expression in enumerate(draws):
        rows = frame[frame["expression_id"] == expression].copy()
        rows["expression_id"] = f"{expression}#{k}"
        parts.append(rows)
    return pd.concat(parts, ignore_index=True)


@pytest.mark.parametrize("key", ["recovery", "s_acc_mean", "s_cons", "e_perf", "s_seq", "mdr", "s_struct", "s_rob"])
def test_a_replicate_is_the_value_on_the_resampled_expressions(key):
    """One formula: the estimand's reduce of a resample's summed features is the spec's value on
    the rows of the expressions that resample drew."""
    frame = table(zero_shot_rows())
    c = cells(config())[f"zero_shot/{key}"]
    estimand = evaluate.estimand(c)
    assert estimand is not None and estimand.unit == "expression"
    ids = estimand.ids.tolist()
    draws = [ids[0], ids[0], *ids[2:]]  # the first expression twice, the second not
    weights = np.array([[draws.count(u) for u in ids]], dtype=float)
    replicate = float(estimand.reduce(weights @ estimand.features)[0])
    expected = c.spec.statistic.value(c.spec.rows.select(resampled(frame, draws)))
    assert replicate == pytest.approx(expected, abs=1e-12) if expected is not None else np.isnan(replicate)


def test_released_s_seq_and_s_rob_have_no_interval_and_say_why():
    cfg = config(compatibility="released")
    found = cells(cfg)
    body = aggregate(OrderProbeScore(compatibility="released"))
    for key in ("s_seq", "mdr", "mda", "s_rob"):
        c = found[f"zero_shot/{key}"]
        assert c.spec.no_interval is not None and "per permutation pattern" in c.spec.no_interval
        assert evaluate.estimand(c) is None
        assert evaluate.value(c) == body["settings"]["zero_shot"]["metrics"][key]
    assert evaluate.estimand(found["zero_shot/s_cons"]) is not None  # S_Cons keeps its per-expression form
