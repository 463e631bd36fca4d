"""A model whose generate failed (more failed requests than max_failed_share allows) is marked
"failed" in the report, with the reason in a footnote, never shown as 0.00 or as an older
run's scores (issue 13, item 3)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from gen_project import write_project
from idiombench.core import paths
from idiombench.core.errors import IdiombenchError
from idiombench.core.io import write_json
from idiombench.pipeline.config import load_params
from idiombench.report.tables import Cell, Table
from idiombench.stages.generate import run_generate
from idiombench.stages.report import FAILED, build_report, failed_section, mark_failed
from orderprobe_rows import aggregate, cot_rows, table, zero_shot_rows  # noqa: F401 (fixture rows)

UNREACHABLE = {
    "backend": "openai",
    "model": "m",
    "base_url": "http://127.0.0.1:9/v1",
    "api_key_env": None,
    "max_retries": 0,
    "timeout_s": 5,
    "batch_size": 64,
    "display_name": "API model",
}


def rows(path: Path) -> list[list[str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.reader(handle))


def test_a_failed_model_has_failed_cells_and_a_footnote_never_a_score(tmp_path: Path, monkeypatch) -> None:
    project = write_project(tmp_path, {"oracle": {"backend": "oracle"}, "api": UNREACHABLE})
    monkeypatch.chdir(project)
    params = load_params(project / "params.yaml")
    # oracle's metrics (an aggregate body from hand-made score rows); an older, successful run
    # of api left the same metrics: they must not appear as this configuration's results.
    for model in ("oracle", "api"):
        write_json(
            paths.metrics_file(benchmark="orderprobe", model=model),
            {**aggregate(), "benchmark": "orderprobe", "model": model, "status": "scored"},
        )
    with pytest.raises(IdiombenchError, match="requests failed"):
        run_generate(params, "api", echo=lambda _: None)
    record = json.loads(paths.generate_failure("api").read_text(encoding="utf-8"))
    assert record["failed"] == record["total"] > 0 and "max_failed_share" in record["reason"]
    assert not paths.generations_dir("api").exists()

    build_report(params)
    tables = sorted((project / "reports" / "tables").glob("*.csv"))
    model_tables = [t for t in tables if rows(t)[0][0] == "Model"]
    assert model_tables
    for csv_path in model_tables:
        body = rows(csv_path)[1:]
        api_rows = [row for row in body if row[0] == "API model"]
        assert api_rows == [["API model"] + [FAILED] * (len(body[0]) - 1)], csv_path.name
        assert any(row[0] == "oracle" for row in body), csv_path.name  # the model that did not fail keeps its rows
        markdown = csv_path.with_suffix(".md").read_text(encoding="utf-8")
        assert (
            f"{FAILED}: API model: generate api: {record['failed']:,} of {record['total']:,} requests failed"
            in markdown
        )

    # The next successful run removes the record: the model is reported again.
    paths.generate_failure("oracle").write_text(json.dumps({"reason": "earlier failure"}), encoding="utf-8")
    run_generate(params, "oracle", echo=lambda _: None)
    assert not paths.generate_failure("oracle").exists()


def test_mark_failed_only_touches_tables_with_a_row_per_model() -> None:
    failed = {"m": "generate m: 3 of 3 requests failed"}
    per_model = Table("t", "t", ["Model", "Setting", "ACC"], [[Cell("other"), Cell("0-shot"), Cell("50.0")]])
    per_pattern = Table("p", "p", ["Pattern", "ACC"], [[Cell("ABCD"), Cell("1.0")]])
    mark_failed(per_model, failed, str.upper)
    mark_failed(per_pattern, failed, str.upper)
    assert [c.display() for c in per_model.rows[-1]] == ["M", FAILED, FAILED]
    assert per_model.footnotes == ["failed: M: generate m: 3 of 3 requests failed"]
    assert len(per_pattern.rows) == 1 and per_pattern.footnotes == []


def test_a_benchmark_on_which_every_model_failed_gets_a_section_saying_so() -> None:
    section = failed_section("chengyu-bench", {"b": "why b", "a": "why a"}, lambda m: m)
    [failed_table] = section.tables
    assert failed_table.table_id == "chengyu_bench_failed"
    assert [[c.display() for c in row] for row in failed_table.rows] == [["a", FAILED], ["b", FAILED]]
    assert failed_table.footnotes == ["failed: a: why a", "failed: b: why b"]
