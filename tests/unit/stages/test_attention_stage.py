"""The attention stage end to end on a tiny random Llama built in a temp dir: it draws the items,
measures both gloss conditions, leaves an empty output unmeasured (Type 0), writes the per-item
table and the summary, and records a model on another backend as skipped with the reason."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
import yaml

from idiombench.benchmarks.g_idiomalign.render import render
from idiombench.core.io import write_json, write_parquet
from idiombench.core.items import Item, write_items
from idiombench.generation.table import write_generations
from idiombench.pipeline.config import load_params
from idiombench.stages.attention import run_attention
from idiombench.templating.prompts import write_prompts

ROOT = Path(__file__).resolve().parents[3]
OUTPUTS = ["gild the lily", 'Idiom: "break a leg".', ""]  # the last one is empty: Type 0


def item(row: int) -> Item:
    return Item(
        item_id=f"gen/zh-en/{row:05d}",
        benchmark="g-idiomalign",
        task="gloss_generation",
        language="en",
        input="画蛇添足",
        references=("gild the lily",),
        fields={
            "source_idiom": ["画蛇添足", "刻舟求剑", "一鸣惊人"][row],
            "source_language": "Chinese",
            "target_language": "English",
            "gloss": "to ruin something by adding unnecessary detail",
        },
        meta={
            "direction": "zh->en",
            "pair": "Chinese_English",
            "source_lang": "zh",
            "target_lang": "en",
            "row": row,
            "no_gloss_available": False,
            "other_references": [],
        },
    )


@pytest.fixture
def project(tmp_path: Path, tiny_chat_model: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    raw = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    raw["models"] = {
        "oracle": raw["models"]["oracle"],
        "tiny": {"backend": "hf", "model": str(tiny_chat_model), "device": "cpu", "dtype": "float32"},
    }
    raw["benchmarks"]["g-idiomalign"]["render"].update(settings=["no_gloss", "with_gloss"], sample=None)
    raw["benchmarks"]["g-idiomalign"]["attention"].update(models=None, items=None, min_group=1)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    params = load_params(tmp_path / "params.yaml")
    items = [item(row) for row in range(3)]
    write_items("data/processed/g-idiomalign/gloss_generation.parquet", items)
    rendered = render({"gloss_generation": items}, params.benchmark("g-idiomalign"), tmp_path)
    for setting, prompts in rendered.prompts.items():
        write_prompts(f"results/prompts/g-idiomalign/{setting}.parquet", prompts)
        rows = [
            {
                "prompt_id": p.prompt_id,
                "benchmark": "g-idiomalign",
                "task": p.task,
                "setting": setting,
                "item_id": p.item_id,
                "prompt_hash": p.prompt_hash,
                "pass": "main",
                "sample_index": 0,
                "rotation": 0,
                "text": text,
                "prompt_tokens": None,
                "completion_tokens": None,
                "finish_reason": "stop",
                "error": None,
                "request_key": p.prompt_id,
            }
            for p, text in zip(prompts, OUTPUTS, strict=False)
        ]
        write_generations(f"results/generations/tiny/g-idiomalign/{setting}.parquet", rows)
        scores = pd.DataFrame(
            [
                {
                    "prompt_id": p.prompt_id,
                    "direction": "zh->en",
                    "prediction_clean": text,
                    "similarity": [0.9, 0.5, 0.0][i],
                    "invalid": not text,
                    "generation_failed": False,
                }
                for i, (p, text) in enumerate(zip(prompts, OUTPUTS, strict=False))
            ]
        )
        write_parquet(f"results/scores/tiny/g-idiomalign/{setting}.parquet", pa.Table.from_pandas(scores))
    write_json("results/generations/tiny/generation_info.json", {})
    write_json("results/scores/tiny/g-idiomalign/scoring_meta.json", {"status": "scored"})
    return params


def test_the_stage_measures_both_conditions_and_writes_its_outputs(project, tmp_path: Path):
    summary = run_attention(project, benchmark="g-idiomalign", model="tiny", logs=tmp_path / "logs")
    assert summary["status"] == "measured" and summary["attn_implementation"] == "eager"
    out = tmp_path / "results/analysis/g-idiomalign/attention/tiny"
    rows = pd.read_parquet(out / "items.parquet")
    assert len(rows) == 6 and set(rows["condition"]) == {"no_gloss", "with_gloss"}
    measured = rows[rows["status"] == "measured"]
    assert len(measured) == 4  # the empty outputs are not measured
    assert (rows.loc[rows["status"] != "measured", "reason"] == "no content segment in the output").all()
    assert ((measured["IAR"] + measured["GAR"] + measured["DR"]) - 1.0).abs().max() < 1e-9
    assert (
        (measured["mass_idiom"] + measured["mass_gloss"].fillna(0) + measured["prompt_other"] + measured["generated"])
        - 1.0
    ).abs().max() < 1e-6
    assert (measured.loc[measured["condition"] == "no_gloss", "GAR"] == 0).all()
    assert sorted(measured["group"]) == ["Correct", "Correct", "Wrong", "Wrong"]
    body = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert body["counts"]["with_gloss"] == {
        "prompts": 3,
        "measured": 2,
        "type0_or_unlabelled": 1,
        "Correct": 1,
        "Wrong": 1,
        "T2": 0,
        "T3": 0,
        "T4": 0,
    }
    assert body["table6"]["All"]["n"] == {"with_gloss": 2, "no_gloss": 2}
    log = json.loads((tmp_path / "logs/attention-g-idiomalign-tiny.json").read_text(encoding="utf-8"))
    assert log["items_measured"] == 4 and log["seconds_per_item"] > 0


def test_a_model_on_another_backend_is_recorded_as_skipped(project, tmp_path: Path):
    summary = run_attention(project, benchmark="g-idiomalign", model="oracle")
    assert summary["status"] == "skipped" and "backend oracle gives no attention weights" in summary["reason"]
    written = json.loads((tmp_path / "results/analysis/g-idiomalign/attention/oracle/summary.json").read_text())
    assert written == summary
