"""Japanese analysis reads fugashi's raw feature string (tokenize.unidic_fields) instead of its
`feature` namedtuple: the same (form, POS, lemma) columns as the namedtuple gives, on realistic
outputs and on strings whose feature strings are quoted CSV or short (unknown words)."""

from __future__ import annotations

import pytest

from idiombench.scoring import tokenize
from realistic_corpus import outputs


def analyse_ja_by_namedtuple(text: str) -> tokenize.Columns:
    """The analyser before: fugashi's `feature` namedtuple per word."""

    def forms():
        for word in tokenize._fugashi_tagger()(text):
            feature = word.feature
            pos = "-".join(p for p in (feature.pos1, feature.pos2, feature.pos3) if p and p != "*")
            lemma = feature.lemma if feature.lemma and feature.lemma != "*" else word.surface
            yield word.surface, pos, tokenize.normalize(lemma)

    return tokenize._spans(text, forms())


def assert_same(texts: list[str]) -> None:
    differing = [text for text in texts if tokenize._analyse_ja(text) != analyse_ja_by_namedtuple(text)]
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
    raws = [word.feature_raw for text in ODD for word in tagger(text)]
    assert any('"' in raw for raw in raws) and any(len(tokenize.unidic_fields(raw)) < 8 for raw in raws)
    for raw, word in ((w.feature_raw, w) for text in ODD for w in tagger(text)):
        assert tokenize.unidic_fields(raw)[:8] == [f for f in word.feature][: len(tokenize.unidic_fields(raw)[:8])]
    assert_same(ODD + [tokenize.normalize(text) for text in ODD])


@pytest.mark.mirror
def test_realistic_japanese_outputs(built):
    rows = outputs(built("orderprobe"), per_language=4)
    texts = [row["text"] for row in rows if row["item_id"].startswith("ja/")]
    assert len(texts) > 150
    assert_same(texts + [tokenize.normalize(text) for text in texts])
