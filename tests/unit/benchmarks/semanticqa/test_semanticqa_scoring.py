"""SemanticQA score / aggregate / prediction_metrics on hand-written items and outputs, with
hand-computed values: accuracy, exact match (normalisation, partial spans, references),
LCC F1, METEOR, ROUGE-L, BERTScore max over references, unreadable outputs, sequential
compositions and category scaling."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from idiombench.benchmarks.contexts import AggregateContext, ScoreContext
from idiombench.benchmarks.registry import paper_roles
from idiombench.benchmarks.semanticqa import BENCHMARK
from idiombench.benchmarks.semanticqa.released import exact_match as released_code_match
from idiombench.benchmarks.semanticqa.score import strict_match
from idiombench.benchmarks.semanticqa.sequential import COMPOSITIONS, parse_two_parts
from idiombench.core.errors import IdiombenchError
from idiombench.core.items import Item
from idiombench.pipeline.config import load_params
from idiombench.scoring.config import BertScoreRole
from idiombench.scoring.registry import BertScores
from idiombench.scoring.roles import role_info
from semanticqa_f1 import f1_scores

ROOT = Path(__file__).resolve().parents[4]
TAXONOMY = "Label\tMeaning\nMagn\tintense\nAntiMagn\tweak\nBon\tpositive\nAntiBon\tnegative\n"


def item(
    task: str,
    item_id: str,
    *,
    answer: str | None = None,
    references: tuple[str, ...] = (),
    choices: tuple[str, ...] = (),
    fields: dict[str, Any] | None = None,
    **meta: Any,
) -> Item:
    return Item(
        item_id=item_id,
        benchmark="semanticqa",
        task=task,
        language="en",
        input="ctx",
        choices=choices,
        answer=answer,
        references=references,
        fields={"taxonomy": TAXONOMY, **(fields or {})},
        meta={"no_gold": False, **meta},
    )


IED = ("criticism game", "exchanged accusations", "Proper Noun", "Meta Usage")
ITEMS = [
    item("idiom_detection", "d1", answer="B", choices=IED, fields={"idiom": "blame game"}),
    item("idiom_detection", "d2", answer="B", choices=IED, fields={"idiom": "blame game"}),
    item("idiom_detection", "d3", answer="D", choices=IED, fields={"idiom": "blame game"}),
    item("idiom_detection", "d4", answer="C", choices=IED, fields={"idiom": "blame game"}),
    item("idiom_detection", "d5", answer="A", choices=IED, fields={"idiom": "blame game"}),
    item("collocation_categorization", "c1", answer="Magn"),
    item("collocation_categorization", "c2", answer="Magn"),
    item("collocation_categorization", "c3", answer="Bon"),
    item("collocation_categorization", "c4", answer="AntiBon"),
    item("idiom_extraction", "e1", answer="blame game", references=("blame game",)),
    item("idiom_extraction", "e2", answer="price of eggs", references=("price of eggs",)),
    item("idiom_extraction", "e3", answer="spill the beans", references=("spill the beans", "spilled the beans")),
    item("idiom_extraction", "e4", answer="washed out", references=("washed out",)),
    item("vmwe_extraction_VPC", "v1", answer="set off", references=("set off",), vmwe_subtype="VPC.full"),
    item("idiom_paraphrase", "p1", references=("a fast car",), fields={"idiom": "hot rod"}),
    item("idiom_paraphrase", "p2", references=("the cat sat on the mat", "a cat sat"), fields={"idiom": "x"}),
    item("idiom_paraphrase", "p3", references=("to be very happy",), fields={"idiom": "on cloud nine"}),
]
OUTPUTS = {  # (task, item) -> raw output; None: the generation failed
    ("idiom_detection", "d1"): "B",
    ("idiom_detection", "d2"): "Answer: B",
    ("idiom_detection", "d3"): "D: Meta Usage",
    ("idiom_detection", "d4"): "Proper Noun",  # option text: off-format, compared (count_format_deviations)
    ("idiom_detection", "d5"): "A or D",  # unreadable: wrong, counted
    ("collocation_categorization", "c1"): "Magn",
    ("collocation_categorization", "c2"): "AntiMagn",
    ("collocation_categorization", "c3"): "Bon **Explanation:** good bread",
    ("collocation_categorization", "c4"): "Unsure",
    ("idiom_extraction", "e1"): 'Answer: "Blame Game."',
    ("idiom_extraction", "e2"): "the price of eggs in Reykjavik",  # partial span: strict 0, released code 1
    ("idiom_extraction", "e3"): "<think>which one?</think> Spilled the beans",  # the second reference
    ("idiom_extraction", "e4"): None,
    ("vmwe_extraction_VPC", "v1"): "set off",
    ("idiom_paraphrase", "p1"): "a fast auto",  # WordNet synonym: auto ~ car
    ("idiom_paraphrase", "p2"): "the cat sat",
    ("idiom_paraphrase", "p3"): "",
}


def generations(outputs: dict[tuple[str, str], str | None], setting: str = "0-shot") -> pd.DataFrame:
    rows = []
    for (task, item_id), text in outputs.items():
        rows.append(
            {
                "prompt_id": f"semanticqa/{task}/{setting}/{item_id}",
                "benchmark": "semanticqa",
                "task": task,
                "setting": setting,
                "item_id": item_id,
                "prompt_hash": "h" * 16,
                "pass": "main",
                "sample_index": 0,
                "rotation": 0,
                "text": text or "",
                "prompt_tokens": None,
                "completion_tokens": None,
                "finish_reason": "error" if text is None else "stop",
                "error": "backend failed" if text is None else None,
                "request_key": f"k-{task}-{item_id}",
            }
        )
    return pd.DataFrame(rows)


class FakeScorers:
    """bertscore_en with a known F1: the Jaccard overlap of the two texts' word sets."""

    def __init__(self, model: str | None = "tiny-bert"):
        self.role = BertScoreRole(kind="bertscore", model=model, num_layers=2)
        self.calls: list[list[tuple[str, str]]] = []

    def info(self, role: str):
        assert role == "bertscore_en"
        return role_info(role, self.role, paper_roles()[role])

    def bertscore(self, role: str, pairs):
        self.calls.append(list(pairs))
        f1 = np.array([len(set(a.split()) & set(b.split())) / len(set(a.split()) | set(b.split())) for a, b in pairs])
        return BertScores(self.info(role), f1, f1, f1)


