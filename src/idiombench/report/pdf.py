"""Assemble reports/all_tables.pdf: a title page, then one section per scored benchmark."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape

from ..io import atomic_path
from .fonts import register_cjk_fonts
from .tables import Section, Table


@dataclass
class TitlePage:
    title: str
    profile: str
    date: str
    git_commit: str
    models: list[str]
    data: list[str]  # "benchmark: sha256 of its ACQUIRED.json record"
    notes: list[str] = field(default_factory=list)


def _all_text(title: TitlePage, sections: list[Section]) -> str:
    parts = [title.title, title.profile, title.date, title.git_commit, *title.models, *title.data, *title.notes]
    for section in sections:
        parts += [section.title, *section.intro, *section.notes]
        for table in section.tables:
            parts += [table.title, table.caption, *table.columns, *table.footnotes]
            parts += [c.display() for row in table.rows for c in row]
        for figure in section.figures:
            parts += [figure.title, figure.caption]
    # Digits, Latin letters and punctuation are always available for page furniture.
    parts.append("".join(chr(c) for c in range(32, 127)) + "—–•†‡§×±…·")
    return "".join(parts)


def write_pdf(path: Path, title: TitlePage, sections: list[Section]) -> None:
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.lib.units import cm
    from reportlab.platypus import (
        Image,
        KeepTogether,
        PageBreak,
        Paragraph,
        SimpleDocTemplate,
        Spacer,
    )
    from reportlab.platypus import Table as RLTable
    from reportlab.platypus import TableStyle

    with tempfile.TemporaryDirectory() as workdir:
        regular, bold = register_cjk_fonts(_all_text(title, sections), Path(workdir))
        base = ParagraphStyle("base", fontName=regular, fontSize=9, leading=12)
        small = ParagraphStyle("small", parent=base, fontSize=7, leading=9)
        cell_style = ParagraphStyle("cell", parent=base, fontSize=7, leading=8.5)
        head_style = ParagraphStyle("head", parent=cell_style, fontName=bold)
        h1 = ParagraphStyle("h1", parent=base, fontName=bold, fontSize=16, leading=20, spaceAfter=8)
        h2 = ParagraphStyle("h2", parent=base, fontName=bold, fontSize=11, leading=14, spaceBefore=10, spaceAfter=4)
        title_style = ParagraphStyle("title", parent=base, fontName=bold, fontSize=22, leading=28, spaceAfter=16)

        def para(text: str, style: ParagraphStyle = base) -> Paragraph:
            return Paragraph(escape(text).replace("\n", "<br/>"), style)

        def table_flowables(table: Table, width: float) -> list:
            data = [[para(c, head_style) for c in table.columns]]
            data += [[para(c.display(), cell_style) for c in row] for row in table.rows]
            first = min(0.34 * width, 5.5 * cm) if len(table.columns) > 3 else None
            if first is not None:
                rest = (width - first) / (len(table.columns) - 1)
                widths = [first] + [rest] * (len(table.columns) - 1)
            else:
                widths = [width / len(table.columns)] * len(table.columns)
            grid = RLTable(data, colWidths=widths, repeatRows=1)
            grid.setStyle(TableStyle([
                ("LINEABOVE", (0, 0), (-1, 0), 0.8, colors.black),
                ("LINEBELOW", (0, 0), (-1, 0), 0.5, colors.black),
                ("LINEBELOW", (0, -1), (-1, -1), 0.8, colors.black),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("ROWBACKGROUNDS", (0, 1), (-1, -1), [colors.white, colors.HexColor("#f4f4f4")]),
                ("LEFTPADDING", (0, 0), (-1, -1), 3),
                ("RIGHTPADDING", (0, 0), (-1, -1), 3),
            ]))
            heading = [para(table.title, h2)]
            if table.caption:
                heading.append(para(table.caption, small))
            out = [KeepTogether(heading + [grid])] if len(table.rows) < 25 else heading + [grid]
            out += [para(note, small) for note in table.footnotes]
            return out + [Spacer(1, 6)]

        with atomic_path(path) as tmp:
            doc = SimpleDocTemplate(
                str(tmp), pagesize=A4, leftMargin=1.6 * cm, rightMargin=1.6 * cm,
                topMargin=1.6 * cm, bottomMargin=1.6 * cm, title=title.title, author="idiombench",
                invariant=1,
            )
            width = doc.width
            story: list = [para(title.title, title_style)]
            facts = [("Profile", title.profile), ("Date", title.date), ("Git commit", title.git_commit)]
            story.append(RLTable([[para(k, head_style), para(v, cell_style)] for k, v in facts],
                                 colWidths=[3 * cm, width - 3 * cm]))
            story += [para("Models", h2)] + [para(f"• {m}", small) for m in title.models]
            story += [para("Data (sha256 of each benchmark's acquisition record)", h2)]
            story += [para(d, small) for d in title.data]
            if title.notes:
                story += [para("Notes", h2)] + [para(n, small) for n in title.notes]
            for section in sections:
                story += [PageBreak(), para(section.title, h1)]
                story += [para(text) for text in section.intro]
                for table in section.tables:
                    story += table_flowables(table, width)
                for figure in section.figures:
                    image = Image(str(figure.path))
                    scale = min(1.0, width / image.imageWidth, (doc.height * 0.6) / image.imageHeight)
                    image.drawWidth, image.drawHeight = image.imageWidth * scale, image.imageHeight * scale
                    story.append(KeepTogether([para(figure.title, h2), image, para(figure.caption, small)]))
                if section.notes:
                    story += [para("Notes", h2)] + [para(n, small) for n in section.notes]
            if not sections:
                story += [Spacer(1, 12), para("No benchmark has been scored yet: the report has no sections.")]

            def footer(canvas, document) -> None:
                canvas.saveState()
                canvas.setFont(regular, 7)
                canvas.drawRightString(A4[0] - 1.6 * cm, 1.0 * cm, f"idiombench — {title.profile} — page {document.page}")
                canvas.restoreState()

            doc.build(story, onFirstPage=footer, onLaterPages=footer)
