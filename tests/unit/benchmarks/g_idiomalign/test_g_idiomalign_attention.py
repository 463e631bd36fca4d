"""G-IdiomAlign's attention summary (tables 6-8) on a synthetic per-item table, the skip
reasons of the attention stage, and the human-label file."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy.stats import false_discovery_control, kruskal, mannwhitneyu

from idiombench.benchmarks.g_idiomalign.attention import attention_summary, read_annotations
from idiombench.benchmarks.g_idiomalign.config import GIdiomAlignAttention, GIdiomAlignScore
from idiombench.core.errors import DataError
from idiombench.stages.attention import skip_reason

ROOT = Path(__file__).resolve().parents[4]


def frame(rng: np.random.Generator) -> pd.DataFrame:
    rows = []
    for condition in ("with_gloss", "no_gloss"):
        for i in range(15):  # 6 Correct, 9 Wrong: 3 of each error type
            group = "Correct" if i < 6 else "Wrong"
            error = None if i < 6 else ("T2", "T3", "T4")[i % 3]
            idiom = rng.uniform(0.02, 0.08) + (0.02 if group == "Correct" else 0.0)
            gloss = rng.uniform(0.02, 0.06) if condition == "with_gloss" else np.nan
            heads = rng.uniform(0, 1, size=(3, 4))
            rows.append(
                {
                    "prompt_id": f"{condition}/{i}",
                    "setting": condition,
                    "item_id": str(i),
                    "condition": condition,
                    "group": group,
                    "error_type": error,
                    "status": "measured",
                    "mass_idiom": idiom,
                    "mass_gloss": gloss,
                    "other_top1": rng.uniform(0.4, 0.6),
                    "layers": 3,
                    "heads": 4,
                    "heads_idiom": list(heads.reshape(-1)),
                    "greedy_agreement": 1.0,
                    "prompt_other": 0.5,
                    "generated": 0.3,
                }
            )
    return pd.DataFrame(rows)


def context(annotations: str | None) -> SimpleNamespace:
    config = SimpleNamespace(
        attention=GIdiomAlignAttention(
            enabled=True, annotations=annotations, top_k_heads=2, salient_heads=3, salient_layers=2
        ),
        score=GIdiomAlignScore(),
    )
    return SimpleNamespace(config=config, notes=[])


def test_table7_and_table8_are_the_papers_tests_with_bh_within_each_condition():
    data = frame(np.random.default_rng(0))
    body = attention_summary(context("data/annotations/labels.csv"), data)
    for condition, metrics in (
        ("with_gloss", ["IAR", "GAR", "DR", "OtherTop1"]),
        ("no_gloss", ["IAR", "DR", "OtherTop1"]),
    ):
        rows = data[data["condition"] == condition]
        assert list(body["table7"][condition]) == metrics
        pvalues = [
            mannwhitneyu(
                rows.loc[rows.group == "Correct", m], rows.loc[rows.group == "Wrong", m], alternative="two-sided"
            ).pvalue
            for m in metrics
        ]
        assert [body["table7"][condition][m]["q"] for m in metrics] == pytest.approx(
            list(false_discovery_control(pvalues, method="bh"))
        )
        wrong = rows[rows.group == "Wrong"]
        kw = [kruskal(*[wrong.loc[wrong.error_type == t, m] for t in ("T2", "T3", "T4")]).pvalue for m in metrics]
        assert [body["table8"][condition][m]["q"] for m in metrics] == pytest.approx(
            list(false_discovery_control(kw, method="bh"))
        )
        assert body["table7"][condition]["IAR"]["Correct"]["n"] == 6
    # ratios: GAR is 0 No-gloss, DR = 1 - IAR - GAR on every row
    assert (data.loc[data.condition == "no_gloss", "GAR"] == 0).all()
    assert np.allclose(data["IAR"] + data["GAR"] + data["DR"], 1.0)
    assert body["counts"]["with_gloss"]["T2"] == 3 and body["counts"]["no_gloss"]["Wrong"] == 9
    six = body["table6"]["All"]
    assert six["n"] == {"with_gloss": 15, "no_gloss": 15}
    assert len(six["heads"]["with_gloss"]) == 3 and len(six["layers"]["no_gloss"]) == 2
    assert 0.0 <= six["J_heads"] <= 1.0


def test_without_labels_table8_is_not_computed_and_small_groups_get_no_test():
    data = frame(np.random.default_rng(1))
    data.loc[data.index[4:12], "group"] = "Correct"  # Wrong keeps 3 With-gloss rows ...
    data.loc[(data.condition == "no_gloss") & (data.group == "Wrong"), "group"] = "Correct"
    data.loc[data.index[-1], "group"] = "Wrong"  # ... and 1 No-gloss row
    body = attention_summary(context(None), data)
    assert body["table8"]["status"] == "not computed"
    assert body["groups"] == {"source": "similarity", "threshold": 0.8, "note": body["groups"]["note"]}
    assert body["table7"]["with_gloss"]["IAR"]["q"] is not None
    no_gloss = body["table7"]["no_gloss"]["IAR"]
    assert no_gloss["q"] is None and "fewer than 3" in no_gloss["note"] and no_gloss["Wrong"]["n"] == 1
    assert no_gloss["delta"] is not None  # the effect size is still given


def test_the_stage_says_why_a_model_is_not_measured():
    from idiombench.pipeline.config import load_params

    params = load_params(ROOT / "params.yaml")
    assert skip_reason(params, benchmark="g-idiomalign", model="smollm2") is None
    assert "backend oracle gives no attention weights" in skip_reason(params, benchmark="g-idiomalign", model="oracle")

    def with_attention(**changes):
        section = params.benchmark("g-idiomalign")
        section = section.model_copy(update={"attention": section.attention.model_copy(update=changes)})
        return SimpleNamespace(models=params.models, benchmark=lambda name: section)

    listed = with_attention(models=["oracle"])  # listed or not, a model on another backend says so
    assert "backend oracle gives no attention weights" in skip_reason(listed, benchmark="g-idiomalign", model="oracle")
    assert (
        skip_reason(listed, benchmark="g-idiomalign", model="smollm2")
        == "benchmarks.g-idiomalign.attention.models does not list smollm2"
    )
    assert (
        skip_reason(with_attention(enabled=False), benchmark="g-idiomalign", model="smollm2")
        == "benchmarks.g-idiomalign.attention.enabled is false"
    )


def test_a_vllm_model_is_measured_on_its_weights_in_transformers_on_one_gpu():
    from idiombench.pipeline.config import load_params
    from idiombench.stages.attention import transformers_config

    params = load_params(ROOT / "overlays" / "paper.yaml")
    qwen = params.models["qwen3-8b"]
    assert qwen.backend == "vllm" and skip_reason(params, benchmark="g-idiomalign", model="qwen3-8b") is None
    hf = transformers_config(qwen)
    assert (hf.backend, hf.model, hf.revision, hf.device, hf.gpus) == ("hf", qwen.model, qwen.revision, "cuda", 1)
    two = SimpleNamespace(
        models={**params.models, "big": qwen.model_copy(update={"gpus": 2})}, benchmark=params.benchmark
    )
    section = params.benchmark("g-idiomalign")
    two.benchmark = lambda name: section.model_copy(
        update={"attention": section.attention.model_copy(update={"models": None})}
    )
    assert "one GPU" in skip_reason(two, benchmark="g-idiomalign", model="big")


def test_human_labels_are_read_and_checked(tmp_path: Path):
    good = tmp_path / "labels.csv"
    good.write_text("prompt_id,label\na,1\nb,3\n", encoding="utf-8")
    assert read_annotations(str(good)) == {"a": 1, "b": 3}
    bad = tmp_path / "bad.csv"
    bad.write_text("prompt_id,label\na,5\n", encoding="utf-8")
    with pytest.raises(DataError, match="label '5'"):
        read_annotations(str(bad))
    with pytest.raises(DataError, match="file not found"):
        read_annotations(str(tmp_path / "missing.csv"))


def test_the_attention_params_are_validated(tmp_path: Path):
    import yaml

    from idiombench.core.errors import IdiombenchError
    from idiombench.pipeline.config import load_params

    raw = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    assert raw["benchmarks"]["g-idiomalign"]["attention"]["models"] is None  # a narrowed model list stays valid
    for change, message in (
        ({"models": ["smollm3"]}, "attention.models.0: unknown model 'smollm3'"),
        ({"items": 0}, "attention.items"),
        ({"layers": 3}, "attention.layers: unknown key"),
        # a label file outside data/annotations/ would be no tracked input
        ({"annotations": "labels.csv"}, "attention.annotations: .*must be a file under data/annotations/"),
        ({"annotations": "data/annotations/../labels.csv"}, "attention.annotations"),
        ({"annotations": "/tmp/data/annotations/x.csv"}, "attention.annotations"),
        ({"annotations": "data/annotations"}, "attention.annotations"),
    ):
        edited = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
        edited["benchmarks"]["g-idiomalign"]["attention"].update(change)
        path = tmp_path / "params.yaml"
        path.write_text(yaml.safe_dump(edited, allow_unicode=True), encoding="utf-8")
        with pytest.raises(IdiombenchError, match=message):
            load_params(path)


def test_a_label_file_is_a_tracked_input_of_the_attention_stage(tmp_path: Path):
    """DVC hashes the data/annotations directory; Snakemake also gets the file itself (it dates
    a directory by its own mtime, which an edit inside it does not change)."""
    import yaml

    from idiombench.pipeline import dag
    from idiombench.pipeline.config import load_params

    assert "data/annotations" in dag.attention_deps(benchmark="g-idiomalign", model="smollm2")
    stage = yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]["attention"]
    assert "data/annotations" in stage["deps"]
    assert (ROOT / "data" / "annotations" / "README.md").is_file()  # the directory exists in every clone
    edited = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    edited["benchmarks"]["g-idiomalign"]["attention"]["annotations"] = "data/annotations/g-idiomalign-attention.csv"
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(edited, allow_unicode=True), encoding="utf-8")
    assert (
        load_params(path).benchmark("g-idiomalign").attention.annotations
        == "data/annotations/g-idiomalign-attention.csv"
    )
