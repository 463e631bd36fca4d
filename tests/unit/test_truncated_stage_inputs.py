"""A truncated Parquet file that a stage reads outside the generic readers is one line naming it
(issue 23): the attention report's items, the attention stage's scores, OrderProbe's prompt index
and sample outputs (the corpus runs the stages that reach the others)."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from idiombench.core import paths
from idiombench.core.errors import DataError


def truncated(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"status": ["measured"] * 50, "value": list(range(50))}), path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def test_the_attention_report_names_a_truncated_items_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from idiombench.benchmarks.g_idiomalign.attention_report import figure

    monkeypatch.chdir(tmp_path)
    items = truncated(paths.attention_dir(benchmark="g-idiomalign", model="m") / "items.parquet")
    ctx = SimpleNamespace(display_name=lambda model: model, figures_dir=tmp_path)
    with pytest.raises(DataError, match=f"{items}: not a readable Parquet file"):
        figure(ctx, {"m": {}})


def test_the_attention_stage_names_a_truncated_scores_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from idiombench.stages.attention import load_scores

    monkeypatch.chdir(tmp_path)
    scores = truncated(paths.scores_dir(benchmark="g-idiomalign", model="m") / "no_gloss.parquet")
    (scores.parent / paths.SCORING_META).write_text('{"status": "scored"}', encoding="utf-8")
    with pytest.raises(DataError, match=f"{scores}: not a readable Parquet file"):
        load_scores(benchmark="g-idiomalign", model="m")


def test_orderprobe_names_a_truncated_prompts_or_scores_table(tmp_path: Path) -> None:
    from idiombench.benchmarks.orderprobe.report import sample_outputs_table
    from idiombench.benchmarks.orderprobe.score import load_prompt_index

    prompts = truncated(tmp_path / "prompts" / "zero_shot.parquet")
    with pytest.raises(DataError, match=f"{prompts}: not a readable Parquet file"):
        load_prompt_index(prompts.parent)
    scores = tmp_path / "scores" / "m" / "orderprobe" / "zero_shot.parquet"
    scores.parent.mkdir(parents=True)
    shutil.copy(prompts, scores)
    with pytest.raises(DataError, match=f"{scores}: not a readable Parquet file"):
        sample_outputs_table(["m"], lambda model: model, scores_root=tmp_path / "scores")
