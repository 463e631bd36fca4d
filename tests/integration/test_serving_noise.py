"""`idiombench noise` through the CLI on a tiny random hf model (tests/support/gen_project.py):
the perturbed passes are generated, cached under their own identity and scored; a perturbation
that resolves to the configured run is recorded as no change; a rerun generates nothing and
writes byte-identical figures; a model without weights is recorded as skipped."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from gen_project import write_project
from helpers import project_cli as cli
from idiombench.core.items import read_items, write_items

pytestmark = pytest.mark.slow


def with_orderprobe_meta(path: Path) -> None:
    """The meta keys OrderProbe's scorer reads, as its build writes them."""
    items = [
        replace(
            item,
            meta={
                **item.meta,
                "expression_id": item.item_id.rsplit("/", 1)[0],
                "expression": item.answer,
                "is_canonical": item.meta["pattern"] == "ABCD",
                "is_identity": item.input == item.answer,
            },
        )
        for item in read_items(path)
    ]
    write_items(path, items)


def test_noise_pass_on_a_tiny_model(tiny_chat_model: Path, tmp_path: Path):
    models = {
        "tiny": {"backend": "hf", "model": str(tiny_chat_model), "batch_size": 8, "device": "cpu", "dtype": "float32"},
        "oracle": {"backend": "oracle"},
    }
    project = write_project(tmp_path / "p", models, consistency_n=1, max_new_tokens=6, consistency_settings=[])
    params = yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8"))
    for role in params["scoring"]["roles"].values():  # lexical terms only: no scorer model to load
        role["model"] = None
    params["serving_noise"] = {
        "enabled": True,
        "sample_size": 12,
        "seed": 0,
        "perturbations": {
            "batch_size_1": {"batch_size": 1},
            "float32": {"dtype": "float32"},
            "eager_attention": {"attn_implementation": "eager"},
            "vllm_only": {"enforce_eager": True},
        },
    }
    (project / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True), encoding="utf-8")
    with_orderprobe_meta(project / "data" / "processed" / "orderprobe" / "restore.parquet")
    cli(project, "generate", "--model", "tiny")
    cli(project, "score", "orderprobe", "--model", "tiny")

    first = cli(project, "noise", "--model", "tiny")
    figures_path = project / "results" / "noise" / "tiny" / "figures.json"
    body = json.loads(figures_path.read_text(encoding="utf-8"))
    status = {row["perturbation"]: row["status"] for row in body["figures"]}
    assert status == {
        "batch_size_1": "measured",
        "eager_attention": "measured",
        "float32": "no change",
        "vllm_only": "not applicable",
    }, status
    measured = [row for row in body["figures"] if row["status"] == "measured"]
    assert {row["setting"] for row in measured} == {"zero_shot", "cot"}
    sample = json.loads((project / "results" / "noise" / "tiny" / "sample.json").read_text(encoding="utf-8"))
    assert len(sample["orderprobe"]) == 12
    for row in measured:
        assert row["metric"] == "recovery" and row["items"] > 0 and row["units"] > 0
        assert 0.0 <= row["flipped_share"] <= row["changed_share"] <= 1.0  # the same text scores the same
        assert row["difference"] == pytest.approx(row["perturbed"] - row["configured"])
        assert row["identity_change"], "a measured perturbation changes the identity"
    batch_1 = [row for row in measured if row["perturbation"] == "batch_size_1"]
    assert {row["identity_change"].get("batch_size") for row in batch_1} == {1}
    items = project / "results" / "noise" / "tiny" / "batch_size_1" / "orderprobe.parquet"
    assert items.is_file()
    assert "noise tiny batch_size_1 orderprobe/zero_shot [recovery]" in first

    # A rerun: every perturbed request comes from the cache, the figures are byte-identical.
    before = figures_path.read_bytes()
    shards = sorted((project / "results" / "cache" / "tiny").glob("shard-*.jsonl"))
    again = cli(project, "noise", "--model", "tiny")
    assert again.count("(nothing to do)") == 2, again  # batch_size_1 and eager_attention: all cache hits
    assert sorted((project / "results" / "cache" / "tiny").glob("shard-*.jsonl")) == shards
    assert figures_path.read_bytes() == before

    skipped = cli(project, "noise", "--model", "oracle")
    assert "noise oracle: skipped" in skipped
    oracle = json.loads((project / "results" / "noise" / "oracle" / "figures.json").read_text(encoding="utf-8"))
    assert oracle["status"] == "skipped" and "oracle" in oracle["reason"]
