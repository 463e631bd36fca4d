"""Lexical scorers against values worked out by hand."""

from __future__ import annotations

import math

import pytest

from idiombench.scoring.lexical import (
    brevity_penalty,
    f_beta,
    lexical_cosine,
    rouge_l,
    rouge_l_f,
    rouge_l_precision,
    token_length,
)
from idiombench.scoring.tokenize import tokenize

# -- F-beta -------------------------------------------------------------------


def test_f_beta_two_favours_recall():
    # pred {a,b,c,d}, gold {a,b}: P = 2/4, R = 2/2, F2 = 5·0.5·1 / (4·0.5 + 1) = 2.5/3
    assert f_beta(list("abcd"), list("ab")) == pytest.approx(2.5 / 3)
    # swapped: P = 1, R = 0.5, F2 = 5·0.5 / (4 + 0.5) = 2.5/4.5 (lower: recall counts more)
    assert f_beta(list("ab"), list("abcd")) == pytest.approx(2.5 / 4.5)
    # β = 1 is symmetric: 2·0.5·1/1.5
    assert f_beta(list("abcd"), list("ab"), beta=1) == pytest.approx(2 / 3)
    assert f_beta(list("ab"), list("abcd"), beta=1) == pytest.approx(2 / 3)


def test_f_beta_is_set_based_and_handles_empty_sides():
    assert f_beta(["a", "a", "b"], ["a", "b", "b"]) == pytest.approx(1.0)  # duplicates do not count
    assert f_beta([], ["a"]) == 0.0
    assert f_beta(["a"], []) == 0.0
    assert f_beta([], []) == 0.0
    assert f_beta(["x"], ["y"]) == 0.0
    with pytest.raises(ValueError, match="beta must be positive"):
        f_beta(["a"], ["a"], beta=0)


# -- lexical cosine -----------------------------------------------------------


def test_lexical_cosine_of_count_vectors():
    # (a:2, b:1) · (a:1, b:2, c:1) = 2 + 2 = 4; norms √5 · √6
    assert lexical_cosine(["a", "a", "b"], ["a", "b", "b", "c"]) == pytest.approx(4 / math.sqrt(30))
    assert lexical_cosine(["a", "b"], ["b", "a"]) == pytest.approx(1.0)
    assert lexical_cosine(["a"], ["b"]) == 0.0
    assert lexical_cosine([], ["a"]) == 0.0
    assert lexical_cosine(["a"], []) == 0.0


# -- ROUGE-L ------------------------------------------------------------------

PRED_ZH = "比喻自己欺骗自己的行为"
REF_ZH = "比喻自己欺骗自己，明明掩盖不住的事情偏要想法子掩盖"


def test_rouge_l_on_a_chinese_pair_by_hand():
    # jieba's words (punctuation removed); the hand computation below rests on them.
    assert tokenize(PRED_ZH, "zh-CN") == ["比喻", "自己", "欺骗", "自己", "的", "行为"]
    assert tokenize(REF_ZH, "zh-CN") == [
        "比喻",
        "自己",
        "欺骗",
        "自己",
        "明明",
        "掩盖",
        "不住",
        "的",
        "事情",
        "偏要",
        "想法子",
        "掩盖",
    ]
    # LCS = 比喻 自己 欺骗 自己 的 = 5 tokens; P = 5/6, R = 5/12, F = 2PR/(P+R) = 5/9
    score = rouge_l(PRED_ZH, REF_ZH, "zh-CN")
    assert score.precision == pytest.approx(5 / 6)
    assert score.recall == pytest.approx(5 / 12)
    assert score.fmeasure == pytest.approx(5 / 9)
    assert rouge_l_precision(PRED_ZH, REF_ZH, "zh-CN") == pytest.approx(5 / 6)


def test_rouge_l_keeps_cjk_text_and_the_expression():
    assert rouge_l_precision("掩耳盗铃", "掩耳盗铃", "zh-CN") == pytest.approx(1.0)
    # keep: the expression is one token, so the LCS counts it once: without keep
    # pred = 铃盗 耳 掩 的 意思, ref = 铃盗 耳 掩 -> 3/5; with keep pred = [铃盗耳掩] 的 意思 -> 1/3
    assert tokenize("铃盗耳掩的意思", "zh-CN") == ["铃盗", "耳", "掩", "的", "意思"]
    assert rouge_l_precision("铃盗耳掩的意思", "铃盗耳掩", "zh-CN") == pytest.approx(3 / 5)
    assert rouge_l_precision("铃盗耳掩的意思", "铃盗耳掩", "zh-CN", keep=["铃盗耳掩"]) == pytest.approx(1 / 3)
    assert rouge_l_precision("", REF_ZH, "zh-CN") == 0.0


def test_rouge_l_english_uses_rouge_score_tokenizer():
    # pred 6 tokens, ref 7; LCS = cat on the mat = 4
    score = rouge_l("The cat sat on the mat.", "a cat was sitting on the mat", "en")
    assert (score.precision, score.recall) == pytest.approx((4 / 6, 4 / 7))
    assert rouge_l_f("The cat sat on the mat.", "a cat was sitting on the mat") == pytest.approx(
        2 * (4 / 6) * (4 / 7) / (4 / 6 + 4 / 7)
    )
    assert rouge_l_f("the cats sat", "the cat sat", use_stemmer=True) == pytest.approx(1.0)
    assert rouge_l_f("the cats sat", "the cat sat") == pytest.approx(2 / 3)


# -- brevity penalty ----------------------------------------------------------


def test_brevity_penalty_paper_mode_penalises_long_explanations():
    assert brevity_penalty(3, 5, "paper") == 1.0
    assert brevity_penalty(5, 5, "paper") == 1.0
    assert brevity_penalty(10, 5, "paper") == pytest.approx(math.exp(-1))
    assert brevity_penalty(6, 4, "paper") == pytest.approx(math.exp(1 - 1.5))
    assert brevity_penalty(3, 0, "paper") == 0.0  # empty reference: the limit
    assert brevity_penalty(0, 0, "paper") == 1.0
    assert brevity_penalty(3, 5) == 1.0  # paper is the default


def test_brevity_penalty_bleu_mode_penalises_short_explanations():
    assert brevity_penalty(3, 6, "bleu") == pytest.approx(math.exp(-1))
    assert brevity_penalty(5, 5, "bleu") == 1.0
    assert brevity_penalty(10, 5, "bleu") == 1.0
    assert brevity_penalty(0, 5, "bleu") == 0.0  # empty explanation: the limit
    assert brevity_penalty(3, 0, "bleu") == 1.0  # empty reference
    assert brevity_penalty(0, 0, "bleu") == 1.0


def test_brevity_penalty_bad_input():
    with pytest.raises(ValueError, match="non-negative"):
        brevity_penalty(-1, 3)
    with pytest.raises(ValueError, match="unknown brevity penalty mode 'short'"):
        brevity_penalty(1, 3, "short")  # type: ignore[arg-type]


def test_token_length_uses_the_language_tokeniser():
    assert token_length(PRED_ZH, "zh-CN") == 6
    assert token_length("盗铃掩耳的意思", "zh-CN", keep=["盗铃掩耳"]) == 3  # 盗铃掩耳 的 意思
    assert token_length("Two birds, one stone!", "en") == 4
