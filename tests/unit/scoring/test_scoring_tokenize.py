"""Per-language tokenisers: the expression kept whole, stop words dropped, negations kept;
polarity lists and the contradiction helper."""

from __future__ import annotations

import pytest

from idiombench.benchmarks.orderprobe import polarity as pol
from idiombench.core.errors import IdiombenchError
from idiombench.scoring.tokenize import (
    analyse,
    content_tokens,
    parse_stop_lines,
    stop_list,
    tokenize,
    tokenizer_name,
)
from orderprobe_fixtures import fixture_lexicons


def test_chinese_keeps_the_expression_and_drops_stop_words():
    text = "不耻问下的意思是不以向地位比自己低的人请教为可耻。"
    assert tokenize(text, "zh-CN")[:2] == ["不耻", "问下"]  # jieba splits the permuted form
    assert tokenize(text, "zh-CN", keep=["不耻问下"])[0] == "不耻问下"
    content = content_tokens(text, "zh-CN", keep=["不耻问下"])
    # particles, the copula and prepositions (以 向 比 为) go; the negation 不 stays
    assert content == ["不耻问下", "意思", "不", "地位", "自己", "低", "人", "请教", "可耻"]


def test_traditional_chinese_keeps_negation():
    content = content_tokens("鈴盜耳掩的人，不是好人", "zh-TW", keep=["鈴盜耳掩"])
    assert content[0] == "鈴盜耳掩"
    assert "不是" in content and "的" not in content
    assert tokenize("鈴盜耳掩", "zh-TW") == ["鈴盜", "耳", "掩"]


def test_japanese_keeps_the_expression_and_drops_particles():
    text = "一期一会とは一生に一度の機会のことです。良くない。"
    assert tokenize(text, "ja")[:3] == ["一", "期", "一会"]
    assert tokenize(text, "ja", keep=["一期一会"])[:3] == ["一期一会", "と", "は"]
    # particles, the copula and the formal noun こと go; the negation ない stays
    assert content_tokens(text, "ja", keep=["一期一会"]) == ["一期一会", "一生", "一", "度", "機会", "良く", "ない"]


def test_korean_keeps_the_expression_and_drops_particles_and_endings():
    text = "일삼심작은 결심이 오래가지 못함"
    assert tokenize(text, "ko")[:4] == ["일", "삼", "심", "작"]
    tokens = analyse(text, "ko", keep=["일삼심작"])
    assert [t.form for t in tokens][:2] == ["일삼심작", "은"]
    assert tokens[1].pos in ("JX", "ETM")  # a function morpheme, analysed in context
    assert content_tokens(text, "ko", keep=["일삼심작"]) == ["일삼심작", "결심", "오래", "가", "못하"]
    assert "않" in content_tokens("좋지 않다", "ko")  # negation is content


def test_english_words_keep_and_stop_words():
    text = "To kill two birds with one stone is not about birds."
    assert tokenize(text, "en", keep=["Two Birds"])[:3] == ["to", "kill", "two birds"]
    assert content_tokens(text, "en", keep=["two birds"]) == ["kill", "two birds", "stone", "not", "birds"]
    assert tokenize("It isn't bad", "en") == ["it", "isn't", "bad"]


def test_other_languages_fall_back_to_characters_and_words():
    assert tokenizer_name("fr").startswith("characters")
    assert tokenize("Tuer deux oiseaux, ça marche! 东京タワー", "fr") == [
        "tuer",
        "deux",
        "oiseaux",
        "ça",
        "marche",
        "东",
        "京",
        "タ",
        "ワ",
        "ー",
    ]
    assert content_tokens("deux oiseaux", "fr") == ["deux", "oiseaux"]  # no stop list


def test_normalisation_and_punctuation():
    assert tokenize("ＡＢＣ　ｄｅｆ！！", "en") == ["abc", "def"]  # NFKC + casefold
    assert tokenize("，。！？……", "zh-CN") == []
    assert tokenize("", "ja") == []
    # full-width keep strings match the normalised text
    assert tokenize("ＴＷＯ birds fly", "en", keep=["two birds"]) == ["two birds", "fly"]