@pytest.fixture(scope="module")
def params():
    return load_params(ROOT / "params.yaml")


def items_by_task(items: list[Item]) -> dict[str, dict[str, Item]]:
    out: dict[str, dict[str, Item]] = {}
    for it in items:
        out.setdefault(it.task, {})[it.item_id] = it
    return out


def run(
    params,
    gens: dict[str, pd.DataFrame],
    items: list[Item] = ITEMS,
    scorers: Any = None,
    config: Any = None,
    tmp: Path | None = None,
):
    config = config or params.benchmark("semanticqa")
    ctx = ScoreContext(
        params=params,
        model="m",
        benchmark="semanticqa",
        config=config,
        generations=gens,
        items=items_by_task(items),
        scorers=scorers if scorers is not None else FakeScorers(),
    )
    from idiombench.benchmarks.semanticqa.score import score

    scores = score(ctx, prompts_dir=tmp or Path("/nonexistent"))
    body = BENCHMARK.aggregate(
        AggregateContext(
            params=params,
            model="m",
            benchmark="semanticqa",
            config=config,
            scores=scores,
            items=items_by_task(items),
            scoring_meta={"notes": ctx.notes},
        )
    )
    return scores, body, ctx


def by_item(frame: pd.DataFrame) -> dict[str, dict[str, Any]]:
    return {row["item_id"]: row for row in frame.to_dict("records")}


@pytest.fixture(scope="module")
def scored(params):
    scorers = FakeScorers()
    scores, body, ctx = run(params, {"0-shot": generations(OUTPUTS)}, scorers=scorers)
    return scores, body, ctx, scorers


