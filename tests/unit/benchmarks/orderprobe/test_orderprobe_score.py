"""OrderProbe's score stage on hand-made items and outputs: every term against a value
computed by hand, the edge cases (empty output, failed generation, no references, identity
inputs), not-computed roles, batching (one scorer call per role) and bad input."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from idiombench.benchmarks.orderprobe.config import OrderProbeScore
from idiombench.benchmarks.orderprobe.score import score_generations
from idiombench.core.errors import DataError, IdiombenchError
from idiombench.scoring.tokenize import content_tokens, tokenize
from orderprobe_fixtures import (
    FakeScorers,
    fixture_lexicons,
    frame,
    gen_row,
    index,
    items_for,
    paper_like_config,
    scoring_config,
)

EXPR = "不耻下问"
R1, R2 = "谦虚好学", "形容行为放纵"
E1 = "不耻下问，指谦虚好学"
ZH = items_for("zh-CN", 1, EXPR, [R1, R2], "Verb-Object")
JA = items_for("ja", 2, "一刻一刻", [], "Modifier-Head")  # the Japanese release has no references
BY_PATTERN = {item.meta["pattern"]: item for item in ZH}
JA_BY_PATTERN = {item.meta["pattern"]: item for item in JA}

# Hand computation of the lexical terms of E1 (tokens checked in test_tokens_behind_the_hand_values):
#   content(E1) = {不耻下问, 指, 谦虚, 好学}; content(R1) = {谦虚, 好学}; content(R2) = {形容, 行为, 放纵}
#   F2 vs R1: P = 2/4, R = 2/2 -> 5*0.5*1 / (4*0.5 + 1) = 5/6; vs R2: 0      -> max 5/6
#   LEX vs R1: 2 / (2 * sqrt 2) = 1/sqrt 2; vs R2: 0                          -> max 1/sqrt 2
#   S_Info vs R1: ROUGE-L precision 2/4, BP(paper) exp(1 - 4/2); vs R2: 0     -> 0.5/e
F_BETA_E1 = 5 / 6
LEX_E1 = 1 / math.sqrt(2)
INFO_E1 = 0.5 * math.exp(-1)


def test_tokens_behind_the_hand_values():
    assert content_tokens(E1, "zh-CN", keep=[EXPR]) == ["不耻下问", "指", "谦虚", "好学"]
    assert content_tokens(R1, "zh-CN", keep=[EXPR]) == ["谦虚", "好学"]
    assert content_tokens(R2, "zh-CN", keep=[EXPR]) == ["形容", "行为", "放纵"]
    assert tokenize(E1, "zh-CN", keep=[EXPR]) == ["不耻下问", "指", "谦虚", "好学"]
    assert tokenize(R1, "zh-CN", keep=[EXPR]) == ["谦虚", "好学"]


def generations() -> dict:
    zero = [
        gen_row(BY_PATTERN["ABDC"], "zero_shot", E1),
        gen_row(BY_PATTERN["ABCD"], "zero_shot", E1),
        gen_row(BY_PATTERN["ACBD"], "zero_shot", ""),  # empty output
        gen_row(BY_PATTERN["ACDB"], "zero_shot", "", error="backend timeout"),  # failed generation
        gen_row(JA_BY_PATTERN["CDAB"], "zero_shot", "一刻一刻"),  # identity input, echoed; no references
        gen_row(BY_PATTERN["ABDC"], "zero_shot", E1, "consistency", 0),
        gen_row(BY_PATTERN["ABDC"], "zero_shot", R2, "consistency", 1),
    ]
    cot = [gen_row(BY_PATTERN["ABDC"], "cot", f"Thinking Process: 不耻问下 → {EXPR}\nFinal Meaning: {R1}")]
    return {"zero_shot": frame(zero), "cot": frame(cot)}


COSINES = {
    frozenset({E1, R1}): 0.7,
    frozenset({E1, R2}): 0.1,
    frozenset({R1}): 1.0,
    frozenset({R1, R2}): 0.3,
    frozenset({R2}): 1.0,
}


def run(scorers, cfg: OrderProbeScore | None = None, gens: dict | None = None) -> dict:
    notes: list[str] = []
    tables = score_generations("m", gens or generations(), index(ZH, JA), cfg or OrderProbeScore(), scorers, notes)
    return {setting: t.set_index(["item_id", "pass", "sample_index"]) for setting, t in tables.items()}


def row(tables, setting, pattern, pass_name="main", sample=0, language="zh-CN"):
    ids = {"zh-CN": "zh-CN/0001", "ja": "ja/0002"}
    return tables[setting].loc[(f"{ids[language]}/{pattern}", pass_name, sample)]


def test_default_profile_terms_by_hand():
    """params.yaml: CE is a cosine substitute sharing sts_zh's model; BERT and NLI not computed."""
    scorers = FakeScorers(scoring_config(), cosine=COSINES)
    tables = run(scorers)
    r = row(tables, "zero_shot", "ABDC")
    assert r["ce"] == pytest.approx(0.7) and r["sts"] == pytest.approx(0.7)
    assert math.isnan(r["bert"])
    assert r["lex"] == pytest.approx(LEX_E1) and r["f_beta"] == pytest.approx(F_BETA_E1)
    # BERT not computed: S_Acc = 0.5 CE + 0.3 (STS + LEX)/2 + 0.2 Fβ
    assert r["s_acc"] == pytest.approx(0.5 * 0.7 + 0.3 * (0.7 + LEX_E1) / 2 + 0.2 * F_BETA_E1)
    assert r["s_info"] == pytest.approx(INFO_E1)
    assert math.isnan(r["s_logic"])  # nli not computed
    assert r["recovered"] and r["recovered_strict"] and r["format_ok"]
    assert r["score_flags"] == ""
    # the CoT row: the Final Meaning line is the explanation, identical to R1
    c = row(tables, "cot", "ABDC")
    assert c["explanation"] == R1 and c["format_ok"]
    assert c["s_acc"] == pytest.approx(1.0) and c["s_info"] == pytest.approx(1.0)
    assert c["recovered"] and not c["recovered_strict"]  # the expression is in the Thinking Process line only


