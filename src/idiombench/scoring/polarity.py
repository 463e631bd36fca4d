"""Polarity of an explanation, for the released OrderProbe code's option of halving Fβ when
the explanation's polarity contradicts every reference.

The released code's word lists are not available here; data/polarity/<lang>.json holds the
project's own short lists (see the README there). A text's polarity is the sign of
(positive words - negative words), a polar word counting the other way when an odd number
of negations stand within `window` units on the language's negation side (units: tokens,
or characters for Chinese, whose lists are matched as substrings).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Literal, Sequence

from .tokenize import CHINESE, analyse, normalize

Scope = Literal["before", "after", "both"]
Match = Literal["tokens", "substring"]


@dataclass(frozen=True)
class PolarityLexicon:
    match: Match
    positive: frozenset[str]
    negative: frozenset[str]
    negations: frozenset[str]
    negation_scope: Scope
    window: int


@dataclass(frozen=True)
class _Event:
    start: int
    end: int
    value: int  # +1 positive, -1 negative, 0 negation


def lexicon_file(language: str) -> str | None:
    if language in CHINESE:
        return "zh.json"
    return {"ja": "ja.json", "ko": "ko.json", "en": "en.json"}.get(language)


@lru_cache(maxsize=None)
def lexicon(language: str) -> PolarityLexicon | None:
    """The language's lists, or None for a language without lists (polarity 0)."""
    name = lexicon_file(language)
    if name is None:
        return None
    source = f"scoring/data/polarity/{name}"
    raw = json.loads(resources.files("idiombench.scoring").joinpath("data", "polarity", name).read_text(encoding="utf-8"))
    if raw.get("negation_scope") not in ("before", "after", "both"):
        raise ValueError(f"{source}: negation_scope must be before, after or both, got {raw.get('negation_scope')!r}")
    if raw.get("match") not in ("tokens", "substring"):
        raise ValueError(f"{source}: match must be tokens or substring, got {raw.get('match')!r}")
    return PolarityLexicon(
        match=raw["match"],
        positive=frozenset(map(normalize, raw["positive"])),
        negative=frozenset(map(normalize, raw["negative"])),
        negations=frozenset(map(normalize, raw["negations"])),
        negation_scope=raw["negation_scope"],
        window=int(raw["window"]),
    )


def _token_events(text: str, language: str, lex: PolarityLexicon) -> list[_Event]:
    events = []
    for i, token in enumerate(analyse(text, language)):
        names = {token.form, token.lemma}
        if names & lex.negations:
            events.append(_Event(i, i + 1, 0))
        value = (1 if names & lex.positive else 0) - (1 if names & lex.negative else 0)
        if value:
            events.append(_Event(i, i + 1, value))
    return events


@lru_cache(maxsize=None)
def _substring_pattern(language: str) -> re.Pattern[str]:
    lex = lexicon(language)
    assert lex is not None
    entries = sorted(lex.positive | lex.negative | lex.negations, key=lambda w: (-len(w), w))
    return re.compile("|".join(map(re.escape, entries)))


def _substring_events(text: str, language: str, lex: PolarityLexicon) -> list[_Event]:
    events = []
    for m in _substring_pattern(language).finditer(normalize(text)):
        word = m.group()
        value = (1 if word in lex.positive else 0) - (1 if word in lex.negative else 0)
        if value or word in lex.negations:
            events.append(_Event(m.start(), m.end(), value))
    return events


def _negated(polar: _Event, negations: list[_Event], lex: PolarityLexicon) -> bool:
    flips = 0
    for neg in negations:
        if lex.negation_scope in ("before", "both") and 0 <= polar.start - neg.end < lex.window:
            flips += 1
        elif lex.negation_scope in ("after", "both") and 0 <= neg.start - polar.end < lex.window:
            flips += 1
    return flips % 2 == 1


def polarity(text: str, language: str) -> int:
    """+1 positive, -1 negative, 0 neutral (or a language without lists)."""
    lex = lexicon(language)
    if lex is None:
        return 0
    events = _substring_events(text, language, lex) if lex.match == "substring" else _token_events(text, language, lex)
    negations = [e for e in events if e.value == 0]
    total = sum(-e.value if _negated(e, negations, lex) else e.value for e in events if e.value)
    return (total > 0) - (total < 0)


def polarity_contradicts(pred: str, refs: Sequence[str], language: str) -> bool:
    """True when the explanation has a polarity and every reference has the opposite one
    (False with no references, or when the explanation or any reference is neutral)."""
    if not refs:
        return False
    p = polarity(pred, language)
    return p != 0 and all(polarity(ref, language) == -p for ref in refs)
