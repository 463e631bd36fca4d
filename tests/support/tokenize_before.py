"""scoring/tokenize.py as it was before issue 29 (commit 640363d), its code verbatim: the reference
the rewritten tokeniser is compared with (tests/unit/scoring/test_tokenize_before_after.py). Not used
by the project."""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

CHINESE = frozenset({"zh", "zh-CN", "zh-TW"})
SUPPORTED = {
    "zh-CN": "jieba",
    "zh-TW": "jieba",
    "zh": "jieba",
    "ja": "fugashi + unidic-lite",
    "ko": "kiwipiepy",
    "en": "unicode words",
}
FALLBACK = "characters (CJK, kana, Hangul, Thai) and word runs (other scripts)"
KEEP_POS = "KEEP"

_EN_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_FALLBACK_TOKEN = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u0e00-\u0e7f]"
    r"|[^\W_\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u0e00-\u0e7f]+"
)


@dataclass(frozen=True)
class Token:
    form: str  # the surface text (Korean: the morpheme form)
    pos: str  # "" when the tokeniser gives none; KEEP for kept expressions
    lemma: str  # UniDic lemma for Japanese, else the form
    start: int  # character span in the normalised text
    end: int


def tokenizer_name(language: str) -> str:
    return SUPPORTED.get(language, FALLBACK)


def normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def is_punctuation(text: str) -> bool:
    """Only punctuation, symbols, separators or control characters."""
    return all(unicodedata.category(ch)[0] in "PSZC" for ch in text)


# ---------------------------------------------------------------------------
# Analysers: normalised text -> tokens with POS and character spans


@lru_cache(maxsize=1)
def _jieba():
    """jieba's default tokenizer and its dictionary's POS table."""
    import jieba
    import jieba.posseg

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba.dt, jieba.posseg.dt.word_tag_tab


@lru_cache(maxsize=1)
def _fugashi_tagger():
    import fugashi

    return fugashi.Tagger()  # finds the unidic-lite dictionary (a dependency)


@lru_cache(maxsize=1)
def _kiwi():
    import kiwipiepy

    return kiwipiepy.Kiwi()


def _spans(text: str, forms: Iterable[tuple[str, str, str]]) -> list[Token]:
    """Place (form, pos, lemma) tokens, given in text order as exact substrings, on the text."""
    tokens = []
    cursor = 0
    for form, pos, lemma in forms:
        start = text.find(form, cursor)
        if start < 0:  # not a substring (should not happen): keep the token, zero-width at the cursor
            start = cursor
            end = cursor
        else:
            end = start + len(form)
            cursor = end
        tokens.append(Token(form, pos, lemma, start, end))
    return tokens


def _analyse_zh(text: str) -> list[Token]:
    # jieba's standard segmentation (jieba.cut, HMM on) with each word's POS from jieba's
    # dictionary ("x" for words outside it). jieba.posseg would tag unknown words with its
    # own HMM too, but that is ~40 ms a sentence on traditional text, and every stop tag
    # is a dictionary word's tag anyway.
    tokenizer, tags = _jieba()
    return [Token(word, tags.get(word, "x"), word, start, end) for word, start, end in tokenizer.tokenize(text)]


def _analyse_ja(text: str) -> list[Token]:
    def forms():
        for word in _fugashi_tagger()(text):
            feature = word.feature
            pos = "-".join(p for p in (feature.pos1, feature.pos2, feature.pos3) if p and p != "*")
            lemma = feature.lemma if feature.lemma and feature.lemma != "*" else word.surface
            yield word.surface, pos, normalize(lemma)

    return _spans(text, forms())


def _analyse_ko(text: str) -> list[Token]:
    return [Token(t.form, str(t.tag), t.form, t.start, t.start + t.len) for t in _kiwi().tokenize(text)]


def _analyse_regex(pattern: re.Pattern[str], text: str) -> list[Token]:
    return [Token(m.group(), "", m.group(), m.start(), m.end()) for m in pattern.finditer(text)]


def _analyser(language: str):
    if language in CHINESE:
        return _analyse_zh
    if language == "en":
        return lambda text: _analyse_regex(_EN_WORD, text)
    return {"ja": _analyse_ja, "ko": _analyse_ko}.get(language, lambda text: _analyse_regex(_FALLBACK_TOKEN, text))


