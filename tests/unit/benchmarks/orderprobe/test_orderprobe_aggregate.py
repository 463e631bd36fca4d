"""OrderProbe's aggregation on hand-made score rows: Recovery variants, S_Acc^mean, S_Cons,
S_Rob (MDR, MDA, S_seq, S_struct), breakdowns and the edge cases (S_orig = 0, a category
with one member, no references, identity inputs, a setting without the consistency pass),
each against numbers computed by hand; and byte-identical reruns."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from idiombench.benchmarks.orderprobe.aggregate import aggregate_scores
from idiombench.benchmarks.orderprobe.config import OrderProbeScore
from idiombench.generation.config import GenerateConfig
from orderprobe_fixtures import paper_like_config
from orderprobe_rows import ITEMS, aggregate, cot_rows, roles, table, zero_shot_rows


@pytest.fixture(autouse=True)
def empty_project(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no data/ or results/: provenance says so


def test_recovery_variants_and_identity_inputs():
    m = aggregate()["settings"]["zero_shot"]["metrics"]
    # perturbed inputs: 10 (X1..X5 x 2), one identity (X4 CDAB); recovered: X1 ABDC, X3 x2, X4 CDAB
    assert m["recovery_default"] == pytest.approx(4 / 10)
    assert m["recovery_default_excl_identity"] == pytest.approx(3 / 9)
    assert m["recovery_identity_inputs"] == 1.0
    assert m["recovery_strict"] == pytest.approx(1 / 10)
    assert m["recovery_strict_excl_identity"] == pytest.approx(1 / 9)
    assert m["recovery_canonical"] == 1.0 and m["recovery_canonical_strict"] == pytest.approx(1 / 5)
    assert m["recovery"] == m["recovery_default"]
    strict = OrderProbeScore.model_validate(
        {"recovery": {"headline_mode": "strict", "headline_identity_inputs": "exclude"}}
    )
    assert aggregate(strict)["settings"]["zero_shot"]["metrics"]["recovery"] == pytest.approx(1 / 9)


def test_s_acc_s_info_s_logic_means_leave_out_items_without_references():
    body = aggregate()
    m, counts = body["settings"]["zero_shot"]["metrics"], body["settings"]["zero_shot"]["counts"]
    assert m["s_acc_mean"] == pytest.approx((0.4 + 0.8 + 0.5 + 0.75 + 1.0 + 0.5 + 0.3 + 0.1) / 8)
    assert m["s_info"] == pytest.approx(m["s_acc_mean"] / 2)
    assert m["s_logic"] is None  # nli not computed in params.yaml
    assert "nli" in body["settings"]["zero_shot"]["not_computed"]["s_logic"]
    assert counts["semantic_rows"] == 8 and counts["no_reference_rows"] == 2
    with_nli = aggregate(config=paper_like_config())["settings"]["zero_shot"]["metrics"]
    assert with_nli["s_logic"] == pytest.approx(0.5)


def test_no_reference_items_zero_mode():
    m = aggregate(OrderProbeScore.model_validate({"no_reference_items": "zero"}))["settings"]["zero_shot"]
    # X4 enters with 0s, but its identity input CDAB stays out (paper eq. 3, the default)
    assert m["metrics"]["s_acc_mean"] == pytest.approx(4.35 / 9)
    assert m["counts"]["s_rob_excluded_s_orig_zero"] == 2  # X4 now enters and has S_orig 0 as well
    both = aggregate(OrderProbeScore.model_validate({"no_reference_items": "zero", "identity_inputs": "include"}))
    assert both["settings"]["zero_shot"]["metrics"]["s_acc_mean"] == pytest.approx(4.35 / 10)


def test_s_cons_by_hand_and_absent_consistency_pass():
    body = aggregate()
    m = body["settings"]["zero_shot"]["metrics"]
    assert m["s_cons"] == pytest.approx((0.72 + 0.49) / 2)
    assert m["e_perf"] == pytest.approx((0.1 + 0.3) / 2)
    assert m["r_sens"] == pytest.approx((0.2 + 0.3) / 2)
    assert body["settings"]["zero_shot"]["counts"]["s_cons_expressions"] == 2
    cot = body["settings"]["cot"]
    assert cot["metrics"]["s_cons"] is None
    assert cot["not_computed"]["s_cons"] == "no `consistency` pass in this setting's generations"
    assert cot["metrics"]["s_acc_mean"] == pytest.approx(0.4)  # the rest is computed
    # with the generate config at hand, the reason names the option that restricts the pass
    generate = GenerateConfig.model_validate({"extra": {"consistency": {"n": 2, "settings": ["zero_shot"]}}})
    restricted = aggregate_scores({"cot": table(cot_rows())}, ITEMS, OrderProbeScore(), roles(), "test", None, generate)
    assert restricted["settings"]["cot"]["not_computed"]["s_cons"] == (
        "the `consistency` pass runs on zero_shot only (benchmarks.orderprobe.generate.extra.consistency.settings)"
    )
    assert restricted["breakdowns"]["canonical"]["cot"]["not_computed"]["s_cons"].startswith("the `consistency` pass")


def test_s_rob_by_hand_with_s_orig_zero_excluded_and_counted():
    body = aggregate()
    s = body["settings"]["zero_shot"]
    m = s["metrics"]
    # S_seq per expression, unclipped (paper eqs. 12-14): X1 0.625, X2 1.125, X3 0.625; X5 excluded
    # (S_orig = 0); the mean 0.7917 is inside [0, 1]; X2 is counted out of range
    assert m["s_seq"] == pytest.approx((0.625 + 1.125 + 0.625) / 3)
    assert s["counts"]["s_seq_expressions_out_of_range"] == 1
    assert m["mdr"] == pytest.approx((0.25 - 0.25 + 0.25) / 3)
    assert m["mda"] == pytest.approx((0.5 + 0.0 + 0.5) / 3)
    assert s["counts"]["s_rob_expressions"] == 3 and s["counts"]["s_rob_excluded_s_orig_zero"] == 1
    # mu: Verb-Object (X1 0.6, X5 0.2) 0.4; Subject-Predicate (X2 alone) 0.625; Parallel (X3) 0.75
    mu = [0.4, 0.625, 0.75]
    mean = sum(mu) / 3
    sigma = math.sqrt(sum((v - mean) ** 2 for v in mu) / 3)
    s_struct = 1 - sigma / (0.75 - 0.4)
    assert s["category_means"] == pytest.approx(
        {"Parallel (Coordinate)": 0.75, "Subject-Predicate": 0.625, "Verb-Object": 0.4}
    )
    assert m["s_struct"] == pytest.approx(s_struct)
    s_seq = (0.625 + 1.125 + 0.625) / 3
    assert m["s_rob"] == pytest.approx(2 * s_seq * s_struct / (s_seq + s_struct))
    # clipping each expression instead: X2 1.125 -> 1
    per_expression = aggregate(OrderProbeScore.model_validate({"s_rob": {"s_seq_clip": "per_expression"}}))
    assert per_expression["settings"]["zero_shot"]["metrics"]["s_seq"] == pytest.approx((0.625 + 1.0 + 0.625) / 3)


def test_breakdowns_per_language_category_pattern_and_canonical():
    body = aggregate()
    languages = body["breakdowns"]["per_language"]["zero_shot"]
    assert sorted(languages) == ["ja", "ko", "zh-CN", "zh-TW"]
    # ja: no references -> no semantic metric, Recovery still computed (ABDC no, CDAB yes)
    ja = languages["ja"]
    assert ja["metrics"]["s_acc_mean"] is None and ja["metrics"]["recovery"] == pytest.approx(0.5)
    assert ja["not_computed"]["s_acc_mean"] == "no perturbed input with a reference gloss"
    # ko: one expression, one category -> S_struct undefined, S_Rob not computed (said so)
    ko = languages["ko"]
    assert ko["metrics"]["s_seq"] == pytest.approx(0.625) and ko["metrics"]["s_struct"] is None
    assert ko["metrics"]["s_rob"] is None and "two or more syntactic categories" in ko["not_computed"]["s_rob"]
    assert languages["zh-CN"]["depends_on"]["s_acc_mean"] == ["cross_encoder", "sts_zh", "bertscore_zh"]
    # a category with one member: its mean is that expression's
    categories = body["breakdowns"]["per_category"]["zero_shot"]
    assert list(categories) == ["Parallel (Coordinate)", "Modifier-Head", "Subject-Predicate", "Verb-Object"]
    sp = categories["Subject-Predicate"]["metrics"]
    assert sp["s_acc_mean"] == pytest.approx(0.625) and sp["s_seq"] == pytest.approx(1.0)
    assert categories["Verb-Object"]["counts"]["s_rob_excluded_s_orig_zero"] == 1
    patterns = body["breakdowns"]["per_pattern"]["zero_shot"]
    assert len(patterns) == 23 and "ABCD" not in patterns
    assert patterns["ABDC"]["inputs"] == 5 and patterns["ABDC"]["recovery_default"] == pytest.approx(2 / 5)
    assert patterns["CDAB"] == {
        "inputs": 1,
        "identity_inputs": 1,
        "recovery_default": 1.0,
        "recovery_strict": 0.0,
        "recovery_default_excl_identity": None,
        "recovery_strict_excl_identity": None,
    }
    assert patterns["DCBA"]["inputs"] == 0 and patterns["DCBA"]["recovery_default"] is None
    canonical = body["breakdowns"]["canonical"]["zero_shot"]
    assert canonical["metrics"]["s_acc_mean"] == pytest.approx((0.8 + 0.5 + 1.0 + 0.0) / 4)
    assert canonical["metrics"]["s_cons"] == pytest.approx(0.8 * 0.8)
    assert canonical["metrics"]["recovery"] == 1.0
    assert "s_rob" in canonical["not_computed"]


def test_format_failures_and_counts():
    s = aggregate()["settings"]["zero_shot"]
    assert s["metrics"]["format_failure_rate"] == pytest.approx(1 / 15)
    assert (
        s["counts"]["main_rows"],
        s["counts"]["perturbed_inputs"],
        s["counts"]["canonical_inputs"],
        s["counts"]["identity_inputs"],
        s["counts"]["expressions"],
        s["counts"]["consistency_samples"],
    ) == (15, 10, 5, 1, 5, 12)


def test_provenance_records_roles_templates_and_the_sample():
    body = aggregate()
    provenance = body["provenance"]
    assert provenance["roles"]["nli"]["status"] == "not_computed"
    assert provenance["roles"]["cross_encoder"]["status"] == "substitute"
    assert provenance["template_hashes"]["zero_shot"]["templates"]["orderprobe/zero_shot/zh-CN"] == "ab" * 32
    assert provenance["data"]["acquired_sha256"] is None  # not acquired in this empty project
    coverage = provenance["coverage"]
    zero_shot = coverage["zero_shot"]
    assert {language: part["scored"] for language, part in zero_shot["parts"].items()} == {
        "ja": 1,
        "ko": 1,
        "zh-CN": 2,
        "zh-TW": 1,
    }
    assert zero_shot["unit"] == "expression" and zero_shot["scored"] == 5
    assert coverage["cot"]["scored"] == 1 and coverage["cot"]["complete"] is False  # cot scored only X1
    assert provenance["render_sample"] is None  # no render_stats.json in this empty project
    assert provenance["score_params"]["s_info"]["bp_mode"] == "paper"


def test_aggregation_is_deterministic():
    first = json.dumps(aggregate(), sort_keys=True)
    shuffled = {"zero_shot": table(list(reversed(zero_shot_rows()))), "cot": table(cot_rows())}
    assert json.dumps(aggregate(scores=shuffled), sort_keys=True) == first
    assert json.dumps(aggregate(), sort_keys=True) == first