def test_classification_rows_and_accuracy(scored):
    scores, body, _, _ = scored
    rows = by_item(scores["0-shot"])
    assert [rows[i]["correct"] for i in ("d1", "d2", "d3", "d4", "d5")] == [1.0, 1.0, 1.0, 1.0, 0.0]
    assert not rows["d4"]["ok"] and "option_text" in rows["d4"]["flags"]
    assert pd.isna(rows["d5"]["parsed"]) and "multiple_letters" in rows["d5"]["flags"]
    ied = body["settings"]["0-shot"]
    assert ied["metrics"]["idiom_detection"] == {"ACC": 80.0}
    assert ied["counts"]["idiom_detection"] == {
        "rows": 5,
        "scored": 5,
        "no_gold": 0,
        "generation_failures": 0,
        "parse_failures": 1,
        "format_deviations": 1,
        "items": 5,
        "items_in_task": 5,
    }
    # LCC: Magn ✓, AntiMagn ✗ (a label, not the gold), "Bon **Explanation**" ✓, "Unsure" unreadable ✗
    assert [rows[i]["correct"] for i in ("c1", "c2", "c3", "c4")] == [1.0, 0.0, 1.0, 0.0]
    assert "label_with_text" in rows["c3"]["flags"]
    lcc = ied["metrics"]["collocation_categorization"]
    assert lcc["ACC"] == 50.0
    # labels {AntiBon, AntiMagn, Bon, Magn}: F1 = 0, 0, 1, 2/3 ("Unsure" is no class)
    assert lcc["macro-F1"] == pytest.approx(100 * (0 + 0 + 1 + 2 / 3) / 4)
    assert lcc["weighted-F1"] == pytest.approx(100 * (1 * 0 + 1 * 1 + 2 * 2 / 3) / 4)
    # micro: TP 2, FP 1 (AntiMagn), FN 2 -> P 2/3, R 1/2
    assert lcc["micro-F1"] == pytest.approx(100 * 2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))


def test_exact_match_normalisation_partial_spans_and_references(scored):
    scores, body, _, _ = scored
    rows = by_item(scores["0-shot"])
    assert rows["e1"]["parsed"] == "Blame Game" and rows["e1"]["correct"] == 1.0
    assert (rows["e2"]["correct_strict"], rows["e2"]["correct_released_code"], rows["e2"]["correct"]) == (0.0, 1.0, 0.0)
    assert rows["e3"]["correct"] == 1.0 and "think_block" in rows["e3"]["flags"]
    assert rows["e4"]["correct"] == 0.0 and rows["e4"]["generation_error"] == "backend failed"
    assert list(rows["e4"]["flags"]) == ["generation_failed"]
    settings = body["settings"]["0-shot"]
    assert settings["metrics"]["idiom_extraction"] == {"ACC_s": 50.0}
    assert settings["counts"]["idiom_extraction"]["generation_failures"] == 1
    assert body["breakdowns"]["extraction_released_code"]["0-shot"]["idiom_extraction"] == {
        "ACC_s": 75.0,
        "ACC_s_strict": 50.0,
    }
    assert body["breakdowns"]["vmwe_subtypes"]["0-shot"]["vmwe_extraction_VPC"] == {
        "VPC.full": {"ACC_s": 100.0, "n": 1}
    }


def test_match_helpers():
    assert strict_match("Spill the beans!", ["spill the beans"])
    assert not strict_match("spill the beans now", ["spill the beans"])
    assert not strict_match(None, ["x"]) and not strict_match("", [""])
    assert released_code_match("The idiom is spill the beans", "spill the beans")
    assert released_code_match("price of eggs in Reykjavik", "price of eggs")
    assert not released_code_match("spill the", "spill the beans")


def test_interpretation_metrics_max_over_references(scored):
    scores, body, ctx, scorers = scored
    rows = by_item(scores["0-shot"])
    # ROUGE-L F of "the cat sat": vs "the cat sat on the mat" P 1, R 1/2 -> 2/3; vs "a cat sat" 2/3 too
    assert rows["p2"]["rouge_l"] == pytest.approx(2 / 3)
    # BERTScore (fake: Jaccard of word sets) max over references: 3/5 vs 2/4 -> 0.6
    assert rows["p2"]["bertscore_f1"] == pytest.approx(0.6)
    # empty output: wrong, no pair sent to the scorer
    assert (rows["p3"]["meteor"], rows["p3"]["rouge_l"], rows["p3"]["bertscore_f1"]) == (0.0, 0.0, 0.0)
    assert len(scorers.calls) == 1  # one call for all rows of all settings
    assert sorted(scorers.calls[0]) == sorted(
        [("a fast auto", "a fast car"), ("the cat sat", "the cat sat on the mat"), ("the cat sat", "a cat sat")]
    )
    metrics = body["settings"]["0-shot"]["metrics"]["idiom_paraphrase"]
    assert metrics["ROUGE-L"] == pytest.approx(100 * (2 / 3 + 2 / 3 + 0) / 3)
    assert metrics["BERTScore"] == pytest.approx(100 * (0.5 + 0.6 + 0) / 3)  # p1: {a, fast} of 4 words
    assert body["provenance"]["roles"]["bertscore_en"]["status"] == "substitute"
    assert any(note.startswith("BERTScore: bertscore_en: tiny-bert stands in") for note in ctx.notes)


