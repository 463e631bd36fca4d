"""Chengyu-Bench metrics by hand on tiny hand-written items and outputs: score rows,
aggregate bodies, prediction_metrics, the idiom dictionary loader."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest

from chengyu_scoring_cases import ITEMS, PromptCheck, config, generations, score_and_aggregate
from idiombench.benchmarks.chengyu_bench import BENCHMARK
from idiombench.benchmarks.chengyu_bench.idioms import load_idiom_list, read_words
from idiombench.benchmarks.chengyu_bench.metrics import normalise_idiom, score_choice, score_label, score_ranked
from idiombench.benchmarks.contexts import ScoreContext
from idiombench.core.errors import DataError, IdiombenchError
from idiombench.core.io import write_parquet
from idiombench.core.parsing import ParseResult

IDIOMS = load_idiom_list()


def parsed(value: Any, ok: bool = True) -> ParseResult:
    return ParseResult(value, ok, "raw")


# --------------------------------------------------------------------------- metric functions


def test_normalise_idiom():
    assert normalise_idiom(" 好景 不长 ") == "好景不长"
    assert normalise_idiom("好景\u3000不长") == "好景不长"  # ideographic space
    assert normalise_idiom("##好景不长##。") == "好景不长"
    assert normalise_idiom("「好景不长」") == "好景不长"
    assert normalise_idiom("ＡＢ") == "AB"  # NFKC: full-width letters
    assert normalise_idiom("好景不長") != "好景不长"  # no traditional/simplified conversion


def test_score_ranked_fewer_than_five_duplicates_and_invalid():
    is_idiom = IDIOMS.__contains__
    # two predictions, gold second: Acc@1 no, Acc@3 and Acc@5 yes (scored on what is there)
    two = score_ranked(parsed(("乐极生悲", "好景不长")), ["好景不长"], is_idiom, True)
    assert (two.rank, two.hit(1), two.hit(3), two.hit(5)) == (2, False, True, True)
    assert (two.n_predicted, two.n_valid, two.invalid) == (2, 2, ())
    # a repeated idiom keeps its slot: gold written fourth is rank 4, not 2
    repeated = score_ranked(
        parsed(("乐极生悲", "乐极生悲", "乐极生悲", "好景不长", "天长地久")), ["好景不长"], is_idiom, True
    )
    assert (repeated.rank, repeated.hit(3), repeated.hit(5)) == (4, False, True)
    assert (repeated.n_predicted, repeated.n_valid) == (3, 3)  # distinct idioms
    # invalid idioms: a five-character phrase and a non-idiom
    invalid = score_ranked(parsed(("好景不常在", "快乐时光", "好景不长")), ["好景不长"], is_idiom, True)
    assert (invalid.rank, invalid.n_predicted, invalid.n_valid, invalid.invalid) == (
        3,
        3,
        1,
        ("好景不常在", "快乐时光"),
    )
    # more than five: only the first five count
    six = score_ranked(
        parsed(("乐极生悲", "天长地久", "一鸣惊人", "一举成名", "画蛇添足", "好景不长")), ["好景不长"], is_idiom, True
    )
    assert (six.rank, six.hit(5), six.listed, len(six.predictions)) == (None, False, 6, 5)
    # any acceptable idiom counts; comparison after normalisation
    other = score_ranked(parsed(("一举成名 ",)), ["一鸣惊人", "一举成名"], is_idiom, True)
    assert other.rank == 1
    # nothing read: a parse failure, no predicted idioms
    failed = score_ranked(parsed(None, False), ["好景不长"], is_idiom, True)
    assert (failed.parse_failed, failed.rank, failed.n_predicted) == (True, None, 0)


def test_unformatted_answers_count_only_when_accepted():
    lenient = score_label(parsed("negative", ok=False), "negative", accept_unformatted=True)
    strict = score_label(parsed("negative", ok=False), "negative", accept_unformatted=False)
    assert (lenient.correct, lenient.unformatted, lenient.parse_failed) == (True, True, False)
    assert (strict.correct, strict.prediction, strict.unformatted, strict.parse_failed) == (False, None, True, False)
    unclosed = score_ranked(parsed(("好景不长",), ok=False), ["好景不长"], IDIOMS.__contains__, False)
    assert (unclosed.rank, unclosed.n_predicted, unclosed.unformatted) == (None, 0, True)


def test_score_choice():
    assert score_choice(parsed(("改朝换代",)), "改朝换代", True).correct
    assert not score_choice(parsed(("严阵以待",)), "改朝换代", True).correct
    hedge = score_choice(parsed(("改朝换代", "严阵以待"), ok=False), "改朝换代", True)
    assert (hedge.correct, hedge.prediction, hedge.ambiguous) == (False, None, True)
    assert score_choice(
        parsed(("改朝换代 ", "改朝换代"), ok=False), "改朝换代", True
    ).correct  # one idiom after normalising


# --------------------------------------------------------------------------- score + aggregate on tiny items


def test_score_rows_by_hand(default_params):
    tables, _ = score_and_aggregate(default_params)
    conn = tables["connotation"].set_index("item_id")
    assert conn["correct"].tolist() == [True, True, False, False]
    assert conn.loc["c2", "prediction"] == "negative" and "think_block" in list(conn.loc["c2", "flags"])
    assert (conn.loc["c3", "unformatted"], conn.loc["c3", "prediction"]) == (True, "positive")
    assert (conn.loc["c4", "parse_failed"], conn.loc["c4", "answered"]) == (True, False)
    assert conn["data"].unique().tolist() == ["sample"]

    chid = tables["chid_candidates"].set_index("item_id")
    assert chid["correct"].tolist() == [True, False, False, False, True, True, False, False]
    assert chid.loc["00002", "not_a_candidate"] and chid.loc["00003", "ambiguous"]
    assert chid.loc["00006", "parse_failed"] and "unclosed_think" in list(chid.loc["00006", "flags"])
    assert chid.loc["00007", "generation_error"] and chid.loc["00007", "parse_failed"]

    cloze = tables["open_cloze"].set_index("item_id")
    assert [None if pd.isna(r) else int(r) for r in cloze["rank"]] == [2, 4, 3, None, 2, None, 1]
    assert cloze["hit_at_3"].tolist() == [True, False, True, False, True, False, True]
    assert list(cloze.loc["o2", "predictions"]) == ["乐极生悲", "乐极生悲", "乐极生悲", "好景不长", "天长地久"]
    assert list(cloze.loc["o3", "invalid"]) == ["好景不常在", "快乐时光"]
    assert list(cloze.loc["o5", "predictions"]) == ["天长地久", "好景不长"]
    assert cloze["n_predicted"].tolist() == [2, 3, 3, 0, 2, 5, 1]
    assert cloze["n_valid"].tolist() == [2, 3, 1, 0, 2, 5, 1]
    assert all(tables[s]["prompt_matches_template"].all() for s in tables)


def test_aggregate_by_hand(default_params):
    _, body = score_and_aggregate(default_params, wrong_hash=("connotation", "c1"))
    conn = body["settings"]["connotation"]
    assert conn["task"] == "connotation_sample" and conn["data"] == "sample"
    assert conn["metrics"] == {"accuracy": 50.0, "format_ok": 50.0, "parse_failure_rate": 25.0}
    assert conn["counts"]["parse_failures"] == 1 and conn["counts"]["unformatted"] == 1
    assert conn["counts"]["prompts_not_matching_template"] == 1 and conn["counts"]["prompts_unknown"] == 0
    assert body["breakdowns"]["by_gold"]["connotation"]["accuracy"] == {
        "negative": {"n": 2, "accuracy": 50.0},
        "positive": {"n": 2, "accuracy": 50.0},
    }
    assert body["breakdowns"]["by_gold"]["connotation"]["predictions"] == {
        "(no answer)": 1,
        "negative": 1,
        "positive": 2,
    }

    chid = body["settings"]["chid_candidates"]
    assert chid["metrics"]["accuracy"] == 37.5  # 3 of 8
    # parse failures: the unclosed think and the failed generation; the hedge (00003) was read but answers
    # nothing; unformatted: the non-candidate, the hedge, the candidate named in text, the candidate number
    assert {
        k: chid["counts"][k]
        for k in (
            "rows",
            "correct",
            "answered",
            "parse_failures",
            "ambiguous",
            "not_a_candidate",
            "generation_errors",
            "unformatted",
            "format_ok",
        )
    } == {
        "rows": 8,
        "correct": 3,
        "answered": 5,
        "parse_failures": 2,
        "ambiguous": 1,
        "not_a_candidate": 1,
        "generation_errors": 1,
        "unformatted": 4,
        "format_ok": 2,
    }
    assert chid["metrics"]["parse_failure_rate"] == 25.0

    cloze = body["settings"]["open_cloze"]
    assert cloze["metrics"]["acc_at_1"] == pytest.approx(100 * 1 / 7, abs=1e-4)  # o7
    assert cloze["metrics"]["acc_at_3"] == pytest.approx(100 * 4 / 7, abs=1e-4)  # o1 o3 o5 o7
    assert cloze["metrics"]["acc_at_5"] == pytest.approx(100 * 5 / 7, abs=1e-4)  # + o2
    assert cloze["metrics"]["valid_idiom"] == pytest.approx(100 * 14 / 16, abs=1e-4)
    assert {
        k: cloze["counts"][k]
        for k in ("predicted_idioms", "valid_idioms", "parse_failures", "fewer_than_5", "more_than_5", "duplicates")
    } == {
        "predicted_idioms": 16,
        "valid_idioms": 14,
        "parse_failures": 1,
        "fewer_than_5": 5,
        "more_than_5": 1,
        "duplicates": 1,
    }
    assert body["breakdowns"]["acc_at_k"]["open_cloze"]["2"] == pytest.approx(100 * 3 / 7, abs=1e-4)
    prov = body["provenance"]
    assert prov["idiom_list"]["package"] == "china-idiom-without-tone" and prov["idiom_list"]["size"] == len(
        IDIOMS.words
    )
    assert prov["template_hashes"]["chid_candidates"]["template_id"] == "chengyu-bench/chid_candidates"
    assert prov["data"]["connotation"]["source"] == "sample" and prov["data"]["chid_candidates"]["official"]
    assert prov["release"] == "available"  # the tiny items include an open_cloze task


def test_strict_scoring_rejects_unformatted_answers(default_params):
    _, body = score_and_aggregate(default_params, accept_unformatted=False)
    assert body["settings"]["connotation"]["metrics"]["accuracy"] == 50.0  # 褒义 was wrong anyway
    assert body["settings"]["chid_candidates"]["metrics"]["accuracy"] == 12.5  # only 00000 in the format
    assert body["provenance"]["scoring"]["accept_unformatted"] is False


def test_prediction_metrics_in_percent(default_params):
    tables, body = score_and_aggregate(default_params)
    scopes = BENCHMARK.metric_scopes(tables, config())
    assert BENCHMARK.prediction_metrics(body, scopes, None, "connotation") == {"accuracy": 50.0}
    assert BENCHMARK.prediction_metrics(body, scopes, "connotation_sample", "connotation") == {"accuracy": 50.0}
    cells = BENCHMARK.prediction_metrics(body, scopes, "open_cloze", "open_cloze")
    assert set(cells) == {"acc_at_1", "acc_at_3", "acc_at_5", "valid_idiom"}
    assert cells["valid_idiom"] == pytest.approx(87.5, abs=1e-4)
    with pytest.raises(IdiombenchError, match="no scores for setting 'appropriateness'"):
        BENCHMARK.prediction_metrics(body, scopes, None, "appropriateness")
    with pytest.raises(IdiombenchError, match="no scores for task 'chid_dev_few'"):
        BENCHMARK.prediction_metrics(body, scopes, "chid_dev_few", "chid_candidates")


def test_scores_are_byte_identical_across_runs(default_params, tmp_path: Path):
    digests = []
    for run in range(2):
        tables, _ = score_and_aggregate(default_params)
        for setting, frame in tables.items():
            write_parquet(tmp_path / f"{run}-{setting}.parquet", pa.Table.from_pandas(frame, preserve_index=False))
        digests.append([(tmp_path / f"{run}-{s}.parquet").read_bytes() for s in sorted(tables)])
    assert digests[0] == digests[1]


def test_generation_without_its_item_is_a_clear_error(default_params):
    gens = generations(PromptCheck())
    gens["connotation"].loc[0, "item_id"] = "c99"
    ctx = ScoreContext(
        params=default_params, model="m", benchmark="chengyu-bench", config=config(), generations=gens, items=ITEMS
    )
    with pytest.raises(
        DataError, match=r"connotation\.parquet, row 0: generation .*: no item c99 in task connotation_sample"
    ):
        BENCHMARK.score(ctx)


def test_unknown_setting_is_a_clear_error(default_params):
    ctx = ScoreContext(
        params=default_params,
        model="m",
        benchmark="chengyu-bench",
        config=config(),
        generations={"translation": generations(PromptCheck())["connotation"]},
        items=ITEMS,
    )
    with pytest.raises(DataError, match="unknown setting 'translation'"):
        BENCHMARK.score(ctx)


# --------------------------------------------------------------------------- the idiom dictionary


def test_idiom_list_is_the_packaged_xinhua_style_list():
    assert IDIOMS.package == "china-idiom-without-tone" and IDIOMS.version == "0.1.0"
    assert (IDIOMS.rows, len(IDIOMS.words)) == (30_895, 29_502)
    assert all(len(w) == 4 for w in IDIOMS.words)
    assert "好景不长" in IDIOMS and " 好景 不长 " in IDIOMS and "快乐时光" not in IDIOMS
    everything = load_idiom_list(four_character_only=False)
    assert len(everything.words) == 30_884 and "醉翁之意不在酒" in everything and "醉翁之意不在酒" not in IDIOMS


def test_idiom_csv_errors_name_file_and_row(tmp_path: Path):
    bad = tmp_path / "idiom.csv"
    bad.write_text("id,name\n1,好景不长\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"idiom\.csv: no `word` column .*expected a CSV header naming a `word` column"):
        read_words(bad, True)
    bad.write_text("id,word\n1,好景不长\n2, \n", encoding="utf-8")
    with pytest.raises(DataError, match=r"idiom\.csv, row 3: empty `word`"):
        read_words(bad, True)
    good = tmp_path / "ok.csv"
    good.write_text("id,word\n1,好景不长\n2,醉翁之意不在酒\n", encoding="utf-8")
    assert read_words(good, True) == (frozenset({"好景不长"}), 2)


def test_missing_package_is_a_clear_error():
    with pytest.raises(IdiombenchError, match="needs the PyPI package no-such-idiom-package"):
        load_idiom_list(True, "no-such-idiom-package")


def test_a_setting_without_rows_has_no_metrics_not_zeros(default_params):
    empty = {"connotation": [], "chid_open_cloze": []}
    tables, body = score_and_aggregate(default_params, outputs=empty)
    assert all(len(t) == 0 for t in tables.values())
    for setting in empty:
        entry = body["settings"][setting]
        assert entry["task"] is None and entry["counts"]["rows"] == 0
        assert all(value is None for value in entry["metrics"].values()), entry["metrics"]
        cells = BENCHMARK.prediction_metrics(body, BENCHMARK.metric_scopes(tables, config()), None, setting)
        assert cells and all(value is None for value in cells.values()), cells  # not computed, never 0


def test_a_prediction_without_its_prompt_is_counted_unknown_not_mismatched(default_params):
    """evaluate-predictions rows carry no prompt hash: neither a match nor a mismatch."""
    tables, body = score_and_aggregate(
        default_params, wrong_hash=("connotation", "c1"), unknown_hash=("connotation", "c2")
    )
    column = tables["connotation"].set_index("item_id")["prompt_matches_template"]
    assert column["c1"] == False and column["c2"] is None  # noqa: E712 (a numpy bool)
    counts = body["settings"]["connotation"]["counts"]
    assert (counts["prompts_not_matching_template"], counts["prompts_unknown"]) == (1, 1)
