"""OrderProbe's per-expression values (paper appendix A.3-A.5), from the paper's scalar formulas
(metrics.py): S_Cons and its parts E_perf, R_sens (from the sampled explanations of each input),
S_seq and its parts MDR, MDA (from the canonical input's S_Acc), each expression's S_Acc^mean and
syntactic category (S_struct's category means), and the released code's S_seq (per permutation
pattern, not per expression).

These are the units S_Cons and S_Rob are averaged over and resampled by: the metric specs
(specs.py) sum them for the value and for every bootstrap replicate, and the aggregate counts
what they used and left out (aggregate.py); both read the tables here, so an expression is
computed one way. Groups are formed as pandas' groupby forms them (keys in sorted order, rows
in their order within a group, a missing key no group); every sum is math.fsum.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import metrics
from .build import CATEGORIES
from .config import SRobScore


def category_order(category: str) -> tuple[int, str]:
    """The paper's order of the syntactic categories (others after them, by name)."""
    return (CATEGORIES.index(category) if category in CATEGORIES else len(CATEGORIES), category)


def mean(values: Sequence[float]) -> float:
    """Exactly rounded (math.fsum), so the result does not depend on the order of the values."""
    return math.fsum(values) / len(values)


def groups(keys: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """(key, row positions in row order) of each distinct key, keys in sorted order; a missing
    key is no group (as pandas' groupby(sort=True))."""
    present = np.flatnonzero(pd.notna(keys))
    if not len(present):
        return []
    found, inverse = np.unique(np.asarray([str(k) for k in keys[present]], dtype=object), return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(len(found) + 1))
    return [(str(key), present[order[bounds[i] : bounds[i + 1]]]) for i, key in enumerate(found.tolist())]


def _column(rows: pd.DataFrame, name: str) -> np.ndarray:
    values: np.ndarray = rows[name].to_numpy(dtype=object)
    return values


def _scores(rows: pd.DataFrame) -> np.ndarray:
    values: np.ndarray = rows["s_acc"].to_numpy(dtype=np.float64)
    return values


# ---------------------------------------------------------------------------- S_Cons


@dataclass(frozen=True)
class Consistency:
    """Eqs. 9-11 per expression (ids sorted) from its inputs' sampled explanations."""

    ids: list[str]
    values: list[metrics.Consistency]


def consistency(samples: pd.DataFrame) -> Consistency:
    """Per expression: gap = S_max − S_mean of each input's sampled S_Acc, then eqs. 9-11
    (metrics.sample_gap, metrics.consistency) over its inputs."""
    expressions, items, scores = _column(samples, "expression_id"), _column(samples, "item_id"), _scores(samples)
    ids, values = [], []
    for expression_id, rows in groups(expressions):
        gaps = [metrics.sample_gap(scores[rows[part]].tolist()) for _, part in groups(items[rows])]
        ids.append(expression_id)
        values.append(metrics.consistency(gaps))
    return Consistency(ids, values)


# ---------------------------------------------------------------------------- S_Rob


@dataclass(frozen=True)
class Expressions:
    """Per expression of the measured inputs (ids sorted): its S_Acc^mean over them, its
    category (None: none), and S_seq's parts against its canonical input's S_Acc (S_orig):
    `degradation` and `seq` (eq. 14, clipped per expression where s_seq_clip is per_expression)
    are None where the expression is not used (no canonical input: `missing`, S_orig <= 0:
    `zero`); `outside`: used expressions whose own S_seq falls outside [0, 1]."""

    ids: list[str]
    means: list[float]
    categories: list[str | None]
    degradation: list[metrics.Degradation | None]
    seq: list[float | None]
    zero: int = 0
    missing: int = 0
    outside: int = 0

    @property
    def used(self) -> list[bool]:
        return [s is not None for s in self.seq]

    def counts(self) -> dict[str, int]:
        """The S_Rob counts of the metrics body (paper mode)."""
        return {
            "s_rob_expressions": sum(self.used),
            "s_rob_excluded_s_orig_zero": self.zero,
            "s_rob_excluded_no_canonical_input": self.missing,
            "s_seq_expressions_out_of_range": self.outside,
        }

    def category_members(self) -> tuple[list[str], np.ndarray]:
        """The categories present (paper order) and each expression's one-hot membership (n, K)."""
        present = sorted({c for c in self.categories if c is not None}, key=category_order)
        index = {c: k for k, c in enumerate(present)}
        member = np.zeros((len(self.ids), len(present)))
        for row, category in enumerate(self.categories):
            if category is not None:
                member[row, index[category]] = 1.0
        return present, member

    def category_means(self) -> tuple[dict[str, float], int]:
        """μ_k: the mean S_Acc^mean of each category's expressions (paper order), and the number
        of expressions without a category."""
        by_category: dict[str, list[float]] = {}
        for value, category in zip(self.means, self.categories, strict=True):
            if category is not None:
                by_category.setdefault(category, []).append(value)
        mu = {k: mean(v) for k, v in sorted(by_category.items(), key=lambda kv: category_order(kv[0]))}
        return mu, sum(c is None for c in self.categories)


def _category(value: object) -> str | None:
    return None if value is None or bool(pd.isna(value)) else str(value)


def expressions(measured: pd.DataFrame, reference: pd.DataFrame | None, rob: SRobScore) -> Expressions:
    """The per-expression table of the measured inputs' main-pass rows, S_orig from the
    reference rows (the canonical inputs; None: S_seq's parts are not wanted)."""
    s_orig: dict[str, float] = {}
    if reference is not None:
        s_orig = dict(zip([str(e) for e in reference["expression_id"]], _scores(reference).tolist(), strict=True))
    expression_ids, categories, scores = (
        _column(measured, "expression_id"),
        _column(measured, "category"),
        _scores(measured),
    )
    ids: list[str] = []
    means: list[float] = []
    found: list[str | None] = []
    degradation: list[metrics.Degradation | None] = []
    seq: list[float | None] = []
    zero = missing = outside = 0
    for expression_id, rows in groups(expression_ids):
        values = scores[rows].tolist()
        ids.append(expression_id)
        means.append(mean(values))
        found.append(_category(categories[rows[0]]))
        d, value = None, None
        if reference is not None and expression_id not in s_orig:
            missing += 1
        elif reference is not None and s_orig[expression_id] <= 0:
            zero += 1
        elif reference is not None:
            d = metrics.degradation(s_orig[expression_id], values)
            value = metrics.s_seq(d, rob.weight_mdr, rob.weight_mda)
            outside += not 0.0 <= value <= 1.0
            value = metrics.clip01(value) if rob.s_seq_clip == "per_expression" else value
        degradation.append(d)
        seq.append(value)
    return Expressions(ids, means, found, degradation, seq, zero, missing, outside)


@dataclass(frozen=True)
class Released:
    """The released Srobust arithmetic (compatibility: released): MDR, MDA and S_seq (None: not
    computed), and its counts."""

    mdr: float | None
    mda: float | None
    s_seq: float | None
    counts: dict[str, int]


def released(perturbed: pd.DataFrame, canonical: pd.DataFrame, rob: SRobScore) -> Released:
    """The released Srobust arithmetic with S_orig = the canonical input's S_Acc (the code's
    random S_orig cannot be reproduced meaningfully): per permutation pattern ("sheet"),
    MDR_p = mean over expressions of (S_orig − S)/S_orig and MDA_p = max over expressions of
    the ABSOLUTE drop S_orig − S; MDR, MDA = means over patterns; S_seq = 1 − (α·MDR + β·MDA),
    not clipped. No per-expression form: these have no interval."""
    s_orig = dict(zip(_column(canonical, "expression_id").tolist(), _scores(canonical).tolist(), strict=True))
    known = perturbed[perturbed["expression_id"].isin(list(s_orig))]
    zero = sum(1 for e in known["expression_id"].unique() if s_orig[e] <= 0)
    orig = np.array([s_orig[e] for e in _column(known, "expression_id").tolist()], dtype=np.float64)
    drop = orig - _scores(known)  # the absolute drop S_orig − S of each input
    mdr_p: list[float] = []
    mda_p: list[float] = []
    for _, rows in groups(_column(known, "pattern")):
        positive = rows[orig[rows] > 0]  # the code skips S_orig <= 0 in MDR only
        if len(positive):
            mdr_p.append(mean((drop[positive] / orig[positive]).tolist()))
        mda_p.append(max(drop[rows].tolist()))
    counts = {
        "s_rob_expressions": int(known["expression_id"].nunique()),
        "s_rob_excluded_s_orig_zero": zero,
        "s_rob_excluded_no_canonical_input": int(
            perturbed["expression_id"].nunique() - known["expression_id"].nunique()
        ),
        "s_seq_expressions_out_of_range": 0,
    }
    if not mdr_p or not mda_p:
        return Released(None, None, None, counts)
    mdr, mda = mean(mdr_p), mean(mda_p)
    return Released(mdr, mda, 1.0 - (rob.weight_mdr * mdr + rob.weight_mda * mda), counts)
