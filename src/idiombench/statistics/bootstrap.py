"""Seeded, paired, vectorised bootstrap over units; percentile intervals; paired tests; BH-FDR.

Resamples are drawn as scipy.stats.bootstrap draws them (`rng.integers(0, n, (R, n))` from
`numpy.random.default_rng(seed)`), turned into per-unit counts and applied to every estimand
on the same units with one matrix product per batch. Two models on the same units therefore
see the same resamples: their replicates are paired, and so are the differences the paired
bootstrap test uses.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from .estimands import Estimand

TESTS = ("paired-bootstrap", "paired-permutation")
BATCH_ELEMENTS = 4_000_000  # resamples x units per batch: ~32 MB of float64 weights


def _batches(n: int, resamples: int) -> Iterator[int]:
    size = max(1, min(resamples, BATCH_ELEMENTS // max(n, 1)))
    done = 0
    while done < resamples:
        step = min(size, resamples - done)
        yield step
        done += step


def resample_weights(n: int, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """Batches of (r, n) counts: how often each unit is drawn in each resample."""
    rng = np.random.default_rng(seed)
    for step in _batches(n, resamples):
        draws = rng.integers(0, n, size=(step, n))
        offsets = (np.arange(step) * n)[:, None]
        yield np.bincount((draws + offsets).ravel(), minlength=step * n).reshape(step, n).astype(np.float64)


def replicates(estimands: Sequence[Estimand], resamples: int, seed: int) -> np.ndarray:
    """(k, resamples) bootstrap replicates of k estimands on the SAME units (one pass for all)."""
    if not estimands:
        return np.empty((0, resamples))
    first = estimands[0]
    for other in estimands[1:]:
        if not first.same_units(other):
            raise ValueError("replicates: the estimands are not on the same units (align them with Estimand.on)")
    features = np.hstack([e.features for e in estimands])
    bounds = np.cumsum([0] + [e.features.shape[1] for e in estimands])
    out = np.empty((len(estimands), resamples))
    done = 0
    for weights in resample_weights(first.n, resamples, seed):
        sums = weights @ features
        for row, estimand in enumerate(estimands):
            out[row, done : done + len(weights)] = estimand.reduce(sums[:, bounds[row] : bounds[row + 1]])
        done += len(weights)
    return out


@dataclass(frozen=True)
class Interval:
    value: float
    low: float
    high: float
    confidence: float
    resamples: int  # replicates where the statistic is defined (NaN ones left out)

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2.0


def interval(value: float, reps: np.ndarray, confidence: float) -> Interval | None:
    """Percentile interval (as scipy.stats.bootstrap's method="percentile", linear interpolation)."""
    defined = reps[~np.isnan(reps)]
    if not len(defined) or np.isnan(value):
        return None
    tail = (1.0 - confidence) / 2.0
    low, high = np.percentile(defined, [100.0 * tail, 100.0 * (1.0 - tail)])
    return Interval(float(value), float(low), float(high), confidence, int(len(defined)))


def _tolerance(observed: float) -> float:
    # replicates equal to the observed value up to rounding count as "as extreme" (as scipy does)
    return 1e-12 * max(1.0, abs(observed))


def paired_bootstrap_p(observed: float, differences: np.ndarray) -> float:
    """Two-sided paired bootstrap test of "no difference": the bootstrap replicates of the
    difference, centred on the observed difference, give its null distribution;
    p = (1 + #{|d* − d| ≥ |d|}) / (1 + R)."""
    defined = differences[~np.isnan(differences)]
    if not len(defined):
        return float("nan")
    extreme = np.abs(defined - observed) >= abs(observed) - _tolerance(observed)
    return float((1 + extreme.sum()) / (1 + len(defined)))


def paired_permutation_p(a: Estimand, b: Estimand, resamples: int, seed: int) -> float:
    """Two-sided paired permutation test: each unit's rows are swapped between the two models
    with probability 1/2 (the null: the labels "model A" / "model B" are exchangeable per
    unit). p as scipy.stats.permutation_test computes it for a randomised two-sided test:
    min(1, 2·min(P(d* ≥ d), P(d* ≤ d))), each (1 + count) / (1 + R)."""
    if a.kind != b.kind or a.features.shape != b.features.shape or not a.same_units(b):
        raise ValueError("paired permutation test: the two estimands must be of one kind on the same units")
    total_a, total_b = a.features.sum(0), b.features.sum(0)
    observed = float(a.reduce(total_a[None])[0] - b.reduce(total_b[None])[0])
    swap = b.features - a.features
    rng = np.random.default_rng(seed)
    stats = []
    for step in _batches(a.n, resamples):
        flips = rng.integers(0, 2, size=(step, a.n)).astype(np.float64)
        delta = flips @ swap
        stats.append(a.reduce(total_a + delta) - b.reduce(total_b - delta))
    null = np.concatenate(stats)
    null = null[~np.isnan(null)]
    if not len(null) or np.isnan(observed):
        return float("nan")
    tol = _tolerance(observed)
    greater = (1 + (null >= observed - tol).sum()) / (1 + len(null))
    less = (1 + (null <= observed + tol).sum()) / (1 + len(null))
    return float(min(1.0, 2.0 * min(greater, less)))


def benjamini_hochberg(pvalues: Sequence[float]) -> np.ndarray:
    """BH-adjusted p-values (q-values), as scipy.stats.false_discovery_control(method="bh");
    NaN p-values stay NaN and do not count towards m."""
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    defined = np.flatnonzero(~np.isnan(p))
    m = len(defined)
    if not m:
        return out
    order = defined[np.argsort(p[defined], kind="stable")]
    scaled = p[order] * m / np.arange(1, m + 1)
    out[order] = np.clip(np.minimum.accumulate(scaled[::-1])[::-1], 0.0, 1.0)
    return out


@dataclass(frozen=True)
class Comparison:
    a: str
    b: str
    difference: float  # a − b on the compared units
    p: float
    units: int
    note: str = ""  # e.g. compared on the intersection of their units


def compare(
    a_name: str,
    a: Estimand,
    b_name: str,
    b: Estimand,
    test: str,
    resamples: int,
    seed: int,
    reps: tuple[np.ndarray, np.ndarray] | None = None,
) -> Comparison:
    """The paired test between two models' estimands, on the units both have. `reps`: their
    replicates when already drawn on these same units (the paired bootstrap reuses them)."""
    if test not in TESTS:
        raise ValueError(f"test {test!r}: expected one of {TESTS}")
    note = ""
    if test == "paired-permutation" and (a.kind != b.kind or a.features.shape[1] != b.features.shape[1]):
        return Comparison(
            a_name,
            b_name,
            a.value() - b.value(),
            float("nan"),
            0,
            "not compared: the two statistics are built differently (e.g. other groups present)",
        )
    if not a.same_units(b):
        shared = sorted(set(a.ids.tolist()) & set(b.ids.tolist()))
        if not shared:
            return Comparison(a_name, b_name, float("nan"), float("nan"), 0, "no unit in common: not compared")
        note = f"compared on the {len(shared)} {a.unit}s both have ({a.n} and {b.n})"
        a, b, reps = a.on(shared), b.on(shared), None
    difference = a.value() - b.value()
    if test == "paired-permutation":
        p = paired_permutation_p(a, b, resamples, seed)
    else:
        ra, rb = reps if reps is not None else tuple(replicates([a, b], resamples, seed))
        p = paired_bootstrap_p(difference, ra - rb)
    return Comparison(a_name, b_name, float(difference), p, a.n, note)
