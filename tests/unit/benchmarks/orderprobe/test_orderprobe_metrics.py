"""OrderProbe's formulas against values computed by hand (docs/METRICS.md §1, paper appendix A/B)."""

from __future__ import annotations

import math

import pytest

from idiombench.benchmarks.orderprobe import metrics
from idiombench.benchmarks.orderprobe.recovery import first_script_run, normalise, recovered_default, recovered_strict

# ---------------------------------------------------------------------------- Recovery


@pytest.mark.parametrize(
    "output, expected",
    [
        ("不耻下问，指不以向学问、地位比自己低的人请教为耻", True),
        ("不 耻 下\n问", True),  # whitespace removed before matching
        ("ＡＢ不耻下问", True),  # NFKC: full-width letters are fine
        ("指不以问问题为耻，向下请教。", False),
        ("不耻问下", False),  # the scrambled input itself
        ("", False),
    ],
)
def test_recovery_default(output: str, expected: bool):
    assert recovered_default(output, "不耻下问") is expected


def test_recovery_default_normalises_both_sides():
    # U+F9xx compatibility ideographs fold to the unified ones under NFKC
    assert normalise("\uf90a") == "\u91d1"
    assert recovered_default("金科玉律", "\uf90a科玉律")


@pytest.mark.parametrize(
    "explanation, expected",
    [
        ("不耻下问，指不以向地位低的人请教为耻", True),
        ("不耻下问指不以向地位低的人请教为耻", True),  # the run is longer than 4: its first four count
        ("指：不耻下问，谦虚好学", True),  # runs shorter than four characters are skipped
        ("成语不耻下问", False),  # first run of 4+ starts with 成语
        ("不耻问下 → 不耻下问", False),  # the first run is the scrambled input
        ("画竜点睛とは、最後の仕上げ", False),
        (None, False),
        ("", False),
    ],
)
def test_recovery_strict(explanation, expected: bool):
    assert recovered_strict(explanation, "不耻下问") is expected


def test_strict_run_covers_kana_hangul_and_iteration_marks():
    assert first_script_run("画竜点睛とは、最後") == "画竜点睛とは"
    assert recovered_strict("画竜点睛とは、最後の仕上げ", "画竜点睛")
    assert recovered_strict("작심삼일: 결심이 오래가지 못함", "작심삼일")
    assert recovered_strict("時々刻々と変化する", "時々刻々")
    assert first_script_run("abc 12") is None


# ---------------------------------------------------------------------------- S_Acc


def test_over_references():
    assert metrics.over_references([0.2, 0.8, 0.5], "max") == 0.8
    assert metrics.over_references([0.2, 0.8, 0.5], "mean") == pytest.approx(0.5)
    assert metrics.over_references([], "max") == 0.0
    with pytest.raises(ValueError, match="unknown reference aggregation"):
        metrics.over_references([1.0], "median")


def test_s_acc_paper_formula():
    # 0.5*0.8 + 0.3*(0.4 + 0.6 + 0.5)/3 + 0.2*0.25 = 0.4 + 0.15 + 0.05
    assert metrics.s_acc(0.8, 0.4, 0.6, 0.5, 0.25) == pytest.approx(0.6)


def test_s_acc_without_bertscore_averages_the_computed_representation_terms():
    # BERT not computed: the ensemble is (STS + LEX)/2 = 0.55; 0.4 + 0.3*0.55 + 0.05
    assert metrics.s_acc(0.8, None, 0.6, 0.5, 0.25) == pytest.approx(0.615)


def test_s_acc_without_cross_encoder_renormalises_the_weights():
    # (0.3 * (0.4+0.6+0.5)/3 + 0.2 * 0.25) / 0.5 = (0.15 + 0.05) / 0.5
    assert metrics.s_acc(None, 0.4, 0.6, 0.5, 0.25) == pytest.approx(0.4)
    # only the lexical terms: (0.3*0.5 + 0.2*0.25)/0.5
    assert metrics.s_acc(None, None, None, 0.5, 0.25) == pytest.approx(0.4)


def test_s_acc_weights_are_relative():
    weights = metrics.SAccWeights(ce=1.0, representation=1.0, f_beta=0.0)
    assert metrics.s_acc(0.8, 0.4, 0.6, 0.5, 0.25, weights) == pytest.approx((0.8 + 0.5) / 2)
    with pytest.raises(ValueError, match="no computed term"):
        metrics.s_acc(None, None, None, 0.5, 0.25, metrics.SAccWeights(1.0, 0.0, 0.0))


def test_polarity_halving():
    assert metrics.halve_if_contradicting(0.6, True) == pytest.approx(0.3)
    assert metrics.halve_if_contradicting(0.6, False) == 0.6


# ---------------------------------------------------------------------------- S_Logic, S_Info