def test_meteor_with_wordnet_synonyms(params, wordnet_root):
    outputs = {k: v for k, v in OUTPUTS.items() if k[0] == "idiom_paraphrase"}
    scores, body, _ = run(params, {"0-shot": generations(outputs)})
    rows = by_item(scores["0-shot"])
    # all three words matched (auto~car through WordNet), one chunk: 1 - 0.5 * (1/3)^3
    assert rows["p1"]["meteor"] == pytest.approx(1 - 0.5 / 27)
    # "the cat sat" vs "a cat sat": 2 of 3 matched, one chunk -> Fmean 2/3 * (1 - 0.5 * (1/2)^3);
    # vs "the cat sat on the mat": P 1, R 1/2, Fmean 10PR/(R+9P) = 10/19, 1 chunk of 3 -> penalty 0.5/27
    best = max(2 / 3 * (1 - 0.5 / 8), 10 / 19 * (1 - 0.5 / 27))
    assert rows["p2"]["meteor"] == pytest.approx(best)
    assert body["provenance"]["meteor"]["status"] == "computed"


def test_meteor_not_computed_without_wordnet(params, tmp_path, monkeypatch):
    monkeypatch.setenv("IDIOMBENCH_NLTK_DATA", str(tmp_path / "empty"))
    outputs = {k: v for k, v in OUTPUTS.items() if k[0] == "idiom_paraphrase"}
    scores, body, ctx = run(params, {"0-shot": generations(outputs)})
    assert scores["0-shot"]["meteor"].isna().all()
    assert scores["0-shot"]["rouge_l"].notna().all()
    assert body["settings"]["0-shot"]["metrics"]["idiom_paraphrase"]["METEOR"] is None
    note = body["provenance"]["meteor"]["reason"]
    assert body["provenance"]["meteor"]["status"] == "not_computed"
    assert "WordNet is not installed" in note and "make setup" in note and "nltk.downloader" in note


def test_bertscore_role_not_computed(params):
    outputs = {k: v for k, v in OUTPUTS.items() if k[0] == "idiom_paraphrase"}
    scorers = FakeScorers(model=None)
    scores, body, ctx = run(params, {"0-shot": generations(outputs)}, scorers=scorers)
    assert scorers.calls == [] and scores["0-shot"]["bertscore_f1"].isna().all()
    assert body["settings"]["0-shot"]["metrics"]["idiom_paraphrase"]["BERTScore"] is None
    assert any("BERTScore not computed" in n for n in ctx.notes)


def test_options_change_what_counts(params):
    config = params.benchmark("semanticqa")
    lenient = config.model_copy(
        update={
            "score": config.score.model_copy(
                update={"extraction_match": "released_code", "count_format_deviations": False}
            )
        }
    )
    scores, body, _ = run(params, {"0-shot": generations(OUTPUTS)}, config=lenient)
    rows = by_item(scores["0-shot"])
    assert rows["e2"]["correct"] == 1.0  # containment pattern counted
    assert rows["d4"]["correct"] == 0.0  # option text no longer counted
    assert body["settings"]["0-shot"]["metrics"]["idiom_extraction"]["ACC_s"] == 75.0


def test_no_gold_items_are_counted_not_scored(params):
    items = [
        item("idiom_detection", "g1", answer=None, choices=IED, no_gold=True),
        item("idiom_detection", "g2", answer="B", choices=IED),
    ]
    scores, body, _ = run(
        params, {"0-shot": generations({("idiom_detection", "g1"): "B", ("idiom_detection", "g2"): "B"})}, items=items
    )
    assert body["settings"]["0-shot"]["metrics"]["idiom_detection"]["ACC"] == 100.0
    assert body["settings"]["0-shot"]["counts"]["idiom_detection"]["no_gold"] == 1


