"""The lexical scorers over every OrderProbe reference in the mirror: each language's
tokeniser handles the real text, and the expression is kept whole where a reference quotes it."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from idiombench.core.items import read_items
from idiombench.scoring.lexical import f_beta, lexical_cosine, rouge_l_precision
from idiombench.scoring.tokenize import content_tokens, tokenize

pytestmark = pytest.mark.mirror


@pytest.fixture(scope="module")
def reference_pairs(built) -> dict[str, list[tuple[str, str]]]:
    """Distinct (expression, reference) pairs per language, from the canonical items."""
    out: Path = built("orderprobe")
    pairs: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for item in read_items(out / "restore.parquet"):
        if item.meta["is_canonical"]:
            pairs[item.language].update((item.answer, ref) for ref in item.references)
    return {language: sorted(found) for language, found in pairs.items()}


def test_every_reference_tokenises(reference_pairs):
    # the released references (ja ships none)
    assert {language: len(pairs) for language, pairs in reference_pairs.items()} == {
        "ja": 0,
        "ko": 451,
        "zh-CN": 1532,
        "zh-TW": 2252,
    }
    empty: dict[str, list[str]] = {}
    for language, pairs in reference_pairs.items():
        for expression, ref in pairs:
            tokens = tokenize(ref, language, keep=[expression])
            content = content_tokens(ref, language, keep=[expression])
            assert set(content) <= set(tokens)
            if expression in ref:
                assert expression in tokens, (language, expression, ref)
            if not content:
                empty.setdefault(language, []).append(ref)
            # a reference scores 1 against itself on every lexical measure it has tokens for
            if content:
                assert f_beta(content, content) == pytest.approx(1.0)
                assert lexical_cosine(content, content) == pytest.approx(1.0)
            if tokens:
                assert rouge_l_precision(ref, ref, language, keep=[expression]) == pytest.approx(1.0)
    # the only references without content tokens are punctuation or all function words
    assert empty == {"zh-CN": ["果然如此"], "zh-TW": ["”", "”"]}
