"""A table as the papers print it, written to CSV, Markdown, LaTeX and the PDF.

Cells are display strings; a metric's cell (`metric_cell`) also carries its number as stored,
its unit and its decimals, formatted by one rule (metrics.units.display), so the report's
intervals and tests read the number, never the text. A cell may carry marks (e.g. "†") that
refer to the table's footnotes. Marks are kept in every format so a number computed with a
substitute model is never shown bare.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

from ..core.io import write_text
from ..metrics.units import Unit, display


@dataclass(frozen=True)
class CellRef:
    """Which metric cell a number is (report.uncertainty): the model, and the cell's name,
    "<scope>/<metric key>" (metrics.evaluate.Cell: the benchmark's scope and spec)."""

    model: str
    name: str


@dataclass(frozen=True)
class Cell:
    text: str
    marks: str = ""
    ref: CellRef | None = None  # set by a benchmark for a number that has per-unit data behind it
    low: float | None = None  # the interval's bounds, on the printed scale (report.uncertainty)
    high: float | None = None
    number: float | None = None  # a metric cell: the value as stored, which `text` shows ...
    unit: Unit | None = None  # ... in this unit ...
    decimals: int = 0  # ... with these decimals
    metric: str | None = None  # the metric cell it shows, also where not computed ("—"): a column's cells

    def display(self) -> str:
        return f"{self.text}{self.marks}"

    @property
    def scale(self) -> float:
        """The factor from the metric's statistic (a share, a score) to the printed number."""
        if self.unit is None:
            return 1.0
        return self.unit.scale * self.unit.display_scale


def metric_cell(value: float | None, unit: Unit, decimals: int, marks: str = "", ref: CellRef | None = None) -> Cell:
    """A metric's cell: its stored value printed by the one rule (metrics.units.display), an em
    dash where it was not computed (then without a reference: no number, no interval)."""
    name = ref.name if ref is not None else None
    if value is None:
        return Cell("—", marks, unit=unit, decimals=decimals, metric=name)
    return Cell(display(value, unit, decimals), marks, ref, number=value, unit=unit, decimals=decimals, metric=name)


def cell(value: object, fmt: str = "{:.3f}", marks: str = "", ref: CellRef | None = None) -> Cell:
    """A number formatted with `fmt`, None as an em dash, anything else as str."""
    if value is None:
        return Cell("—", marks)
    if isinstance(value, float):
        return Cell(fmt.format(value), marks, ref)
    return Cell(str(value), marks, ref)


def bound_text(value: float | None) -> str:
    return "" if value is None else f"{value:.6g}"


@dataclass
class Table:
    table_id: str  # file stem under reports/tables/, e.g. "orderprobe_table3"
    title: str
    columns: list[str]
    rows: list[list[Cell]]
    footnotes: list[str] = field(default_factory=list)  # "† ...": explain every mark used
    caption: str = ""

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row) != len(self.columns):
                raise ValueError(f"{self.table_id}: row {row} has {len(row)} cells for {len(self.columns)} columns")

    def bounded_columns(self) -> list[int]:
        """Columns with at least one interval: the CSV gives each a `_lo` and a `_hi` column."""
        return [i for i in range(len(self.columns)) if any(row[i].low is not None for row in self.rows)]

    def to_csv(self) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        bounded = set(self.bounded_columns())
        header: list[str] = []
        for index, column in enumerate(self.columns):
            header += [column, f"{column}_lo", f"{column}_hi"] if index in bounded else [column]
        writer.writerow(header)
        for row in self.rows:
            values: list[str] = []
            for index, c in enumerate(row):
                values += [c.display(), bound_text(c.low), bound_text(c.high)] if index in bounded else [c.display()]
            writer.writerow(values)
        return buffer.getvalue()

    def to_markdown(self) -> str:
        def escape(text: str) -> str:
            return text.replace("|", "\\|")

        lines = [f"### {self.title}", ""]
        if self.caption:
            lines += [self.caption, ""]
        lines.append("| " + " | ".join(escape(c) for c in self.columns) + " |")
        lines.append("|" + "|".join("---" for _ in self.columns) + "|")
        for row in self.rows:
            lines.append("| " + " | ".join(escape(c.display()) for c in row) + " |")
        if self.footnotes:
            lines.append("")
            lines += [f"{note}  " for note in self.footnotes]
        return "\n".join(lines) + "\n"

    def to_latex(self) -> str:
        def escape(text: str) -> str:
            text = text.replace("\\", "\x00")  # placeholder so later escapes do not touch it
            for old, new in (
                ("&", r"\&"),
                ("%", r"\%"),
                ("_", r"\_"),
                ("#", r"\#"),
                ("$", r"\$"),
                ("{", r"\{"),
                ("}", r"\}"),
            ):
                text = text.replace(old, new)
            text = text.replace("\x00", r"\textbackslash{}")
            text = text.replace("±", r"$\pm$").replace("≈", r"$^{\approx}$").replace("▲", r"$^{\triangle}$")
            return text.replace("†", r"$^\dagger$").replace("‡", r"$^\ddagger$").replace("§", r"\S{}")

        spec = "l" + "r" * (len(self.columns) - 1)
        lines = [
            r"\begin{table}[t]",
            r"\centering",
            rf"\caption{{{escape(self.title)}}}",
            rf"\begin{{tabular}}{{{spec}}}",
            r"\toprule",
            " & ".join(escape(c) for c in self.columns) + r" \\",
            r"\midrule",
        ]
        lines += [" & ".join(escape(c.display()) for c in row) + r" \\" for row in self.rows]
        lines += [r"\bottomrule", r"\end{tabular}"]
        if self.footnotes:
            lines.append(r"\par\footnotesize " + r" \\ ".join(escape(n) for n in self.footnotes))
        lines.append(r"\end{table}")
        return "\n".join(lines) + "\n"

    def write(self, directory: Path) -> list[Path]:
        paths = []
        for suffix, text in (("csv", self.to_csv()), ("md", self.to_markdown()), ("tex", self.to_latex())):
            path = directory / f"{self.table_id}.{suffix}"
            write_text(path, text)
            paths.append(path)
        return paths


@dataclass
class Figure:
    figure_id: str  # file stem under reports/figures/
    title: str
    path: Path  # the PNG, written by the benchmark's section builder
    caption: str = ""


@dataclass
class Section:
    """One benchmark's part of the report."""

    benchmark: str
    title: str
    intro: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
