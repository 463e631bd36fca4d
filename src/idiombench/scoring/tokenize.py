"""Per-language tokenisers for the lexical metrics (LEX, Fβ, ROUGE-L, lengths for the
brevity penalty).

- zh-CN, zh-TW (and zh): jieba (its standard segmentation, jieba.cut with HMM, computed by
  scoring.segment: jieba's exact words, natively where provably equal; POS from its
  dictionary, ICTCLAS-style tags). jieba's
  dictionary is simplified Chinese; traditional text is segmented by the same dictionary
  plus its HMM for unknown words, so zh-TW segmentation is coarser (more single characters).
- ja: fugashi + unidic-lite (MeCab with UniDic; POS pos1-pos2-pos3 and lemma).
- ko: kiwipiepy (morphemes with Sejong-style tags; verb and adjective stems as forms).
- en: Unicode word runs (letters and digits, with internal apostrophes), lower-cased.
- any other language: a documented character fallback: every CJK ideograph, kana,
  Hangul syllable or Thai character is its own token; other scripts give word runs.

Text is NFKC-normalised and case-folded first. `keep` strings (the four-character
expression) are kept whole as one token wherever they occur, and are never stop words.
Punctuation, symbols and whitespace are never tokens. Content tokens additionally drop
stop words and stop POS tags from the language's list in data/stopwords/ (see the
README there for the choice of lists and the file format).
"""

from __future__ import annotations

import csv
import math
import re
import unicodedata
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property, lru_cache
from importlib import resources
from typing import Protocol, TypeVar, cast

from . import segment

T = TypeVar("T")

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
# Analysers: normalised text -> tokens with POS and character spans, as parallel lists
# (forms, tags, lemmas, starts, ends): a 700-character output has ~400 tokens, and an object
# per token cost more than the segmentation itself. `analyse` builds Token objects from them.

Columns = tuple[list[str], list[str], list[str], list[int], list[int]]  # forms, tags, lemmas, starts, ends


class JaWord(Protocol):
    """A word of fugashi's tagging."""

    surface: str
    feature_raw: str  # its UniDic feature string


class JaTagger(Protocol):
    """fugashi's Tagger."""

    def __call__(self, text: str) -> Iterable[JaWord]: ...


class KoToken(Protocol):
    """A token of kiwipiepy's analysis."""

    form: str
    tag: object  # printed with str()
    start: int
    len: int


class KoAnalyser(Protocol):
    """kiwipiepy's Kiwi."""

    def tokenize(self, text: str) -> Sequence[KoToken]: ...


@lru_cache(maxsize=1)
def _jieba() -> tuple[segment.JiebaTokenizer, dict[str, str]]:
    """jieba's default tokenizer and its dictionary's POS table."""
    import jieba.posseg

    tokenizer = segment.default_tokenizer()
    tags: dict[str, str] = jieba.posseg.dt.word_tag_tab
    return tokenizer, tags


@lru_cache(maxsize=1)
def _fugashi_tagger() -> JaTagger:
    import fugashi

    tagger: JaTagger = fugashi.Tagger()  # finds the unidic-lite dictionary (a dependency)
    return tagger


@lru_cache(maxsize=1)
def _kiwi() -> KoAnalyser:
    import kiwipiepy

    kiwi: KoAnalyser = kiwipiepy.Kiwi()
    return kiwi


def _spans(text: str, forms: Iterable[tuple[str, str, str]]) -> Columns:
    """Place (form, pos, lemma) tokens, given in text order as exact substrings, on the text."""
    columns: Columns = ([], [], [], [], [])
    cursor = 0
    for form, pos, lemma in forms:
        start = text.find(form, cursor)
        if start < 0:  # not a substring (should not happen): keep the token, zero-width at the cursor
            start = cursor
            end = cursor
        else:
            end = start + len(form)
            cursor = end
        _append(columns, form, pos, lemma, start, end)
    return columns


def _append(columns: Columns, form: str, pos: str, lemma: str, start: int, end: int) -> None:
    columns[0].append(form)
    columns[1].append(pos)
    columns[2].append(lemma)
    columns[3].append(start)
    columns[4].append(end)


