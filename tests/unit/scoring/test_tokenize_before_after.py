"""The rewritten tokeniser and ROUGE-L give what the code before issue 29 gave.

tests/support/tokenize_before.py is the old scoring/tokenize.py, verbatim: Token objects per
token, pure jieba, a sort to merge kept strings. Here both run on every reference of the
OrderProbe release and on realistic outputs (each with its expression kept), in every language
OrderProbe scores, and the old ROUGE-L (rouge-score's scorer over the old tokeniser) is compared
with lexical.rouge_l (rouge-score's arithmetic, rapidfuzz's LCS): equal tokens, equal content
tokens, equal floats. lcs_length itself is checked against rouge-score's table on random token
sequences."""

from __future__ import annotations

import random

import pytest
from rouge_score import rouge_scorer

import tokenize_before as before
from idiombench.core.items import read_items
from idiombench.scoring.lexical import lcs_length, rouge_l, rouge_l_tokens
from idiombench.scoring.tokenize import TokenCache, analyse, content_tokens, segmented, tokenize
from realistic_corpus import outputs, references


class _OldTokenizer:
    def __init__(self, language: str, keep: tuple[str, ...]):
        self.language, self.keep = language, keep

    def tokenize(self, text: str) -> list[str]:
        return before.tokenize(text, self.language, self.keep)


def old_rouge_l(pred: str, ref: str, language: str, keep: tuple[str, ...]) -> tuple[float, float, float]:
    score = rouge_scorer.RougeScorer(["rougeL"], tokenizer=_OldTokenizer(language, keep)).score(ref, pred)["rougeL"]
    return score.precision, score.recall, score.fmeasure


def assert_same_tokens(text: str, language: str, keep: tuple[str, ...]) -> None:
    """tokenize() and content_tokens(), as the old module defined them from one analysis."""
    old = before.analyse(text, language, keep)
    stops = before.stop_list(language)
    new = segmented(text, language, keep)
    assert list(new.forms) == [t.form for t in old], (language, text)
    assert list(new.content) == [t.form for t in old if not stops.is_stop(t)], (language, text)


@pytest.mark.mirror
def test_references_and_outputs_tokenise_as_before(built):
    processed = built("orderprobe")
    checked = {}
    for language, pairs in references(processed).items():
        for expression, ref in pairs:
            assert_same_tokens(ref, language, (expression,))
        checked[language] = len(pairs)
    items = {item.item_id: item for item in read_items(processed / "restore.parquet")}
    rows = outputs(processed, per_language=2, settings=("zero_shot",))
    for row in rows:
        item = items[row["item_id"]]
        keep = (item.meta["expression"],)
        if item.language == "ja":
            continue  # the Japanese release has no references: its outputs are never tokenised
        assert_same_tokens(row["text"], item.language, keep)
        ref = item.references[0]  # the tokens of every reference were compared above
        new = rouge_l(row["text"], ref, item.language, keep)
        assert (new.precision, new.recall, new.fmeasure) == old_rouge_l(row["text"], ref, item.language, keep)
        checked[f"{item.language} outputs"] = checked.get(f"{item.language} outputs", 0) + 1
    assert checked == {
        "ja": 0,
        "ko": 451,
        "zh-CN": 1532,
        "zh-TW": 2252,
        "ko outputs": 48,
        "zh-CN outputs": 48,
        "zh-TW outputs": 48,
    }


@pytest.mark.parametrize(
    "language,text,keep",
    [
        ("ja", "「一期一会」とは、一生に一度だけの機会という意味です。", ("一期一会",)),
        ("ja", "猫が好きではない。", ()),
        ("en", "Don't count your chickens before they hatch, e.g. twice.", ("chickens",)),
        ("th", "ภาษาไทย 中文 한국어 English", ()),
        ("zh-CN", "画蛇添足画蛇添足：比喻做了多余的事，反而不恰当。ＡＢＣ１２３", ("画蛇添足", "添足")),
        ("zh-CN", "蛇足添画", ("画蛇添足",)),
        ("zh-TW", "「畫蛇添足」這個成語的含義是多此一舉", ("畫蛇添足",)),
        ("ko", "작심삼일은 결심이 사흘을 가지 못한다는 뜻입니다. 작심삼일!", ("작심삼일",)),
        ("zh-CN", "", ("画蛇添足",)),
        ("zh-CN", "，。！", ()),
    ],
)
def test_other_languages_and_edge_cases_as_before(language: str, text: str, keep: tuple[str, ...]):
    assert_same_tokens(text, language, keep)
    assert tokenize(text, language, keep) == before.tokenize(text, language, keep)
    assert content_tokens(text, language, keep) == before.content_tokens(text, language, keep)
    assert [tuple(vars(t).values()) for t in analyse(text, language, keep)] == [
        tuple(vars(t).values()) for t in before.analyse(text, language, keep)
    ]


def test_token_cache_gives_what_it_caches():
    cache = TokenCache(size=2)
    first = cache.get("画蛇添足比喻做了多余的事", "zh-CN", ("画蛇添足",))
    assert first == segmented("画蛇添足比喻做了多余的事", "zh-CN", ("画蛇添足",))
    assert cache.get("画蛇添足比喻做了多余的事", "zh-CN", ("画蛇添足",)) is first and cache.computed == 1
    reference = cache.get("比喻做了多余的事", "zh-CN", ("画蛇添足",), pin=True)
    for text in ("一", "二", "三"):
        cache.get(text, "zh-CN")
    assert len(cache.recent) == 2 and cache.get("比喻做了多余的事", "zh-CN", ("画蛇添足",), pin=True) is reference
    assert cache.words("画蛇添足，多此一举") == ("画蛇添足", "，", "多此一举")


def test_lcs_length_equals_rouge_scores_table_on_random_sequences():
    """rapidfuzz's LCS through lcs_length against rouge-score's own dynamic programme, on random
    token sequences (repeats, one- and many-character tokens, long and empty sides), and
    rouge_l_tokens against rouge-score's _score_lcs: equal ints, equal floats."""
    rng = random.Random(2929)
    vocabulary = ["的", "是", "画蛇添足", "比喻", "a", "ab", "A", "ｂ", "\u00e9", "e\u0301", "0", "😀", "不", "多余"]
    for case in range(1500):
        size = rng.randint(1, len(vocabulary))
        words = vocabulary[:size]
        a = [rng.choice(words) for _ in range(rng.randint(0, 400 if case % 50 == 0 else 60))]
        b = [rng.choice(words) for _ in range(rng.randint(0, 40))]
        assert lcs_length(a, b) == lcs_length(b, a) == (rouge_scorer._lcs_table(a, b)[-1][-1] if a and b else 0)
        old = rouge_scorer._score_lcs(b, a)
        new = rouge_l_tokens(a, b)
        assert (new.precision, new.recall, new.fmeasure) == (old.precision, old.recall, old.fmeasure)
        assert type(new.precision) is type(old.precision)
