"""Japanese analysis reads fugashi's raw feature string (tokenize.unidic_fields) instead of its
`feature` namedtuple: the same tokens (form, POS, lemma, span) as the tokeniser before it
(tests/support/tokenize_before.py, which read the namedtuple), on realistic outputs and on
strings whose feature strings are quoted CSV or short (unknown words)."""

from __future__ import annotations

import pytest

import tokenize_before as before
from idiombench.scoring import tokenize
from realistic_corpus import outputs


def tokens(analysed: list) -> list[tuple]:
    return [tuple(vars(token).values()) for token in analysed]


def assert_same(texts: list[str]) -> None:
    differing = [text for text in texts if tokens(tokenize.analyse(text, "ja")) != tokens(before.analyse(text, "ja"))]
    assert not differing, f"{len(differing)} of {len(texts)} texts differ, e.g. {differing[:3]}"


ODD = [
    '引用符"と,カンマ、「括弧」，全角，"quoted, text"',
    "ぴょんぴょこりんぺ 가나다 𠮷野家 ＡＢＣ abc123 😀 ½ ㍻",
    '",",\'"\'，"，"',
    "東京都,大阪府；名古屋市：福岡",
    "",
    " \t\n",
]


def test_quoted_short_and_unknown_feature_strings():
    tagger = tokenize._fugashi_tagger()
    words = [word for text in ODD for word in tagger(text)]
    fields = [tokenize.unidic_fields(word.feature_raw) for word in words]
    assert any('"' in word.feature_raw for word in words) and any(len(f) < 8 for f in fields)
    for word, found in zip(words, fields, strict=True):
        assert found[:8] == list(word.feature)[: len(found[:8])]
    assert_same(ODD + [tokenize.normalize(text) for text in ODD])


@pytest.mark.mirror
def test_realistic_japanese_outputs(built):
    rows = outputs(built("orderprobe"), per_language=4)
    texts = [row["text"] for row in rows if row["item_id"].startswith("ja/")]
    assert len(texts) > 150
    assert_same(texts + [tokenize.normalize(text) for text in texts])
