"""Assemble reports/all_tables.pdf: a title page, then one section per scored benchmark."""

from __future__ import annotations

import hashlib
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol
from xml.sax.saxutils import escape

from ..core.io import atomic_path
from .fonts import register_cjk_fonts
from .tables import Figure, Section, Table

if TYPE_CHECKING:
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.platypus import Flowable


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
        width: float = stringWidth(text, font, size)
        return width

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


def table_font_size(table: Table, styles_cell_size: float) -> float:
    """Wide tables get a smaller font."""
    return 6.0 if len(table.columns) > 10 else styles_cell_size


def wrapped_cells(table: Table, width: float, regular: str, bold: str, size: float) -> list[tuple[int, int]]:
    """(row, column) of every cell the PDF would wrap in `width` (row 0: the header, whose cells
    may break between words but never inside one)."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    widths = column_widths(table, width, regular, bold, size)
    out = []
    for col, (header, room) in enumerate(zip(table.columns, widths, strict=True)):
        if any(stringWidth(word, bold, size) + CELL_PADDING > room for word in header.split()):
            out.append((0, col))
        for row, cells in enumerate(table.rows, start=1):
            if stringWidth(cells[col].display(), regular, size) + CELL_PADDING > room + 1e-6:
                out.append((row, col))
    return out


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


@dataclass(frozen=True)
class _Styles:
    """The fonts registered for one report and the paragraph styles built on them."""

    regular: str
    bold: str
    base: ParagraphStyle
    small: ParagraphStyle
    cell: ParagraphStyle
    head: ParagraphStyle
    h1: ParagraphStyle
    h2: ParagraphStyle
    title: ParagraphStyle


def _styles(regular: str, bold: str) -> _Styles:
    from reportlab.lib.styles import ParagraphStyle

    base = ParagraphStyle("base", fontName=regular, fontSize=9, leading=12)
    cell_style = ParagraphStyle("cell", parent=base, fontSize=7, leading=8.5)
    return _Styles(
        regular=regular,
        bold=bold,
        base=base,
        small=ParagraphStyle("small", parent=base, fontSize=7, leading=9),
        cell=cell_style,
        head=ParagraphStyle("head", parent=cell_style, fontName=bold),
        h1=ParagraphStyle("h1", parent=base, fontName=bold, fontSize=16, leading=20, spaceAfter=8),
        h2=ParagraphStyle("h2", parent=base, fontName=bold, fontSize=11, leading=14, spaceBefore=10, spaceAfter=4),
        title=ParagraphStyle("title", parent=base, fontName=bold, fontSize=22, leading=28, spaceAfter=16),
    )


def _para(text: str, style: ParagraphStyle) -> Flowable:
    from reportlab.platypus import Paragraph

    return Paragraph(escape(text).replace("\n", "<br/>"), style)


def _table_grid(table: Table, width: float, styles: _Styles) -> Flowable:
    from reportlab.lib import colors
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.platypus import Table as RLTable
    from reportlab.platypus import TableStyle

    # Wide tables get a smaller font; columns get widths from their content.
    size = table_font_size(table, styles.cell.fontSize)
    body_style = ParagraphStyle("cell_fit", parent=styles.cell, fontSize=size, leading=size + 1.5)
    header_style = ParagraphStyle("head_fit", parent=styles.head, fontSize=size, leading=size + 1.5)
    data = [[_para(c, header_style) for c in table.columns]]
    data += [[_para(c.display(), body_style) for c in row] for row in table.rows]
    widths = column_widths(table, width, styles.regular, styles.bold, size)
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
    return grid


def _table_flowables(table: Table, width: float, styles: _Styles) -> list[Flowable]:
    from reportlab.platypus import KeepTogether, Spacer

    grid = _table_grid(table, width, styles)
    heading = [_para(table.title, styles.h2)]
    if table.caption:
        heading.append(_para(table.caption, styles.small))
    out = [KeepTogether(heading + [grid])] if len(table.rows) < 25 else heading + [grid]
    out += [_para(note, styles.small) for note in table.footnotes]
    return out + [Spacer(1, 6)]


def _title_page(title: TitlePage, width: float, styles: _Styles) -> list[Flowable]:
    from reportlab.lib.units import cm
    from reportlab.platypus import Table as RLTable

    story = [_para(title.title, styles.title)]
    facts = [("Profile", title.profile), ("Date", title.date), ("Git commit", title.git_commit)]
    if title.environment:
        facts.append(("Environment", title.environment))
    story.append(
        RLTable(
            [[_para(k, styles.head), _para(v, styles.cell)] for k, v in facts],
            colWidths=[3 * cm, width - 3 * cm],
        )
    )
    story += [_para("Models", styles.h2)] + [_para(f"• {m}", styles.small) for m in title.models]
    story += [_para("Data (sha256 of each benchmark's acquisition record)", styles.h2)]
    story += [_para(d, styles.small) for d in title.data]
    if title.notes:
        story += [_para("Notes", styles.h2)] + [_para(n, styles.small) for n in title.notes]
    return story


def _figure_flowable(figure: Figure, width: float, height: float, styles: _Styles) -> Flowable:
    """The figure scaled down (never up) to the line width and 60% of the frame height."""
    from reportlab.platypus import Image, KeepTogether

    image = Image(str(figure.path))
    scale = min(1.0, width / image.imageWidth, (height * 0.6) / image.imageHeight)
    image.drawWidth, image.drawHeight = image.imageWidth * scale, image.imageHeight * scale
    return KeepTogether([_para(figure.title, styles.h2), image, _para(figure.caption, styles.small)])


def _section_flowables(section: Section, width: float, height: float, styles: _Styles) -> list[Flowable]:
    from reportlab.platypus import PageBreak

    story = [PageBreak(), _para(section.title, styles.h1)]
    story += [_para(text, styles.base) for text in section.intro]
    for table in section.tables:
        story += _table_flowables(table, width, styles)
    for figure in section.figures:
        story.append(_figure_flowable(figure, width, height, styles))
    if section.notes:
        story += [_para("Notes", styles.h2)] + [_para(n, styles.small) for n in section.notes]
    return story


class FooterCanvas(Protocol):
    """What the footer draws with of reportlab's canvas."""

    def saveState(self) -> None: ...  # reportlab's names

    def setFont(self, psfontname: str, size: float) -> None: ...

    def drawRightString(self, x: float, y: float, text: str) -> None: ...

    def restoreState(self) -> None: ...