def test_stale_generation_is_a_clear_error(params):
    with pytest.raises(IdiombenchError, match="names item 'zz', which is not in the built idiom_detection items"):
        run(params, {"0-shot": generations({("idiom_detection", "zz"): "B"})})


def test_scores_are_deterministic(params):
    def parquet_bytes() -> list[bytes]:
        scores, _, _ = run(params, {"0-shot": generations(OUTPUTS), "3-shot": generations(OUTPUTS, "3-shot")})
        out = []
        for setting in sorted(scores):
            buffer = io.BytesIO()
            pq.write_table(pa.Table.from_pandas(scores[setting], preserve_index=False), buffer)
            out.append(buffer.getvalue())
        return out

    assert parquet_bytes() == parquet_bytes()


def test_prediction_metrics(scored, params):
    scores, body, _, _ = scored
    scopes = BENCHMARK.metric_scopes(scores, params.benchmark("semanticqa"))

    def cells(task: str | None, setting: str) -> dict[str, float | None]:
        return BENCHMARK.prediction_metrics(body, scopes, task, setting)

    assert cells("idiom_detection", "0-shot") == {"ACC": 80.0}
    assert cells("idiom_extraction", "0-shot") == {"ACC_s": 50.0}
    assert set(cells("idiom_paraphrase", "0-shot")) == {"METEOR", "ROUGE-L", "BERTScore"}
    assert list(cells("collocation_categorization", "0-shot")) == ["ACC", "macro-F1", "micro-F1", "weighted-F1"]
    assert cells(None, "0-shot")["idiom_detection/ACC"] == 80.0
    with pytest.raises(IdiombenchError, match="no scores for setting '5-shot'"):
        cells("idiom_detection", "5-shot")
    with pytest.raises(IdiombenchError, match="no scores for task 'noun_compound_extraction'"):
        cells("noun_compound_extraction", "0-shot")


@pytest.mark.parametrize("seed", range(5))
def test_f1_matches_scikit_learn(seed: int):
    metrics = pytest.importorskip("sklearn.metrics", reason="scikit-learn is not installed (`make setup`)")
    rng = np.random.default_rng(seed)
    labels = ["Magn", "AntiMagn", "Bon", "AntiBon", "Son"]
    gold = [labels[i] for i in rng.integers(0, 4, 60)]  # Son is predicted but never gold
    pred = [None if r < 0.1 else labels[i] for r, i in zip(rng.random(60), rng.integers(0, 5, 60), strict=True)]
    ours = f1_scores(gold, pred)
    used = sorted(set(gold) | {p for p in pred if p is not None})
    y_pred = [p if p is not None else "(unread)" for p in pred]
    for average in ("macro", "micro", "weighted"):
        expected = 100 * metrics.f1_score(gold, y_pred, labels=used, average=average, zero_division=0)
        assert ours[f"{average}-F1"] == pytest.approx(expected)


def test_f1_edge_cases():
    assert f1_scores([], []) == {"macro-F1": None, "micro-F1": None, "weighted-F1": None}
    assert f1_scores(["a", "b"], ["a", "b"]) == {"macro-F1": 100.0, "micro-F1": 100.0, "weighted-F1": 100.0}
    assert f1_scores(["a"], [None]) == {"macro-F1": 0.0, "micro-F1": 0.0, "weighted-F1": 0.0}


# --------------------------------------------------------------------------- sequential compositions

