"""The group statistics of the attention diagnostics: median and IQR, Cliff's delta,
two-sided Mann-Whitney U, Kruskal-Wallis and Benjamini-Hochberg FDR (scipy.stats), with
small or degenerate groups reported as "no test" with the reason instead of raising."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Spread:
    n: int
    median: float | None
    iqr: float | None  # 75th minus 25th percentile (numpy's linear interpolation)


@dataclass(frozen=True)
class TestResult:
    statistic: float | None  # U (of the first group) or H
    p: float | None
    note: str | None = None  # why there is no p-value


def clean(values: Sequence[float]) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    kept: np.ndarray = array[~np.isnan(array)]
    return kept


def spread(values: Sequence[float]) -> Spread:
    array = clean(values)
    if not array.size:
        return Spread(0, None, None)
    q1, median, q3 = np.percentile(array, [25, 50, 75])
    return Spread(int(array.size), float(median), float(q3 - q1))


def cliffs_delta(x: Sequence[float], y: Sequence[float]) -> float | None:
    """P(X > Y) - P(X < Y) over all pairs (the sign says which group is larger); None when
    a group is empty. Equals 2U/(n1 n2) - 1 with U the Mann-Whitney U of x (ties count 1/2)."""
    a, b = clean(x), clean(y)
    if not a.size or not b.size:
        return None
    greater = (a[:, None] > b[None, :]).sum()
    less = (a[:, None] < b[None, :]).sum()
    return float((greater - less) / (a.size * b.size))


def mann_whitney(x: Sequence[float], y: Sequence[float], min_n: int) -> TestResult:
    """Two-sided Mann-Whitney U (scipy's default method: exact for small samples without ties)."""
    from scipy.stats import mannwhitneyu

    a, b = clean(x), clean(y)
    if min(a.size, b.size) < min_n:
        return TestResult(None, None, f"n = {a.size} vs {b.size}: a group has fewer than {min_n}")
    result = mannwhitneyu(a, b, alternative="two-sided")
    return TestResult(float(result.statistic), _finite(result.pvalue))


def kruskal(groups: dict[str, Sequence[float]], min_n: int) -> tuple[TestResult, list[str]]:
    """Kruskal-Wallis H across the groups with at least `min_n` values (at least two such
    groups); returns the result and the names of the groups it used."""
    from scipy.stats import kruskal as scipy_kruskal

    used = {name: clean(v) for name, v in groups.items() if clean(v).size >= min_n}
    if len(used) < 2:
        sizes = ", ".join(f"{name} {clean(v).size}" for name, v in groups.items())
        return TestResult(None, None, f"fewer than two groups with n >= {min_n} ({sizes})"), sorted(used)
    if len(np.unique(np.concatenate(list(used.values())))) == 1:
        return TestResult(None, None, "all values are equal"), sorted(used)
    result = scipy_kruskal(*used.values())
    return TestResult(float(result.statistic), _finite(result.pvalue)), sorted(used)


def bh_fdr(pvalues: Sequence[float | None]) -> list[float | None]:
    """Benjamini-Hochberg adjusted p-values (q) over the family; a missing p stays missing
    and is not counted in the family size."""
    from scipy.stats import false_discovery_control

    present = [i for i, p in enumerate(pvalues) if p is not None and not math.isnan(p)]
    out: list[float | None] = [None] * len(pvalues)
    if present:
        adjusted = false_discovery_control([pvalues[i] for i in present], method="bh")
        for i, q in zip(present, np.atleast_1d(adjusted), strict=True):
            out[i] = float(q)
    return out


def _finite(value: float) -> float | None:
    value = float(value)
    return None if math.isnan(value) else value
