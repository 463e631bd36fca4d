"""The summary page (stages/report_summary.py): one row per benchmark, headline cell and model in
one unit convention, a figure, and a table whose cells never wrap in the PDF however many models
and however long their names (measured with the PDF's own fonts and column widths)."""

from __future__ import annotations

from pathlib import Path

from idiombench.report.fonts import register_cjk_fonts
from idiombench.report.pdf import wrapped_cells
from idiombench.stages.report_summary import SummaryRow, summary_figure, summary_table

A4_LINE = 595.27 - 2 * 45.35  # A4 width less the report's 1.6 cm margins, in points
MODELS = [
    "SmolLM2-135M-Instruct (GGUF Q4_1)",
    "Llama-3-8B-Instruct",
    "Llama-2-7B-chat",
    "Qwen3-14B",
    "Gemma-3-4B-it",
    "a researcher's fine-tune of Qwen3-8B on idioms",
]
CELLS = [
    ("orderprobe", "three_shot: Recovery"),
    ("g-idiomalign", "with_gloss_additional: Acc@0.80"),
    ("semanticqa", "5-shot/collocation_categorization: ACC"),
    ("chengyu-bench", "chid_open_cloze: Acc.@1"),
]


def rows() -> list[SummaryRow]:
    return [
        SummaryRow(benchmark, cell, model, 100.0 * k / 7, 12.25, 3.5 if k % 2 else None, 99.9, "%")
        for k, model in enumerate(MODELS)
        for benchmark, cell in CELLS
    ]


def test_no_summary_cell_wraps_in_the_pdf(tmp_path: Path) -> None:
    table = summary_table(rows(), {"orderprobe": "section OrderProbe"}, lambda m: m)
    text = " ".join([*table.columns, *(c.display() for row in table.rows for c in row)])
    regular, bold = register_cjk_fonts(text, tmp_path)
    assert wrapped_cells(table, A4_LINE, regular, bold, 7.0) == []
    # the check itself can fail: the same table squeezed into half the line wraps
    assert wrapped_cells(table, A4_LINE / 2, regular, bold, 7.0)


def test_one_unit_and_the_paper_beside_the_value(tmp_path: Path) -> None:
    table = summary_table(rows()[:1], {}, lambda m: m)
    assert table.columns == ["Benchmark", "Cell", "Model", "Value", "Floor", "Paper"]
    assert [c.text for c in table.rows[0][3:]] == ["0.0 ±12.2", "—", "99.9"]
    figure = summary_figure(rows(), tmp_path, lambda m: m)
    assert figure is not None and figure.path.stat().st_size > 0