SEQ_ITEMS = [
    item("idiom_detection", "s1", answer="B", choices=IED, fields={"idiom": "blame game"}),
    item("idiom_detection", "s2", answer="D", choices=IED, fields={"idiom": "blame game"}),
    item("idiom_detection", "s3", answer="C", choices=IED, fields={"idiom": "blood bath"}),
    item("idiom_detection", "s4", answer="A", choices=IED, fields={"idiom": "red herring"}),
    item("collocation_interpretation", "l1", references=("a fast car",), fields={"collocation": "heavy rain"}),
    item("collocation_interpretation", "l2", references=("a fast car",), fields={"collocation": "heavy rain"}),
]
SEQ_OUTPUTS = {
    ("idiom_detection", "s1"): '{"extracted_idiom": "blame game", "option": "B"}',  # both right
    ("idiom_detection", "s2"): "Extracted Idiom: Blame game\nOption: B",  # extraction right, option wrong
    ("idiom_detection", "s3"): "Extracted Idiom: bath\nOption: C",  # extraction wrong, option right
    ("idiom_detection", "s4"): "no idea",  # nothing readable
    ("collocation_interpretation", "l1"): "Extracted Collocation: heavy rain\nParaphrase: a fast car",
    ("collocation_interpretation", "l2"): '{"extracted_collocation": "rain", "paraphrase": "a fast car"}',
}


def test_parse_two_parts():
    comp = COMPOSITIONS["idiom_detection"]
    parts = parse_two_parts('{"extracted_idiom": "blame game", "option": "B"}', comp)
    assert (parts.extracted, parts.second, parts.ok) == ("blame game", "B", True)
    parts = parse_two_parts("<think>hm</think>**Extracted Idiom:** “blame game”\n**Option:** D", comp)
    assert (parts.extracted, parts.second, parts.ok) == ("blame game", "D", True)
    parts = parse_two_parts(
        "Extracted Noun Compound: honey trap\nSelected Option: B", COMPOSITIONS["noun_compound_compositionality"]
    )
    assert (parts.extracted, parts.second) == ("honey trap", "B")
    parts = parse_two_parts("Option: B", comp)
    assert parts.extracted is None and not parts.ok and "no_extraction" in parts.flags


def test_sequential_compositions(params, wordnet_root):
    config = params.benchmark("semanticqa")
    config = config.model_copy(
        update={
            "score": config.score.model_copy(
                update={"sequential": config.score.sequential.model_copy(update={"enabled": True})}
            )
        }
    )
    gens = {"multi_step_0-shot": generations(SEQ_OUTPUTS, "multi_step_0-shot")}
    scores, body, _ = run(params, gens, items=SEQ_ITEMS, config=config)
    rows = by_item(scores["multi_step_0-shot"])
    assert [rows[i]["extraction_correct"] for i in ("s1", "s2", "s3", "s4")] == [True, True, False, False]
    assert [rows[i]["correct"] for i in ("s1", "s2", "s3", "s4")] == [1.0, 0.0, 1.0, 0.0]
    judgement = body["settings"]["multi_step_0-shot"]["metrics"]["idiom_detection"]
    # Ext 2/4; Cond: 1 right of the 2 extracted; Overall: 1 of 4 with both right
    assert judgement == {"Ext": 50.0, "Cond": 50.0, "Overall": 25.0}
    interp = body["settings"]["multi_step_0-shot"]["metrics"]["collocation_interpretation"]
    exact = 1 - 0.5 / 27  # METEOR of an identical 3-word paraphrase
    assert interp["Ext"] == 50.0
    assert interp["Cond"] == pytest.approx(100 * exact) and interp["Overall"] == pytest.approx(50 * exact)
    assert interp["Cond ROUGE-L"] == pytest.approx(100.0) and interp["Overall ROUGE-L"] == pytest.approx(50.0)
    assert body["provenance"]["setting_kinds"]["multi_step_0-shot"] == "sequential"
    # off (the default): the same setting is scored as the atomic task, the JSON object unreadable as a letter
    _, plain, _ = run(params, gens, items=SEQ_ITEMS)
    assert "Ext" not in plain["settings"]["multi_step_0-shot"]["metrics"]["idiom_detection"]


def test_lcc_scaling_aggregation(params):
    config = params.benchmark("semanticqa")
    config = config.model_copy(
        update={
            "score": config.score.model_copy(
                update={"lcc_scaling": config.score.lcc_scaling.model_copy(update={"enabled": True})}
            )
        }
    )
    items = [item("collocation_categorization", f"c{i}", answer="Magn") for i in range(4)]
    gens = {}
    for combination, right in enumerate((4, 2)):  # two 2-class runs: 100% and 50%
        setting = f"scaling_2_{combination}_0-shot"
        gens[setting] = generations(
            {("collocation_categorization", f"c{i}"): "Magn" if i < right else "Bon" for i in range(4)}, setting
        )
    _, body, _ = run(params, gens, items=items, config=config)
    entry = body["breakdowns"]["lcc_scaling"]["0-shot"]["2"]
    assert entry == {"mean": 75.0, "std": 25.0, "runs": {"0": 100.0, "1": 50.0}}


