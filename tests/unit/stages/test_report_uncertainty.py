"""The report's intervals and significance marks (report.uncertainty): cells, CSV bounds,
companion tables, and estimands that reproduce the aggregates' numbers."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from idiombench import statistics as st
from idiombench.benchmarks.registry import NAMES, get_benchmark
from idiombench.core.errors import IdiombenchError
from idiombench.metrics import PERCENT, evaluate
from idiombench.report.tables import Cell, CellRef, Table, metric_cell
from idiombench.stages.report_uncertainty import BEST, TIED, Replicates, Target, annotate_table
from idiombench.statistics.config import UncertaintyConfig
from orderprobe_rows import aggregate, cot_rows, table, zero_shot_rows


def accuracy_cell(model: str, share: float) -> Cell:
    return metric_cell(100 * share, PERCENT, 1, ref=CellRef(model, "acc"))


def toy() -> tuple[Table, dict[str, dict[str, Target]]]:
    rng = np.random.default_rng(0)
    units = [f"i{k:03d}" for k in range(200)]
    good, bad = (rng.random(200) < 0.8).astype(float), (rng.random(200) < 0.3).astype(float)
    near = np.where(rng.random(200) < 0.03, 1.0 - good, good)  # a model almost identical to the best
    data = {"good": good, "bad": bad, "near": near}
    estimands = {m: {"acc": Target(st.mean(units, v))} for m, v in data.items()}
    rows = [[Cell(m), accuracy_cell(m, v.mean()), Cell("n/a", ref=CellRef(m, "none"))] for m, v in data.items()]
    return Table("toy", "Toy", ["Model", "Accuracy", "Other"], rows), estimands


DEFAULT_UNCERTAINTY = UncertaintyConfig()


def annotate(t: Table, estimands, config: UncertaintyConfig = DEFAULT_UNCERTAINTY) -> list[Table]:
    return annotate_table(t, estimands, config, Replicates(config), lambda m: m)


def test_cells_get_intervals_best_and_tied_marks_and_the_csv_bounds() -> None:
    t, estimands = toy()
    companions = annotate(t, estimands)
    accuracy = {row[0].text: row[1] for row in t.rows}
    assert (
        "±" in accuracy["good"].text
        and accuracy["good"].low < 100 * estimands["good"]["acc"].estimand.value() < accuracy["good"].high
    )
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
    assert all(qi >= pi for pi, qi in zip(p, q, strict=True))
    assert "paired bootstrap" in t.footnotes[-1] and "Benjamini-Hochberg" in t.footnotes[-1]


def test_cells_on_fewer_units_than_min_units_get_no_interval_and_no_mark() -> None:
    """One item per model: a bootstrap would print ±0 and a test would call 100 vs 0 significant."""
    estimands = {m: {"acc": Target(st.mean(["i000"], np.array([v])))} for m, v in (("good", 1.0), ("bad", 0.0))}
    rows = [[Cell(m), accuracy_cell(m, v)] for m, v in (("good", 1.0), ("bad", 0.0))]
    t = Table("tiny", "Tiny", ["Model", "Accuracy"], rows)
    assert annotate(t, estimands) == []
    assert [row[1].text for row in t.rows] == ["100.0", "0.0"] and not any(row[1].marks for row in t.rows)
    assert t.footnotes == [
        "No interval: every cell rests on fewer than 10 items (the bootstrap's resampling unit; "
        "report.uncertainty.min_units)."
    ]
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
    single = Table(
        "one",
        "One",
        ["Model", "Accuracy"],
        [t.rows[0][:1] + [accuracy_cell("good", estimands["good"]["acc"].estimand.value())]],
    )
    companions = annotate(single, estimands)
    assert "One model per comparison" in single.footnotes[-1] and not companions[1].rows


def test_cells_without_per_unit_data_say_so() -> None:
    t = Table("t", "T", ["Model", "Accuracy"], [[Cell("m"), accuracy_cell("m", 0.5)]])
    assert annotate(t, {}) == [] and "No interval" in t.footnotes[-1] and "±" not in t.rows[0][1].text


def test_a_metric_without_an_interval_says_why() -> None:
    t = Table("t", "T", ["Model", "Accuracy"], [[Cell("m"), accuracy_cell("m", 0.5)]])
    assert annotate(t, {"m": {"acc": Target(None, "a corpus-level score")}}) == []
    assert t.footnotes == ["No interval for 1 cell(s): a corpus-level score."]


def test_a_stored_value_its_scores_do_not_give_stops_the_report() -> None:
    """Never an interval silently dropped: metrics that are not the aggregate of the scores are an error."""
    t, estimands = toy()
    t.rows[0][1] = accuracy_cell("good", 0.5)  # not what good's scores give
    with pytest.raises(IdiombenchError, match=r"good, acc: its metrics file holds 50\.0 but its score tables give"):
        annotate(t, estimands)


@pytest.mark.parametrize("setting,rows", [("zero_shot", zero_shot_rows), ("cot", cot_rows)])
def test_orderprobe_estimands_reproduce_the_aggregate(setting: str, rows) -> None:
    metrics = aggregate()["settings"][setting]["metrics"]
    bench = get_benchmark("orderprobe")
    scopes = bench.metric_scopes({setting: table(rows())}, bench.config_model())
    cells = evaluate.estimands({"m": scopes})["m"]
    estimands = {
        name: found
        for name in cells
        if name.count("/") == 1 and (found := cells[name][1]) is not None  # the setting's cells, not a breakdown's
    }
    assert {f"{setting}/recovery", f"{setting}/s_acc_mean", f"{setting}/s_info"} <= set(estimands)
    compared = 0
    for name, estimand in estimands.items():
        metric = name.rsplit("/", 1)[1]
        if metrics[metric] is not None:  # None (a role not computed): the cell is "—", with no reference
            assert estimand.value() == pytest.approx(metrics[metric]), name
            compared += 1
    assert compared >= 3
    expressions = table(rows())["expression_id"].nunique()
    for name, estimand in estimands.items():  # every metric over perturbed inputs: the expression is the cluster
        assert estimand.unit == "expression" and estimand.n <= expressions, name
    assert estimands[f"{setting}/recovery"].n == expressions
    if setting == "zero_shot":  # S_Cons and S_Rob: per-expression values, resampled by expression too
        assert {"zero_shot/s_cons", "zero_shot/s_rob"} <= set(estimands)


def test_every_builtin_benchmark_declares_its_metrics() -> None:
    for name in NAMES:
        bench = get_benchmark(name)
        specs = bench.metric_specs(bench.config_model())
        assert specs and len({s.key for s in specs}) == len(specs), name


def test_g_idiomalign_resamples_source_idioms_and_reproduces_the_aggregate() -> None:
    import pandas as pd

    from idiombench.benchmarks.g_idiomalign import BENCHMARK
    from idiombench.benchmarks.g_idiomalign.aggregate import setting_bodies
    from idiombench.benchmarks.g_idiomalign.config import GIdiomAlignConfig

    # one German idiom asked into English and French, one French idiom into English
    frame = pd.DataFrame(
        {
            "item_id": ["mcq/de-en/0", "mcq/de-fr/0", "mcq/fr-en/0"],
            "idiom": ["de:nasses Element"] * 2 + ["fr:x"],
            "pass": "main",
            "group": ["En-target", "Other targets", "En-target"],
            "direction": ["de->en", "de->fr", "fr->en"],
            "duplicate_option": False,
            "correct": [True, False, True],
            "outcome": ["Correct", "LT", "Correct"],
            "invalid": False,
            "generation_failed": False,
            "ok": True,
        }
    )
    config = GIdiomAlignConfig()
    metrics = setting_bodies({"mcq": frame}, config)[0]["mcq"]["metrics"]
    found = evaluate.estimands({"m": BENCHMARK.metric_scopes({"mcq": frame}, config)})["m"]
    estimands = {name: estimand for name, (_, estimand) in found.items() if estimand is not None}
    overall = estimands["mcq/accuracy.macro.overall"]
    assert overall.unit == "idiom" and overall.n == 2
    assert 100 * overall.value() == pytest.approx(metrics["accuracy.macro.overall"])
    assert 100 * estimands["mcq/accuracy.micro.overall"].value() == pytest.approx(metrics["accuracy.micro.overall"])


def test_chid_resamples_passages_and_the_label_tasks_items() -> None:
    import pandas as pd

    from idiombench.benchmarks.chengyu_bench import BENCHMARK
    from idiombench.benchmarks.chengyu_bench.config import ChengyuBenchConfig

    chid = pd.DataFrame(
        {
            "item_id": ["00001", "00002", "00003"],
            "passage": ["p1", "p1", "p2"],
            "pass": "main",
            "task": "chid",
            "correct": [True, False, True],
        }
    )
    label = pd.DataFrame(
        {
            "item_id": ["c1", "c2"],
            "passage": [None, None],
            "pass": "main",
            "task": "connotation_sample",
            "correct": [True, False],
        }
    )
    scopes = BENCHMARK.metric_scopes({"chid_candidates": chid, "connotation": label}, ChengyuBenchConfig())
    found = evaluate.estimands({"m": scopes})["m"]
    estimands = {name: found[name][1] for name in ("chid_candidates/accuracy", "connotation/accuracy")}
    assert (estimands["chid_candidates/accuracy"].unit, estimands["chid_candidates/accuracy"].n) == ("passage", 2)
    assert estimands["chid_candidates/accuracy"].value() == pytest.approx(2 / 3)
    assert (estimands["connotation/accuracy"].unit, estimands["connotation/accuracy"].n) == ("item", 2)
