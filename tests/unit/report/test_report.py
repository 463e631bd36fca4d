"""Report tables in every format, and a PDF whose CJK text really renders."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from idiombench.report.pdf import TitlePage, write_pdf
from idiombench.report.tables import Cell, Figure, Section, Table, cell


def sample_table() -> Table:
    return Table(
        table_id="demo_table",
        title="Recovery by language",
        columns=["Model", "zh-CN", "ja"],
        rows=[[Cell("SmolLM2 | 135M"), cell(0.5), cell(None)], [Cell("oracle"), cell(1.0, marks="†"), cell(1.0)]],
        footnotes=["† computed with a substitute model (x instead of y)."],
    )


def test_cell_formatting():
    assert cell(0.12345).display() == "0.123"
    assert cell(12.5, "{:.1f}").display() == "12.5"
    assert cell(None, marks="‡").display() == "—‡"
    assert cell(7).display() == "7"


def test_rows_must_match_columns():
    with pytest.raises(ValueError, match="2 cells for 3 columns"):
        Table("t", "t", ["a", "b", "c"], [[Cell("1"), Cell("2")]])


def test_csv_markdown_latex_keep_marks_and_footnotes(tmp_path: Path):
    table = sample_table()
    written = table.write(tmp_path)
    assert [p.name for p in written] == ["demo_table.csv", "demo_table.md", "demo_table.tex"]
    csv_text = (tmp_path / "demo_table.csv").read_text(encoding="utf-8")
    assert csv_text.splitlines() == ["Model,zh-CN,ja", "SmolLM2 | 135M,0.500,—", "oracle,1.000†,1.000"]
    md = (tmp_path / "demo_table.md").read_text(encoding="utf-8")
    assert "| SmolLM2 \\| 135M | 0.500 | — |" in md and "| oracle | 1.000† | 1.000 |" in md
    assert "† computed with a substitute model" in md
    tex = (tmp_path / "demo_table.tex").read_text(encoding="utf-8")
    assert r"1.000$^\dagger$" in tex and r"\begin{tabular}{lrr}" in tex


def dark_fraction(image) -> float:
    pixels = np.asarray(image.convert("L"))
    return float((pixels < 128).mean())


def test_pdf_renders_cjk_text(tmp_path: Path):
    """Rasterise the PDF and check that the CJK strings are drawn (a missing glyph renders as
    nothing or a box; we compare the ink of a CJK-only paragraph with an empty page region)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pypdfium2 as pdfium

    figure_path = tmp_path / "fig.png"
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.bar(["a", "b"], [1, 2])
    fig.savefig(figure_path)
    plt.close(fig)
    table = Table(
        "cjk", "漢字 한국어 かな", ["表达", "점수"], [[Cell("画蛇添足"), Cell("작심삼일")]], footnotes=["注：一期一会"]
    )
    section = Section(
        "orderprobe",
        "OrderProbe 顺序探测",
        intro=["画蛇添足 無可估量 작심삼일 一期一会"],
        tables=[table],
        figures=[Figure("fig", "Figure", figure_path, "caption")],
    )
    title = TitlePage("idiombench: results", "default", "2026-01-01", "abc123", ["oracle"], ["orderprobe: 0123"])
    pdf_path = tmp_path / "out.pdf"
    write_pdf(pdf_path, title, [section])
    document = pdfium.PdfDocument(str(pdf_path))
    assert len(document) == 2
    page = document[1]
    text = page.get_textpage().get_text_range()
    for expected in ("OrderProbe 顺序探测", "画蛇添足", "작심삼일", "一期一会", "注：一期一会"):
        assert expected in text
    image = page.render(scale=2).to_pil()
    image.save(tmp_path / "page2.png")
    width, height = image.size
    heading_band = image.crop((0, int(height * 0.04), width, int(height * 0.12)))
    empty_band = image.crop((0, int(height * 0.90), width, int(height * 0.94)))
    assert dark_fraction(heading_band) > 0.005  # the CJK heading and intro are drawn
    assert dark_fraction(empty_band) == 0.0


def test_pdf_without_sections_says_so(tmp_path: Path):
    import pypdfium2 as pdfium

    title = TitlePage("idiombench: results", "default", "2026-01-01", "abc", [], [])
    write_pdf(tmp_path / "empty.pdf", title, [])
    document = pdfium.PdfDocument(str(tmp_path / "empty.pdf"))
    assert len(document) == 1
    assert "No benchmark has been scored yet" in document[0].get_textpage().get_text_range()


def test_second_pdf_in_one_process_gets_its_own_glyphs(tmp_path: Path):
    """Each PDF embeds a font subset of its own text; reportlab's registry is process-wide, so a
    second report in the same process must not reuse the first one's subset (missing glyphs)."""
    import pypdfium2 as pdfium

    texts = {}
    for name, words in (("first", "画蛇添足"), ("second", "鬱鬱蔥蔥 깍두기")):  # glyphs no other test draws
        section = Section("orderprobe", words, intro=[words])
        path = tmp_path / f"{name}.pdf"
        write_pdf(path, TitlePage("t", "default", "2026-01-01", "abc", [], []), [section])
        texts[name] = pdfium.PdfDocument(str(path))[1].get_textpage().get_text_range()
    assert "画蛇添足" in texts["first"]
    assert "鬱鬱蔥蔥 깍두기" in texts["second"]


def test_same_report_gives_the_same_pdf_bytes(tmp_path: Path):
    """Two processes, a second apart, write byte-identical PDFs (no font timestamps)."""
    import subprocess
    import sys
    import time

    script = (
        "import sys; from pathlib import Path\n"
        "from idiombench.report.pdf import TitlePage, write_pdf\n"
        "from idiombench.report.tables import Section\n"
        "write_pdf(Path(sys.argv[1]), TitlePage('t', 'default', '2026-01-01', 'abc', [], []),"
        " [Section('x', '画蛇添足 깍두기', intro=['顺序'])])\n"
    )
    paths = [tmp_path / "a.pdf", tmp_path / "b.pdf"]
    for index, path in enumerate(paths):
        if index:
            time.sleep(1.1)
        subprocess.run([sys.executable, "-c", script, str(path)], check=True)
    assert paths[0].read_bytes() == paths[1].read_bytes()


def test_column_widths_keep_short_cells_whole_and_let_long_text_wrap():
    from reportlab.pdfbase.pdfmetrics import stringWidth

    from idiombench.report.pdf import CELL_PADDING, column_widths
    from idiombench.report.tables import Cell, Table

    long_text = "a model name that is much longer than any number in the table " * 3
    table = Table("t", "t", ["Model", "Acc"], [[Cell(long_text), Cell("100.00", "§")]])
    widths = column_widths(table, 300.0, "Helvetica", "Helvetica-Bold", 7.0)
    assert sum(widths) == pytest.approx(300.0)
    # the number keeps its whole width; the long text column takes the rest and wraps
    assert widths[1] >= stringWidth("100.00§", "Helvetica", 7.0) + CELL_PADDING
    assert widths[0] > widths[1]
    # a narrow table is spread over the line in proportion to its content
    narrow = Table("n", "n", ["A", "B"], [[Cell("x"), Cell("yyyy")]])
    a, b = column_widths(narrow, 300.0, "Helvetica", "Helvetica-Bold", 7.0)
    assert a + b == pytest.approx(300.0) and b > a