def test_default_profile_embeds_once_for_the_cross_encoder_substitute_and_sts():
    scorers = FakeScorers(scoring_config(), cosine=COSINES)
    run(scorers)
    # 5 scorable rows x 2 references, for CE (reference, explanation) and STS (explanation,
    # reference): one cosine call per setting (cot, then zero_shot), each of the 8 distinct
    # directed pairs of the 20 requested scored once (zero_shot's 5 are those cot did not have)
    assert scorers.calls == [("cosine", "cross_encoder", 3), ("cosine", "cross_encoder", 5)]


def test_paper_like_profile_every_term_and_one_call_per_role():
    ce = {(R1, E1): 0.9, (R2, E1): 0.2, (R1, R1): 1.0, (R2, R1): 0.1, (R1, R2): 0.1, (R2, R2): 1.0}
    bert = {(E1, R1): 0.6, (E1, R2): 0.3, (R1, R1): 1.0, (R1, R2): 0.2, (R2, R1): 0.2, (R2, R2): 1.0}
    nli = {
        (E1, R1): (0.2, 0.1, 0.7),
        (R1, E1): (0.9, 0.05, 0.05),
        (E1, R2): (0.01, 0.09, 0.9),
        (R2, E1): (0.02, 0.08, 0.9),
    }
    scorers = FakeScorers(paper_like_config(), cosine=COSINES, ce=ce, bert=bert, nli=nli)
    tables = run(scorers)
    r = row(tables, "zero_shot", "ABDC")
    assert (r["ce"], r["bert"], r["sts"]) == pytest.approx((0.9, 0.6, 0.7))
    assert r["s_acc"] == pytest.approx(0.5 * 0.9 + 0.3 * (0.6 + 0.7 + LEX_E1) / 3 + 0.2 * F_BETA_E1)
    # S_Logic: R1: reference->explanation wins, 0.9 - 0.5*0.05; R2: 0.02 <= 0.05, no penalty; max
    assert r["s_logic"] == pytest.approx(0.875)
    assert math.isnan(row(tables, "zero_shot", "ABDC", "consistency", 0)["s_logic"])  # main pass only
    # one call per role and setting; each distinct pair once: of the 10 pairs per role (5 rows x 2
    # references) 6 are distinct, of NLI's 12 (3 main rows x 2 references x 2 directions) 7
    assert sorted(scorers.calls) == [
        ("bertscore", "bertscore_zh", 2),
        ("bertscore", "bertscore_zh", 4),
        ("cosine", "sts_zh", 2),
        ("cosine", "sts_zh", 4),
        ("cross_encoder", "cross_encoder", 2),
        ("cross_encoder", "cross_encoder", 4),
        ("nli", "nli", 3),
        ("nli", "nli", 4),
    ]


