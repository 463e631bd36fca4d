"""What a benchmark hands over per reported cell: per-unit features and a statistic of their sums.

Every statistic the reports print (a mean, a ratio of sums, a macro mean over groups, an F1
from confusion counts, OrderProbe's S_Rob) is a function of the SUMS of per-unit feature
vectors. So a resample (a count per unit: how often the unit was drawn) gives the statistic as
`reduce(weights @ features)`: one matrix product for a whole batch of resamples, whatever the
statistic. The same form gives the paired permutation test: swapping unit i between two
models changes each model's sums by the difference of its feature rows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

# (r, d) summed features of r resamples -> (r,) statistic values (NaN where undefined)
Reduce = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True, eq=False)
class Estimand:
    """One reported cell of one model as a function of its units.

    unit: what is resampled ("item", "expression"); ids: the unit ids (unique), the key that
    pairs two models; features: (n, d) per-unit contributions; reduce: summed features ->
    statistic; kind: names the reduce and its feature layout (a paired permutation swaps units
    only between estimands of one kind); higher_is_better: which end of a column is "best".
    """

    unit: str
    ids: np.ndarray
    features: np.ndarray
    reduce: Reduce
    kind: str
    higher_is_better: bool = True
    _positions: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        ids = np.asarray(self.ids, dtype=object)
        features = np.asarray(self.features, dtype=np.float64)
        if features.ndim != 2 or features.shape[0] != len(ids):
            raise ValueError(f"features of shape {features.shape} for {len(ids)} unit ids")
        if len(set(ids.tolist())) != len(ids):
            raise ValueError("unit ids repeat: an estimand needs one row per unit")
        object.__setattr__(self, "ids", ids)
        object.__setattr__(self, "features", features)
        object.__setattr__(self, "_positions", {str(u): i for i, u in enumerate(ids.tolist())})

    @property
    def n(self) -> int:
        return len(self.ids)

    def value(self) -> float:
        """The statistic on the units as they are (every weight 1): the reported cell."""
        return float(self.reduce(self.features.sum(axis=0, keepdims=True))[0])

    def on(self, ids: Sequence[str] | np.ndarray) -> Estimand:
        """The same statistic restricted to (and ordered as) `ids`, a subset of this one's units."""
        rows = [self._positions[str(u)] for u in ids]
        return Estimand(
            self.unit, np.asarray(ids, dtype=object), self.features[rows], self.reduce, self.kind, self.higher_is_better
        )

    def same_units(self, other: Estimand) -> bool:
        return self.n == other.n and bool(np.array_equal(self.ids, other.ids))


def from_rows(
    unit: str, ids: Sequence[str], features: np.ndarray, reduce: Reduce, kind: str, higher_is_better: bool = True
) -> Estimand:
    """An estimand from per-ROW features: rows of one unit (several samples of an item, the
    items of an expression) are summed into the unit's row, so the unit is resampled whole
    (a cluster bootstrap). Units in sorted id order, so the draw does not depend on row order."""
    keys = np.asarray([str(u) for u in ids], dtype=object)
    unique, inverse = np.unique(keys, return_inverse=True)
    features = np.asarray(features, dtype=np.float64).reshape(len(keys), -1)
    if len(unique) == len(keys):
        summed = np.empty_like(features)
        summed[inverse] = features
    else:
        summed = np.zeros((len(unique), features.shape[1]))
        np.add.at(summed, inverse, features)
    return Estimand(unit, unique.astype(object), summed, reduce, kind, higher_is_better)


