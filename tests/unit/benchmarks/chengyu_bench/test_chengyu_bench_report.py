"""Chengyu-Bench's report section on hand-made aggregates: table 7's shape, the sample and
not-run marks with their footnotes, ChID as open cloze labelled as ChID, the figure."""

from __future__ import annotations

from pathlib import Path

from chengyu_scoring_cases import ITEMS, OUTPUTS, score_and_aggregate
from idiombench.benchmarks.chengyu_bench import BENCHMARK
from idiombench.stages.report import ReportContext

# Without the release: the sample tasks and ChID only (4 of 8 ChID passages scored: a subset).
NO_RELEASE_ITEMS = {"connotation_sample": ITEMS["connotation_sample"], "chid": ITEMS["chid"]}
NO_RELEASE_OUTPUTS = {
    "connotation": OUTPUTS["connotation"],
    "chid_candidates": OUTPUTS["chid_candidates"][:4],
    "chid_open_cloze": [
        ("chid", "00000", "<answer><改朝换代, 严阵以待></answer>"),
        ("chid", "00001", "<answer><一鸣惊人, 不是成语吧, 改朝换代></answer>"),
        ("chid", "00002", "no idea"),
        ("chid", "00003", "<answer><严阵以待></answer>"),
    ],
}


def section(default_params, tmp_path: Path, **bodies):
    # the aggregate hook's body, completed as the aggregate stage writes it
    stored = {
        name: {**body, "benchmark": "chengyu-bench", "model": name, "status": "scored"} for name, body in bodies.items()
    }
    ctx = ReportContext(params=default_params, benchmark="chengyu-bench", metrics=stored, figures_dir=tmp_path)
    return BENCHMARK.report_section(ctx)


def by_id(sec):
    return {t.table_id: t for t in sec.tables}


def test_table7_without_the_release_marks_sample_and_not_run(default_params, tmp_path: Path):
    _, body = score_and_aggregate(default_params, outputs=NO_RELEASE_OUTPUTS, items=NO_RELEASE_ITEMS)
    sec = section(default_params, tmp_path, sys_a=body, sys_b=body)
    tables = by_id(sec)
    table7 = tables["chengyu_bench_table7"]
    assert table7.columns == [
        "Model",
        "Connotation (sample §)",
        "Appropriateness",
        "Open Cloze Acc.@1",
        "Open Cloze Acc.@3",
        "Open Cloze Acc.@5",
        "Valid Idiom",
        "ChID Acc. (sample §)",
    ]
    assert [c.display() for c in table7.rows[0]] == ["sys_a", "50.00§", "—", "—‡", "—‡", "—‡", "—‡", "25.00§"]
    assert len(table7.rows) == 2
    notes = "\n".join(table7.footnotes)
    assert "§ Connotation: the idiombench project's own SAMPLE (connotation_sample; 4 of its 4 items scored)" in notes
    assert "§ ChID (7 candidates): a seeded sample of the official data (chid: 4 of 8 items" in notes
    assert "‡ not run: the Open Cloze data is part of the official Chengyu-Bench release" in notes
    assert "—: not computed (the setting was not scored" in notes  # Appropriateness
    # ChID asked as an open cloze has its own table, labelled as ChID, with the dictionary named
    chid = tables["chengyu_bench_chid_open_cloze"]
    assert "ChID passages asked as an open cloze" in chid.title and "not the paper's Open Cloze data" in chid.title
    assert chid.columns == [
        "Model",
        "Acc.@1 (sample §)",
        "Acc.@3 (sample §)",
        "Acc.@5 (sample §)",
        "Valid Idiom (sample §)",
        "Passages",
    ]
    # 00000 rank 1, 00001 rank 3, 00002 unparseable, 00003 wrong; 2 + 3 + 1 idioms predicted, 5 valid (不是成语吧 not)
    assert [c.display() for c in chid.rows[0]] == ["sys_a", "25.00§", "50.00§", "50.00§", "83.33§", "4"]
    chid_notes = "\n".join(chid.footnotes)
    assert "china-idiom-without-tone 0.1.0" in chid_notes and "29,502 four-character words" in chid_notes
    assert "Xinhua Dictionary" in chid_notes
    assert any("SAMPLE" in line for line in sec.intro)
    counts = tables["chengyu_bench_parse_counts"]
    assert [[c.display() for c in row] for row in counts.rows[:3]] == [
        ["sys_a", "chid_candidates", "chid", "4", "0", "2", "50.00", "0"],
        ["sys_a", "chid_open_cloze", "chid", "4", "1", "0", "75.00", "0"],
        ["sys_a", "connotation", "connotation_sample", "4", "1", "1", "50.00", "0"],
    ]
    assert "counted as answers (score.accept_unformatted: true)" in counts.footnotes[0]
    assert not any("not computable" in n for n in chid.footnotes)  # every Valid Idiom cell has a value
    (figure,) = sec.figures
    assert figure.path.is_file() and figure.path.name == "chengyu_bench_acc_at_k.png" and figure.path.parent == tmp_path


def test_table7_with_the_release_has_open_cloze_and_no_marks_on_complete_official_data(default_params, tmp_path: Path):
    _, body = score_and_aggregate(default_params)  # items include an `open_cloze` task: the release is present
    tables = by_id(section(default_params, tmp_path, sys_a=body))
    table7 = tables["chengyu_bench_table7"]
    assert table7.columns[3:] == [
        "Open Cloze Acc.@1",
        "Open Cloze Acc.@3",
        "Open Cloze Acc.@5",
        "Valid Idiom",
        "ChID Acc.",
    ]
    assert [c.display() for c in table7.rows[0]] == [
        "sys_a",
        "50.00§",
        "—",
        "14.29",
        "57.14",
        "71.43",
        "87.50",
        "37.50",
    ]
    notes = "\n".join(table7.footnotes)
    assert "‡" not in notes and "stand-in for the Xinhua Dictionary" in notes
    assert "chengyu_bench_chid_open_cloze" not in tables  # no ChID open-cloze rows


def test_tables_write_in_every_format_with_marks(default_params, tmp_path: Path):
    _, body = score_and_aggregate(default_params, outputs=NO_RELEASE_OUTPUTS, items=NO_RELEASE_ITEMS)
    table7 = by_id(section(default_params, tmp_path, sys_a=body))["chengyu_bench_table7"]
    written = table7.write(tmp_path)
    csv_text = written[0].read_text(encoding="utf-8")
    assert csv_text.splitlines()[0].startswith("Model,Connotation (sample §)")
    assert "sample" in written[1].read_text(encoding="utf-8")
    assert r"\S{}" in written[2].read_text(encoding="utf-8")
