"""Polarity conflict between an explanation and its references: the released OrderProbe
S_Acc rule (Sacc/sacc_*.py, docs/METRICS.md §1.3), used to halve Fβ.

The word lists are the released ones (data/polarity/released_orderprobe.json, one set per
language: zh-CN, zh-TW, ja, ko). A text's features are three booleans over its jieba words
(the released code segments every language with jieba): has a positive word, has a
negative word, has a negation; an idiom in the per-language override table gets the
table's (positive, negative) and no negation, whatever the text. One reference conflicts
with the explanation when
    (reference positive and (explanation negative or (explanation negated and not positive)))
 or (reference negative and explanation positive and not negated);
and Fβ is halved when EVERY reference conflicts (the code's POLARITY_MODE = "all").
A language without released lists (e.g. English) never conflicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import IdiombenchError

RELEASED_LANGUAGES = ("zh-CN", "zh-TW", "ja", "ko")


@dataclass(frozen=True)
class Features:
    positive: bool
    negative: bool
    negated: bool


def features(text: str, language: str, idiom: str = "") -> Features:
    """The released extract_polarity."""
    from ..benchmarks.orderprobe.released import _cut, lexicon

    lex = lexicon(language)
    if idiom and idiom in lex.overrides:
        positive, negative = lex.overrides[idiom]
        return Features(positive, negative, False)
    words = _cut(text)
    return Features(
        any(w in lex.positive for w in words),
        any(w in lex.negative for w in words),
        any(w in lex.negations for w in words),
    )


def conflicts(explanation: Features, reference: Features) -> bool:
    """One reference against the explanation (the released rule)."""
    if not (reference.positive or reference.negative or explanation.positive or explanation.negative):
        return False
    if reference.positive and (explanation.negative or (explanation.negated and not explanation.positive)):
        return True
    return reference.negative and explanation.positive and not explanation.negated


def reference_conflicts(explanation: str, references: Sequence[str], language: str, idiom: str = "") -> list[bool]:
    """Per reference, whether it conflicts with the explanation ([] with no references)."""
    if language not in RELEASED_LANGUAGES:
        return [False] * len(references)
    mine = features(explanation, language, idiom)
    return [conflicts(mine, features(r, language, idiom)) for r in references]


def polarity_contradicts(pred: str, refs: Sequence[str], language: str, idiom: str = "") -> bool:
    """True when every reference conflicts with the explanation (False with no references)."""
    if not refs:
        return False
    if not isinstance(language, str):
        raise IdiombenchError(f"polarity: language must be a string, got {language!r}")
    return all(reference_conflicts(pred, refs, language, idiom))
