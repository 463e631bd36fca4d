"""jieba's default segmentation (`jieba.cut(text)`, HMM on), with its dictionary search done
natively where that provably gives the same words (docs/METRICS.md §1.10).

`cut(text)` returns exactly `list(jieba.dt.cut(text))` of jieba 0.42.1, about 15x faster on a
700-character output. jieba-rs (the `rjieba` binding) computes only the dictionary route; jieba
itself does the rest. Why the words are the same:

1. Blocks. jieba splits a text with `jieba.re_han_default` into blocks and cuts each on its
   own: a "han" block (a run of U+4E00-U+9FD5, ASCII letters and digits, `+#&._%-`) by its
   dictionary route plus the HMM; any other block on whitespace (`\\r\\n` together), every other
   character alone. Cutting block by block therefore gives the text's words.
2. The route of a pure-CJK block (U+4E00-U+9FD5 only). jieba takes every dictionary word
   starting at each character (a character without one: itself, count 1) and, from the end,
   the route maximising log(count) - log(total) + route(next), ties to the later end. jieba-rs
   runs the same recursion (`cut(block, hmm=False)` returns the route's words: its ASCII
   merging cannot apply) and is built here from jieba's own loaded `FREQ` (every word with a
   positive count, with that count) and `total` (jieba counts a duplicated dictionary line
   twice: a padding entry no CJK text can match makes the totals equal), so both evaluate the
   same IEEE-754 expressions on the same counts; the one transcendental function, log, is
   glibc's in both (tests/unit/scoring/test_segment.py compares the two on every distinct
   count and the total).
3. The HMM. The route's runs of single characters are handled by jieba's own rule and code
   (`_finish`: one character alone; a run that is not a dictionary word through
   `jieba.finalseg.cut`; else character by character), so unknown words come from jieba's HMM,
   not jieba-rs's (whose emission table is rounded to 6 decimals).
4. Everything else is jieba's: han blocks holding ASCII (jieba-rs would keep `COL_10` whole
   where jieba's HMM gives `COL`, `_`, `10`) and non-han blocks are cut by `jieba.dt.cut`.

A text with none of the characters in `_NEEDS_BLOCKS` (ASCII letters, digits and `+#&._%-`,
the characters jieba-rs counts as han and jieba does not: CJK extension A, U+9FD6-U+9FFF,
compatibility ideographs, the supplementary ideographs; lone surrogates, which jieba-rs cannot
take) is passed to jieba-rs whole: its han blocks are then pure CJK in both libraries and its
other characters come back one by one (`\\r\\n` together) as jieba yields them. A change of
jieba's dictionary through its API (a user dictionary, `add_word`, `del_word`,
`suggest_freq(tune=True)`) changes `FREQ`'s identity or size, `total` or the forced splits, and
the native dictionary is rebuilt. IDIOMBENCH_NATIVE_SEGMENTER=0, or a jieba other than 0.42.1,
leaves everything to jieba.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Protocol

NATIVE_ENV = "IDIOMBENCH_NATIVE_SEGMENTER"  # "0": jieba alone (the reference path)
JIEBA_VERSION = "0.42.1"  # the jieba whose algorithm the native route was checked against
PURE_CJK = re.compile("[\u4e00-\u9fd5]+")  # jieba's han characters that are not ASCII (its HMM's range too)
# Characters that may put a text's blocks on different paths in the two libraries (see above).
NEEDS_BLOCKS = re.compile(
    "[a-zA-Z0-9+#&._%\\-\u3400-\u4dbf\u9fd6-\u9fff\uf900-\ufaff\ud800-\udfff\U00020000-\U0003ffff]"
)
# A word no text reaching jieba-rs can contain (no CJK character): it carries the difference
# between jieba's total and the sum of its words' counts.
TOTAL_PADDING = "\x00idiombench:total"
HMM_MEMO = 100_000  # distinct runs remembered (short strings; cleared when full)


class JiebaTokenizer(Protocol):
    """What this module reads of jieba's Tokenizer (`jieba.dt`, or one a caller built)."""

    FREQ: dict[str, int]
    total: int

    def check_initialized(self) -> None: ...

    def cut(self, sentence: str) -> Iterable[str]: ...


class NativeJieba(Protocol):
    """jieba-rs (`rjieba.Jieba`) as this module calls it."""

    def cut(self, text: str, hmm: bool) -> list[str]: ...

    def add_word(self, word: str, freq: int | None, tag: str | None) -> None: ...


@lru_cache(maxsize=1)
def default_tokenizer() -> JiebaTokenizer:
    """jieba's default tokenizer (`jieba.dt`), initialised, quiet."""
    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    tokenizer: JiebaTokenizer = jieba.dt
    return tokenizer


