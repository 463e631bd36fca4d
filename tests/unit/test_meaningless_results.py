"""Meaningless results fail (issue 13, item 3): an empty or non-matching predictions file, an
unknown --setting, and a model whose share of failed requests is over its limit exit
non-zero with one line, instead of scoring 0.00."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from test_credential_canary import Echo, port  # noqa: F401 (a fixture: the half-failing server)
from typer.testing import CliRunner

from gen_project import orderprobe_items, write_project
from idiombench.cli import app
from idiombench.core.errors import IdiombenchError
from idiombench.core.io import write_parquet
from idiombench.generation.table import GENERATION_SCHEMA
from idiombench.pipeline.config import load_params
from idiombench.stages.generate import run_generate


def evaluate(project: Path, file: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        app,
        [
            "evaluate-predictions",
            str(file),
            "--benchmark",
            "orderprobe",
            "--task",
            "restore",
            "--params",
            str(project / "params.yaml"),
            *args,
        ],
    )
    return result.exit_code, result.output


def generations(path: Path, task: str, count: int) -> Path:
    rows = [
        {
            "prompt_id": f"p{i}",
            "benchmark": "orderprobe",
            "task": task,
            "setting": "zero_shot",
            "item_id": item.item_id,
            "prompt_hash": "",
            "pass": "main",
            "sample_index": 0,
            "rotation": 0,
            "text": item.answer,
            "prompt_tokens": None,
            "completion_tokens": None,
            "finish_reason": "stop",
            "error": None,
            "request_key": "",
        }
        for i, item in enumerate(orderprobe_items()[:count])
    ]
    write_parquet(path, pa.Table.from_pylist(rows, schema=GENERATION_SCHEMA))
    return path


@pytest.mark.parametrize("case", ["empty", "another task"])
def test_predictions_matching_no_item_exit_2_in_one_line(tmp_path: Path, monkeypatch, case: str) -> None:
    project = write_project(tmp_path, {"oracle": {"backend": "oracle"}})
    monkeypatch.chdir(project)
    file = generations(
        tmp_path / "predictions.parquet", "restore" if case == "empty" else "reorder", 0 if case == "empty" else 5
    )
    code, output = evaluate(project, file, "--setting", "zero_shot")
    lines_read = 0 if case == "empty" else 5
    assert code == 2
    assert output.strip().replace("\n", " ") == (
        f"error: {file}: no prediction matches an item of orderprobe/restore ({lines_read} lines read; 0 naming no "
        f"item) (expected predictions for the 24 items of orderprobe/restore/zero_shot, each identifying one item "
        f"(docs/troubleshooting.md#unmatched-and-ambiguous-records))"
    )


def test_an_unknown_setting_exits_2_naming_the_configured_ones(tmp_path: Path, monkeypatch) -> None:
    project = write_project(tmp_path, {"oracle": {"backend": "oracle"}})
    monkeypatch.chdir(project)
    file = generations(tmp_path / "predictions.parquet", "restore", 5)
    code, output = evaluate(project, file, "--setting", "7-shot")
    assert code == 2
    settings = ", ".join(load_params(project / "params.yaml").benchmark("orderprobe").render.settings)
    assert output.strip().replace("\n", " ") == (
        f"error: --setting '7-shot' is not a setting of orderprobe (benchmarks.orderprobe.render.settings: {settings})"
    )


def openai_model(server_port: int, **extra) -> dict:
    return {
        "backend": "openai",
        "model": "served",
        "base_url": f"http://127.0.0.1:{server_port}/v1",
        "api_key_env": None,
        "concurrency": 1,
        "max_retries": 0,
        "timeout_s": 10,
        "batch_size": 4,
        **extra,
    }


def test_a_model_with_failed_requests_fails_and_writes_nothing(tmp_path: Path, port: int, monkeypatch) -> None:  # noqa: F811
    project = write_project(tmp_path, {"api": openai_model(port)})
    monkeypatch.chdir(project)
    with pytest.raises(IdiombenchError) as error:
        run_generate(load_params(project / "params.yaml"), "api", echo=lambda _: None)
    message = str(error.value)
    total = Echo.calls
    assert message.startswith(f"generate api: {(total + 1) // 2:,} of {total:,} requests failed (")
    assert "more than models.api.max_failed_share (0) allows; first error: HTTP 401: " in message
    assert message.endswith("nothing written (successes are cached: a rerun retries only the failures)")
    assert "\n" not in message
    assert not (project / "results" / "generations" / "api").exists()


def test_failures_within_the_configured_share_pass(tmp_path: Path, port: int, monkeypatch) -> None:  # noqa: F811
    project = write_project(tmp_path, {"api": openai_model(port, max_failed_share=0.6)})
    monkeypatch.chdir(project)
    result = run_generate(load_params(project / "params.yaml"), "api", echo=lambda _: None)
    total = result.summary["total"]
    assert total["failed"] == (Echo.calls + 1) // 2 and total["generated"] == Echo.calls // 2
    assert (project / "results" / "generations" / "api" / "generation_info.json").is_file()