def test_options_mean_aggregation_one_direction_bleu_penalty():
    ce = {(R1, E1): 0.9, (R2, E1): 0.2}
    nli = {(E1, R1): (0.2, 0.1, 0.7), (R1, E1): (0.9, 0.05, 0.05), (E1, R2): (0.01, 0.09, 0.9)}
    cfg = OrderProbeScore.model_validate(
        {
            "s_acc": {"reference_aggregation": "mean"},
            "s_logic": {"directions": "explanation_to_reference"},
            "s_info": {"bp_mode": "bleu"},
        }
    )
    scorers = FakeScorers(paper_like_config(), cosine=COSINES, ce=ce, nli=nli)
    r = row(run(scorers, cfg), "zero_shot", "ABDC")
    assert r["ce"] == pytest.approx(0.55)  # mean of 0.9 and 0.2
    assert r["f_beta"] == pytest.approx(F_BETA_E1 / 2)  # mean of 5/6 and 0
    # one direction: R1 0.2 - 0.35 -> 0; R2 0.01 (below the threshold)
    assert r["s_logic"] == pytest.approx(0.01)
    # bleu penalty: E1 (4 tokens) is not shorter than R1 (2): BP 1 -> 0.5
    assert r["s_info"] == pytest.approx(0.5)
    # one direction: 6 pairs (3 main rows x 2 references), 4 distinct, each scored once (both: 7)
    assert sum(n for kind, _, n in scorers.calls if kind == "nli") == 4


def test_polarity_halving_switch():
    """The released code's rule: Fβ halved when the explanation's polarity conflicts with every reference
    (word lists: the hand-written stand-ins of tests/fixtures/orderprobe/Sacc, passed as the build's output)."""
    text = "僵化死板的谦虚"  # negative (僵化, 死板 in the stand-in list); the reference 优秀谦虚 is positive (优秀)
    assert content_tokens(text, "zh-CN", keep=[EXPR]) == ["僵化", "死板", "谦虚"]
    # β = 1 over {僵化, 死板, 谦虚} vs {优秀, 谦虚}: P = 1/3, R = 1/2 -> F1 = 0.4
    items = items_for("zh-CN", 1, EXPR, ["优秀谦虚"], "Verb-Object")
    gens = {"zero_shot": frame([gen_row(BY_PATTERN["ABDC"], "zero_shot", text)])}

    def f_beta(halving: bool):
        cfg = OrderProbeScore.model_validate({"s_acc": {"polarity_halving": halving, "beta": 1.0}})
        out = score_generations(
            "m", gens, index(items), cfg, FakeScorers(scoring_config()), [], lexicons=fixture_lexicons()
        )["zero_shot"].iloc[0]
        return out["f_beta"], bool(out["f_beta_halved"])

    assert f_beta(False) == (pytest.approx(0.4), False)
    assert f_beta(True) == (pytest.approx(0.2), True)


def test_polarity_halving_without_the_built_word_lists_is_a_clear_error():
    items = items_for("zh-CN", 1, EXPR, ["优秀谦虚"], "Verb-Object")
    gens = {"zero_shot": frame([gen_row(BY_PATTERN["ABDC"], "zero_shot", "僵化死板的谦虚")])}
    cfg = OrderProbeScore.model_validate({"s_acc": {"polarity_halving": True}})
    with pytest.raises(IdiombenchError, match="no released word lists for zh-CN"):
        score_generations("m", gens, index(items), cfg, FakeScorers(scoring_config()), [])


