"""Lexical scorers over the language's tokens (scoring.tokenize).

- f_beta: set-based F-beta over content tokens (β > 1: recall weighs more);
- lexical_cosine: cosine of content-token count vectors (a bag of words, not an embedding);
- rouge_l: ROUGE-L (LCS). English uses the rouge-score package with its own tokenizer
  (lower-case alphanumeric runs; the usual setup for published English ROUGE); every other
  language uses this project's tokeniser (stop words kept, punctuation removed), because
  rouge-score's tokenizer deletes CJK characters, and rouge-score's arithmetic on those tokens
  (`rouge_l_tokens`) with the LCS length from rapidfuzz (`lcs_length`: exact, see there) in
  place of rouge-score's pure-Python table (a 400 x 30 table per pair);
- brevity_penalty: the information-density penalty, in two forms (docs/METRICS.md §1.7).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence, Set
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from rapidfuzz.distance import LCSseq

if TYPE_CHECKING:  # rouge-score imports nltk (and through it scipy.stats, sklearn): 1.8 s
    from rouge_score import rouge_scorer

from .tokenize import tokenize

BPMode = Literal["paper", "bleu"]


def f_beta(pred_tokens: Iterable[str], gold_tokens: Iterable[str], beta: float = 2.0) -> float:
    """Set-based F-beta: precision = |shared| / |pred set|, recall = |shared| / |gold set|.
    0 when either side is empty or nothing is shared."""
    return f_beta_sets(set(pred_tokens), set(gold_tokens), beta)


def f_beta_sets(pred: Set[str], gold: Set[str], beta: float = 2.0) -> float:
    """f_beta of two token sets (callers that keep a text's set reuse it)."""
    if beta <= 0:
        raise ValueError(f"beta must be positive, got {beta}")
    shared = len(pred & gold)
    if not pred or not gold or shared == 0:
        return 0.0
    precision, recall = shared / len(pred), shared / len(gold)
    b2 = beta * beta
    return (1 + b2) * precision * recall / (b2 * precision + recall)


def lexical_cosine(pred_tokens: Iterable[str], gold_tokens: Iterable[str]) -> float:
    """Cosine of the two token count vectors; 0 when either side is empty."""
    return cosine_counts(Counter(pred_tokens), Counter(gold_tokens))


def cosine_counts(a: Counter[str], b: Counter[str], norm_a: float | None = None, norm_b: float | None = None) -> float:
    """lexical_cosine of two token counts (callers that keep a text's counts, and the norms
    sqrt(sum of squared counts), reuse them). The dot product is a sum of integers, exact in
    any order: it runs over the shared tokens only."""
    if not a or not b:
        return 0.0
    dot = sum(a[token] * b[token] for token in (a.keys() & b.keys()))
    if norm_a is None:
        norm_a = math.sqrt(sum(c * c for c in a.values()))
    if norm_b is None:
        norm_b = math.sqrt(sum(c * c for c in b.values()))
    return dot / (norm_a * norm_b)


@dataclass(frozen=True)
class RougeL:
    precision: float
    recall: float
    fmeasure: float


@lru_cache(maxsize=4)
def _rouge_scorer(use_stemmer: bool) -> rouge_scorer.RougeScorer:
    from rouge_score import rouge_scorer  # here, so that every CLI command does not pay for it

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=use_stemmer)


def rouge_l(pred: str, ref: str, language: str, keep: Sequence[str] = (), use_stemmer: bool = False) -> RougeL:
    """ROUGE-L of `pred` against `ref` (precision = LCS / len(pred), recall = LCS / len(ref)).
    use_stemmer applies to English only (rouge-score's Porter stemmer)."""
    if language == "en" and not keep:
        score = _rouge_scorer(use_stemmer).score(ref, pred)["rougeL"]
        return RougeL(score.precision, score.recall, score.fmeasure)
    return rouge_l_tokens(tokenize(pred, language, keep), tokenize(ref, language, keep))


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Length of the longest common subsequence of two token sequences (rapidfuzz's bit-parallel
    LCS, in C++). Exact: a's distinct tokens are numbered 1..k and b keeps only the tokens a has
    (numbered alike) — a token a lacks can never be matched, so dropping it leaves the LCS as it
    is — and rapidfuzz compares small non-negative ints by their value (hash(i) == i), never by
    a hash of a string that could collide."""
    codes: dict[Hashable, int] = {}
    for token in a:
        if token not in codes:
            codes[token] = len(codes) + 1
    left = [codes[token] for token in a]
    right = [code for code in map(codes.get, b) if code is not None]
    if not left or not right:
        return 0
    return int(LCSseq.similarity(left, right))


def rouge_l_tokens(pred_tokens: Sequence[str], ref_tokens: Sequence[str]) -> RougeL:
    """rouge-score's ROUGE-L arithmetic (_score_lcs, scoring.fmeasure) on given tokens: 0 (the
    int) for all three when either side is empty, as rouge-score returns."""
    if not ref_tokens or not pred_tokens:
        return RougeL(0, 0, 0)
    lcs = lcs_length(ref_tokens, pred_tokens)
    precision = lcs / len(pred_tokens)
    recall = lcs / len(ref_tokens)
    fmeasure = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return RougeL(precision, recall, fmeasure)


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
