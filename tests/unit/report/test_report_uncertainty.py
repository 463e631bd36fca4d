"""The report's intervals and significance marks (report.uncertainty): cells, CSV bounds,
companion tables, and estimands that reproduce the aggregates' numbers."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from idiombench import statistics as st
from idiombench.benchmarks.registry import NAMES, get_benchmark
from idiombench.benchmarks.base import Benchmark
from idiombench.benchmarks.orderprobe.config import OrderProbeScore
from idiombench.benchmarks.orderprobe.uncertainty import group_estimands
from idiombench.report.tables import Cell, CellRef, Table, cell
from idiombench.report.uncertainty import BEST, TIED, annotate_table, Replicates
from idiombench.statistics.config import UncertaintyConfig
from orderprobe_rows import aggregate, cot_rows, table, zero_shot_rows


def toy() -> tuple[Table, dict[str, dict[str, st.Estimand]]]:
    rng = np.random.default_rng(0)
    units = [f"i{k:03d}" for k in range(200)]
    good, bad = (rng.random(200) < 0.8).astype(float), (rng.random(200) < 0.3).astype(float)
    near = np.where(rng.random(200) < 0.03, 1.0 - good, good)  # a model almost identical to the best
    data = {"good": good, "bad": bad, "near": near}
    estimands = {m: {"acc": st.mean(units, v)} for m, v in data.items()}
    rows = [[Cell(m), cell(100 * v.mean(), "{:.1f}", ref=CellRef(m, "acc", 100.0)), Cell("n/a", ref=CellRef(m, "none"))]
            for m, v in data.items()]
    return Table("toy", "Toy", ["Model", "Accuracy", "Other"], rows), estimands


def annotate(t: Table, estimands, config: UncertaintyConfig = UncertaintyConfig()) -> list[Table]:
    return annotate_table(t, estimands, config, Replicates(config), lambda m: m)


def test_cells_get_intervals_best_and_tied_marks_and_the_csv_bounds() -> None:
    t, estimands = toy()
    companions = annotate(t, estimands)
    accuracy = {row[0].text: row[1] for row in t.rows}
    assert "±" in accuracy["good"].text and accuracy["good"].low < 100 * estimands["good"]["acc"].value() < accuracy["good"].high
    marks = {m: c.marks for m, c in accuracy.items()}
    assert BEST in marks["good"] or BEST in marks["near"]
    assert TIED in marks["near"] + marks["good"] and not (BEST in marks["bad"] or TIED in marks["bad"])
    header, *body = list(csv.reader(io.StringIO(t.to_csv())))
    assert header == ["Model", "Accuracy", "Accuracy_lo", "Accuracy_hi", "Other"]
    assert all(float(row[2]) <= float(row[3]) for row in body)
    assert [c.table_id for c in companions] == ["toy_intervals", "toy_comparisons"]
    comparisons = companions[1]
    assert len(comparisons.rows) == 3  # every pair of models, BH-adjusted together
    q = [float(r[7].text) for r in comparisons.rows]
    p = [float(r[6].text) for r in comparisons.rows]
    assert all(qi >= pi for pi, qi in zip(p, q))
    assert "paired bootstrap" in t.footnotes[-1] and "Benjamini-Hochberg" in t.footnotes[-1]


def test_cells_on_fewer_units_than_min_units_get_no_interval_and_no_mark() -> None:
    """One item per model: a bootstrap would print ±0 and a test would call 100 vs 0 significant."""
    estimands = {m: {"acc": st.mean(["i000"], np.array([v]))} for m, v in (("good", 1.0), ("bad", 0.0))}
    rows = [[Cell(m), cell(100 * v, "{:.1f}", ref=CellRef(m, "acc", 100.0))] for m, v in (("good", 1.0), ("bad", 0.0))]
    t = Table("tiny", "Tiny", ["Model", "Accuracy"], rows)
    assert annotate(t, estimands) == []
    assert [row[1].text for row in t.rows] == ["100.0", "0.0"] and not any(row[1].marks for row in t.rows)
    assert t.footnotes == ["No interval: every cell rests on fewer than 10 units (report.uncertainty.min_units)."]
    big, big_estimands = toy()
    annotate(big, big_estimands, UncertaintyConfig(min_units=201))  # 200 units each
    assert not any("±" in row[1].text for row in big.rows)
    annotate(t2 := toy()[0], toy()[1], UncertaintyConfig(min_units=200))
    assert all("±" in row[1].text for row in t2.rows)


def test_the_same_params_give_byte_identical_tables() -> None:
    first, estimands = toy()
    second, _ = toy()
    annotate(first, estimands)
    annotate(second, estimands)
    assert first.to_csv() == second.to_csv() and first.to_markdown() == second.to_markdown()
    assert first.to_latex() == second.to_latex()


def test_permutation_test_and_a_single_model() -> None:
    t, estimands = toy()
    annotate(t, estimands, UncertaintyConfig(test="paired-permutation", resamples=500))
    assert "paired permutation test" in t.footnotes[-1]
    single = Table("one", "One", ["Model", "Accuracy"], [t.rows[0][:1] + [cell(100 * estimands["good"]["acc"].value(), "{:.1f}",
                                                                               ref=CellRef("good", "acc", 100.0))]])
    companions = annotate(single, estimands)
    assert "One model per comparison" in single.footnotes[-1] and not companions[1].rows


def test_cells_without_per_unit_data_say_so() -> None:
    t = Table("t", "T", ["Model", "Accuracy"], [[Cell("m"), cell(50.0, "{:.1f}", ref=CellRef("m", "acc", 100.0))]])
    assert annotate(t, {}) == [] and "No interval" in t.footnotes[-1] and "±" not in t.rows[0][1].text


@pytest.mark.parametrize("setting,rows", [("zero_shot", zero_shot_rows), ("cot", cot_rows)])
def test_orderprobe_estimands_reproduce_the_aggregate(setting: str, rows) -> None:
    metrics = aggregate()["settings"][setting]["metrics"]
    estimands = group_estimands(table(rows()), OrderProbeScore(), setting)
    assert {f"{setting}/recovery", f"{setting}/s_acc_mean", f"{setting}/s_info"} <= set(estimands)
    compared = 0
    for name, estimand in estimands.items():
        metric = name.rsplit("/", 1)[1]
        if metrics[metric] is not None:  # None (a role not computed): the cell is "—", with no reference
            assert estimand.value() == pytest.approx(metrics[metric]), name
            compared += 1
    assert compared >= 3
    if setting == "zero_shot":
        assert estimands["zero_shot/s_cons"].unit == "expression" and estimands["zero_shot/s_rob"].unit == "expression"


def test_every_builtin_benchmark_exposes_estimands() -> None:
    for name in NAMES:
        bench = get_benchmark(name)
        assert type(bench).estimands is not Benchmark.estimands, name