def _analyse_zh(text: str) -> Columns:
    # jieba's standard segmentation (jieba.cut, HMM on; computed through scoring.segment, which
    # gives jieba's exact words) with each word's POS from jieba's dictionary ("x" for words
    # outside it). jieba.posseg would tag unknown words with its own HMM too, but that is
    # ~40 ms a sentence on traditional text, and every stop tag is a dictionary word's tag anyway.
    _, tags = _jieba()
    forms = segment.cut(text)
    starts, ends = [], []
    position = 0
    for word in forms:  # jieba.tokenize's offsets: the words' lengths added up
        starts.append(position)
        position += len(word)
        ends.append(position)
    return forms, [tags.get(word, "x") for word in forms], forms, starts, ends


def unidic_fields(raw: str) -> list[str]:
    """A MeCab node's UniDic feature string as fugashi's `feature` reads it: CSV, a field quoted
    where it holds a comma (an unknown word's string has 6 fields, a dictionary word's 26)."""
    return next(csv.reader([raw])) if '"' in raw else raw.split(",")


@lru_cache(maxsize=1 << 16)
def _ja_pos_lemma(raw: str) -> tuple[str, str | None]:
    """(pos1-pos2-pos3, normalised lemma or None: the surface's) of a feature string; reading
    fugashi's `feature` namedtuple of 26 fields per word cost 4x the tagging itself, and a
    feature string repeats across words."""
    fields = unidic_fields(raw)
    pos = "-".join(p for p in fields[:3] if p and p != "*")
    lemma = fields[7] if len(fields) > 7 else None
    return pos, (normalize(lemma) if lemma and lemma != "*" else None)


def _analyse_ja(text: str) -> Columns:
    def forms() -> Iterator[tuple[str, str, str]]:
        for word in _fugashi_tagger()(text):
            surface = word.surface
            pos, lemma = _ja_pos_lemma(word.feature_raw)
            yield surface, pos, normalize(surface) if lemma is None else lemma

    return _spans(text, forms())


def _analyse_ko(text: str) -> Columns:
    tokens = _kiwi().tokenize(text)
    forms = [t.form for t in tokens]
    starts = [t.start for t in tokens]
    return forms, [str(t.tag) for t in tokens], forms, starts, [s + t.len for s, t in zip(starts, tokens, strict=True)]


def _analyse_regex(pattern: re.Pattern[str], text: str) -> Columns:
    columns: Columns = ([], [], [], [], [])
    for m in pattern.finditer(text):
        _append(columns, m.group(), "", m.group(), m.start(), m.end())
    return columns


def _analyser(language: str) -> Callable[[str], Columns]:
    if language in CHINESE:
        return _analyse_zh
    if language == "en":
        return lambda text: _analyse_regex(_EN_WORD, text)
    return {"ja": _analyse_ja, "ko": _analyse_ko}.get(language, lambda text: _analyse_regex(_FALLBACK_TOKEN, text))


@lru_cache(maxsize=1 << 18)
def _is_word(form: str) -> bool:
    """Not blank and not only punctuation (memoised: forms repeat across texts)."""
    return bool(form.strip()) and not is_punctuation(form)


@lru_cache(maxsize=4096)
def _keep_pattern(keep: tuple[str, ...]) -> re.Pattern[str] | None:
    keep_norm = sorted({normalize(k) for k in keep if k and k.strip()}, key=lambda k: (-len(k), k))
    return re.compile("|".join(map(re.escape, keep_norm))) if keep_norm else None


def _keep_spans(text: str, keep: Iterable[str]) -> list[tuple[int, int]]:
    """Non-overlapping occurrences of the keep strings, leftmost first, longest at a tie."""
    pattern = _keep_pattern(tuple(keep))
    return [] if pattern is None else [(m.start(), m.end()) for m in pattern.finditer(text)]