def test_lcc_f1_counts_what_accuracy_counts(params):
    items = [
        item("collocation_categorization", "k1", answer="Bon"),
        item("collocation_categorization", "k2", answer="Magn"),
    ]
    outputs = {
        ("collocation_categorization", "k1"): "The label is Bon",  # label_in_text: off-format, a label
        ("collocation_categorization", "k2"): "Unsure",
    }  # unknown_label: no class
    _, body, _ = run(params, {"0-shot": generations(outputs)}, items=items)
    lcc = body["settings"]["0-shot"]["metrics"]["collocation_categorization"]
    # labels {Bon, Magn}: Bon F1 1, Magn F1 0 (missed, and "Unsure" adds no class)
    assert lcc == {"ACC": 50.0, "macro-F1": 50.0, "micro-F1": pytest.approx(100 * 2 / 3), "weighted-F1": 50.0}
    config = params.benchmark("semanticqa")
    strict = config.model_copy(update={"score": config.score.model_copy(update={"count_format_deviations": False})})
    _, body, _ = run(params, {"0-shot": generations(outputs)}, items=items, config=strict)
    lcc = body["settings"]["0-shot"]["metrics"]["collocation_categorization"]
    assert lcc == {"ACC": 0.0, "macro-F1": 0.0, "micro-F1": 0.0, "weighted-F1": 0.0}


def test_lcc_breakdown_with_an_item_without_a_prediction(params):
    """Issue 30: an item without a prediction (a failed row: pandas hands its missing label back as
    NaN) beside a read label of the same gold ended in `'<' not supported between float and str`."""
    items = [item("collocation_categorization", f"k{i}", answer="Magn") for i in range(3)]
    outputs = {
        ("collocation_categorization", "k0"): "Magn",
        ("collocation_categorization", "k1"): "Bon",
        ("collocation_categorization", "k2"): None,
    }
    _, body, _ = run(params, {"3-shot": generations(outputs, "3-shot")}, items=items)
    confusion = body["breakdowns"]["lcc_labels"]["3-shot"]["confusion"]
    assert confusion == {"Magn": {"(unread)": 1, "Bon": 1, "Magn": 1}}
    assert body["settings"]["3-shot"]["metrics"]["collocation_categorization"]["ACC"] == pytest.approx(100 / 3)


def test_the_released_reading_is_the_authors_compute_metric() -> None:
    """compatibility: released (released.py), case by case as semantic_qa/eval.py's compute_metric reads."""
    from idiombench.benchmarks.semanticqa import released
    from idiombench.benchmarks.semanticqa.sequential import COMPOSITIONS

    assert released.mcq_accuracy(" B ", "B", None) and released.mcq_accuracy("B: Compositional", "B", None)
    assert not released.mcq_accuracy("Output: B", "B", None) and not released.mcq_accuracy("(B)", "B", None)
    assert released.mcq_accuracy("compositional", "B", "Compositional")  # NCC: the gold text, any case
    assert not released.mcq_accuracy("Compositional", "B", None)  # IED: main.py passes no record
    assert released.label_accuracy("Magn ", "Magn") and not released.label_accuracy("Magn **Explanation:** x", "Magn")
    assert released.exact_match("The idiom is Spill the beans", "spill the beans")
    assert not released.exact_match("“spill the beans”", "spill the beans")  # no normalisation of quotes
    judgement = COMPOSITIONS["idiom_detection"]
    assert released.sequential_parts('{"extracted_idiom": "Poison Pill ", "option": "a"}', judgement) == (
        "Poison Pill ",
        "a",
    )
    assert released.phrase_match("Poison Pill ", "poison pill") and released.option_match("idiom_detection", "a", "A")
    assert released.sequential_parts("Extracted Idiom: x\nOption: B", judgement) == ("x", "B")
    assert released.empty_response(" \n") and not released.empty_response("B")
