"""Per-item agreement of two runs on the same items: the serving-noise figures (one model, two
serving setups) and the disagreement of two models (docs/METRICS.md#8-serving-noise).

`outcome` is the headline metric's per-item value (1/0 right/wrong, or a graded score); a flip
is an item whose outcome differs between the two runs. The headline difference gets a paired
bootstrap interval clustered as the benchmark's unit (the same resamples for both runs, drawn
by bootstrap.replicates), and two right/wrong outcomes McNemar's exact test.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .bootstrap import interval, replicates
from .estimands import mean

FLIP_TOLERANCE = 1e-9  # a graded outcome "flips" when it moves by more than rounding


@dataclass(frozen=True)
class PairedFigures:
    """Two runs (a: the reference, b: the other) on the same items."""

    items: int  # rows compared (both outcomes defined)
    units: int  # clusters behind them
    changed: int  # rows whose output text differs
    flipped: int  # rows whose outcome differs
    value_a: float  # mean outcome
    value_b: float
    difference: float  # b − a
    low: float | None  # percentile interval of the difference (None: fewer than 2 units)
    high: float | None

    @property
    def changed_share(self) -> float:
        return self.changed / self.items if self.items else math.nan

    @property
    def flipped_share(self) -> float:
        return self.flipped / self.items if self.items else math.nan

    @property
    def within_interval_of_zero(self) -> bool:
        return self.low is not None and self.high is not None and self.low <= 0.0 <= self.high


def flips(a: npt.ArrayLike, b: npt.ArrayLike) -> np.ndarray:
    """Per row: whether the outcome differs (both defined)."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return np.abs(x - y) > FLIP_TOLERANCE


def paired_figures(
    units: Sequence[str],
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    text_a: Sequence[str | None],
    text_b: Sequence[str | None],
    *,
    resamples: int,
    confidence: float,
    seed: int,
) -> PairedFigures:
    """The figures of two runs on the same rows (rows where either outcome is NaN left out):
    the rows of one unit are drawn together in each resample (a cluster bootstrap)."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    keep = ~(np.isnan(x) | np.isnan(y))
    ids = [str(u) for u, k in zip(units, keep, strict=True) if k]
    x, y = x[keep], y[keep]
    changed = sum(1 for ta, tb, k in zip(text_a, text_b, keep, strict=True) if k and ta != tb)
    if not len(x):
        return PairedFigures(0, 0, 0, 0, math.nan, math.nan, math.nan, None, None)
    ea, eb = mean(ids, x.tolist()), mean(ids, y.tolist())
    difference = eb.value() - ea.value()
    low = high = None
    if ea.n >= 2:
        reps = replicates([ea, eb], resamples, seed)
        found = interval(difference, reps[1] - reps[0], confidence)
        if found is not None:
            low, high = found.low, found.high
    return PairedFigures(
        items=int(len(x)),
        units=ea.n,
        changed=changed,
        flipped=int(flips(x, y).sum()),
        value_a=ea.value(),
        value_b=eb.value(),
        difference=float(difference),
        low=low,
        high=high,
    )


@dataclass(frozen=True)
class Disagreement:
    """Two models' right/wrong outcomes on the same items."""

    items: int
    only_a: int  # a right, b wrong
    only_b: int  # b right, a wrong
    p: float  # McNemar's exact test (two-sided): binomial test of only_a among the discordant items

    @property
    def discordant(self) -> int:
        return self.only_a + self.only_b


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """McNemar's exact two-sided p: under "no difference" each discordant item is as likely to
    favour either model, so only_a ~ Binomial(only_a + only_b, 1/2). No discordant item: p = 1."""
    # imported here: scipy.stats takes ~1 s to import, and every track, noise and report process
    # imports this module, most of them never testing anything
    from scipy.stats import binomtest

    n = only_a + only_b
    if n == 0:
        return 1.0
    return float(binomtest(only_a, n, 0.5, alternative="two-sided").pvalue)


def disagreement(a: npt.ArrayLike, b: npt.ArrayLike) -> Disagreement:
    """Counts both ways over the rows where both outcomes are right/wrong (0 or 1)."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    keep = np.isin(x, (0.0, 1.0)) & np.isin(y, (0.0, 1.0))
    x, y = x[keep], y[keep]
    only_a = int(((x == 1.0) & (y == 0.0)).sum())
    only_b = int(((x == 0.0) & (y == 1.0)).sum())
    return Disagreement(int(keep.sum()), only_a, only_b, mcnemar_exact(only_a, only_b))