def test_logic_score_threshold_and_penalty():
    assert metrics.logic_score(0.9, 0.1) == pytest.approx(0.85)  # 0.9 - 0.5*0.1
    assert metrics.logic_score(0.3, 0.9) == 0.0  # 0.3 - 0.45 clipped at 0
    assert metrics.logic_score(0.04, 0.9) == 0.04  # below the threshold: no penalty
    assert metrics.logic_score(0.05, 0.9) == 0.05  # at the threshold: no penalty ("exceeds")
    assert metrics.logic_score(0.9, 0.1, threshold=0.95) == 0.9
    assert metrics.logic_score(0.9, 0.1, weight=1.0) == pytest.approx(0.8)


def test_logic_for_reference_takes_the_stronger_direction_with_its_contradiction():
    # e->r (0.2, 0.7), r->e (0.6, 0.1): r->e wins, 0.6 - 0.05
    assert metrics.logic_for_reference((0.2, 0.7), (0.6, 0.1)) == pytest.approx(0.55)
    # one direction (the released code): e->r only, 0.2 - 0.35 -> 0
    assert metrics.logic_for_reference((0.2, 0.7), None) == 0.0
    # a tie keeps explanation->reference
    assert metrics.logic_for_reference((0.5, 0.2), (0.5, 0.0)) == pytest.approx(0.4)


def test_info_for_reference_both_penalties():
    # paper: 6 tokens vs 4 -> exp(1 - 6/4) = exp(-0.5)
    assert metrics.info_for_reference(0.5, 6, 4, "paper") == pytest.approx(0.5 * math.exp(-0.5))
    assert metrics.info_for_reference(0.5, 3, 4, "paper") == pytest.approx(0.5)
    # bleu: short outputs penalised: 2 vs 4 -> exp(1 - 4/2) = exp(-1)
    assert metrics.info_for_reference(0.5, 2, 4, "bleu") == pytest.approx(0.5 * math.exp(-1))
    assert metrics.info_for_reference(0.5, 6, 4, "bleu") == pytest.approx(0.5)


# ---------------------------------------------------------------------------- S_Cons


def test_sample_gap_and_consistency():
    assert metrics.sample_gap([0.2, 0.4, 0.6]) == pytest.approx(0.2)  # 0.6 - 0.4
    assert metrics.sample_gap([0.3] * 5) == 0.0  # never a rounding-negative gap
    c = metrics.consistency([0.2, 0.0, 0.1])
    assert c.e_perf == pytest.approx(0.1)
    assert c.r_sens == pytest.approx(0.2)
    assert c.s_cons == pytest.approx(0.9 * 0.8)
    with pytest.raises(ValueError):
        metrics.consistency([])


# ---------------------------------------------------------------------------- S_Rob


def test_degradation_and_s_seq():
    d = metrics.degradation(0.8, [0.4, 0.8, 1.0])
    # drops: 0.5, 0, -0.25 -> MDR 0.25/3, MDA 0.5
    assert d.mdr == pytest.approx(0.25 / 3)
    assert d.mda == pytest.approx(0.5)
    assert metrics.s_seq(d) == pytest.approx(1 - (0.5 * 0.25 / 3 + 0.5 * 0.5))
    assert metrics.s_seq(d, 1.0, 0.0) == pytest.approx(1 - 0.25 / 3)


def test_degradation_rejects_zero_original():
    with pytest.raises(ValueError, match="S_orig = 0"):
        metrics.degradation(0.0, [0.1])


def test_s_struct_population_std_over_range():
    # mu = 0.2, 0.4, 0.6: population sigma = sqrt(((0.2)^2 + 0 + (0.2)^2)/3) = 0.163299; range 0.4
    expected = 1 - math.sqrt(0.08 / 3) / 0.4
    assert metrics.s_struct([0.2, 0.4, 0.6]) == pytest.approx(expected)
    assert metrics.population_std([0.2, 0.4, 0.6]) == pytest.approx(math.sqrt(0.08 / 3))
    # two categories: sigma is half the range whatever the gap (the normalisation is scale-free)
    assert metrics.s_struct([0.1, 0.9]) == pytest.approx(0.5)
    assert metrics.s_struct([0.5, 0.5000001]) == pytest.approx(0.5)
    # equal means (also up to float noise) -> 1; one category -> undefined
    assert metrics.s_struct([0.7, 0.7, 0.7]) == 1.0
    assert metrics.s_struct([1.0, 1.0 - 1e-16, 1.0]) == 1.0
    assert metrics.s_struct([0.7]) is None


def test_harmonic_mean():
    assert metrics.harmonic_mean(0.5, 1.0) == pytest.approx(2 * 0.5 / 1.5)
    assert metrics.harmonic_mean(0.0, 0.0) == 0.0
    assert metrics.harmonic_mean(None, 0.5) is None
    assert metrics.harmonic_mean(0.5, None) is None
