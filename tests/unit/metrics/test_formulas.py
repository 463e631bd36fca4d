"""The statistics metrics are declared with (statistics/formulas.py): each value is the formula
on the summed features, bit for bit the arithmetic the metrics JSON has always stored (pandas'
means, exact sums, the F1 of confusion counts), and its estimand resamples the same formula."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import f1_score

from idiombench.metrics import PERCENT
from idiombench.statistics import estimands as legacy
from idiombench.statistics.formulas import F1, MacroMean, Mean, Ratio, Summation

RNG = np.random.default_rng(7)


def frames(count: int = 60):
    for _ in range(count):
        n = int(RNG.integers(1, 400))
        x = RNG.random(n)
        x[RNG.random(n) < 0.15] = np.nan
        yield pd.DataFrame(
            {
                "item_id": [f"i{RNG.integers(0, max(1, n // 2))}" for _ in range(n)],
                "x": x,
                "flag": RNG.random(n) < 0.4,
                "group": RNG.choice(["a", "b", "c", "d", "e", "f", "g", "h", "k"], n),
                "den": RNG.integers(0, 5, n),
            }
        )


def test_a_numpy_mean_is_pandas_mean_bit_for_bit():
    for frame in frames():
        expected = frame["x"].dropna().mean() * 100.0 if frame["x"].notna().any() else None
        assert Mean("x", summation=Summation.NUMPY).value(frame, 100.0) == expected


def test_an_exact_mean_is_fsum_over_the_count():
    for frame in frames():
        values = frame["x"].dropna().tolist()
        expected = math.fsum(values) / len(values) if values else None
        assert Mean("x").value(frame) == expected


def test_a_ratio_multiplies_its_numerator_first():
    for frame in frames():
        n, d = int(frame["flag"].sum()), int(frame["den"].sum())
        expected = None if d == 0 else round(100.0 * n / d, 6)
        assert PERCENT.rounded(6).store(Ratio("flag", "den").value(frame, 100.0)) == expected


def test_a_macro_mean_is_the_mean_of_pandas_group_means():
    for frame in frames():
        kept = frame.dropna(subset=["x"])
        expected = float(kept["x"].groupby(kept["group"], sort=True).mean().mean()) if len(kept) else None
        assert MacroMean("x", "group").value(frame) == expected


def legacy_f1(gold: list[str], predicted: list[str | None]) -> dict[str, float]:
    """The F1 the SemanticQA aggregate computed before the specs (kept here to hold the new one to it)."""
    labels = sorted(set(gold) | {p for p in predicted if p is not None})
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    fn: Counter[str] = Counter()
    for g, p in zip(gold, predicted, strict=True):
        if p == g:
            tp[g] += 1
            continue
        fn[g] += 1
        if p is not None:
            fp[p] += 1

    def f1(t: int, f_pos: int, f_neg: int) -> float:
        precision = t / (t + f_pos) if t + f_pos else 0.0
        recall = t / (t + f_neg) if t + f_neg else 0.0
        return 2 * precision * recall / (precision + recall) if precision + recall else 0.0

    per_label = {label: f1(tp[label], fp[label], fn[label]) for label in labels}
    support = Counter(gold)
    return {
        "macro": 100.0 * sum(per_label.values()) / len(labels),
        "micro": 100.0 * f1(sum(tp.values()), sum(fp.values()), sum(fn.values())),
        "weighted": 100.0 * sum(per_label[label] * support[label] for label in labels) / len(gold),
    }


@pytest.mark.parametrize("average", ["macro", "micro", "weighted"])
def test_f1_is_the_legacy_f1_bit_for_bit_and_scikit_learns(average: str):
    labels = [f"L{i}" for i in range(12)]
    for _ in range(80):
        n = int(RNG.integers(1, 200))
        gold = RNG.choice(labels[: int(RNG.integers(1, 12))], n).tolist()
        predicted = [None if RNG.random() < 0.1 else str(RNG.choice(labels)) for _ in range(n)]
        frame = pd.DataFrame({"gold": gold, "p": predicted})
        statistic = F1("gold", lambda rows: [p if isinstance(p, str) else None for p in rows["p"]], average)
        found = statistic.value(frame, 100.0)
        assert found == legacy_f1(gold, predicted)[average]
        universe = sorted(set(gold) | {p for p in predicted if p is not None})
        reference = f1_score(
            gold, [p or "<none>" for p in predicted], labels=universe, average=average, zero_division=0
        )
        assert found == pytest.approx(100.0 * reference, abs=1e-9)
        # a wider label universe (every model's labels) changes no value
        wider = F1(
            "gold",
            lambda rows: [p if isinstance(p, str) else None for p in rows["p"]],
            average,
            labels=lambda rows: labels,
        )
        assert wider.value(frame, 100.0) == found


def test_the_estimand_resamples_the_value_formula():
    for frame in frames(20):
        ids = frame["item_id"].tolist()
        for statistic in (Mean("x"), Ratio("flag", "den"), MacroMean("x", "group")):
            value = statistic.value(frame)
            estimand = statistic.estimand(frame, ids, "item")
            assert estimand is not None
            if value is None:
                assert math.isnan(estimand.value())
            else:
                assert estimand.value() == pytest.approx(value, rel=1e-12)


def test_estimands_have_the_features_of_the_earlier_constructors():
    """Same units, features and statistic as before the specs: the same bootstrap intervals."""
    for frame in frames(20):
        ids = frame["item_id"].tolist()
        pairs = (
            (Mean("x").estimand(frame, ids, "item"), legacy.mean(ids, frame["x"])),
            (Ratio("flag", "den").estimand(frame, ids, "item"), legacy.ratio(ids, frame["flag"], frame["den"])),
            (
                MacroMean("x", "group").estimand(frame, ids, "item"),
                legacy.macro_mean(ids, frame["x"], frame["group"].tolist()),
            ),
        )
        for new, old in pairs:
            assert new is not None
            assert np.array_equal(new.ids, old.ids) and np.array_equal(new.features, old.features)
            sums = RNG.integers(0, 3, (50, new.n)).astype(float) @ new.features
            assert np.array_equal(new.reduce(sums), old.reduce(sums), equal_nan=True)
