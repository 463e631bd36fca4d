"""OrderProbe's formulas (docs/METRICS.md#1-orderprobe, paper appendix A/B), as pure functions of numbers.

score.py computes the inputs (scorer outputs, token lists) and aggregate.py groups rows;
everything that is arithmetic lives here, so each formula is tested by hand.

S_Acc when a scorer role is not computed in the profile (e.g. no BERTScore model and no
cross-encoder install from PyPI): a term that is *not computed* is left out, never
counted as 0 and never replaced by a constant:
- the representation ensemble averages the terms among BERT, STS and LEX that were
  computed (LEX, a lexical count-vector cosine, always is);
- the weights are relative: S_Acc = Σ w_t·t / Σ w_t over the computed top-level terms
  (CE, the representation ensemble, Fβ). With every term computed and the paper's
  weights (0.5, 0.3, 0.2, summing to 1) this is paper eq. 8 exactly; without CE it is
  (0.3·R + 0.2·Fβ) / 0.5.
Every table cell that depends on S_Acc carries the marks of the roles that were
substituted or not computed. A term that cannot be computed for one item (no reference,
empty explanation) is different: it counts 0 (the released code's rule) and the row is
flagged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ...scoring.lexical import brevity_penalty

Aggregation = str  # "max" | "mean"


def over_references(values: Sequence[float], how: Aggregation) -> float:
    """A term aggregated over an item's references: max (default) or mean; 0 with none."""
    if not values:
        return 0.0
    if how == "max":
        return float(max(values))
    if how == "mean":
        return math.fsum(values) / len(values)
    raise ValueError(f"unknown reference aggregation {how!r} (expected max or mean)")


@dataclass(frozen=True)
class SAccWeights:
    ce: float = 0.5
    representation: float = 0.3
    f_beta: float = 0.2


def representation_term(bert: float | None, sts: float | None, lex: float | None) -> float | None:
    """Mean of the computed ones among BERT, STS and LEX (None: none of them computed)."""
    computed = [value for value in (bert, sts, lex) if value is not None]
    return sum(computed) / len(computed) if computed else None


def s_acc(
    ce: float | None,
    bert: float | None,
    sts: float | None,
    lex: float | None,
    f_beta: float,
    weights: SAccWeights = SAccWeights(),
) -> float:
    """Paper eq. 8 over the computed terms (None = the term's scorer role is not computed)."""
    terms = [
        (weights.ce, ce),
        (weights.representation, representation_term(bert, sts, lex)),
        (weights.f_beta, f_beta),
    ]
    used = [(w, t) for w, t in terms if t is not None and w > 0]
    total = sum(w for w, _ in used)
    if total <= 0:
        raise ValueError("S_Acc has no computed term with a positive weight")
    return sum(w * t for w, t in used) / total


def halve_if_contradicting(f_beta: float, contradicts: bool) -> float:
    """The released code's polarity rule: Fβ × 0.5 when the explanation's polarity
    contradicts every reference."""
    return f_beta * 0.5 if contradicts else f_beta


def logic_score(
    entailment: float,
    contradiction: float,
    threshold: float = 0.05,
    weight: float = 0.5,
) -> float:
    """Contradiction-aware entailment (paper B.2): above the threshold, subtract
    λ·P(contradiction), clipped at 0; at or below it, the entailment as it is."""
    if entailment > threshold:
        return max(0.0, entailment - weight * contradiction)
    return entailment


def logic_for_reference(
    e_to_r: tuple[float, float],
    r_to_e: tuple[float, float] | None,
    threshold: float = 0.05,
    weight: float = 0.5,
) -> float:
    """One reference's S_Logic from (entailment, contradiction) of explanation→reference
    and, in the bidirectional mode, reference→explanation. The direction with the larger
    entailment is used, with its own contradiction (explanation→reference on a tie)."""
    entailment, contradiction = e_to_r
    if r_to_e is not None and r_to_e[0] > entailment:
        entailment, contradiction = r_to_e
    return logic_score(entailment, contradiction, threshold, weight)


def info_for_reference(
    rouge_precision: float, len_explanation: int, len_reference: int, bp_mode: str = "paper"
) -> float:
    """S_Info against one reference: BP · ROUGE-L precision."""
    return brevity_penalty(len_explanation, len_reference, bp_mode) * rouge_precision  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- aggregates


@dataclass(frozen=True)
class Consistency:
    e_perf: float
    r_sens: float
    s_cons: float


def consistency(gaps: Sequence[float]) -> Consistency:
    """Paper eqs. 9-11 for one expression: gaps[p] = S_max(p) − S_mean(p) over the n
    sampled explanations of permutation p."""
    if not gaps:
        raise ValueError("S_Cons needs at least one permutation with samples")
    e_perf = math.fsum(gaps) / len(gaps)
    r_sens = max(gaps)
    return Consistency(e_perf, r_sens, (1.0 - e_perf) * (1.0 - r_sens))


def sample_gap(sample_scores: Sequence[float]) -> float:
    """S_max − S_mean over one input's sampled explanations."""
    if not sample_scores:
        raise ValueError("no samples")
    # >= 0 by definition; clamp the rounding of a mean of equal values (1e-17 below the max)
    return max(0.0, max(sample_scores) - math.fsum(sample_scores) / len(sample_scores))


@dataclass(frozen=True)
class Degradation:
    mdr: float
    mda: float


def degradation(s_orig: float, s_perturbed: Sequence[float]) -> Degradation:
    """Paper eqs. 12-13: mean and max relative drop from the canonical input's S_Acc."""
    if s_orig <= 0:
        raise ValueError("degradation is undefined for S_orig = 0 (such expressions are excluded and counted)")
    if not s_perturbed:
        raise ValueError("no perturbed scores")
    drops = [(s_orig - s) / s_orig for s in s_perturbed]
    return Degradation(math.fsum(drops) / len(drops), max(drops))


def s_seq(d: Degradation, weight_mdr: float = 0.5, weight_mda: float = 0.5) -> float:
    """Paper eq. 14, unclipped: 1 − (α·MDR + β·MDA)."""
    return 1.0 - (weight_mdr * d.mdr + weight_mda * d.mda)


def clip01(value: float) -> float:
    return min(1.0, max(0.0, value))


def population_std(values: Sequence[float]) -> float:
    mean = math.fsum(values) / len(values)
    return math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values))


# Category means closer than this are equal: σ / (max μ − min μ) does not shrink with the
# spread, so float noise between equal means (1 − 1e-16) would otherwise read as a real spread.
EQUAL_MEANS_TOLERANCE = 1e-9


def s_struct(category_means: Sequence[float]) -> float | None:
    """Paper eq. 16 with the released code's normalisation:
    1 − clip(σ(μ_1..μ_K) / (max μ − min μ), 0, 1), σ the population standard deviation.
    None with fewer than two categories (no variation across categories to measure);
    1 when every category mean is equal (σ = 0; within EQUAL_MEANS_TOLERANCE).
    Note the normalisation is scale-free: two categories always give 0.5, whatever their gap."""
    if len(category_means) < 2:
        return None
    spread = max(category_means) - min(category_means)
    if spread <= EQUAL_MEANS_TOLERANCE:
        return 1.0
    return 1.0 - clip01(population_std(category_means) / spread)


def harmonic_mean(a: float | None, b: float | None) -> float | None:
    """Paper eq. 17; None when either part is missing; 0 when both are 0."""
    if a is None or b is None:
        return None
    if a + b == 0:
        return 0.0
    return 2.0 * a * b / (a + b)
