"""Polarity conflict between an explanation and its references: the released OrderProbe
S_Acc rule (Sacc/sacc_*.py, docs/METRICS.md#13-semantic-accuracy), used to halve Fβ.

The word lists are the released ones, one set per language (zh-CN, zh-TW, ja, ko). The
project holds no copy: the OrderProbe build extracts them from the acquired scripts
(lexicon.py) and callers pass one language's lists (`lex`). A text's
features are three booleans over its jieba words (the released code segments every
language with jieba): has a positive word, has a negative word, has a negation; an idiom
in the per-language override table gets the table's (positive, negative) and no negation,
whatever the text. One reference conflicts with the explanation when
    (reference positive and (explanation negative or (explanation negated and not positive)))
 or (reference negative and explanation positive and not negated);
and Fβ is halved when EVERY reference conflicts (the code's POLARITY_MODE = "all").
A language without released lists (e.g. English; `lex` None) never conflicts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...core.errors import IdiombenchError
from .lexicon import cut_words

if TYPE_CHECKING:
    from .lexicon import ReleasedLexicon

RELEASED_LANGUAGES = ("zh-CN", "zh-TW", "ja", "ko")
# text -> its jieba words: cut_words, or a cache of its results (the score stage's TokenCache.words)
Cut = Callable[[str], Sequence[str]]


@dataclass(frozen=True)
class Features:
    positive: bool
    negative: bool
    negated: bool


def lexicon_for(lexicons: Mapping[str, ReleasedLexicon], language: str) -> ReleasedLexicon | None:
    """One language's released lists; None for a language the released code does not cover.
    A covered language missing from `lexicons` is an error, not a silent "never conflicts"."""
    if not isinstance(language, str):
        raise IdiombenchError(f"polarity: language must be a string, got {language!r}")
    if language not in RELEASED_LANGUAGES:
        return None
    if language not in lexicons:
        have = ", ".join(sorted(lexicons)) or "none"
        raise IdiombenchError(
            f"polarity: no released word lists for {language} (loaded: {have}); they come from the "
            "OrderProbe build (data/processed/orderprobe/released_lexicon.json)"
        )
    return lexicons[language]


def features(text: str, lex: ReleasedLexicon, idiom: str = "", cut: Cut = cut_words) -> Features:
    """The released extract_polarity."""
    if idiom and idiom in lex.overrides:
        positive, negative = lex.overrides[idiom]
        return Features(positive, negative, False)
    words = cut(text)
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


def reference_conflicts(
    explanation: str, references: Sequence[str], lex: ReleasedLexicon | None, idiom: str = "", cut: Cut = cut_words
) -> list[bool]:
    """Per reference, whether it conflicts with the explanation ([] with no references;
    all False without lists)."""
    if lex is None:
        return [False] * len(references)
    mine = features(explanation, lex, idiom, cut)
    return [conflicts(mine, features(r, lex, idiom, cut)) for r in references]


def polarity_contradicts(
    pred: str, refs: Sequence[str], lex: ReleasedLexicon | None, idiom: str = "", cut: Cut = cut_words
) -> bool:
    """True when every reference conflicts with the explanation (False with no references)."""
    if not refs:
        return False
    return all(reference_conflicts(pred, refs, lex, idiom, cut))