def _keep_spans(text: str, keep: Iterable[str]) -> list[tuple[int, int]]:
    """Non-overlapping occurrences of the keep strings, leftmost first, longest at a tie."""
    keep_norm = sorted({normalize(k) for k in keep if k and k.strip()}, key=lambda k: (-len(k), k))
    if not keep_norm:
        return []
    pattern = re.compile("|".join(map(re.escape, keep_norm)))
    return [(m.start(), m.end()) for m in pattern.finditer(text)]


def analyse(text: str, language: str, keep: Iterable[str] = ()) -> list[Token]:
    """All tokens of `text` except punctuation, with POS. The whole text is analysed (so
    particles after an expression keep their context); then every token overlapping an
    occurrence of a `keep` string is replaced by one token for that occurrence."""
    text = normalize(text)
    spans = _keep_spans(text, keep)
    tokens = [t for t in _analyser(language)(text) if t.form.strip() and not is_punctuation(t.form)]
    if not spans:
        return tokens
    kept = [Token(text[a:b], KEEP_POS, text[a:b], a, b) for a, b in spans]
    outside = [t for t in tokens if not any(t.start < b and a < t.end for a, b in spans)]
    return sorted(outside + kept, key=lambda t: (t.start, t.end))


def tokenize(text: str, language: str, keep: Iterable[str] = ()) -> list[str]:
    """Word tokens (stop words included, punctuation removed): for ROUGE-L and lengths."""
    return [t.form for t in analyse(text, language, keep)]


def content_tokens(text: str, language: str, keep: Iterable[str] = ()) -> list[str]:
    """Tokens after removing punctuation, stop words and stop POS: for LEX and Fβ."""
    stops = stop_list(language)
    return [t.form for t in analyse(text, language, keep) if not stops.is_stop(t)]


# ---------------------------------------------------------------------------
# Stop lists (data/stopwords/<lang>.txt)


@dataclass(frozen=True)
class StopList:
    forms: frozenset[str]
    form_tags: frozenset[tuple[str, str]]
    tags: tuple[str, ...]
    always_keep: frozenset[str]

    @staticmethod
    def _tag_matches(pos: str, tag: str) -> bool:
        return pos == tag or pos.startswith(tag + "-")

    def is_stop(self, token: Token) -> bool:
        if token.pos == KEEP_POS:
            return False
        names = {token.form, token.lemma}
        if names & self.always_keep:
            return False
        if names & self.forms:
            return True
        if any((name, tag) in self.form_tags for name in names for tag in self._tag_prefixes(token.pos)):
            return True
        return any(self._tag_matches(token.pos, tag) for tag in self.tags)

    @staticmethod
    def _tag_prefixes(pos: str) -> list[str]:
        parts = pos.split("-")
        return ["-".join(parts[:i]) for i in range(1, len(parts) + 1)]


def stop_file(language: str) -> str | None:
    if language in CHINESE:
        return "zh.txt"
    return {"ja": "ja.txt", "ko": "ko.txt", "en": "en.txt"}.get(language)


def parse_stop_lines(lines: Sequence[str], source: str) -> StopList:
    forms: set[str] = set()
    form_tags: set[tuple[str, str]] = set()
    tags: list[str] = []
    keep: set[str] = set()
    for number, raw in enumerate(lines, start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("+"):
            keep.add(normalize(line[1:]))
            continue
        form, sep, tag = line.rpartition("/")
        if not sep:
            forms.add(normalize(line))
        elif not form and tag:
            tags.append(tag)
        elif form and tag:
            form_tags.add((normalize(form), tag))
        else:
            raise ValueError(f"{source}, line {number}: expected `form`, `form/TAG`, `/TAG` or `+form`, got {raw!r}")
    return StopList(frozenset(forms), frozenset(form_tags), tuple(tags), frozenset(keep))


@cache
def stop_list(language: str) -> StopList:
    name = stop_file(language)
    if name is None:
        return StopList(frozenset(), frozenset(), (), frozenset())
    text = resources.files("idiombench.scoring").joinpath("data", "stopwords", name).read_text(encoding="utf-8")
    return parse_stop_lines(text.splitlines(), f"scoring/data/stopwords/{name}")