def test_stop_list_format_and_errors():
    stops = parse_stop_lines(["# comment", "的", "/uj", "것/NNB", "+ない", ""], "test.txt")
    assert "的" in stops.forms and stops.tags == ("uj",) and ("것", "NNB") in stops.form_tags
    assert "ない" in stops.always_keep
    with pytest.raises(ValueError, match=r"test.txt, line 2: expected `form`, `form/TAG`, `/TAG` or `\+form`"):
        parse_stop_lines(["ok", "bad/"], "test.txt")
    # the shipped lists parse and are non-empty
    for language in ("zh-CN", "zh-TW", "ja", "ko", "en"):
        listed = stop_list(language)
        assert listed.forms or listed.tags or listed.form_tags


# -- polarity (the released OrderProbe rule; stand-in word lists) --------------
# The released lists are build output from the acquired scripts; here the hand-written
# stand-ins of tests/fixtures/orderprobe/Sacc (a few words each) are extracted the same way.

LEXICONS = fixture_lexicons()


def lists(language: str):
    return pol.lexicon_for(LEXICONS, language)


@pytest.mark.parametrize(
    "text,language,expected",
    [
        ("他很优秀", "zh-CN", (True, False, False)),
        ("态度死板", "zh-CN", (False, True, False)),
        ("不优秀", "zh-CN", (True, False, True)),
        ("他很優秀", "zh-TW", (True, False, False)),
        # jieba (the released code's segmenter for every language) cuts kana and Hangul into short
        # pieces, so multi-character Japanese/Korean entries rarely fire: the released behaviour
        ("素晴らしい", "ja", (False, False, False)),
        ("不 便利", "ja", (False, False, True)),
        ("실패", "ko", (False, False, False)),
    ],
)
def test_polarity_features(text: str, language: str, expected: tuple[bool, bool, bool]):
    f = pol.features(text, lists(language))
    assert (f.positive, f.negative, f.negated) == expected


def test_polarity_contradicts_every_reference():
    refs = ["形容非常优秀", "比喻出色"]
    zh = lists("zh-CN")
    assert pol.polarity_contradicts("态度死板", refs, zh)  # explanation negative, references positive
    assert not pol.polarity_contradicts("态度死板", refs + ["指一件事"], zh)  # one neutral reference
    assert not pol.polarity_contradicts("形容出色", refs, zh)  # agrees
    assert not pol.polarity_contradicts("指一件事", refs, zh)  # neutral explanation, no negation
    assert not pol.polarity_contradicts("态度死板", [], zh)  # no references
    assert lists("en") is None  # no released lists: never conflicts
    assert not pol.polarity_contradicts("a bad idea", ["a good idea"], lists("en"))


def test_negated_explanation_conflicts_with_a_positive_reference():
    """The rule's second branch: negated and not positive against a positive reference."""
    assert pol.polarity_contradicts("没有办法", ["形容出色"], lists("zh-CN"))
    assert not pol.polarity_contradicts("没有办法", ["形容一件事"], lists("zh-CN"))


def test_missing_lists_of_a_covered_language_are_an_error():
    with pytest.raises(IdiombenchError, match="no released word lists for ko"):
        pol.lexicon_for({"zh-CN": lists("zh-CN")}, "ko")
    with pytest.raises(IdiombenchError, match="language must be a string"):
        pol.lexicon_for(LEXICONS, None)  # type: ignore[arg-type]


def test_idiom_override_fixes_the_polarity():
    assert pol.features("随便什么文字", lists("zh-CN"), "一帆风顺") == pol.Features(True, False, False)
    # a key the table leaves out counts False (the released code's ov.get("pos", False))
    assert pol.features("좋은", lists("ko"), "작심삼일") == pol.Features(False, True, False)