def _divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _as_mask(values: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    keep: np.ndarray = ~np.isnan(values)
    return keep if mask is None else keep & np.asarray(mask, dtype=bool)


def mean(
    ids: Sequence[str],
    values: Sequence[float],
    mask: Sequence[bool] | None = None,
    *,
    unit: str = "item",
    higher_is_better: bool = True,
) -> Estimand:
    """Mean of `values` over the rows in `mask` (NaN values left out, as the aggregates do):
    sum(w·x·m) / sum(w·m), so a resample in which fewer in-scope units are drawn has fewer in
    its denominator, as the aggregate would."""
    x = np.asarray(values, dtype=np.float64)
    m = _as_mask(x, None if mask is None else np.asarray(mask))
    features = np.column_stack([np.where(m, x, 0.0), m.astype(np.float64)])
    return from_rows(unit, ids, features, lambda s: _divide(s[:, 0], s[:, 1]), "mean", higher_is_better)


def ratio(
    ids: Sequence[str],
    numerator: Sequence[float],
    denominator: Sequence[float],
    *,
    unit: str = "item",
    higher_is_better: bool = True,
) -> Estimand:
    """sum(numerator) / sum(denominator) over the units (e.g. valid idioms / idioms predicted)."""
    features = np.column_stack([np.asarray(numerator, dtype=np.float64), np.asarray(denominator, dtype=np.float64)])
    return from_rows(unit, ids, features, lambda s: _divide(s[:, 0], s[:, 1]), "ratio", higher_is_better)


def macro_mean(
    ids: Sequence[str],
    values: Sequence[float],
    groups: Sequence[str],
    mask: Sequence[bool] | None = None,
    *,
    unit: str = "item",
    higher_is_better: bool = True,
) -> Estimand:
    """Mean over groups (e.g. directions) of the group's mean, over the groups present: a group
    not drawn in a resample drops out of that resample's macro mean, as it would from the aggregate."""
    x = np.asarray(values, dtype=np.float64)
    m = _as_mask(x, None if mask is None else np.asarray(mask))
    labels = sorted({str(g) for g, keep in zip(groups, m, strict=True) if keep})
    index = {g: i for i, g in enumerate(labels)}
    k = len(labels)
    onehot = np.zeros((len(x), k))
    for row, (group, keep) in enumerate(zip(groups, m, strict=True)):
        if keep:
            onehot[row, index[str(group)]] = 1.0
    features = np.hstack([onehot * np.where(m, x, 0.0)[:, None], onehot])

    def reduce(s: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            group_means = _divide(s[:, :k], s[:, k:])
            return np.nanmean(group_means, axis=1) if k else np.full(len(s), np.nan)

    return from_rows(unit, ids, features, reduce, f"macro_mean:{'|'.join(labels)}", higher_is_better)


F1_AVERAGES = ("macro", "micro", "weighted")


def f1(
    ids: Sequence[str],
    gold: Sequence[str],
    predicted: Sequence[str | None],
    labels: Sequence[str],
    average: str,
    *,
    unit: str = "item",
) -> Estimand:
    """F1 from per-resample confusion counts (true positives, false positives and false negatives
    per label: one-hot per unit, summed). `labels` is a fixed universe (the same for every model
    compared); macro averages over the labels that occur (gold or predicted) in the resample, as
    an F1 over labels = gold ∪ recognised predictions does; a None prediction is a miss for its
    gold label, not a class. As scikit-learn's f1_score with zero_division=0."""
    if average not in F1_AVERAGES:
        raise ValueError(f"average {average!r}: expected one of {F1_AVERAGES}")
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
    features = np.hstack([tp, fp, fn])

    def scores(t: np.ndarray, f_pos: np.ndarray, f_neg: np.ndarray) -> np.ndarray:
        # 2·tp / (2·tp + fp + fn) is F1, and 0 where the label has no tp, fp or fn
        f1: np.ndarray = np.nan_to_num(_divide(2.0 * t, 2.0 * t + f_pos + f_neg), nan=0.0)
        return f1

    def reduce(s: np.ndarray) -> np.ndarray:
        t, f_pos, f_neg = s[:, :k], s[:, k : 2 * k], s[:, 2 * k :]
        if average == "micro":
            return scores(t.sum(1), f_pos.sum(1), f_neg.sum(1))
        per_label = scores(t, f_pos, f_neg)
        if average == "weighted":
            support = t + f_neg
            return _divide((per_label * support).sum(1), support.sum(1))
        present = (t + f_pos + f_neg) > 0
        return _divide((per_label * present).sum(1), present.sum(1).astype(np.float64))

    return from_rows(unit, ids, features, reduce, f"f1:{average}:{'|'.join(labels)}", True)


def custom(
    ids: Sequence[str],
    features: np.ndarray,
    reduce: Reduce,
    kind: str,
    *,
    unit: str = "item",
    higher_is_better: bool = True,
) -> Estimand:
    """Any other statistic of summed per-unit features (OrderProbe's S_Rob)."""
    return from_rows(unit, ids, features, reduce, kind, higher_is_better)


def by_model(
    scores: Mapping[str, Mapping[str, pd.DataFrame]], of_setting: Callable[[str, pd.DataFrame], Mapping[str, Estimand]]
) -> dict[str, dict[str, Estimand]]:
    """A benchmark's `estimands` hook over its score tables: model -> name -> estimand, each
    model's non-empty settings (score tables) in name order handed to `of_setting(setting, frame)`."""
    out: dict[str, dict[str, Estimand]] = {}
    for model, tables in scores.items():
        mine = out.setdefault(model, {})
        for setting, frame in sorted(tables.items()):
            if len(frame):
                mine.update(of_setting(setting, frame))
    return out
