"""Metric specs: each metric declared once, and what is derived from the declaration (values,
intervals, outcomes, cells). docs/ARCHITECTURE.md, "Add a metric"."""

from .spec import ITEM, MAIN, MAIN_PASS, MetricSpec, Resampling, Rows, Scope, specs_by_key
from .units import PERCENT, POINTS, SCORE, SHARE, Unit, display

__all__ = [
    "ITEM",
    "MAIN",
    "MAIN_PASS",
    "PERCENT",
    "POINTS",
    "SCORE",
    "SHARE",
    "MetricSpec",
    "Resampling",
    "Rows",
    "Scope",
    "Unit",
    "display",
    "specs_by_key",
]