def test_score_reads_the_word_lists_from_the_build_output(tmp_path, monkeypatch):
    """score() loads data/processed/orderprobe/released_lexicon.json only when the options use it."""
    from idiombench.benchmarks.orderprobe import lexicon
    from idiombench.benchmarks.orderprobe import score as score_module
    from idiombench.core import paths

    monkeypatch.setattr(paths, "processed_dir", lambda name: tmp_path / name)
    monkeypatch.setattr(score_module, "load_prompt_index", lambda directory: {})
    items = items_for("zh-CN", 1, EXPR, ["优秀谦虚"], "Verb-Object")
    gens = {"zero_shot": frame([gen_row(BY_PATTERN["ABDC"], "zero_shot", "僵化死板的谦虚")])}

    class Ctx:
        model, generations = "m", gens
        scorers = FakeScorers(scoring_config())

        def __init__(self, options):
            self.items = index(items)
            self.notes: list[str] = []
            self.config = type("C", (), {"score": OrderProbeScore.model_validate(options)})()

    halving = {"s_acc": {"polarity_halving": True, "beta": 1.0}}
    assert not score_module.score(Ctx({}))["zero_shot"].iloc[0]["f_beta_halved"]  # lists not needed, not read
    with pytest.raises(DataError, match="released_lexicon.json: missing"):
        score_module.score(Ctx(halving))
    (tmp_path / "orderprobe").mkdir()
    (tmp_path / "orderprobe" / lexicon.LEXICON_FILE).write_text(
        json.dumps(lexicon.to_json(fixture_lexicons()), ensure_ascii=False), encoding="utf-8"
    )
    assert score_module.score(Ctx(halving))["zero_shot"].iloc[0]["f_beta_halved"]


def test_empty_output_failed_generation_and_no_references_count_zero_and_are_flagged():
    tables = run(FakeScorers(scoring_config(), cosine=COSINES))
    empty = row(tables, "zero_shot", "ACBD")
    assert pd.isna(empty["explanation"]) and not empty["format_ok"] and not empty["recovered"]
    assert (empty["ce"], empty["sts"], empty["lex"], empty["f_beta"], empty["s_acc"], empty["s_info"]) == (
        0,
        0,
        0,
        0,
        0,
        0,
    )
    assert empty["score_flags"] == "empty_explanation"
    failed = row(tables, "zero_shot", "ACDB")
    assert failed["generation_error"] == "backend timeout"
    assert failed["score_flags"] == "generation_error,empty_explanation"
    assert failed["s_acc"] == 0
    ja = row(tables, "zero_shot", "CDAB", language="ja")
    assert ja["n_references"] == 0 and ja["score_flags"] == "no_references"
    assert ja["s_acc"] == 0 and ja["s_info"] == 0
    # an identity input echoed back is recovered (both tests), and flagged as identity
    assert ja["is_identity"] and ja["recovered"] and ja["recovered_strict"]


def test_not_computed_role_is_none_never_zero():
    tables = run(FakeScorers(scoring_config(), cosine=COSINES))
    zero_shot = tables["zero_shot"]
    assert zero_shot["bert"].isna().all()  # bertscore_zh / _ja not computed in params.yaml
    assert zero_shot["s_logic"].isna().all()  # nli not computed
    assert zero_shot["ce"].notna().all()


def test_rows_kept_sorted_with_identity_columns():
    tables = score_generations(
        "m", generations(), index(ZH, JA), OrderProbeScore(), FakeScorers(scoring_config(), cosine=COSINES), []
    )
    zero = tables["zero_shot"]
    assert len(zero) == 7 and len(tables["cot"]) == 1  # nothing dropped
    keys = list(zip(zero["prompt_id"], zero["pass"], zero["sample_index"], strict=True))
    assert keys == sorted(keys)
    assert set(zero.columns) >= {
        "prompt_id",
        "task",
        "item_id",
        "pass",
        "sample_index",
        "explanation",
        "format_ok",
        "parse_flags",
        "ce",
        "bert",
        "sts",
        "lex",
        "f_beta",
        "s_acc",
        "s_logic",
        "s_info",
    }


