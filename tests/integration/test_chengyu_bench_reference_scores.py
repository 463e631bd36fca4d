"""Chengyu-Bench scored end to end on the REAL data (mirror): build, render every item (the
project's 40 + 40 sample items, the 2,002 ChID test_public passages in both ChID settings),
generate with the reference systems in-process, score, aggregate, report.

Expected extremes: the oracle scores 100 on Connotation and Appropriateness (sample), on
ChID with candidates and Acc@1 of ChID as an open cloze; majority scores the majority
share exactly; echo never follows the format; random follows it and its accuracy matches an
independent count of its outputs."""

from __future__ import annotations

import csv
import re
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from idiombench.benchmarks.chengyu_bench import BENCHMARK
from idiombench.benchmarks.chengyu_bench.idioms import data_file
from idiombench.benchmarks.contexts import AggregateContext, ScoreContext
from idiombench.pipeline.config import parse_params
from idiombench.stages.generate import run_generate
from idiombench.stages.inputs import load_generations, load_items
from idiombench.stages.render import render_benchmark, write_render
from idiombench.stages.report import ReportContext

pytestmark = [pytest.mark.mirror, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
BENCH = "chengyu-bench"
MODELS = ("oracle", "echo", "random", "majority")
CHID_PASSAGES = 2_002


def params_for(tmp: Path) -> Any:
    raw = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    for name, section in raw["benchmarks"].items():
        section["enabled"] = name == BENCH
    raw["benchmarks"][BENCH]["render"]["sample"] = None  # every item
    raw["models"] = {name: {"backend": name} for name in MODELS}
    return parse_params(raw, str(tmp / "params.yaml"))


@pytest.fixture(scope="module")
def scored(built, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("chengyu_scoring")
    processed = built(BENCH)
    raw_dir = processed.parent.parent / "raw" / BENCH
    params = params_for(tmp)
    config = params.benchmark(BENCH)
    write_render(BENCH, config, render_benchmark(BENCH, config, processed, raw_dir), tmp / "prompts" / BENCH)
    items = load_items(BENCH, processed)
    bodies, tables = {}, {}
    for model in MODELS:
        run_generate(
            params,
            model,
            out_dir=tmp / "gen" / model,
            prompts_root=tmp / "prompts",
            items_root=processed.parent,
            cache_dir=tmp / "cache" / model,
            logs_dir=tmp / "logs",
            echo=lambda _line: None,
        )
        ctx = ScoreContext(
            params=params,
            model=model,
            benchmark=BENCH,
            config=config,
            generations=load_generations(benchmark=BENCH, model=model, generations_dir=tmp / "gen" / model),
            items=items,
        )
        tables[model] = BENCHMARK.score(ctx)
        hook = BENCHMARK.aggregate(
            AggregateContext(
                params=params,
                model=model,
                benchmark=BENCH,
                config=config,
                scores=tables[model],
                items=items,
                scoring_meta={"notes": ctx.notes},
            )
        )
        # the body as the aggregate stage writes it: the hook's part completed, through the typed body
        stored = {"benchmark": BENCH, "model": model, "status": "scored", **hook}
        bodies[model] = BENCHMARK.results_model.model_validate(stored).dump()
    return {"params": params, "items": items, "bodies": bodies, "tables": tables, "tmp": tmp}


def test_every_item_is_scored_with_the_current_templates(scored):
    for model, body in scored["bodies"].items():
        settings = body["settings"]
        assert sorted(settings) == ["appropriateness", "chid_candidates", "chid_open_cloze", "connotation"], model
        assert {s: settings[s]["counts"]["rows"] for s in settings} == {
            "connotation": 40,
            "appropriateness": 40,
            "chid_candidates": CHID_PASSAGES,
            "chid_open_cloze": CHID_PASSAGES,
        }
        assert all(settings[s]["counts"]["prompts_not_matching_template"] == 0 for s in settings)
        assert settings["connotation"]["task"] == "connotation_sample" and settings["connotation"]["data"] == "sample"
        assert settings["chid_candidates"]["task"] == "chid" and settings["chid_candidates"]["data"] == "chid"
        assert body["provenance"]["release"] == "not available"
        assert body["provenance"]["coverage"]["chid_candidates"]["complete"] is True


def test_oracle_scores_100(scored):
    settings = scored["bodies"]["oracle"]["settings"]
    for setting in ("connotation", "appropriateness", "chid_candidates"):
        assert settings[setting]["metrics"]["accuracy"] == 100.0, setting
        assert settings[setting]["metrics"]["format_ok"] == 100.0
    cloze = settings["chid_open_cloze"]
    assert (cloze["metrics"]["acc_at_1"], cloze["metrics"]["acc_at_5"], cloze["counts"]["parse_failures"]) == (
        100.0,
        100.0,
        0,
    )


def test_oracle_valid_idiom_is_the_share_of_gold_idioms_the_dictionary_lists(scored):
    """Counted independently: the package CSV read with the csv module, four-character words."""
    path, _version = data_file()
    with path.open(encoding="utf-8", newline="") as handle:
        words = {"".join(unicodedata.normalize("NFKC", row["word"]).split()) for row in csv.DictReader(handle)}
    four = {w for w in words if len(w) == 4}
    golds = [item.answer for item in scored["items"]["chid"].values()]
    listed = sum(gold in four for gold in golds)
    cloze = scored["bodies"]["oracle"]["settings"]["chid_open_cloze"]
    assert cloze["counts"]["predicted_idioms"] == CHID_PASSAGES  # the oracle lists the gold only
    assert cloze["counts"]["valid_idioms"] == listed
    assert cloze["metrics"]["valid_idiom"] == pytest.approx(100 * listed / CHID_PASSAGES, abs=1e-4)
    assert listed > 0.9 * CHID_PASSAGES  # ChID's idioms are overwhelmingly dictionary idioms


def test_majority_scores_the_majority_share(scored):
    settings = scored["bodies"]["majority"]["settings"]
    for setting, task in (("connotation", "connotation_sample"), ("appropriateness", "appropriateness_sample")):
        labels = Counter(item.answer for item in scored["items"][task].values())
        assert settings[setting]["metrics"]["accuracy"] == pytest.approx(100 * max(labels.values()) / 40), setting
    positions = Counter(item.meta["answer_index"] for item in scored["items"]["chid"].values())
    assert settings["chid_candidates"]["metrics"]["accuracy"] == pytest.approx(
        100 * max(positions.values()) / CHID_PASSAGES, abs=1e-4
    )


def test_random_follows_the_format_and_its_accuracy_matches_its_outputs(scored):
    body = scored["bodies"]["random"]
    for setting, entry in body["settings"].items():
        assert entry["counts"]["parse_failures"] == 0 and entry["metrics"]["format_ok"] == 100.0, setting
    generations = load_generations(benchmark=BENCH, model="random", generations_dir=scored["tmp"] / "gen" / "random")[
        "connotation"
    ]
    items = scored["items"]["connotation_sample"]
    said = [re.fullmatch(r"<(positive|negative)>", text).group(1) for text in generations["text"]]
    assert set(said) == {"positive", "negative"}  # both labels drawn over 40 items
    by_hand = sum(label == items[item_id].answer for label, item_id in zip(said, generations["item_id"], strict=True))
    assert body["settings"]["connotation"]["metrics"]["accuracy"] == pytest.approx(100 * by_hand / 40)
    chid = body["settings"]["chid_candidates"]["counts"]
    assert chid["not_a_candidate"] == 0 and 0 < chid["correct"] < CHID_PASSAGES
    # chance is 1/7 = 14.29%; over 2,002 passages one standard deviation is 0.78 points
    assert 10.0 < body["settings"]["chid_candidates"]["metrics"]["accuracy"] < 18.6


def test_echo_never_follows_the_format(scored):
    settings = scored["bodies"]["echo"]["settings"]
    for setting, entry in settings.items():
        assert entry["metrics"]["format_ok"] == 0.0, setting
        assert entry["counts"]["parse_failures"] + entry["counts"]["unformatted"] == entry["counts"]["rows"], setting
    assert settings["connotation"]["metrics"]["accuracy"] == 0.0  # an idiom alone carries no label
    cloze = settings["chid_open_cloze"]
    assert cloze["metrics"]["acc_at_5"] == 0.0 and cloze["metrics"]["valid_idiom"] is None
    assert cloze["counts"]["parse_failures"] == CHID_PASSAGES


def test_report_section_on_real_scores(scored, tmp_path: Path):
    ctx = ReportContext(params=scored["params"], benchmark=BENCH, metrics=scored["bodies"], figures_dir=tmp_path)
    section = BENCHMARK.report_section(ctx)
    tables = {t.table_id: t for t in section.tables}
    table7 = tables["chengyu_bench_table7"]
    assert table7.columns[1:3] == ["Connotation (sample §)", "Appropriateness (sample §)"]
    assert table7.columns[-1] == "ChID Acc."  # all 2,002 passages: no sample mark
    assert [row[0].text for row in table7.rows] == list(MODELS)
    oracle = [c.display() for c in table7.rows[0]]
    assert oracle == ["oracle", "100.00§", "100.00§", "—‡", "—‡", "—‡", "—‡", "100.00"]
    assert any("own SAMPLE (connotation_sample; 40 of its 40 items scored)" in n for n in table7.footnotes)
    chid = tables["chengyu_bench_chid_open_cloze"]
    assert chid.rows[0][1].display() == "100.00" and chid.rows[0][-1].display() == f"{CHID_PASSAGES}"
    assert chid.rows[1][4].display() == "—" and any("not computable" in n for n in chid.footnotes)  # echo
    assert section.figures and section.figures[0].path.is_file()
