"""Units of the metrics: what a number means, how the metrics JSON stores it and how every table
prints it (docs/METRICS.md, "Units").

The statistics compute shares (a fraction of items, in [0, 1]), scores (a graded value, e.g.
OrderProbe's S_Acc in [0, 1]) or points (a score on its own 0-100 scale, e.g. BLEU). The metrics
JSON stores `value × unit.scale`, at the precision the benchmark has always stored it
(`digits`); a table prints a percent or a share as a percent and a score or points as they
are, with the table's decimals (`display`): one rule, at the edge.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

UnitName = Literal["percent", "share", "score", "points"]


@dataclass(frozen=True)
class Unit:
    name: UnitName
    scale: float  # stored value = statistic × scale
    digits: int | None = None  # the stored precision (None: as computed)

    def rounded(self, digits: int) -> Unit:
        """This unit, stored rounded to `digits` decimals."""
        return replace(self, digits=digits)

    def store(self, value: float | None) -> float | None:
        """The statistic's value as the metrics JSON holds it (None: not computed)."""
        if value is None or math.isnan(value):
            return None
        return round(value, self.digits) if self.digits is not None else value

    @property
    def display_scale(self) -> float:
        """Stored value -> printed number: percent and shares print as a percent."""
        return 100.0 if self.name == "share" else 1.0

    @property
    def percent(self) -> bool:
        return self.name in ("percent", "share")

    def share(self, stored: float) -> float:
        """A stored value on the statistic's own scale (a share for percent and share units)."""
        return stored / self.scale


PERCENT = Unit("percent", 100.0)  # stored as a percent (0-100)
SHARE = Unit("share", 1.0)  # stored as a fraction (0-1), printed as a percent
SCORE = Unit("score", 1.0)  # a graded score, stored and printed as it is
POINTS = Unit("points", 1.0)  # a score on its own 0-100 scale (BLEU, chrF)


def display(stored: float | None, unit: Unit, decimals: int) -> str:
    """A stored value as every table prints it; an em dash where it is None."""
    if stored is None or math.isnan(stored):
        return "—"
    return f"{stored * unit.display_scale:.{decimals}f}"
