"""The paired bootstrap, the paired tests and BH against hand-computed values and scipy."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from idiombench import statistics as st
from semanticqa_f1 import f1_scores


def ids(n: int) -> list[str]:
    return [f"u{i:05d}" for i in range(n)]  # zero-padded: sorted order is the row order


@pytest.mark.parametrize("n", [50, 5000])  # 5000 units: several batches of resamples
def test_percentile_interval_of_a_mean_equals_scipy_bootstrap(n: int) -> None:
    x = np.random.default_rng(1).normal(size=n)
    estimand = st.mean(ids(n), x)
    reps = st.replicates([estimand], 1000, 7)[0]
    ours = st.interval(estimand.value(), reps, 0.95)
    theirs = scipy.stats.bootstrap(
        (x,),
        np.mean,
        n_resamples=1000,
        method="percentile",
        confidence_level=0.95,
        random_state=np.random.default_rng(7),
        vectorized=True,
    ).confidence_interval
    assert ours is not None
    assert ours.low == pytest.approx(theirs.low, abs=1e-12) and ours.high == pytest.approx(theirs.high, abs=1e-12)
    assert ours.value == pytest.approx(x.mean())


def test_replicates_by_hand_on_a_tiny_fixture() -> None:
    x = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    draws = np.random.default_rng(3).integers(0, 5, size=(20, 5))
    reps = st.replicates([st.mean(ids(5), x)], 20, 3)[0]
    assert np.allclose(reps, x[draws].mean(axis=1))
    # a masked mean: the denominator counts only the in-scope units drawn
    mask = np.array([True, True, False, False, True])
    masked = st.replicates([st.mean(ids(5), x, mask)], 20, 3)[0]
    expected = [(x[d] * mask[d]).sum() / mask[d].sum() if mask[d].any() else np.nan for d in draws]
    assert np.allclose(masked, expected, equal_nan=True)


def test_rows_of_one_unit_are_resampled_together() -> None:
    # two rows of item a (two samples), one of item b: the mean over rows, units = items
    estimand = st.mean(["a", "a", "b"], [1.0, 0.0, 1.0])
    assert estimand.n == 2 and estimand.value() == pytest.approx(2 / 3)
    assert estimand.on(["b"]).value() == 1.0


def test_macro_mean_and_ratio_by_hand() -> None:
    macro = st.macro_mean(ids(4), [1.0, 0.0, 1.0, 1.0], ["d1", "d1", "d2", "d2"])
    assert macro.value() == pytest.approx((0.5 + 1.0) / 2)
    counts = np.array([[2.0, 0.0, 1.0, 1.0], [0.0, 2.0, 0.0, 2.0]])  # two resamples as counts per unit
    assert np.allclose(macro.reduce(counts @ macro.features), [(1.0 + 1.0) / 2, (0.0 + 1.0) / 2])
    ratio = st.ratio(ids(3), [1.0, 2.0, 0.0], [2.0, 2.0, 1.0])
    assert ratio.value() == pytest.approx(3 / 5)


@pytest.mark.parametrize("average", ["macro", "micro", "weighted"])
def test_f1_estimand_matches_the_aggregate_on_the_data_and_on_a_resample(average: str) -> None:
    gold = ["A", "A", "B", "C", "B", "A"]
    predicted = ["A", "B", "B", None, "D", "A"]
    labels = sorted(set(gold) | {p for p in predicted if p is not None})
    name = f"{average}-F1"
    estimand = st.f1(ids(6), gold, predicted, labels, average)
    assert 100 * estimand.value() == pytest.approx(f1_scores(gold, predicted)[name])
    draw = np.random.default_rng(0).integers(0, 6, size=(1, 6))
    rep = st.replicates([estimand], 1, 0)[0, 0]
    resampled = f1_scores([gold[i] for i in draw[0]], [predicted[i] for i in draw[0]])[name]
    assert 100 * rep == pytest.approx(resampled)


def test_paired_bootstrap_p_by_hand() -> None:
    # observed difference 0.2; centred replicates |d* − 0.2| >= 0.2 for 0.0, 0.4, 0.5 (3 of 5)
    differences = np.array([0.0, 0.1, 0.2, 0.4, 0.5])
    assert st.paired_bootstrap_p(0.2, differences) == pytest.approx((1 + 3) / (1 + 5))
    assert st.paired_bootstrap_p(0.0, differences) == 1.0


def test_paired_permutation_p_approaches_scipys_exact_test() -> None:
    rng = np.random.default_rng(5)
    a = rng.random(8)
    b = a - 0.15 + rng.normal(scale=0.2, size=8)
    exact = scipy.stats.permutation_test(
        (a, b),
        lambda x, y, axis=-1: np.mean(x, axis=axis) - np.mean(y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        alternative="two-sided",
    ).pvalue
    ours = st.paired_permutation_p(st.mean(ids(8), a), st.mean(ids(8), b), 20_000, 0)
    assert ours == pytest.approx(exact, abs=0.015)


def test_benjamini_hochberg_equals_scipy() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.20, 0.04, 0.9, 0.0005])
    assert np.allclose(st.benjamini_hochberg(p), scipy.stats.false_discovery_control(p, method="bh"))
    with_nan = st.benjamini_hochberg([0.01, float("nan"), 0.02])
    assert np.isnan(with_nan[1]) and np.allclose(with_nan[[0, 2]], [0.02, 0.02])


def test_compare_uses_the_shared_units_and_says_so() -> None:
    a = st.mean(["x", "y", "z"], [1.0, 1.0, 0.0])
    b = st.mean(["x", "y"], [0.0, 1.0])
    result = st.compare("a", a, "b", b, "paired-bootstrap", 200, 0)
    assert result.units == 2 and result.difference == pytest.approx(0.5) and "2 items both have" in result.note
    assert st.compare("a", a, "c", st.mean(["q"], [1.0]), "paired-bootstrap", 200, 0).note.startswith("no unit")


def test_seeded_replicates_are_identical_across_calls() -> None:
    estimand = st.mean(ids(300), np.random.default_rng(2).random(300))
    assert np.array_equal(st.replicates([estimand], 500, 11), st.replicates([estimand], 500, 11))


# ---------------------------------------------------------------- clusters (docs/METRICS.md §6)


def clustered(n: int, k: int, values: np.ndarray) -> tuple[list[str], np.ndarray]:
    """k perfectly correlated copies of each of n units: the rows of n clusters of size k."""
    return [u for u in ids(n) for _ in range(k)], np.repeat(values, k)


@pytest.mark.parametrize("k", [2, 3, 23])
def test_a_cluster_of_identical_copies_gives_the_interval_of_one_copy(k: int) -> None:
    x = np.random.default_rng(4).random(40)
    one = st.mean(ids(40), x)
    rows, copies = clustered(40, k, x)
    cluster = st.mean(rows, copies, unit="expression")
    assert cluster.n == 40 and cluster.unit == "expression"  # min_units counts clusters, not rows
    single = st.interval(one.value(), st.replicates([one], 1000, 9)[0], 0.95)
    whole = st.interval(cluster.value(), st.replicates([cluster], 1000, 9)[0], 0.95)
    assert single is not None and whole is not None
    assert (whole.value, whole.low, whole.high) == pytest.approx((single.value, single.low, single.high), abs=1e-12)
    # the paired test on clusters: the same p as on the copies' single units
    other = np.random.default_rng(5).random(40)
    rows_b, copies_b = clustered(40, k, other)
    p_one = st.compare("a", one, "b", st.mean(ids(40), other), "paired-bootstrap", 1000, 9).p
    p_cluster = st.compare(
        "a", cluster, "b", st.mean(rows_b, copies_b, unit="expression"), "paired-bootstrap", 1000, 9
    ).p
    assert p_cluster == p_one


def test_resampling_correlated_copies_as_items_gives_a_narrower_interval() -> None:
    x = np.random.default_rng(4).random(40)
    rows, copies = clustered(40, 4, x)
    cluster = st.interval(float(copies.mean()), st.replicates([st.mean(rows, copies)], 1000, 9)[0], 0.95)
    items = st.mean([f"{u}/{i}" for i, u in enumerate(rows)], copies)  # every copy its own unit
    item = st.interval(items.value(), st.replicates([items], 1000, 9)[0], 0.95)
    assert cluster is not None and item is not None
    # four copies look like four times the data: about half the width (1/sqrt(4)), too narrow
    assert item.half_width < 0.6 * cluster.half_width


def test_a_macro_mean_over_clusters_spanning_groups_is_the_aggregate() -> None:
    # one idiom asked in two directions: its two rows are one cluster, in two groups
    estimand = st.macro_mean(["i1", "i1", "i2", "i3"], [1.0, 0.0, 1.0, 1.0], ["d1", "d2", "d1", "d2"], unit="idiom")
    assert estimand.n == 3 and estimand.value() == pytest.approx((1.0 + 0.5) / 2)
    counts = np.array([[2.0, 1.0, 0.0]])  # i1 drawn twice, i2 once
    assert estimand.reduce(counts @ estimand.features)[0] == pytest.approx((1.0 + 0.0) / 2)
