"""The statistics a metric is declared with (`metrics.MetricSpec.statistic`).

Each is ONE formula, `reduce(sums, scale)`, of the sums of per-row features (a mean, a ratio of
sums, a macro mean over groups, an F1 from confusion counts, or a benchmark's own formula). The
value a metric reports is that formula on the sums over every row in scope (`value`); its
bootstrap replicates are the same formula on the sums of resampled units (`estimand`, an
`Estimand` whose reduce is this one): the value and its interval cannot disagree.

`scale` is applied where the formula applies it (a ratio multiplies its numerator, a mean its
result): the metrics JSON stores `value(rows, unit.scale)` (percent: 100), the bootstrap works
on shares (scale 1), and the two are equal up to the unit.

How the value's sums are added (`Summation`): EXACT (`math.fsum`: exactly rounded, so the value
does not depend on the row order; the default), NUMPY (numpy's pairwise sum over the values in
row order: what pandas' `Series.mean` computes) and GROUPBY (pandas' groupby sum, Kahan-
compensated: what `groupby(...).mean()` computes). The last two keep values written before the
specs existed byte-identical; on 0/1 and integer columns all three are the same.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

import numpy as np

from .estimands import Estimand, from_rows

if TYPE_CHECKING:
    import pandas as pd

# a column of the rows, or a function of them giving one value per row
Column = str | Callable[["pd.DataFrame"], "pd.Series"]
# rows in scope of a statistic: None (all), a boolean column, or a function giving a boolean per row
Where = str | Callable[["pd.DataFrame"], "pd.Series"] | None


class Summation(Enum):
    EXACT = "exact"
    NUMPY = "numpy"
    GROUPBY = "groupby"


def column_values(rows: pd.DataFrame, column: Column) -> np.ndarray:
    """A float per row (NaN: missing) of `column` (a name, or a function of the rows)."""
    import pandas as pd

    values = rows[column] if isinstance(column, str) else column(rows)
    return pd.to_numeric(pd.Series(values), errors="coerce").astype(float).to_numpy()


def in_scope(rows: pd.DataFrame, where: Where) -> np.ndarray:
    if where is None:
        return np.ones(len(rows), dtype=bool)
    values = rows[where] if isinstance(where, str) else where(rows)
    return np.asarray(values, dtype=bool)


def add(values: np.ndarray, summation: Summation) -> float:
    """The sum of 1-D `values` (in row order) as `summation` adds them."""
    if summation is Summation.EXACT:
        return math.fsum(values.tolist())
    return float(np.add.reduce(np.ascontiguousarray(values, dtype=np.float64)))


def divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den where den > 0, else NaN."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


@dataclass(frozen=True)
class Features:
    """A statistic's features: `values` (n, d), one row per input row (or, where the statistic
    groups rows itself, per group, with their unit ids in `units`), the sums over every row as the
    value adds them (`point`), and `kind`, which names the formula and its layout (a paired
    permutation swaps units only between estimands of one kind)."""

    values: np.ndarray
    point: np.ndarray
    kind: str
    units: Sequence[str] | None = None


class Statistic(ABC):
    """A metric's formula over per-row features (see the module docstring)."""

    @abstractmethod
    def features(self, rows: pd.DataFrame) -> Features:
        """The rows' features, their sums for the value, and the kind (reduce + layout)."""

    @abstractmethod
    def reduce(self, sums: np.ndarray, scale: float = 1.0) -> np.ndarray:
        """(r, d) summed features -> (r,) values of the formula (NaN where undefined)."""

    def outcome(self, rows: pd.DataFrame) -> np.ndarray | None:
        """Each row's own outcome (1/0 or graded; NaN: not in scope), where the statistic has one."""
        return None

    def value(self, rows: pd.DataFrame, scale: float = 1.0) -> float | None:
        """The formula on every row in scope: the metric's value (None where undefined)."""
        found = float(self.reduce(self.features(rows).point[None, :], scale)[0])
        return None if math.isnan(found) else found

    def estimand(
        self, rows: pd.DataFrame, units: Sequence[str], unit: str, higher_is_better: bool = True
    ) -> Estimand | None:
        """The same formula over resampled units (`units`: each row's unit id): the metric's
        bootstrap replicates and paired tests (statistics.bootstrap). None without rows."""
        if not len(rows):
            return None
        found = self.features(rows)
        ids = units if found.units is None else found.units
        return from_rows(unit, ids, found.values, lambda sums: self.reduce(sums, 1.0), found.kind, higher_is_better)