def test_unknown_item_is_a_clear_error():
    bad = gen_row(BY_PATTERN["ABDC"], "zero_shot", E1)
    bad["item_id"] = "zh-CN/9999/ABDC"
    with pytest.raises(
        DataError, match=r"results/generations/m/orderprobe/zero_shot.parquet, row 0: item restore/zh-CN/9999/ABDC"
    ):
        score_generations(
            "m", {"zero_shot": frame([bad])}, index(ZH), OrderProbeScore(), FakeScorers(scoring_config()), []
        )


def test_setting_mismatch_is_a_clear_error():
    misplaced = gen_row(BY_PATTERN["ABDC"], "cot", E1)
    with pytest.raises(DataError, match="row of setting 'cot' in the 'zero_shot' table"):
        score_generations(
            "m", {"zero_shot": frame([misplaced])}, index(ZH), OrderProbeScore(), FakeScorers(scoring_config()), []
        )


def test_template_provenance_and_stale_prompt_hash_note(tmp_path):
    from idiombench.benchmarks.orderprobe.score import load_prompt_index
    from idiombench.core.generation_types import Message
    from idiombench.templating.prompts import Prompt, write_prompts

    item = BY_PATTERN["ABDC"]
    prompt = Prompt(
        benchmark="orderprobe",
        task="restore",
        setting="zero_shot",
        item_id=item.item_id,
        language="zh-CN",
        messages=(Message("user", "x"),),
        template_id="orderprobe/zero_shot/zh-CN",
        template_hash="f" * 64,
    )
    write_prompts(tmp_path / "prompts" / "zero_shot.parquet", [prompt])
    index_ = load_prompt_index(tmp_path / "prompts")
    assert index_ == {
        prompt.prompt_id: {
            "template_id": "orderprobe/zero_shot/zh-CN",
            "template_hash": "f" * 64,
            "prompt_hash": prompt.prompt_hash,
        }
    }
    notes: list[str] = []
    gens = {"zero_shot": frame([gen_row(item, "zero_shot", E1)])}  # its prompt hash is not the table's
    out = score_generations("m", gens, index(ZH), OrderProbeScore(), FakeScorers(scoring_config()), notes, index_)
    assert out["zero_shot"].iloc[0]["template_hash"] == "f" * 64
    assert any("1 generation rows have a prompt hash that differs" in n for n in notes)
    (tmp_path / "bad").mkdir()
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"a": [1]}), tmp_path / "bad" / "cot.parquet")
    with pytest.raises(DataError, match="cot.parquet: not a prompts table"):
        load_prompt_index(tmp_path / "bad")
    assert load_prompt_index(tmp_path / "missing") == {}


def test_chunks_give_the_same_tables_and_score_each_pair_once():
    """score_chunks (what the score stage writes, a chunk at a time: bounded memory) in chunks
    of 2 rows gives the tables of one pass, and a pair met in an earlier chunk is not scored again."""
    from idiombench.benchmarks.orderprobe.score import score_chunks

    whole = FakeScorers(paper_like_config(), cosine=COSINES)
    expected = score_generations("m", generations(), index(ZH, JA), OrderProbeScore(), whole, [])
    chunked = FakeScorers(paper_like_config(), cosine=COSINES)
    notes: list[str] = []
    pieces = list(score_chunks("m", generations(), index(ZH, JA), OrderProbeScore(), chunked, notes, chunk_rows=2))
    assert [s for s, _ in pieces] == ["cot"] + ["zero_shot"] * 4  # 1 and 7 rows, in chunks of 2
    for setting, table in expected.items():
        joined = pd.concat([t for s, t in pieces if s == setting], ignore_index=True)
        pd.testing.assert_frame_equal(joined, table)

    def per_role(calls):
        return {role: sum(n for _, r, n in calls if r == role) for _, role, _ in calls}

    assert per_role(chunked.calls) == per_role(whole.calls)  # the same distinct pairs, each once
    assert any(
        note.startswith("orderprobe: cross_encoder: 10 pairs in ") and "; 6 distinct pairs scored, each once" in note
        for note in notes
    )