def build_native(freq: dict[str, int], total: int) -> NativeJieba:
    """jieba-rs with exactly these word counts (the positive ones) and this total."""
    import rjieba

    native: NativeJieba = rjieba.Jieba.empty()  # type: ignore[no-untyped-call]  # rjieba's stub leaves it unannotated
    add = native.add_word
    counted = 0
    for word, count in freq.items():
        if count > 0:  # jieba's DAG skips zero counts (prefixes, deleted words); jieba-rs then never sees them
            add(word, count, None)
            counted += count
    if total > counted:
        add(TOTAL_PADDING, total - counted, None)
    elif total < counted:  # not reachable through jieba's API (its total only grows)
        raise ValueError(f"jieba's total {total} is below the sum of its word counts {counted}")
    return native


class Segmenter:
    """`cut(text)` = `list(tokenizer.cut(text))`, the route computed natively where safe."""

    def __init__(self, tokenizer: JiebaTokenizer | None = None) -> None:
        self._tokenizer = tokenizer
        self._fingerprint: tuple[int, ...] | None = None
        self._native: NativeJieba | None = None
        # run -> jieba.finalseg.cut(run): a pure function of the run while the fingerprint holds
        # (the HMM tables never change; forced splits are in the fingerprint). Runs repeat a lot
        # (a traditional-Chinese phrase outside the simplified dictionary, in every output).
        self._hmm: dict[str, list[str]] = {}

    @property
    def tokenizer(self) -> JiebaTokenizer:
        if self._tokenizer is None:
            self._tokenizer = default_tokenizer()
        self._tokenizer.check_initialized()
        return self._tokenizer

    def native(self) -> NativeJieba | None:
        """jieba-rs for the tokenizer's dictionary as it is now; None where the native path is off."""
        import jieba
        import jieba.finalseg

        if os.environ.get(NATIVE_ENV, "1") == "0" or jieba.__version__ != JIEBA_VERSION:
            return None
        tokenizer = self.tokenizer
        fingerprint = (id(tokenizer.FREQ), len(tokenizer.FREQ), tokenizer.total, len(jieba.finalseg.Force_Split_Words))
        if fingerprint != self._fingerprint:
            self._native = build_native(tokenizer.FREQ, tokenizer.total)
            self._fingerprint = fingerprint
            self._hmm.clear()
        return self._native

    def cut(self, text: str) -> list[str]:
        tokenizer = self.tokenizer
        native = self.native()
        if native is None:
            return list(tokenizer.cut(text))
        words: list[str] = []
        if not NEEDS_BLOCKS.search(text):
            self._finish(native.cut(text, False), words)
            return words
        import jieba

        han, skip = jieba.re_han_default, jieba.re_skip_default
        for block in han.split(text):
            if not block:
                continue
            if PURE_CJK.fullmatch(block):
                self._finish(native.cut(block, False), words)
            elif han.match(block):  # a han block with ASCII: jieba's route and HMM
                words.extend(tokenizer.cut(block))
            else:  # jieba.cut's own rule for a non-han block (cut_all off)
                for piece in skip.split(block):
                    if skip.match(piece):
                        words.append(piece)
                    else:
                        words.extend(piece)
        return words

    def _finish(self, route: list[str], out: list[str]) -> None:
        """jieba's __cut_DAG after its route (jieba 0.42.1, HMM on), over the route's words;
        a word that is not pure CJK (a character of a non-han block) ends a run as a block end does."""
        freq = self.tokenizer.FREQ
        run = ""
        for word in route:
            if len(word) == 1 and "\u4e00" <= word <= "\u9fd5":
                run += word
                continue
            if run:
                self._flush(run, freq, out)
                run = ""
            out.append(word)
        if run:
            self._flush(run, freq, out)

    def _flush(self, run: str, freq: dict[str, int], out: list[str]) -> None:
        if len(run) == 1:
            out.append(run)
        elif not freq.get(run):
            words = self._hmm.get(run)
            if words is None:
                from jieba import finalseg

                if len(self._hmm) >= HMM_MEMO:
                    self._hmm.clear()
                words = self._hmm[run] = list(finalseg.cut(run))
            out.extend(words)
        else:
            out.extend(run)


_DEFAULT = Segmenter()


def cut(text: str) -> list[str]:
    """`list(jieba.dt.cut(text))` (jieba 0.42.1, HMM on): see the module docstring."""
    return _DEFAULT.cut(text)


def native_on() -> bool:
    """Whether cut() computes routes natively (for the run's notes)."""
    return _DEFAULT.native() is not None