def _columns(text: str, language: str, keep: Iterable[str]) -> Columns:
    """analyse() as columns, on the normalised text."""
    forms, tags, lemmas, starts, ends = _analyser(language)(text)
    words = [i for i, form in enumerate(forms) if _is_word(form)]
    if len(words) < len(forms):
        forms, tags, lemmas = [forms[i] for i in words], [tags[i] for i in words], [lemmas[i] for i in words]
        starts, ends = [starts[i] for i in words], [ends[i] for i in words]
    spans = _keep_spans(text, keep)
    if not spans:
        return forms, tags, lemmas, starts, ends
    # every token overlapping a kept occurrence gives way to one token for the occurrence;
    # stable sort by (start, end), outside tokens first: what sorted(outside + kept) gives
    rows = [
        (starts[i], ends[i], forms[i], tags[i], lemmas[i])
        for i in range(len(forms))
        if not any(starts[i] < b and a < ends[i] for a, b in spans)
    ]
    rows += [(a, b, text[a:b], KEEP_POS, text[a:b]) for a, b in spans]
    rows.sort(key=lambda row: (row[0], row[1]))
    return (
        [r[2] for r in rows],
        [r[3] for r in rows],
        [r[4] for r in rows],
        [r[0] for r in rows],
        [r[1] for r in rows],
    )


def analyse(text: str, language: str, keep: Iterable[str] = ()) -> list[Token]:
    """All tokens of `text` except punctuation, with POS. The whole text is analysed (so
    particles after an expression keep their context); then every token overlapping an
    occurrence of a `keep` string is replaced by one token for that occurrence."""
    return [Token(*row) for row in zip(*_columns(normalize(text), language, keep), strict=True)]


def tokenize(text: str, language: str, keep: Iterable[str] = ()) -> list[str]:
    """Word tokens (stop words included, punctuation removed): for ROUGE-L and lengths."""
    return segmented(text, language, keep).forms_list()


def content_tokens(text: str, language: str, keep: Iterable[str] = ()) -> list[str]:
    """Tokens after removing punctuation, stop words and stop POS: for LEX and Fβ."""
    return list(segmented(text, language, keep).content)


@dataclass(frozen=True)
class Segmented:
    """One text's tokens in one language with its kept strings: every lexical term reads these."""

    forms: tuple[str, ...]  # tokenize(): ROUGE-L and lengths
    content: tuple[str, ...]  # content_tokens(): LEX and Fβ

    def forms_list(self) -> list[str]:
        return list(self.forms)

    @cached_property
    def content_set(self) -> frozenset[str]:
        return frozenset(self.content)

    @cached_property
    def content_counts(self) -> Counter[str]:
        return Counter(self.content)

    @cached_property
    def content_norm(self) -> float:
        """sqrt of the sum of squared content-token counts (lexical.cosine_counts' factor)."""
        return math.sqrt(sum(c * c for c in self.content_counts.values()))


def segmented(text: str, language: str, keep: Iterable[str] = ()) -> Segmented:
    """The tokens of tokenize() and content_tokens() from one analysis of the text."""
    text = normalize(text)
    if language in CHINESE:
        return _segmented_zh(text, stop_list(language), _keep_spans(text, keep))
    forms, tags, lemmas, _, _ = _columns(text, language, keep)
    stop = stop_list(language).is_stop_parts
    content = tuple(f for f, t, lemma in zip(forms, tags, lemmas, strict=True) if not stop(f, t, lemma))
    return Segmented(tuple(forms), content)


