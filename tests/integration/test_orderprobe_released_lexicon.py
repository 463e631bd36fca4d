"""The released S_Acc word lists of the real OrderProbe build (mirror): acquired from the
reference-code mirror directory with the CSVs, extracted by the build, read by the scorer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from idiombench.benchmarks.orderprobe import lexicon, polarity

pytestmark = pytest.mark.mirror


@pytest.fixture(scope="module")
def lists(built) -> dict[str, lexicon.ReleasedLexicon]:
    return lexicon.load(built("orderprobe"))


def test_every_language_has_non_empty_lists(lists, built):
    assert sorted(lists) == ["ja", "ko", "zh-CN", "zh-TW"]
    for language, lex in lists.items():
        assert lex.stopwords and lex.negations and lex.positive and lex.negative and lex.overrides, language
        assert not (lex.positive & lex.negative), language
    stats = json.loads((built("orderprobe") / "build_stats.json").read_text(encoding="utf-8"))
    assert sorted(stats["details"]["released_word_lists"]) == ["ja", "ko", "zh-CN", "zh-TW"]


def test_the_build_records_where_the_lists_come_from(built):
    body = json.loads((Path(built("orderprobe")) / lexicon.LEXICON_FILE).read_text(encoding="utf-8"))
    assert body["source_files"] == lexicon.SACC_FILES


def test_issue_12_false_conflict_is_gone(lists):
    """The project's former lists flagged a conflict here; the released lists and rule do not."""
    assert not polarity.polarity_contradicts(
        "形容虚心好学。", ["乐于向学问或地位比自己低的人学习，而不觉得不好意思"], lists["zh-CN"]
    )
    assert polarity.features("随便什么文字", lists["zh-CN"], "爱不释手") == polarity.Features(True, False, False)
