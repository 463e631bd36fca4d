"""Lexical scorers over the language's tokens (scoring.tokenize).

- f_beta: set-based F-beta over content tokens (β > 1: recall weighs more);
- lexical_cosine: cosine of content-token count vectors (a bag of words, not an embedding);
- rouge_l: ROUGE-L (LCS) with the rouge-score package. English uses rouge-score's own
  tokenizer (lower-case alphanumeric runs; the usual setup for published English ROUGE);
  every other language uses this project's tokeniser (stop words kept, punctuation
  removed), because rouge-score's tokenizer deletes CJK characters;
- brevity_penalty: the information-density penalty, in two forms (docs/METRICS.md §1.7).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Iterable, Literal, Sequence

if TYPE_CHECKING:  # rouge-score imports nltk (and through it scipy.stats, sklearn): 1.8 s
    from rouge_score import rouge_scorer

from .tokenize import tokenize

BPMode = Literal["paper", "bleu"]


def f_beta(pred_tokens: Iterable[str], gold_tokens: Iterable[str], beta: float = 2.0) -> float:
    """Set-based F-beta: precision = |shared| / |pred set|, recall = |shared| / |gold set|.
    0 when either side is empty or nothing is shared."""
    if beta <= 0:
        raise ValueError(f"beta must be positive, got {beta}")
    pred, gold = set(pred_tokens), set(gold_tokens)
    shared = len(pred & gold)
    if not pred or not gold or shared == 0:
        return 0.0
    precision, recall = shared / len(pred), shared / len(gold)
    b2 = beta * beta
    return (1 + b2) * precision * recall / (b2 * precision + recall)


def lexical_cosine(pred_tokens: Iterable[str], gold_tokens: Iterable[str]) -> float:
    """Cosine of the two token count vectors; 0 when either side is empty."""
    a, b = Counter(pred_tokens), Counter(gold_tokens)
    if not a or not b:
        return 0.0
    dot = sum(count * b[token] for token, count in a.items())
    norm = math.sqrt(sum(c * c for c in a.values())) * math.sqrt(sum(c * c for c in b.values()))
    return dot / norm


@dataclass(frozen=True)
class RougeL:
    precision: float
    recall: float
    fmeasure: float


class _LanguageTokenizer:
    """rouge-score's tokenizer interface over this project's tokeniser."""

    def __init__(self, language: str, keep: tuple[str, ...]):
        self.language = language
        self.keep = keep

    def tokenize(self, text: str) -> list[str]:
        return tokenize(text, self.language, self.keep)


@lru_cache(maxsize=256)
def _rouge_scorer(language: str, keep: tuple[str, ...], use_stemmer: bool) -> rouge_scorer.RougeScorer:
    from rouge_score import rouge_scorer  # here, so that every CLI command does not pay for it

    if language == "en" and not keep:
        return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=use_stemmer)
    return rouge_scorer.RougeScorer(["rougeL"], tokenizer=_LanguageTokenizer(language, keep))


def rouge_l(pred: str, ref: str, language: str, keep: Sequence[str] = (), use_stemmer: bool = False) -> RougeL:
    """ROUGE-L of `pred` against `ref` (precision = LCS / len(pred), recall = LCS / len(ref)).
    use_stemmer applies to English only (rouge-score's Porter stemmer)."""
    score = _rouge_scorer(language, tuple(keep), use_stemmer).score(ref, pred)["rougeL"]
    return RougeL(score.precision, score.recall, score.fmeasure)


def rouge_l_precision(pred: str, ref: str, language: str, keep: Sequence[str] = ()) -> float:
    """ROUGE-L precision of the prediction against the reference."""
    return rouge_l(pred, ref, language, keep).precision


def rouge_l_f(pred: str, ref: str, language: str = "en", use_stemmer: bool = False) -> float:
    """ROUGE-L F-measure."""
    return rouge_l(pred, ref, language, use_stemmer=use_stemmer).fmeasure


def token_length(text: str, language: str, keep: Sequence[str] = ()) -> int:
    """Length in tokens of the language's tokeniser (for the brevity penalty)."""
    return len(tokenize(text, language, keep))


def brevity_penalty(len_e: int, len_r: int, mode: BPMode = "paper") -> float:
    """Brevity penalty for an explanation of len_e tokens and a reference of len_r.

    paper (default; paper eq. 19 text): penalise explanations LONGER than the reference:
        1 if len_e <= len_r else exp(1 - len_e / len_r)   (0 when len_r = 0 < len_e, the limit)
    bleu (the released code): BLEU's penalty on SHORT outputs:
        exp(1 - len_r / len_e) if len_e < len_r else 1    (0 when len_e = 0 < len_r, the limit)
    """
    if len_e < 0 or len_r < 0:
        raise ValueError(f"lengths must be non-negative, got len_e={len_e}, len_r={len_r}")
    if mode == "paper":
        if len_e <= len_r:
            return 1.0
        return 0.0 if len_r == 0 else math.exp(1.0 - len_e / len_r)
    if mode == "bleu":
        if len_e >= len_r:
            return 1.0
        return 0.0 if len_e == 0 else math.exp(1.0 - len_r / len_e)
    raise ValueError(f"unknown brevity penalty mode {mode!r} (expected 'paper' or 'bleu')")