@dataclass(frozen=True)
class Mean(Statistic):
    """Mean of `column` over the rows in scope with a value (NaN left out): (Σx / n) · scale."""

    column: Column
    where: Where = None
    summation: Summation = Summation.EXACT

    def _masked(self, rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        x = column_values(rows, self.column)
        return x, ~np.isnan(x) & in_scope(rows, self.where)

    def features(self, rows: pd.DataFrame) -> Features:
        x, keep = self._masked(rows)
        point = np.array([add(x[keep], self.summation), float(keep.sum())])
        return Features(np.column_stack([np.where(keep, x, 0.0), keep.astype(np.float64)]), point, "mean")

    def reduce(self, sums: np.ndarray, scale: float = 1.0) -> np.ndarray:
        return divide(sums[:, 0], sums[:, 1]) * scale

    def outcome(self, rows: pd.DataFrame) -> np.ndarray:
        x, keep = self._masked(rows)
        return np.where(keep, x, np.nan)


@dataclass(frozen=True)
class Ratio(Statistic):
    """Σ numerator / Σ denominator over the rows in scope: (scale · Σnum) / Σden (e.g. valid
    idioms / idioms predicted; correct answers / rows with a denominator of 1)."""

    numerator: Column
    denominator: Column | float = 1.0
    where: Where = None

    def _parts(self, rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        keep = in_scope(rows, self.where)
        num = column_values(rows, self.numerator)
        den = (
            np.full(len(rows), float(self.denominator))
            if isinstance(self.denominator, (int, float))
            else column_values(rows, self.denominator)
        )
        return np.where(keep, num, 0.0), np.where(keep, den, 0.0)

    def features(self, rows: pd.DataFrame) -> Features:
        num, den = self._parts(rows)
        return Features(
            np.column_stack([num, den]), np.array([add(num, Summation.EXACT), add(den, Summation.EXACT)]), "ratio"
        )

    def reduce(self, sums: np.ndarray, scale: float = 1.0) -> np.ndarray:
        return divide(scale * sums[:, 0], sums[:, 1])

    def outcome(self, rows: pd.DataFrame) -> np.ndarray:
        num, den = self._parts(rows)
        return divide(num, den)


@dataclass(frozen=True)
class MacroMean(Statistic):
    """Mean over groups (`by`, e.g. directions) of each group's mean of `column`, over the groups
    present: a group with no row in a resample leaves that resample's mean, as it would leave
    the value. (Σ_g mean_g / G) · scale; the group means' sums as pandas' groupby adds them."""

    column: Column
    by: str
    where: Where = None
    summation: Summation = Summation.GROUPBY

    def _masked(self, rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray]:
        x = column_values(rows, self.column)
        keep = ~np.isnan(x) & in_scope(rows, self.where)
        groups = rows[self.by].astype(str).to_numpy()
        labels = sorted(set(groups[keep].tolist()))
        return x, keep, labels, groups

    def features(self, rows: pd.DataFrame) -> Features:
        import pandas as pd

        x, keep, labels, groups = self._masked(rows)
        k = len(labels)
        index = {g: i for i, g in enumerate(labels)}
        onehot = np.zeros((len(x), k))
        kept = np.flatnonzero(keep)
        onehot[kept, [index[g] for g in groups[kept].tolist()]] = 1.0
        values = np.hstack([onehot * np.where(keep, x, 0.0)[:, None], onehot])
        if self.summation is Summation.GROUPBY:
            sums = pd.Series(x[keep]).groupby(groups[keep], sort=True).sum().reindex(labels).to_numpy(dtype=float)
        else:
            sums = np.array([add(x[keep & (groups == g)], self.summation) for g in labels])
        counts = onehot.sum(axis=0)
        return Features(values, np.concatenate([sums, counts]), f"macro_mean:{'|'.join(labels)}")

    def reduce(self, sums: np.ndarray, scale: float = 1.0) -> np.ndarray:
        k = sums.shape[1] // 2
        if not k:
            return np.full(len(sums), np.nan)
        with np.errstate(invalid="ignore"):
            group_means = divide(sums[:, :k], sums[:, k:])
            return np.nanmean(group_means, axis=1) * scale

    def outcome(self, rows: pd.DataFrame) -> np.ndarray:
        x, keep, _, _ = self._masked(rows)
        return np.where(keep, x, np.nan)


F1_AVERAGES = ("macro", "micro", "weighted")


@dataclass(frozen=True)
class F1(Statistic):
    """F1 over labels from confusion counts, as scikit-learn's f1_score(labels=gold ∪ recognised
    predictions, zero_division=0): per label P = tp/(tp+fp), R = tp/(tp+fn), F1 = 2PR/(P+R)
    (0 where undefined); macro: (scale · Σ F1) / labels present, micro: scale · F1 of the summed
    counts, weighted: (scale · Σ F1 · support) / Σ support. A prediction of None is a miss for its
    gold label, not a class. `labels`: a fixed universe (the same for every model compared), or
    None for the labels of these rows; labels outside the rows change no value."""

    gold: str
    predicted: Callable[[pd.DataFrame], Sequence[str | None]]
    average: str
    labels: Callable[[pd.DataFrame], Sequence[str]] | None = None

    def __post_init__(self) -> None:
        if self.average not in F1_AVERAGES:
            raise ValueError(f"average {self.average!r}: expected one of {F1_AVERAGES}")

    def _universe(self, rows: pd.DataFrame, gold: list[str], predicted: Sequence[str | None]) -> list[str]:
        found = set(gold) | {p for p in predicted if p is not None}
        return sorted(found | set(self.labels(rows))) if self.labels is not None else sorted(found)

    def features(self, rows: pd.DataFrame) -> Features:
        gold = [str(g) for g in rows[self.gold]]
        predicted = list(self.predicted(rows))
        labels = self._universe(rows, gold, predicted)
        index = {label: i for i, label in enumerate(labels)}
        k = len(labels)
        tp, fp, fn = np.zeros((len(gold), k)), np.zeros((len(gold), k)), np.zeros((len(gold), k))
        for row, (g, p) in enumerate(zip(gold, predicted, strict=True)):
            if p == g:
                tp[row, index[g]] = 1.0
                continue
            fn[row, index[g]] = 1.0
            if p is not None:
                fp[row, index[p]] = 1.0
        values = np.hstack([tp, fp, fn])
        return Features(values, values.sum(axis=0), f"f1:{self.average}:{'|'.join(labels)}")

    @staticmethod
    def _f1(t: np.ndarray, f_pos: np.ndarray, f_neg: np.ndarray) -> np.ndarray:
        precision = divide(t, t + f_pos)
        recall = divide(t, t + f_neg)
        precision = np.where(t + f_pos > 0, precision, 0.0)
        recall = np.where(t + f_neg > 0, recall, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            both = precision + recall
            return np.where(both > 0, 2 * precision * recall / np.where(both > 0, both, 1.0), 0.0)

    def reduce(self, sums: np.ndarray, scale: float = 1.0) -> np.ndarray:
        k = sums.shape[1] // 3
        t, f_pos, f_neg = sums[:, :k], sums[:, k : 2 * k], sums[:, 2 * k :]
        if self.average == "micro":
            value = scale * self._f1(t.sum(1), f_pos.sum(1), f_neg.sum(1))
            return np.where((t + f_neg).sum(1) > 0, value, np.nan)  # undefined without a gold label
        per_label = self._f1(t, f_pos, f_neg)
        total = np.zeros(len(sums))
        if self.average == "weighted":
            support = t + f_neg
            for j in range(k):  # label by label, in order: the sum a Python loop over labels gives
                total = total + per_label[:, j] * support[:, j]
            return divide(scale * total, support.sum(axis=1))
        present = (t + f_pos + f_neg) > 0
        for j in range(k):
            total = total + np.where(present[:, j], per_label[:, j], 0.0)
        return divide(scale * total, present.sum(axis=1).astype(np.float64))


@dataclass(frozen=True)
class Custom(Statistic):
    """A benchmark's own formula (OrderProbe's S_Rob, the option-order pass's position bias):
    `build(rows)` gives the per-row features, their value sums and the kind; `formula(sums,
    scale)` the values."""

    build: Callable[[pd.DataFrame], Features]
    formula: Callable[[np.ndarray, float], np.ndarray]
    row_outcome: Callable[[pd.DataFrame], np.ndarray] | None = field(default=None)

    def features(self, rows: pd.DataFrame) -> Features:
        return self.build(rows)

    def reduce(self, sums: np.ndarray, scale: float = 1.0) -> np.ndarray:
        return self.formula(sums, scale)

    def outcome(self, rows: pd.DataFrame) -> np.ndarray | None:
        return None if self.row_outcome is None else self.row_outcome(rows)
