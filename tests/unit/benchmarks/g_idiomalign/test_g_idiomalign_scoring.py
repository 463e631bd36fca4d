"""G-IdiomAlign scoring and aggregation against hand-computed values on hand-written items."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from g_idiomalign_fixtures import (
    AggCtx,
    Ctx,
    FakeScorers,
    gen_item,
    gen_scores,
    generation_metrics,
    generations,
    index,
    mcq_body,
    mcq_item,
    mcq_scores,
)
from idiombench.benchmarks.g_idiomalign import BENCHMARK, task2
from idiombench.benchmarks.g_idiomalign import aggregate as agg
from idiombench.benchmarks.g_idiomalign.config import GIdiomAlignConfig, GIdiomAlignScore
from idiombench.benchmarks.g_idiomalign.parse import parse_idiom
from idiombench.benchmarks.g_idiomalign.score import score
from idiombench.benchmarks.g_idiomalign.task1 import judge
from idiombench.core.errors import IdiombenchError
from idiombench.pipeline.config import load_params

ROOT = Path(__file__).resolve().parents[4]


# --------------------------------------------------------------------------- Task 1


def test_judge_outcomes_by_hand():
    plain = mcq_item("en->zh", 0, "Zh-target", "LT reference CA LC").meta
    assert judge("B", "B", plain, True).outcome == "Correct"
    assert judge("A", "B", plain, True).outcome == "LT"
    assert judge("C", "B", plain, True).outcome == "CA"
    assert judge("D", "B", plain, True).outcome == "LC"
    none = judge(None, "B", plain, True)
    assert (none.correct, none.invalid, none.outcome) == (False, True, "invalid")
    assert judge("E", "B", plain, True).invalid  # a letter outside the options


def test_duplicate_option_items_follow_the_flag():
    # the target text also fills the LT slot (A); the release names A as the answer
    item = mcq_item(
        "en->zh", 1, "Zh-target", "LT reference CA LC", options=("gold", "gold", "x", "y"), answer="A", duplicate=True
    )
    assert item.meta["target_letters"] == ["A", "B"]
    assert judge("B", "A", item.meta, True).outcome == "Correct"  # the reference slot, same text
    assert judge("A", "A", item.meta, True).outcome == "Correct"
    released_only = judge("B", "A", item.meta, False)
    assert (released_only.correct, released_only.outcome) == (False, "target_copy")
    assert judge("A", "A", item.meta, False).correct  # the released answer stays correct


def test_score_mcq_parses_the_answer_forms():
    items = [mcq_item("en->zh", i, "Zh-target", "LT reference CA LC") for i in range(6)]
    outputs = ['{"Answer": "B"}', "B", "B. gold", "The answer is A", "I cannot decide", ""]
    ctx = Ctx({"mcq": generations("mcq", list(zip(items, outputs, strict=False)))}, index(*items))
    frame = score(ctx)["mcq"]
    assert frame["parsed"].tolist() == ["B", "B", "B", "A", None, None]
    assert frame["correct"].tolist() == [True, True, True, False, False, False]
    assert frame["invalid"].tolist() == [False, False, False, False, True, True]
    assert frame["outcome"].tolist() == ["Correct", "Correct", "Correct", "LT", "invalid", "invalid"]
    assert frame["item_id"].tolist() == sorted(i.item_id for i in items)


def test_generation_row_naming_an_unknown_item_is_an_error():
    item = mcq_item("en->zh", 0, "Zh-target")
    ctx = Ctx({"mcq": generations("mcq", [(item, "A")])}, {})
    with pytest.raises(IdiombenchError, match="names item mcq/en-zh/00000 of task mcq"):
        score(ctx)


def test_task1_macro_micro_and_decomposition_by_hand():
    groups = {"en->zh": "Zh-target", "de->zh": "Zh-target", "zh->en": "En-target", "de->fr": "Other targets"}
    frame = mcq_scores(
        {
            "en->zh": ["Correct", "Correct", "LT"],
            "de->zh": ["LC"],
            "zh->en": ["Correct", "Correct"],
            "de->fr": ["invalid"],
        },
        groups,
        duplicates={("en->zh", 0)},
    )
    body, breakdown = mcq_body(frame)
    m = body["metrics"]
    # Zh-target: micro 2/4; macro mean(2/3, 0/1)
    assert m["accuracy.micro.Zh-target"] == pytest.approx(50.0)
    assert m["accuracy.macro.Zh-target"] == pytest.approx(100 * (2 / 3 + 0) / 2)
    assert m["accuracy.micro.En-target"] == m["accuracy.macro.En-target"] == pytest.approx(100.0)
    assert m["accuracy.micro.Other targets"] == m["accuracy.macro.Other targets"] == 0.0
    # overall: micro 4/7; macro over the 4 directions
    assert m["accuracy.micro.overall"] == pytest.approx(100 * 4 / 7)
    assert m["accuracy.macro.overall"] == pytest.approx(100 * (2 / 3 + 0 + 1 + 0) / 4)
    # without the duplicate-option answer: en->zh keeps 1 correct of 2
    assert m["accuracy_without_duplicate_option.micro.Zh-target"] == pytest.approx(100 * 1 / 3)
    assert m["accuracy_without_duplicate_option.macro.Zh-target"] == pytest.approx(100 * (1 / 2 + 0) / 2)
    assert m["accuracy_without_duplicate_option.micro.overall"] == pytest.approx(100 * 3 / 6)
    # decomposition: Zh-target 2 Correct, 1 LT, 1 LC of 4; Other: all invalid
    assert [m[f"outcome.Zh-target.{o}"] for o in ("Correct", "LT", "LC", "CA", "invalid")] == [
        50.0,
        25.0,
        25.0,
        0.0,
        0.0,
    ]
    assert m["outcome.Other targets.invalid"] == 100.0
    for scope in ("Zh-target", "En-target", "Other targets", "overall"):
        assert sum(m[f"outcome.{scope}.{o}"] for o in ("Correct", "LT", "LC", "CA", "invalid")) == pytest.approx(100.0)
    assert "outcome.overall.target_copy" not in m  # only reported when the duplicate rule is off
    assert body["counts"]["invalid"] == 1 and body["counts"]["duplicate_option_answers"] == 1
    assert body["counts"]["directions_per_group"] == {"Zh-target": 2, "En-target": 1, "Other targets": 1}
    assert breakdown["per_direction"]["en->zh"]["accuracy"] == pytest.approx(100 * 2 / 3)


def test_task1_empty_group_is_none_not_zero():
    frame = mcq_scores({"zh->en": ["Correct"]}, {"zh->en": "En-target"})
    m = mcq_body(frame)[0]["metrics"]
    assert m["accuracy.macro.Zh-target"] is None and m["accuracy.micro.Zh-target"] is None
    assert m["outcome.Zh-target.Correct"] is None
    assert m["accuracy.micro.overall"] == 100.0


# --------------------------------------------------------------------------- Task 2: cleaning and surface metrics


@pytest.mark.parametrize(
    "raw, expected",
    [
        ('"Break a leg!"', "Break a leg"),
        ("break a leg.", "break a leg"),
        ('"break a leg".', "break a leg"),
        ("<think>maybe cut to the chase?</think>\nIdiom: «cut to the chase»。", "cut to the chase"),
        ("画蛇添足。\n(this means overdoing it)", "画蛇添足"),
        ("**mennä metsään (jossakin)**", "mennä metsään (jossakin)"),
        ("huntin', shootin' and fishin'", "huntin', shootin' and fishin'"),
        ("when pigs fly…", "when pigs fly"),
        ("  ", ""),
    ],
)
def test_cleaning_rule(raw: str, expected: str):
    assert task2.clean_idiom(parse_idiom(raw, "English").value) == expected


def test_exact_match_normalises_width_and_case():
    assert task2.exact_match("Break A Leg", "break a leg")
    assert not task2.exact_match("Break A Leg", "break a leg", casefold=False)
    assert task2.exact_match("ＡＢＣ", "abc")
    assert not task2.exact_match("", "")  # an empty output never matches


def test_bleu_and_chrf_by_hand():
    assert task2.sentence_bleu("画蛇添足", "画蛇添足", "zh") == 100.0
    # "画蛇" vs "画蛇添足" (zh tokenizer: one token per character): 1- and 2-gram precision 1,
    # effective order 2, brevity penalty exp(1 - 4/2)
    assert task2.sentence_bleu("画蛇", "画蛇添足", "zh") == pytest.approx(100 * np.exp(-1.0))
    assert task2.sentence_bleu("", "画蛇添足", "zh") == 0.0
    assert task2.sentence_bleu("cut to the chase", "cut to the chase", "13a") == 100.0
    assert task2.sentence_chrf("chase", "chase") == 100.0 and task2.sentence_chrf("", "chase") == 0.0


def test_tokenizer_choice_and_fallback(monkeypatch):
    mapping, default = {"zh": "zh", "ja": "ja-mecab", "th": "char"}, "13a"
    assert task2.choose_tokenizer("zh", mapping, default).used == "zh"
    assert task2.choose_tokenizer("de", mapping, default).used == "13a"
    assert task2.choose_tokenizer("th", mapping, default).used == "char"
    ja = task2.choose_tokenizer("ja", mapping, default)
    assert ja.used == ("ja-mecab" if task2.tokenizer_available("ja-mecab") is None else "char")
    monkeypatch.setattr(task2, "tokenizer_available", lambda name: "MeCab is missing" if name == "ja-mecab" else None)
    fallback = task2.choose_tokenizer("ja", mapping, default)
    assert (fallback.used, fallback.note) == (
        "char",
        "sacrebleu tokenizer 'ja-mecab' cannot run here (MeCab is missing); used 'char'",
    )


# --------------------------------------------------------------------------- Task 2: score and aggregate


def test_score_generation_one_batched_similarity_call_and_invalid_rows():
    a = gen_item("zh->en", 0, "Break a leg!")
    b = gen_item("zh->en", 1, "cut to the chase")
    values = {
        ("break a leg", "Break a leg"): 0.9,
        ("Break a leg", "Break a leg"): 1.0,
        ("cut corners", "cut to the chase"): 0.6,
    }
    fake = FakeScorers(values)
    ctx = Ctx(
        {
            "no_gloss": generations("no_gloss", [(a, "break a leg."), (b, "")]),
            "with_gloss": generations("with_gloss", [(a, '"Break a leg"'), (b, "cut corners\nmeaning...")]),
        },
        index(a, b),
        scorers=fake,
    )
    tables = score(ctx)
    assert len(fake.calls) == 1 and len(fake.calls[0]) == 3  # both settings, the empty output left out
    no, with_ = tables["no_gloss"], tables["with_gloss"]
    assert no["similarity"].tolist() == [0.9, 0.0]
    assert no["invalid"].tolist() == [False, True]
    assert no["exact_match"].tolist() == [True, False]  # case folded
    assert with_["similarity"].tolist() == [1.0, 0.6]
    assert with_["prediction_clean"].tolist() == ["Break a leg", "cut corners"]
    assert with_["ok"].tolist() == [True, False]  # a second line breaks the format
    assert with_["bleu_tokenize"].tolist() == ["13a", "13a"]


def test_task2_meansim_and_acc_at_t_by_hand():
    frame = gen_scores({"zh->en": [0.9, 0.6], "en->zh": [0.7]}, em={"zh->en": [True, False], "en->zh": [False]})
    m = generation_metrics(frame)
    assert m["MeanSim"] == pytest.approx(100 * (0.75 + 0.7) / 2)
    assert m["MeanSim.micro"] == pytest.approx(100 * 2.2 / 3)
    assert m["Acc@0.65"] == pytest.approx(100 * (0.5 + 1) / 2)
    assert m["Acc@0.70"] == pytest.approx(100 * (0.5 + 1) / 2)  # 0.7 >= 0.70 counts
    assert m["Acc@0.70.micro"] == pytest.approx(100 * 2 / 3)
    assert m["Acc@0.75"] == pytest.approx(100 * (0.5 + 0) / 2)
    assert m["Acc@0.80"] == pytest.approx(25.0)
    assert m["EM"] == pytest.approx(100 * (0.5 + 0) / 2)
    assert m["BLEU"] == pytest.approx((15.0 + 10.0) / 2)  # sentence means per direction, macro
    assert m["chrF"] == pytest.approx(20.0)


def test_task2_not_computed_similarity_is_none():
    frame = gen_scores({"zh->en": [float("nan")]})
    m = generation_metrics(frame, similarity_computed=False)
    assert m["MeanSim"] is None and m["Acc@0.80"] is None
    assert m["EM"] == 0.0 and m["chrF"] == 20.0


def test_task2_not_computed_role_leaves_nan_and_a_note():
    a = gen_item("zh->en", 0, "break a leg")
    ctx = Ctx(
        {"no_gloss": generations("no_gloss", [(a, "break a leg")])}, index(a), scorers=FakeScorers({}, "not_computed")
    )
    frame = score(ctx)["no_gloss"]
    assert np.isnan(frame["similarity"].iloc[0]) and frame["exact_match"].iloc[0]
    assert any("not computed" in note for note in ctx.notes)


def test_deltas_and_additional_pairs_kept_apart(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no results/prompts here
    params = load_params(ROOT / "params.yaml")
    no = pd.concat([gen_scores({"zh->en": [0.6]}), gen_scores({"ko->en": [0.1]}, additional=True)])
    with_ = pd.concat([gen_scores({"zh->en": [0.9]}), gen_scores({"ko->en": [0.2]}, additional=True)])
    with_["setting"] = "with_gloss"
    body = agg.aggregate(AggCtx({"no_gloss": no, "with_gloss": with_}, {}, params=params))
    s = body["settings"]
    assert sorted(s) == ["no_gloss", "no_gloss_additional", "with_gloss", "with_gloss_additional"]
    assert s["no_gloss"]["metrics"]["MeanSim"] == pytest.approx(60.0)  # the additional row is not in it
    assert s["with_gloss"]["metrics"]["delta.MeanSim"] == pytest.approx(30.0)
    assert s["with_gloss"]["metrics"]["delta.Acc@0.80"] == pytest.approx(100.0)
    assert s["with_gloss_additional"]["metrics"]["delta.MeanSim"] == pytest.approx(10.0)
    assert body["provenance"]["roles"]["embedder_multilingual"]["status"] == "substitute"
    json.dumps(body)  # a JSON body (DVC metrics file)


def test_prediction_metrics_cells():
    """evaluate-predictions' cells: tables 3 and 12 for mcq, the macro values for Task 2 (the specs marked paper)."""
    groups = {"en->zh": "Zh-target", "zh->en": "En-target", "de->fr": "Other targets"}
    scores = {
        "mcq": mcq_scores({"en->zh": ["Correct"], "zh->en": ["LT"], "de->fr": ["Correct"]}, groups),
        "no_gloss": pd.concat([gen_scores({"zh->en": [0.9]}), gen_scores({"ko->en": [0.4]}, additional=True)]),
    }
    config = GIdiomAlignConfig()
    settings, _ = agg.setting_bodies(scores, config)
    body = {"settings": settings}
    scopes = BENCHMARK.metric_scopes(scores, config)

    def cells(task: str | None, setting: str) -> dict[str, float | None]:
        return BENCHMARK.prediction_metrics(body, scopes, task, setting)

    mcq = cells("mcq", "mcq")
    assert len(mcq) == 8 + 12
    assert list(mcq)[:2] == ["accuracy.macro.Zh-target", "accuracy.micro.Zh-target"]  # table 3's order, then 12's
    assert mcq["accuracy.macro.overall"] == pytest.approx(200 / 3) and mcq["outcome.En-target.LT"] == 100.0
    gen_cells = cells(None, "no_gloss")
    assert list(gen_cells) == ["MeanSim", "Acc@0.65", "Acc@0.70", "Acc@0.75", "Acc@0.80", "EM", "BLEU", "chrF"]
    assert gen_cells["MeanSim"] == pytest.approx(90.0) and "MeanSim.micro" not in gen_cells
    assert cells("gloss_generation", "no_gloss") == gen_cells
    assert cells("gloss_generation_additional", "no_gloss")["MeanSim"] == pytest.approx(40.0)  # its own pairs
    with pytest.raises(IdiombenchError, match="no scores for setting 'with_gloss'"):
        cells("gloss_generation", "with_gloss")
    with pytest.raises(IdiombenchError, match=r"mcq: no scores for task 'gloss_generation' \(scored: mcq\)"):
        cells("gloss_generation", "mcq")


def test_score_params_are_validated():
    with pytest.raises(ValueError, match="headline_thresholds must be a non-empty subset"):
        GIdiomAlignScore(thresholds=[0.7], headline_thresholds=[0.8])
    with pytest.raises(ValueError, match=r"thresholds must be a non-empty list of values in \(0, 1\]"):
        GIdiomAlignScore(thresholds=[1.5], headline_thresholds=[1.5])
