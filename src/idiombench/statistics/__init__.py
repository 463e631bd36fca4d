"""Uncertainty of reported cells: estimands (per-unit features + a vectorised statistic), a
seeded paired bootstrap over units, paired tests and Benjamini-Hochberg
(docs/METRICS.md#6-intervals-and-significance)."""

from .bootstrap import (
    TESTS,
    Comparison,
    Interval,
    benjamini_hochberg,
    compare,
    interval,
    paired_bootstrap_p,
    paired_permutation_p,
    replicates,
)
from .estimands import Estimand, by_model, custom, f1, macro_mean, mean, ratio

__all__ = [
    "TESTS",
    "Comparison",
    "Estimand",
    "Interval",
    "benjamini_hochberg",
    "by_model",
    "compare",
    "custom",
    "f1",
    "interval",
    "macro_mean",
    "mean",
    "paired_bootstrap_p",
    "paired_permutation_p",
    "ratio",
    "replicates",
]