class PagedDocument(Protocol):
    page: int  # the page being drawn


def _page_footer(font: str, profile: str) -> Callable[[FooterCanvas, PagedDocument], None]:
    """The callback that draws "idiombench — profile — page N" at the foot of every page."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.units import cm

    def footer(canvas: FooterCanvas, document: PagedDocument) -> None:
        canvas.saveState()
        canvas.setFont(font, 7)
        canvas.drawRightString(A4[0] - 1.6 * cm, 1.0 * cm, f"idiombench — {profile} — page {document.page}")
        canvas.restoreState()

    return footer


def _summary_page(summary: Section, width: float, height: float, styles: _Styles) -> list[Flowable]:
    """The first page: the figure of every model's headlines, then the tables (each titled once)."""
    from reportlab.platypus import PageBreak

    story = [_para(summary.title, styles.h1)] + [_para(text, styles.base) for text in summary.intro]
    for figure in summary.figures:
        story.append(_figure_flowable(figure, width, height, styles))
    for table in summary.tables:
        story += _table_flowables(table, width, styles)
    return story + [PageBreak()]


def write_pdf(path: Path, title: TitlePage, sections: list[Section], summary: Section | None = None) -> None:
    """The report: the summary page first (when given), the title page, then one part per section."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.units import cm
    from reportlab.platypus import SimpleDocTemplate, Spacer

    with tempfile.TemporaryDirectory() as workdir:
        every = sections + ([summary] if summary else [])
        styles = _styles(*register_cjk_fonts(_all_text(title, every), Path(workdir)))
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
            story = _summary_page(summary, doc.width, doc.height, styles) if summary is not None else []
            story += _title_page(title, doc.width, styles)
            for section in sections:
                story += _section_flowables(section, doc.width, doc.height, styles)
            if not sections:
                story += [
                    Spacer(1, 12),
                    _para("No benchmark has been scored yet: the report has no sections.", styles.base),
                ]
            footer = _page_footer(styles.regular, title.profile)
            doc.build(story, onFirstPage=footer, onLaterPages=footer)
            tmp.write_bytes(seal(tmp.read_bytes()))
