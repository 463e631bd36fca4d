"""G-IdiomAlign scoring on the real data: reference systems reach the expected extremes.

- Task 1 on all 18,999 items: the oracle scores 100%; a system that always picks the
  Literal Translation option (read from the decoded option types) scores 0% with 100% LT
  outcomes, except on the 69 items whose LT option text IS the target idiom (68 as released, one more once
  the French mojibake is repaired).
- Task 2 on all 37,570 items per condition: the oracle's EM, BLEU and chrF are 100.
- The pipeline in-process (render sample -> generate with the oracle and echo backends ->
  score with the real embedder -> aggregate -> report): oracle MeanSim 100 and EM 100.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from g_idiomalign_fixtures import AggCtx, Ctx, generation_metrics, mcq_body
from idiombench.benchmarks.g_idiomalign import aggregate as agg
from idiombench.benchmarks.g_idiomalign.answers import format_reference_answer
from idiombench.benchmarks.g_idiomalign.config import GIdiomAlignConfig, GIdiomAlignScore
from idiombench.benchmarks.g_idiomalign.score import score
from idiombench.core.generation_types import item_context
from idiombench.core.items import Item, read_items

pytestmark = pytest.mark.mirror
ROOT = Path(__file__).resolve().parents[2]


def generation_rows(setting: str, items: list[Item], text_of) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "prompt_id": f"{setting}:{item.item_id}",
                "task": item.task,
                "setting": setting,
                "item_id": item.item_id,
                "pass": "main",
                "sample_index": 0,
                "rotation": 0,
                "text": text_of(item),
                "finish_reason": "stop",
                "error": None,
            }
            for item in items
        ]
    )


@pytest.fixture(scope="module")
def tasks(built) -> dict[str, list[Item]]:
    out = built("g-idiomalign")
    return {
        task: read_items(out / f"{task}.parquet") for task in ("mcq", "gloss_generation", "gloss_generation_additional")
    }


def mcq_letter_answer(item: Item, letter: str) -> str:
    return format_reference_answer(item_context(item, "mcq"), letter, "oracle")


def test_task1_oracle_scores_100_on_every_item(tasks):
    items = tasks["mcq"]
    ctx = Ctx(
        {"mcq": generation_rows("mcq", items, lambda i: mcq_letter_answer(i, i.answer))},
        {"mcq": {i.item_id: i for i in items}},
    )
    frame = score(ctx)["mcq"]
    assert len(frame) == 18_999 and frame["correct"].all() and not frame["invalid"].any()
    m = mcq_body(frame)[0]["metrics"]
    for scope in ("Zh-target", "En-target", "Other targets", "overall"):
        assert m[f"accuracy.micro.{scope}"] == m[f"accuracy.macro.{scope}"] == 100.0
        assert m[f"outcome.{scope}.Correct"] == 100.0
    assert m["accuracy_without_duplicate_option.micro.overall"] == 100.0


def test_task1_literal_translation_picker(tasks):
    items = tasks["mcq"]
    lt_letter = {i.item_id: next(letter for letter, t in i.meta["option_types"].items() if t == "LT") for i in items}
    ctx = Ctx(
        {"mcq": generation_rows("mcq", items, lambda i: mcq_letter_answer(i, lt_letter[i.item_id]))},
        {"mcq": {i.item_id: i for i in items}},
    )
    frame = score(ctx)["mcq"].set_index("item_id")
    # released items whose LT option holds the target idiom's own text: picking it is picking the target
    lt_is_target = {i.item_id for i in items if i.choices["ABCD".index(lt_letter[i.item_id])] == i.references[0]}
    assert len(lt_is_target) == 69  # 68 as released + mcq/fi-fr/00122 (equal once the French mojibake is repaired)
    others = frame.drop(index=sorted(lt_is_target))
    assert len(others) == 18_999 - 69
    assert not others["correct"].any() and (others["outcome"] == "LT").all()
    assert frame.loc[sorted(lt_is_target), "correct"].all()
    m = mcq_body(frame.reset_index())[0]["metrics"]
    assert m["accuracy.micro.overall"] == pytest.approx(100 * 69 / 18_999)
    assert m["outcome.overall.LT"] == pytest.approx(100 * (18_999 - 69) / 18_999)
    assert m["outcome.overall.LC"] == m["outcome.overall.CA"] == m["outcome.overall.invalid"] == 0.0
    # the released answer only (duplicate rule off): 28 of the 69 name the LT copy as correct_option
    strict = Ctx(
        ctx.generations,
        ctx.items,
        config=GIdiomAlignConfig(score=GIdiomAlignScore(duplicate_option_target_correct=False)),
    )
    strict_frame = score(strict)["mcq"]
    assert int(strict_frame["correct"].sum()) == 28
    assert int((strict_frame["outcome"] == "target_copy").sum()) == 41


@pytest.mark.slow
def test_task2_oracle_surface_metrics_are_100_on_every_item(tasks):
    items = tasks["gloss_generation"]
    assert len(items) == 37_570
    oracle = lambda i: format_reference_answer(item_context(i, "no_gloss"), i.references[0], "oracle")  # noqa: E731
    ctx = Ctx(
        {s: generation_rows(s, items, oracle) for s in ("no_gloss", "with_gloss")},
        {"gloss_generation": {i.item_id: i for i in items}},
    )
    tables = score(ctx)  # no scorers: the similarity is reported as not computed
    assert any("similarity not computed" in note for note in ctx.notes)
    for frame in tables.values():
        assert frame["exact_match"].all() and not frame["invalid"].any()
        assert (frame["bleu"] == 100.0).all() and (frame["chrf"] == 100.0).all()
        m = generation_metrics(frame, similarity_computed=False)
        assert (m["EM"], m["BLEU"], m["chrF"]) == (100.0, 100.0, 100.0)
        assert m["MeanSim"] is None
        assert frame["direction"].nunique() == 72


def test_additional_pairs_are_scored_apart(tasks):
    main = tasks["gloss_generation"][:50]
    extra = tasks["gloss_generation_additional"]
    assert len(extra) == 2_028
    ctx = Ctx(
        {"no_gloss": generation_rows("no_gloss", [*main, *extra], lambda i: "" if i in main else i.references[0])},
        {
            "gloss_generation": {i.item_id: i for i in main},
            "gloss_generation_additional": {i.item_id: i for i in extra},
        },
    )
    frame = score(ctx)["no_gloss"]
    assert int(frame["additional"].sum()) == 2_028
    body = agg.aggregate(AggCtx({"no_gloss": frame}, ctx.items))
    assert body["settings"]["no_gloss"]["metrics"]["EM"] == 0.0  # the main rows: empty outputs
    assert body["settings"]["no_gloss"]["counts"]["answers"] == 50
    extra_metrics = body["settings"]["no_gloss_additional"]
    assert extra_metrics["metrics"]["EM"] == 100.0 and extra_metrics["counts"]["answers"] == 2_028
    assert extra_metrics["counts"]["directions"] == 84  # 42 pairs, both directions
    assert body["provenance"]["bleu_tokenizers_used"]["th"] == "char"


@pytest.mark.slow
def test_pipeline_in_process_oracle_and_echo(built, mirror: Path, tmp_path: Path, monkeypatch):
    """render (the default sample) -> generate -> score (real embedder) -> aggregate -> report."""
    from idiombench.pipeline.config import parse_params
    from idiombench.stages.aggregate import run_aggregate
    from idiombench.stages.generate import run_generate
    from idiombench.stages.render import run_render
    from idiombench.stages.report import build_report
    from idiombench.stages.score import run_score

    raw = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    raw["models"] = {"oracle": {"backend": "oracle"}, "echo": {"backend": "echo"}}
    for name in ("orderprobe", "semanticqa", "chengyu-bench"):
        raw["benchmarks"][name]["enabled"] = False
    params = parse_params(raw)
    monkeypatch.chdir(tmp_path)
    shutil.copytree(built("g-idiomalign"), tmp_path / "data" / "processed" / "g-idiomalign")
    run_render("g-idiomalign", params.benchmark("g-idiomalign"), raw_dir=tmp_path / "raw-unused")
    bodies = {}
    for model in ("oracle", "echo"):
        run_generate(params, model, echo=lambda line: None)
        meta = run_score(params, benchmark="g-idiomalign", model=model)
        assert meta["settings"] == {"mcq": 30, "no_gloss": 72, "with_gloss": 72}
        bodies[model] = run_aggregate(params, benchmark="g-idiomalign", model=model)
    oracle = bodies["oracle"]["settings"]
    assert oracle["mcq"]["metrics"]["accuracy.micro.overall"] == 100.0
    for setting in ("no_gloss", "with_gloss"):
        assert oracle[setting]["metrics"]["MeanSim"] == pytest.approx(100.0)
        assert oracle[setting]["metrics"]["EM"] == 100.0
        assert oracle[setting]["metrics"]["Acc@0.80"] == 100.0
    echo = bodies["echo"]["settings"]
    assert echo["mcq"]["metrics"]["outcome.overall.invalid"] == 100.0  # the idiom echoed: no letter
    assert echo["no_gloss"]["metrics"]["EM"] < 100.0 and echo["no_gloss"]["metrics"]["MeanSim"] < 100.0
    provenance = bodies["oracle"]["provenance"]
    assert provenance["roles"]["embedder_multilingual"]["status"] == "substitute"
    mcq = provenance["coverage"]["mcq"]["parts"]["mcq"]
    assert (mcq["unit"], mcq["scored"], mcq["available"], mcq["complete"]) == ("item", 30, 18_999, False)
    directions = mcq["parts"]["directions"]
    assert (directions["unit"], directions["scored"], directions["available"]) == ("direction", 30, 30)
    assert provenance["template_hashes"]["no_gloss"]
    # scoring twice writes the same bytes
    first = (tmp_path / "results" / "scores" / "oracle" / "g-idiomalign" / "no_gloss.parquet").read_bytes()
    run_score(params, benchmark="g-idiomalign", model="oracle")
    assert (tmp_path / "results" / "scores" / "oracle" / "g-idiomalign" / "no_gloss.parquet").read_bytes() == first
    summary = build_report(params)
    assert summary["sections"] == ["g-idiomalign"] and summary["figures"] == 1
    assert (tmp_path / "reports" / "figures" / "g_idiomalign_figure3.png").is_file()
    table4 = (tmp_path / "reports" / "tables" / "g_idiomalign_table4.md").read_text(encoding="utf-8")
    # ±: the bootstrap half-width (every item scores 100); ▲: the best model of the column
    assert (
        "| oracle | 100.00 ±0.00†§▲ |" in table4
        and "† embedder_multilingual" in table4
        and "§ computed on a sample" in table4
    )