def _segmented_zh(text: str, stops: StopList, spans: list[tuple[int, int]]) -> Segmented:
    """segmented() of normalised Chinese text without per-token columns: jieba's words are
    contiguous and non-empty, a word's tag and lemma follow from its form (so whether it is a
    word and a stop word is remembered per form), and the kept occurrences merge in one pass
    into what _columns' sort gives (a word overlapping an occurrence gives way to it; an
    occurrence comes right before the first remaining word that starts after it)."""
    _, tags = _jieba()
    memo = stops.zh_memo
    forms: list[str] = []
    content: list[str] = []
    position, pending = 0, 0
    for word in segment.cut(text):
        start, position = position, position + len(word)
        found = memo.get(word)
        if found is None:
            found = memo[word] = (_is_word(word), stops.is_stop_parts(word, tags.get(word, "x"), word))
        if not found[0]:
            continue
        if spans:
            while pending < len(spans) and spans[pending][0] < start:
                a, b = spans[pending]
                forms.append(text[a:b])
                content.append(text[a:b])  # a kept string is never a stop word
                pending += 1
            if (pending and spans[pending - 1][1] > start) or (pending < len(spans) and spans[pending][0] < position):
                continue  # overlaps a kept occurrence
        forms.append(word)
        if not found[1]:
            content.append(word)
    for a, b in spans[pending:]:
        forms.append(text[a:b])
        content.append(text[a:b])
    return Segmented(tuple(forms), tuple(content))


class TokenCache:
    """Each distinct text analysed once: `get` gives segmented() per (text, language, kept
    strings), `words` jieba's words of a raw text (segment.cut: the released code's and the
    polarity rule's). `pin=True` entries (references: few, and read all run long) are kept; the
    others (outputs) live in a bounded LRU, which bounds the memory of a long run."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        # key: ("tokens", text, language, kept strings) -> Segmented, ("words", text) -> jieba's words
        self.pinned: dict[tuple[Hashable, ...], object] = {}
        self.recent: OrderedDict[tuple[Hashable, ...], object] = OrderedDict()
        self.computed = 0  # analyses run (the rest were found)

    def get(self, text: str, language: str, keep: tuple[str, ...] = (), pin: bool = False) -> Segmented:
        return self._cached(("tokens", text, language, keep), lambda: segmented(text, language, keep), pin)

    def words(self, text: str, pin: bool = False) -> tuple[str, ...]:
        return self._cached(("words", text), lambda: tuple(segment.cut(text)), pin)

    def _cached(self, key: tuple[Hashable, ...], compute: Callable[[], T], pin: bool) -> T:
        # a key's kind (its first element) decides what `compute` returns: a found value is a T
        found = self.pinned.get(key)
        if found is not None:
            return cast(T, found)
        found = self.recent.get(key)
        if found is not None:
            if pin:
                self.pinned[key] = self.recent.pop(key)
            else:
                self.recent.move_to_end(key)
            return cast(T, found)
        computed = compute()
        self.computed += 1
        if pin:
            self.pinned[key] = computed
        else:
            self.recent[key] = computed
            if len(self.recent) > self.size:
                self.recent.popitem(last=False)
        return computed


# ---------------------------------------------------------------------------
# Stop lists (data/stopwords/<lang>.txt)


@dataclass(frozen=True)
class StopList:
    forms: frozenset[str]
    form_tags: frozenset[tuple[str, str]]
    tags: tuple[str, ...]
    always_keep: frozenset[str]
    memo: dict[tuple[str, str, str], bool] = field(default_factory=dict, compare=False, hash=False, repr=False)
    # Chinese form -> (a word, not only punctuation; a stop word): jieba's tag and lemma follow from the form
    zh_memo: dict[str, tuple[bool, bool]] = field(default_factory=dict, compare=False, hash=False, repr=False)

    @staticmethod
    def _tag_matches(pos: str, tag: str) -> bool:
        return pos == tag or pos.startswith(tag + "-")

    def is_stop(self, token: Token) -> bool:
        return self.is_stop_parts(token.form, token.pos, token.lemma)

    def is_stop_parts(self, form: str, pos: str, lemma: str) -> bool:
        """is_stop of a token with this form, POS and lemma (memoised: tokens repeat)."""
        key = (form, pos, lemma)
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = self._is_stop(form, pos, lemma)
        return found

    def _is_stop(self, form: str, pos: str, lemma: str) -> bool:
        if pos == KEEP_POS:
            return False
        names = {form, lemma}
        if names & self.always_keep:
            return False
        if names & self.forms:
            return True
        if any((name, tag) in self.form_tags for name in names for tag in self._tag_prefixes(pos)):
            return True
        return any(self._tag_matches(pos, tag) for tag in self.tags)

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
