"""The attention diagnostics' statistics against scipy and hand-computed values on tiny fixtures."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import false_discovery_control, mannwhitneyu
from scipy.stats import kruskal as scipy_kruskal

from idiombench.analysis.attention import jaccard, salient_sets
from idiombench.analysis.stats import bh_fdr, cliffs_delta, kruskal, mann_whitney, spread

X = [0.07, 0.09, 0.05, 0.08, 0.06]
Y = [0.04, 0.06, 0.05, 0.03]


def test_cliffs_delta_by_hand_and_through_mann_whitney_u():
    # 20 pairs (x, y): x > y in 17 (0.07, 0.09, 0.08 beat all 4; 0.05 beats 2; 0.06 beats 3),
    # x < y in 1 (0.05 < 0.06), ties 2 (0.05 = 0.05, 0.06 = 0.06)
    greater = sum(a > b for a in X for b in Y)
    less = sum(a < b for a in X for b in Y)
    assert (greater, less) == (17, 1)
    assert cliffs_delta(X, Y) == pytest.approx((17 - 1) / 20)
    u = mannwhitneyu(X, Y, alternative="two-sided").statistic  # ties count 1/2
    assert cliffs_delta(X, Y) == pytest.approx(2 * u / (len(X) * len(Y)) - 1)
    assert cliffs_delta(Y, X) == pytest.approx(-cliffs_delta(X, Y))
    assert cliffs_delta([1.0, 2.0], [3.0, 4.0]) == -1.0
    assert cliffs_delta([], Y) is None


def test_mann_whitney_is_scipy_two_sided_and_refuses_small_groups():
    result = mann_whitney(X, Y, min_n=3)
    expected = mannwhitneyu(X, Y, alternative="two-sided")
    assert result.statistic == pytest.approx(expected.statistic)
    assert result.p == pytest.approx(expected.pvalue)
    small = mann_whitney(X, Y[:2], min_n=3)
    assert small.p is None and "fewer than 3" in small.note
    nan = mann_whitney([*X, math.nan], Y, min_n=3)  # a missing value is dropped, not counted
    assert nan.p == pytest.approx(expected.pvalue)


def test_kruskal_is_scipy_and_uses_only_groups_large_enough():
    groups = {"T2": [0.03, 0.05, 0.04], "T3": [0.06, 0.07, 0.08, 0.09], "T4": [0.02]}
    result, used = kruskal(groups, min_n=3)
    expected = scipy_kruskal(groups["T2"], groups["T3"])
    assert used == ["T2", "T3"]
    assert result.statistic == pytest.approx(expected.statistic) and result.p == pytest.approx(expected.pvalue)
    none, _ = kruskal({"T2": [0.1, 0.2, 0.3], "T3": [0.1]}, min_n=3)
    assert none.p is None and "fewer than two groups" in none.note
    equal, _ = kruskal({"T2": [0.1] * 3, "T3": [0.1] * 3}, min_n=3)
    assert equal.p is None and equal.note == "all values are equal"


def test_bh_fdr_by_hand_and_against_scipy_skipping_missing_p_values():
    p = [0.01, 0.04, 0.03, 0.20]
    # sorted 0.01, 0.03, 0.04, 0.20 -> p * m / rank = 0.04, 0.06, 0.0533, 0.20; running minimum from the top
    assert bh_fdr(p) == pytest.approx([0.04, 0.0533333, 0.0533333, 0.20])
    assert bh_fdr(p) == pytest.approx(list(false_discovery_control(p, method="bh")))
    with_missing = bh_fdr([0.01, None, 0.04, math.nan, 0.03, 0.20])
    assert with_missing[1] is None and with_missing[3] is None
    assert [q for q in with_missing if q is not None] == pytest.approx([0.04, 0.0533333, 0.0533333, 0.20])
    assert bh_fdr([None]) == [None]


def test_spread_is_median_and_interquartile_range():
    s = spread([1.0, 2.0, 3.0, 4.0, math.nan])
    assert (s.n, s.median, s.iqr) == (4, 2.5, pytest.approx(1.5))
    assert spread([]).median is None


def test_salient_heads_and_layers_count_per_sample_top_k():
    # 3 layers x 2 heads; top-2 heads per sample
    a = np.array([[0.9, 0.1], [0.8, 0.0], [0.2, 0.3]])  # top: (0,0), (1,0)
    b = np.array([[0.9, 0.7], [0.1, 0.0], [0.2, 0.3]])  # top: (0,0), (0,1)
    c = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]])  # all tied: lowest positions first: (0,0), (0,1)
    heads, layers = salient_sets([a, b, c], top_k=2, heads=2, layers=1)
    assert heads == [(0, 0), (0, 1)]  # (0,0) 3 times, (0,1) twice, (1,0) once
    assert layers == [0]  # layer 0: 5 entries, layer 1: 1
    assert jaccard([(0, 0), (0, 1)], [(0, 1), (2, 1)]) == pytest.approx(1 / 3)
    assert jaccard([], []) is None
