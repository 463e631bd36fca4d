"""The serving-noise and disagreement figures (statistics/agreement.py) on hand-checked tables."""

from __future__ import annotations

import math

import numpy as np
import pytest

from idiombench.statistics import mean, replicates
from idiombench.statistics.agreement import disagreement, flips, mcnemar_exact, paired_figures


def test_flip_share_counts_outcomes_that_differ_and_changed_counts_texts():
    units = ["e1", "e1", "e2", "e3", "e4"]
    configured = [1.0, 0.0, 1.0, 0.5, 1.0]
    perturbed = [1.0, 1.0, 0.0, 0.5, 1.0]
    texts_a = ["x", "y", "z", "w", "same"]
    texts_b = ["x", "Y", "Z", "w2", "same"]  # w -> w2 changes the text, not the graded outcome
    found = paired_figures(units, configured, perturbed, texts_a, texts_b, resamples=200, confidence=0.95, seed=0)
    assert (found.items, found.units, found.changed, found.flipped) == (5, 4, 3, 2)
    assert found.flipped_share == pytest.approx(2 / 5)
    assert found.changed_share == pytest.approx(3 / 5)
    assert found.value_a == pytest.approx(3.5 / 5) and found.value_b == pytest.approx(3.5 / 5)
    assert found.difference == pytest.approx(0.0)


def test_rows_with_an_undefined_outcome_are_left_out():
    found = paired_figures(
        ["a", "b", "c"],
        [1.0, math.nan, 0.0],
        [0.0, 1.0, 0.0],
        ["p", "q", "r"],
        ["p2", "q", "r"],
        resamples=100,
        confidence=0.95,
        seed=0,
    )
    assert (found.items, found.flipped, found.changed) == (2, 1, 1)
    assert found.difference == pytest.approx(-0.5)


def test_a_graded_outcome_flips_only_beyond_rounding():
    assert flips([0.5, 0.5, 0.25], [0.5 + 1e-12, 0.6, 0.25]).tolist() == [False, True, False]


def test_the_interval_is_the_percentile_interval_of_paired_cluster_replicates():
    rng = np.random.default_rng(1)
    units = [f"u{i // 2}" for i in range(40)]  # 20 clusters of two rows
    a = rng.integers(0, 2, 40).astype(float)
    b = np.where(rng.random(40) < 0.2, 1 - a, a)
    found = paired_figures(units, a, b, ["t"] * 40, ["t"] * 40, resamples=500, confidence=0.9, seed=3)
    assert found.units == 20
    reps = replicates([mean(units, a), mean(units, b)], 500, 3)
    low, high = np.percentile(reps[1] - reps[0], [5.0, 95.0])
    assert (found.low, found.high) == pytest.approx((low, high))
    assert found.low <= found.difference <= found.high
    # the same seed gives the same interval (byte-identical tables)
    again = paired_figures(units, a, b, ["t"] * 40, ["t"] * 40, resamples=500, confidence=0.9, seed=3)
    assert (again.low, again.high) == (found.low, found.high)


def test_one_unit_gets_no_interval():
    found = paired_figures(
        ["u", "u"], [1.0, 0.0], [0.0, 0.0], ["a", "b"], ["c", "b"], resamples=100, confidence=0.95, seed=0
    )
    assert found.low is None and found.high is None and found.difference == pytest.approx(-0.5)


def test_mcnemar_exact_matches_scipy_and_the_binomial_by_hand():
    from scipy.stats import binomtest

    # 2 x 2 table: b = 7 items only A gets right, c = 1 only B: p = 2 * P(X <= 1), X ~ Bin(8, 1/2)
    by_hand = 2 * (math.comb(8, 0) + math.comb(8, 1)) / 2**8
    assert mcnemar_exact(7, 1) == pytest.approx(by_hand) == pytest.approx(0.0703125)
    assert mcnemar_exact(7, 1) == pytest.approx(binomtest(7, 8, 0.5).pvalue)
    assert mcnemar_exact(3, 3) == pytest.approx(1.0)
    assert mcnemar_exact(0, 0) == 1.0


def test_disagreement_counts_both_ways_over_right_wrong_items_only():
    a = [1, 1, 1, 0, 0, 1, 0.5, 1]
    b = [0, 0, 1, 1, 0, 0, 1, math.nan]
    found = disagreement(a, b)
    assert (found.items, found.only_a, found.only_b) == (6, 3, 1)
    assert found.p == pytest.approx(mcnemar_exact(3, 1))
