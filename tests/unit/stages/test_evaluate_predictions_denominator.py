"""`evaluate-predictions --denominator test-set|records` and its coverage counts (issue 12,
item 4), on hand-written SemanticQA items: a file with records for 4 of the 8 items of a
task (3 right, 1 wrong), plus one record of an item the test set does not have."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from idiombench.cli import app
from idiombench.core.errors import IdiombenchError
from idiombench.core.io import write_parquet
from idiombench.core.items import Item, write_items
from idiombench.generation.table import GENERATION_SCHEMA
from idiombench.pipeline.config import load_params
from idiombench.stages.predictions import evaluate_predictions

ROOT = Path(__file__).resolve().parents[3]
CHOICES = ("criticism game", "exchanged accusations", "Proper Noun", "Meta Usage")
GOLD = "BDCABDCA"  # the answers of items d0..d7
ANSWERS = {"d0": "B", "d1": "D", "d2": "C", "d3": "B"}  # records for 4 items: d3 is wrong
ITEMS, RECORDS, RIGHT = len(GOLD), len(ANSWERS), 3


def items() -> list[Item]:
    return [
        Item(
            item_id=f"d{i}",
            benchmark="semanticqa",
            task="idiom_detection",
            language="en",
            input="ctx",
            choices=CHOICES,
            answer=gold,
            fields={"idiom": "blame game", "id": f"d{i}"},
            meta={"no_gold": False},
        )
        for i, gold in enumerate(GOLD)
    ]


def row(item_id: str, text: str | None) -> dict:
    return {
        "prompt_id": f"semanticqa/idiom_detection/0-shot/{item_id}",
        "benchmark": "semanticqa",
        "task": "idiom_detection",
        "setting": "0-shot",
        "item_id": item_id,
        "prompt_hash": "",
        "pass": "main",
        "sample_index": 0,
        "rotation": 0,
        "text": text or "",
        "prompt_tokens": None,
        "completion_tokens": None,
        "finish_reason": "stop" if text is not None else "error",
        "error": None if text is not None else "HTTP 500",
        "request_key": "",
    }


def predictions(path: Path, answers: dict[str, str | None]) -> Path:
    rows = [row(item_id, text) for item_id, text in answers.items()] + [row("stray", "B")]
    write_parquet(path, pa.Table.from_pylist(rows, schema=GENERATION_SCHEMA))
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    write_items(tmp_path / "data" / "processed" / "semanticqa" / "idiom_detection.parquet", items())
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(file: Path, denominator: str):
    return evaluate_predictions(
        load_params(ROOT / "params.yaml"),
        benchmark="semanticqa",
        task="idiom_detection",
        setting="0-shot",
        model="elsewhere",
        path=file,
        fmt="idiombench",
        denominator=denominator,
    )


def test_the_two_denominators_differ_by_the_coverage(project: Path) -> None:
    file = predictions(project / "p.parquet", ANSWERS)
    test_set, records = run(file, "test-set"), run(file, "records")
    assert test_set.metrics == {"ACC": pytest.approx(100.0 * RIGHT / ITEMS)}  # 3 of 8
    assert records.metrics == {"ACC": pytest.approx(100.0 * RIGHT / RECORDS)}  # 3 of 4
    # both numbers are always computed; only the headline follows --denominator
    assert test_set.by_denominator == records.by_denominator
    assert test_set.coverage() == {
        "test_set_items": ITEMS,
        "records_read": RECORDS + 1,
        "records_matched": RECORDS,
        "records_unmatched": 1,
        "records_ambiguous": 0,
        "records_without_identifying_field": 0,
        "records_conflicting": 0,
        "items_with_conflicting_records": 0,
        "items_with_prediction": RECORDS,
        "items_without_record": ITEMS - RECORDS,
        "share_of_test_set": pytest.approx(RECORDS / ITEMS),
    }


def test_a_failed_record_stays_in_the_records_denominator_as_wrong(project: Path) -> None:
    result = run(predictions(project / "p.parquet", {**ANSWERS, "d4": None}), "records")
    assert (result.recorded, result.predicted) == (RECORDS + 1, RECORDS)
    assert result.metrics == {"ACC": pytest.approx(100.0 * RIGHT / (RECORDS + 1))}


def test_a_complete_file_gives_one_number(project: Path) -> None:
    result = run(predictions(project / "p.parquet", {f"d{i}": gold for i, gold in enumerate(GOLD)}), "records")
    assert result.by_denominator["records"] == result.by_denominator["test-set"] == {"ACC": pytest.approx(100.0)}


def test_the_cli_json_carries_both_numbers_and_the_coverage(project: Path) -> None:
    file = predictions(project / "p.parquet", ANSWERS)
    result = CliRunner().invoke(
        app,
        [
            "evaluate-predictions",
            str(file),
            "--benchmark",
            "semanticqa",
            "--task",
            "idiom_detection",
            "--setting",
            "0-shot",
            "--denominator",
            "records",
            "--json",
            "--params",
            str(ROOT / "params.yaml"),
        ],
    )
    assert result.exit_code == 0, result.output
    body = json.loads(result.output.strip().splitlines()[-1])
    assert body["denominator"] == "records"
    assert body["metrics"] == {"ACC": pytest.approx(75.0)}
    assert body["metrics_by_denominator"] == {"records": body["metrics"], "test-set": {"ACC": pytest.approx(37.5)}}
    assert (body["coverage"]["records_matched"], body["coverage"]["test_set_items"]) == (RECORDS, ITEMS)
    summary = " ".join(result.output.split())
    assert "8 items, 4 with a prediction, 4 without (not in the denominator)" in summary
    assert "denominator records: 4 items" in summary


def test_an_unknown_denominator_is_refused(project: Path) -> None:
    with pytest.raises(IdiombenchError, match="unknown denominator 'lines' \\(known: test-set, records\\)"):
        run(predictions(project / "p.parquet", ANSWERS), "lines")


def test_compatibility_released_reads_as_the_authors_scorer_and_divides_by_the_records(project: Path) -> None:
    """`--compatibility released`: compute_metric's reading (the stored text, its part before ':'),
    an empty response not scored (main.py skips it), `records` the default denominator."""
    file = predictions(project / "p.parquet", {"d0": "Output: B", "d1": "D: Meta Usage", "d2": "  ", "d3": "B"})
    args = [
        "evaluate-predictions",
        str(file),
        "--benchmark",
        "semanticqa",
        "--task",
        "idiom_detection",
        "--setting",
        "0-shot",
        "--json",
        "--params",
        str(ROOT / "params.yaml"),
    ]
    paper = json.loads(CliRunner().invoke(app, [*args, "--denominator", "records"]).output.strip().splitlines()[-1])
    result = CliRunner().invoke(app, [*args, "--compatibility", "released"])
    assert result.exit_code == 0, result.output
    released = json.loads(result.output.strip().splitlines()[-1])
    assert paper["metrics"] == {"ACC": pytest.approx(50.0)}  # B, D read; the empty one and d3 wrong
    assert released["denominator"] == "records"
    assert released["metrics"] == {"ACC": pytest.approx(100.0 / 3)}  # only "D: ..." right; the empty one not scored
    assert "1 empty response(s) not scored" in " ".join(result.output.split())
    refused = CliRunner().invoke(app, [*args, "--compatibility", "exact"])
    assert refused.exit_code == 2 and "expected one of paper, released" in refused.output
    other = CliRunner().invoke(app, [*args[:3], "g-idiomalign", *args[4:], "--compatibility", "released"])
    assert other.exit_code == 2 and "g-idiomalign has no compatibility modes" in " ".join(other.output.split())


# --------------------------------------------------------------------------- one record, one item (issue 30)


def published(path: Path, *records: dict) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def cli(file: Path, *extra: str):
    return CliRunner().invoke(
        app,
        [
            "evaluate-predictions",
            str(file),
            "--benchmark",
            "semanticqa",
            "--task",
            "idiom_detection",
            "--setting",
            "0-shot",
            "--params",
            str(ROOT / "params.yaml"),
            *extra,
        ],
    )


def test_a_record_without_an_identifying_field_answers_no_item(project: Path) -> None:
    """The issue's example: `{"prediction": "A"}` matched all 273 items; now it matches none,
    and a file in which no record answers an item is refused with one line."""
    result = cli(published(project / "one.jsonl", {"prediction": "A"}), "--json")
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "no prediction matches an item of semanticqa/idiom_detection" in errors[0]
    assert "1 without an identifying field" in " ".join(result.output.split())


def test_a_record_that_fits_several_items_is_ambiguous(project: Path) -> None:
    """`{"idiom": "blame game"}` fits all 8 items: it answers none (counted ambiguous); records
    naming one item each answer theirs."""
    file = published(
        project / "p.jsonl",
        {"idiom": "blame game", "prediction": "B"},
        {"idiom": "blame game", "id": "d0", "prediction": "B"},
        {"idiom": "blame game", "id": "d1", "prediction": "D"},
    )
    result = cli(file, "--json")
    assert result.exit_code == 0, result.output
    body = json.loads(result.output.strip().splitlines()[-1])
    assert body["coverage"]["records_ambiguous"] == 1 and body["coverage"]["records_matched"] == 2
    assert body["metrics_by_denominator"] == {
        "records": {"ACC": pytest.approx(100.0)},
        "test-set": {"ACC": pytest.approx(25.0)},
    }
    assert "1 ambiguous (each names several items: line 1 names 8; not used)" in " ".join(result.output.split())


def test_records_of_one_item_that_disagree_answer_nothing(project: Path) -> None:
    """Two rows for d0 with different texts: neither is used, d0 is wrong under both denominators
    (it has records), and the conflict is reported."""
    rows = [row("d0", "B"), row("d0", "C"), row("d1", "D")]
    write_parquet(project / "p.parquet", pa.Table.from_pylist(rows, schema=GENERATION_SCHEMA))
    result = run(project / "p.parquet", "records")
    assert (result.recorded, result.predicted) == (2, 1)
    assert result.metrics == {"ACC": pytest.approx(50.0)}
    assert result.coverage()["records_conflicting"] == 2 and result.coverage()["items_with_conflicting_records"] == 1
    write_parquet(
        project / "q.parquet", pa.Table.from_pylist([row("d0", "B"), row("d0", "B")], schema=GENERATION_SCHEMA)
    )
    assert run(project / "q.parquet", "records").metrics == {"ACC": pytest.approx(100.0)}


def test_a_table_with_a_column_of_the_wrong_type_is_refused(project: Path) -> None:
    rows = [row("d0", "B") | {"text": 1}]
    schema = pa.schema([f if f.name != "text" else pa.field("text", pa.int64()) for f in GENERATION_SCHEMA])
    write_parquet(project / "p.parquet", pa.Table.from_pylist(rows, schema=schema))
    result = cli(project / "p.parquet")
    assert result.exit_code == 2 and "not an idiombench generations table: text is int64" in " ".join(
        result.output.split()
    )
