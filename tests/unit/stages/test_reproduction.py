"""Reproduced beside published (report.published): a reproducing model's cells against the paper's
values (Δ, the interval and noise-floor decisions, the scorecard), the papers' models as
reference rows, and the params that name them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from idiombench.benchmarks.chengyu_bench import BENCHMARK
from idiombench.core.errors import ConfigError
from idiombench.metrics import PERCENT
from idiombench.params.overlay import read_params_raw
from idiombench.pipeline.config import parse_params
from idiombench.report.tables import Cell, CellRef, Table, metric_cell
from idiombench.stages.report_noise import NoiseFloors
from idiombench.stages.report_published import REFERENCE_MARK, add_reference_rows, reproduction_table
from idiombench.stages.report_uncertainty import Replicates, Target, annotate_table
from idiombench.stages.reproduction import Scorecard, reproduce
from idiombench.statistics import mean
from idiombench.statistics.config import UncertaintyConfig

ROOT = Path(__file__).resolve().parents[3]
BENCHMARK_UNCERTAINTY = UncertaintyConfig(resamples=200)


def connotation_scores(right: int, items: int = 40) -> dict[str, pd.DataFrame]:
    rows = [
        {
            "prompt_id": f"p{i}",
            "pass": "main",
            "sample_index": 0,
            "item_id": f"c{i}",
            "task": "connotation_sample",
            "passage": None,
            "correct": i < right,
            "ok": True,
            "parse_failed": False,
        }
        for i in range(items)
    ]
    return {"connotation": pd.DataFrame(rows)}


def params_reproducing(raw: dict, paper_model: str):
    raw = {**raw, "report": {"published": {"reproduces": {"m": paper_model}}}}
    raw["models"] = {**raw["models"], "m": {"backend": "oracle"}}
    return parse_params(raw)


@pytest.fixture
def raw_params():
    return read_params_raw(ROOT / "params.yaml")


def test_a_cell_outside_its_interval_and_one_inside(raw_params) -> None:
    scores = connotation_scores(20)  # 50 % of 40 items
    body = {"settings": {"connotation": {"metrics": {"accuracy": 50.0}}}}
    floors = NoiseFloors({("m", "chengyu-bench", "connotation"): 0.5})  # a share: 50 points
    far = reproduce(params_reproducing(raw_params, "gemini-2.0-flash"), "chengyu-bench", "m", body, scores, floors)
    (cell,) = [r for r in far if r.name == "connotation/accuracy"]
    assert cell.published.printed == "95.19" and cell.expected == 95.19 and cell.value == 50.0
    assert cell.delta == pytest.approx(-45.19)
    assert cell.low is not None and cell.high is not None and cell.low < 50.0 < cell.high < 95.19
    assert cell.within_interval is False  # built to fall outside: 95.19 is far above a 40-item interval
    assert cell.floor == pytest.approx(50.0) and cell.within_floor is True  # |Δ| 45.19 <= 50
    near = reproduce(params_reproducing(raw_params, "random"), "chengyu-bench", "m", body, scores, None)
    (cell,) = [r for r in near if r.name == "connotation/accuracy"]
    assert cell.expected == 50.0 and cell.delta == 0.0 and cell.within_interval is True
    assert cell.floor is None and cell.within_floor is None
    card = Scorecard.of("m", "gemini-2.0-flash", far)
    assert (card.cells, card.with_interval, card.within_interval) == (len(far), 1, 0)
    assert card.metrics()["reproduction/within_interval"] == 0.0
    table = reproduction_table("chengyu-bench", far, lambda m: m)
    assert table is not None and table.rows[0][6].text == "-45.19" and table.rows[0][7].text == "no"


def test_a_model_reproduces_nothing_unless_params_say_so(default_params) -> None:
    body = {"settings": {"connotation": {"metrics": {"accuracy": 50.0}}}}
    assert reproduce(default_params, "chengyu-bench", "oracle", body, connotation_scores(20)) == []


def test_params_name_a_known_model_and_a_published_paper_model(raw_params) -> None:
    with pytest.raises(
        ConfigError, match=r"report\.published\.reproduces\.m: no benchmark publishes values of 'gpt-9'"
    ):
        params_reproducing(raw_params, "gpt-9")
    raw = {**raw_params, "report": {"published": {"reproduces": {"nobody": "random"}}}}
    with pytest.raises(ConfigError, match=r"report\.published\.reproduces\.nobody: unknown model 'nobody'"):
        parse_params(raw)


def test_reference_rows_are_marked_and_never_best() -> None:
    published = BENCHMARK.published_cells()
    run = [
        [Cell(model), metric_cell(value, PERCENT, 2, ref=CellRef(model, "connotation/accuracy")), Cell("4")]
        for model, value in (("a", 60.0), ("b", 40.0))
    ]
    table = Table("chengyu_bench_table7", "T7", ["Model", "Connotation", "Items"], run)
    added = add_reference_rows(table, published, run_here={"gpt-4o"})
    names = [row[0].text for row in table.rows[2:]]
    assert added == len(names) and "Gemini-2.5-Pro" in names and "GPT-4o" not in names  # gpt-4o is run here
    gemini = next(row for row in table.rows if row[0].text == "Gemini-2.5-Pro")
    assert gemini[0].marks == REFERENCE_MARK and gemini[1].text == "97.04" and gemini[2].text == "—"
    assert any(note.startswith(REFERENCE_MARK) for note in table.footnotes)
    units = [f"i{k}" for k in range(40)]
    targets = {
        m: {"connotation/accuracy": Target(mean(units, [1.0] * right + [0.0] * (40 - right)))}
        for m, right in (("a", 24), ("b", 16))
    }
    config = BENCHMARK_UNCERTAINTY
    annotate_table(table, targets, config, Replicates(config), lambda m: m)
    marks = {row[0].text: row[1].marks for row in table.rows}
    assert "▲" in marks["a"] and all("▲" not in marks[name] for name in names)  # 97.04 is higher, yet not best
    assert all("±" not in row[1].text for row in table.rows[2:])


def test_a_table_that_reproduces_no_paper_table_gets_no_reference_row() -> None:
    table = Table("chengyu_bench_parse_counts", "Counts", ["Model", "Rows"], [[Cell("a"), Cell("4")]])
    assert add_reference_rows(table, BENCHMARK.published_cells(), set()) == 0 and len(table.rows) == 1
