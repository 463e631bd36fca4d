"""Assemble reports/all_tables.pdf: a title page, then one section per scored benchmark."""

from __future__ import annotations

import hashlib
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape

from ..core.io import atomic_path
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
    environment: str = ""  # python, key libraries, lock hash (idiombench.core.environment)
    notes: list[str] = field(default_factory=list)


def _all_text(title: TitlePage, sections: list[Section]) -> str:
    parts = [
        title.title,
        title.profile,
        title.date,
        title.git_commit,
        title.environment,
        *title.models,
        *title.data,
        *title.notes,
    ]
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


CELL_PADDING = 6.0  # left + right padding of a table cell, in points


SHORT_CELL = 10  # characters: a cell this short (a number and its marks) is never wrapped


def column_widths(table: Table, width: float, regular: str, bold: str, size: float) -> list[float]:
    """Column widths from content. Each column needs its longest unbreakable piece (a header
    word, a short cell whole, a long cell's longest word) and would like its longest cell
    (capped at 40% of the line). Needs are met first; what is left of the line goes to the
    columns in proportion to what they would still like, so long text columns wrap before
    numbers do."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    def text_width(text: str, font: str) -> float:
        return stringWidth(text, font, size)

    needs, likes = [], []
    for index, header in enumerate(table.columns):
        cells = [row[index].display() for row in table.rows]
        pieces = [text_width(w, bold) for w in header.split()]
        pieces += [
            text_width(c, regular) if len(c) <= SHORT_CELL else max(text_width(w, regular) for w in c.split())
            for c in cells
            if c.strip()
        ]
        need = max(pieces, default=0.0) + CELL_PADDING
        like = max([need] + [min(text_width(c, regular), 0.4 * width) + CELL_PADDING for c in cells])
        needs.append(need)
        likes.append(like)
    if sum(needs) >= width:
        return [width * n / sum(needs) for n in needs]
    spare, extra = width - sum(needs), [like - n for like, n in zip(likes, needs, strict=True)]
    if sum(extra) <= spare:  # everything fits on one line: share the rest by the liked widths
        return [width * like / sum(likes) for like in likes]
    return [n + spare * e / sum(extra) for n, e in zip(needs, extra, strict=True)]


AUTHOR = "idiombench"  # the PDF's Author entry: the mark of a report this project wrote
TITLE = "idiombench: results"  # the title build_report gives it (an earlier version's PDF is recognised by it)


# The PDF's record: its Keywords entry holds the sha256 of the file as written with zeros in
# place of the digest (a file cannot hold its own hash otherwise); the digest has the
# placeholder's length, so no offset in the file moves. ReportLab writes the document
# information dictionary as plain text (never compressed), as it does the Author entry.
SEAL = b"idiombench-sha256:"
_SEALED = re.compile(rb"/Keywords \(" + re.escape(SEAL) + rb"([0-9a-f]{64})\)")
_PLACEHOLDER = "0" * 64


def _unsealed(data: bytes, match: re.Match[bytes]) -> bytes:
    return data[: match.start(1)] + _PLACEHOLDER.encode() + data[match.end(1) :]


def seal(data: bytes) -> bytes:
    """The PDF `data` (written with the placeholder keyword) with its digest in place."""
    match = _SEALED.search(data)
    if match is None or match.group(1) != _PLACEHOLDER.encode():
        raise ValueError("the PDF has no placeholder keyword to seal")
    digest = hashlib.sha256(data).hexdigest().encode()
    return data[: match.start(1)] + digest + data[match.end(1) :]


def is_report_pdf(path: Path) -> bool:
    """Whether `path` is a PDF that write_pdf wrote, unchanged since: its Author is idiombench
    and its sealed digest matches its content. A PDF of an earlier version (before the seal) is
    recognised by its Author, its title and an empty Keywords entry. `report` replaces no other file."""
    try:
        data = path.read_bytes()
    except OSError:
        return False
    if not data.startswith(b"%PDF-") or f"/Author ({AUTHOR})".encode() not in data:
        return False
    match = _SEALED.search(data)
    if match is not None:
        return hashlib.sha256(_unsealed(data, match)).hexdigest().encode() == match.group(1)
    return f"/Title ({TITLE})".encode() in data and b"/Keywords ()" in data


def write_pdf(path: Path, title: TitlePage, sections: list[Section], summary: Section | None = None) -> None:
    """The report: the summary page first (when given), the title page, then one part per section."""
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
        TableStyle,
    )
    from reportlab.platypus import Table as RLTable

    with tempfile.TemporaryDirectory() as workdir:
        regular, bold = register_cjk_fonts(_all_text(title, sections + ([summary] if summary else [])), Path(workdir))
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
            # Wide tables get a smaller font; columns get widths from their content.
            size = 6.0 if len(table.columns) > 10 else cell_style.fontSize
            body_style = ParagraphStyle("cell_fit", parent=cell_style, fontSize=size, leading=size + 1.5)
            header_style = ParagraphStyle("head_fit", parent=head_style, fontSize=size, leading=size + 1.5)
            data = [[para(c, header_style) for c in table.columns]]
            data += [[para(c.display(), body_style) for c in row] for row in table.rows]
            widths = column_widths(table, width, regular, bold, size)
            grid = RLTable(data, colWidths=widths, repeatRows=1)
            grid.setStyle(
                TableStyle(
                    [
                        ("LINEABOVE", (0, 0), (-1, 0), 0.8, colors.black),
                        ("LINEBELOW", (0, 0), (-1, 0), 0.5, colors.black),
                        ("LINEBELOW", (0, -1), (-1, -1), 0.8, colors.black),
                        ("VALIGN", (0, 0), (-1, -1), "TOP"),
                        ("ROWBACKGROUNDS", (0, 1), (-1, -1), [colors.white, colors.HexColor("#f4f4f4")]),
                        ("LEFTPADDING", (0, 0), (-1, -1), 3),
                        ("RIGHTPADDING", (0, 0), (-1, -1), 3),
                    ]
                )
            )
            heading = [para(table.title, h2)]
            if table.caption:
                heading.append(para(table.caption, small))
            out = [KeepTogether(heading + [grid])] if len(table.rows) < 25 else heading + [grid]
            out += [para(note, small) for note in table.footnotes]
            return out + [Spacer(1, 6)]

        with atomic_path(path) as tmp:
            doc = SimpleDocTemplate(
                str(tmp),
                pagesize=A4,
                leftMargin=1.6 * cm,
                rightMargin=1.6 * cm,
                topMargin=1.6 * cm,
                bottomMargin=1.6 * cm,
                title=title.title,
                author=AUTHOR,
                keywords=(SEAL.decode() + _PLACEHOLDER),
                invariant=1,
            )
            width = doc.width
            story: list = []
            if summary is not None:  # the first page: the headline of every model, its interval and noise floor
                story += [para(summary.title, h1)] + [para(text) for text in summary.intro]
                for table in summary.tables:
                    story += table_flowables(table, width)
                story.append(PageBreak())
            story.append(para(title.title, title_style))
            facts = [("Profile", title.profile), ("Date", title.date), ("Git commit", title.git_commit)]
            if title.environment:
                facts.append(("Environment", title.environment))
            story.append(
                RLTable(
                    [[para(k, head_style), para(v, cell_style)] for k, v in facts], colWidths=[3 * cm, width - 3 * cm]
                )
            )
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
                canvas.drawRightString(
                    A4[0] - 1.6 * cm, 1.0 * cm, f"idiombench — {title.profile} — page {document.page}"
                )
                canvas.restoreState()

            doc.build(story, onFirstPage=footer, onLaterPages=footer)
            tmp.write_bytes(seal(tmp.read_bytes()))
