"""OrderProbe's `compatibility: released` mode: the arithmetic of the authors' released
metric code (github Zhaolu-K/OrderProbe, commit 7ef758a; docs/METRICS.md#19-compatibility-modes), rewritten
here function by function so that the same inputs give the same numbers. The released word
lists are not part of the project: the build extracts them from the acquired scripts
(lexicon.py) and the functions below receive one language's lists as `lex`.

Where the released code departs from the paper, this module follows the code:
- references: the cell is split on `||`, `;`, `；`, `/` and `、` (the paper: `||` only),
  after removing square brackets and collapsing whitespace (`clean_text`);
- LEX and Fβ: jieba words minus the released stop words, for ALL four languages (the
  released Japanese and Korean scripts also call jieba); Fβ of two empty sets is 1;
  LEX is "not computed" (dropped from the representation mean) when the explanation has
  no content word, and references without content words are skipped;
- the polarity rule (polarity.py) always halves Fβ when every reference conflicts;
- S_Acc = 0.5·CE + 0.3·rep + 0.2·Fβ with a missing term counted 0, never renormalised;
- S_Info: characters, not tokens, against the WHOLE reference cell; ROUGE-L precision
  falls back to the share of the explanation's distinct characters found in the cell
  (the `rouge` package the code prefers is not in its requirements and not installed);
  BP = 1 when the explanation is longer than the cell, else exp(1 − len(cell)/len(e))
  (BLEU's penalty on SHORT outputs);
- S_Logic: P(entailment) with premise = the whole cell, hypothesis = the explanation,
  one direction, no contradiction penalty.

The released S_Rob draws S_orig at random (uniform [0.65, 0.85], numpy seed 42, by row
position): that cannot be reproduced meaningfully, so this mode uses the canonical
input's S_Acc as S_orig and keeps the code's other choices (see aggregate.sequential).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from .lexicon import ReleasedLexicon, cut_words
from .polarity import Cut, reference_conflicts

REFERENCE_SEPARATOR = "||"
# The released to_refs: `||`, `;`, `；`, `/`, `、` with the spaces around them.
_SPLIT = re.compile(r"\s*(\|\||;|；|/|、)\s*")
_SEPARATORS = frozenset({"||", ";", "；", "/", "、"})


def clean_text(text: str) -> str:
    """The released clean_text: square brackets removed, whitespace runs to one space."""
    return re.sub(r"\s+", " ", re.sub(r"[\[\]]", "", text)).strip()


def reference_cell(references: Sequence[str]) -> str:
    """The CSV cell the released code reads (references joined by `||`)."""
    return REFERENCE_SEPARATOR.join(references)


def split_references(cell: str) -> list[str]:
    """The released to_refs on one cell: [] for an empty cell; the whole cleaned cell when
    splitting leaves nothing."""
    if not cell.strip():
        return []
    cleaned = clean_text(cell)
    parts = [p.strip() for p in _SPLIT.split(cleaned) if p and p.strip() not in _SEPARATORS]
    return parts if parts else [cleaned]


def content_words(text: str, lex: ReleasedLexicon, cut: Cut = cut_words) -> list[str]:
    """The released tokenize_content: jieba words minus the language's stop words and blanks
    (every language)."""
    stop = lex.stopwords
    return [t for t in cut(text) if t and t not in stop and not t.isspace()]


def f_beta_sets(pred: set[str], gold: set[str], beta: float = 2.0) -> float:
    """The released fbeta_from_sets: 1 when both sets are empty, 0 when nothing is shared."""
    if not pred and not gold:
        return 1.0
    shared = len(pred & gold)
    if shared == 0:
        return 0.0
    precision, recall = shared / max(1, len(pred)), shared / max(1, len(gold))
    b2 = beta * beta
    denominator = b2 * precision + recall
    return (1 + b2) * precision * recall / denominator if denominator > 0 else 0.0


def aggregate(values: Sequence[float], how: str) -> float | None:
    """The released _aggregate_list with NaN as None: None when nothing is left."""
    kept = [v for v in values if v is not None and not math.isnan(v)]
    if not kept:
        return None
    return math.fsum(kept) / len(kept) if how == "mean" else max(kept)


def f_beta(
    explanation: str,
    references: Sequence[str],
    lex: ReleasedLexicon,
    idiom: str,
    beta: float = 2.0,
    how: str = "max",
    cut: Cut = cut_words,
) -> tuple[float, bool]:
    """The released content_fbeta_with_polarity_multi: (Fβ aggregated over the references,
    halved when the polarity of every reference conflicts; whether it was halved)."""
    if not references:
        return 0.0, False
    mine = set(content_words(explanation, lex, cut))
    scores = [f_beta_sets(mine, set(content_words(r, lex, cut)), beta) for r in references]
    conflicts = reference_conflicts(explanation, references, lex, idiom, cut)
    value = aggregate(scores, how)
    assert value is not None  # f_beta_sets never returns NaN
    halved = all(conflicts)
    return (value * 0.5 if halved else value), halved


def lexical_cosine(
    explanation: str, references: Sequence[str], lex: ReleasedLexicon, how: str = "max", cut: Cut = cut_words
) -> float | None:
    """The released lexical_cosine_over_refs; None (NaN there) when the explanation has no
    content word or there are no references."""
    mine = Counter(content_words(explanation, lex, cut))
    if not references or not mine:
        return None
    norm_mine = math.sqrt(sum(v * v for v in mine.values()))
    values = []
    for reference in references:
        theirs = Counter(content_words(reference, lex, cut))
        if not theirs:
            continue
        norm_theirs = math.sqrt(sum(v * v for v in theirs.values()))
        dot = sum(mine[t] * theirs[t] for t in mine.keys() & theirs.keys())
        values.append(dot / (norm_mine * norm_theirs))
    if not values:
        return 0.0
    value = aggregate(values, how)
    assert value is not None
    return value


def representation(bert: float | None, sts: float | None, lex: float | None) -> float | None:
    """The released representation_ensemble: mean of the terms that are not NaN."""
    kept = [v for v in (bert, sts, lex) if v is not None and not math.isnan(v)]
    return sum(kept) / len(kept) if kept else None  # the released code uses np.mean: same value


def s_acc(
    ce: float | None,
    rep: float | None,
    f_beta_value: float | None,
    weights: tuple[float, float, float] = (0.5, 0.3, 0.2),
) -> float:
    """The released calculate_accuracy_score: a missing term counts 0, fixed weights."""

    def zero(v: float | None) -> float:
        return 0.0 if v is None or math.isnan(v) else v

    return weights[0] * zero(ce) + weights[1] * zero(rep) + weights[2] * zero(f_beta_value)


def rouge_precision_chars(explanation: str, cell: str) -> float:
    """The released S_Info ROUGE fallback: distinct explanation characters found in the cell."""
    if not explanation or not cell:
        return 0.0
    mine, theirs = set(explanation), set(cell)
    return len(mine & theirs) / len(mine) if mine else 0.0


def brevity_penalty_chars(explanation: str, cell: str) -> float:
    """The released calculate_brevity_penalty, in characters: 1 when the explanation is
    longer than the cell, else exp(1 − len(cell)/len(explanation)); 0 when either is empty."""
    if not explanation or not cell:
        return 0.0
    c, r = len(explanation), len(cell)
    return 1.0 if c > r else math.exp(1.0 - r / c)


def s_info(explanation: str, cell: str) -> float:
    """The released calculate_information_density's S_Info (strings stripped, as the code does)."""
    e, r = explanation.strip(), cell.strip()
    if not e or not r:
        return 0.0
    return brevity_penalty_chars(e, r) * rouge_precision_chars(e, r)
