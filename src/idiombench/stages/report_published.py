"""The papers' published values in the report (params report.published; docs/papers.md#published-values):

- reference rows: in each table that reproduces a paper table, the published rows of the paper's
  models the run does not include, marked ◇ (the value as the paper prints it; no interval, no
  test, never the best mark);
- a "Reproduction" table per benchmark: each cell of a model that reproduces a paper model
  (stages/reproduction.py) beside the published value, with Δ and whether the published value
  lies within the cell's interval and the model's noise floor; its scorecard goes on the summary
  page.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ..report.published import PublishedCell, PublishedCells
from ..report.tables import Cell, Table
from .reproduction import Reproduced, Scorecard, published_factor

REFERENCE_MARK = "◇"


def _templates(table: Table) -> dict[tuple[str, ...], dict[int, Cell]]:
    """The table's row shapes: a row's labels (its cells between the model and its first metric)
    -> column -> a cell of that column that shows a metric (computed or not)."""
    out: dict[tuple[str, ...], dict[int, Cell]] = {}
    for row in table.rows:
        refs = {col: c for col, c in enumerate(row) if c.metric is not None}
        if not refs:
            continue
        label = tuple(c.text for c in row[1 : min(refs)])
        merged = out.setdefault(label, {})
        for col, c in refs.items():
            merged.setdefault(col, c)
    return out


def _text(found: PublishedCell, template: Cell) -> str:
    """The published value as the column prints numbers: as printed where the scales agree."""
    factor = published_factor(found, template.unit) if template.unit is not None else 1.0
    return found.printed if factor == 1.0 else f"{found.value * factor:.{template.decimals}f}"


def add_reference_rows(
    table: Table, published: PublishedCells, run_here: set[str], display: Callable[[str], str] | None = None
) -> int:
    """Append the published rows of the paper models `run_here` does not name to a table that
    reproduces one of the paper's tables; returns the number of rows added."""
    papers = [t.table for t in published.tables if table.table_id in t.report]
    if not papers or not table.columns or table.columns[0] != "Model":
        return 0
    templates = _templates(table)
    if not templates:
        return 0
    candidates = [c for c in published if c.table in papers and c.model_id is not None and c.model_id not in run_here]
    by_model: dict[str, dict[str, PublishedCell]] = {}
    names: dict[str, str] = {}
    for c in candidates:
        if c.ref is not None:
            by_model.setdefault(str(c.model_id), {}).setdefault(c.ref, c)
            names.setdefault(str(c.model_id), c.model or str(c.model_id))
    added = 0
    for model_id, cells in by_model.items():
        for label, columns in templates.items():
            found = {col: cells[t.metric] for col, t in columns.items() if t.metric is not None and t.metric in cells}
            if not found:
                continue
            row = [Cell(names[model_id], REFERENCE_MARK)] + [Cell(text) for text in label]
            for col in range(len(row), len(table.columns)):
                row.append(Cell(_text(found[col], columns[col])) if col in found else Cell("—"))
            table.rows.append(row)
            added += 1
    if added:
        table.footnotes.append(
            f"{REFERENCE_MARK} published in the paper ({', '.join(papers)}), not run here: the paper's values as "
            "printed, without interval or test and never marked best (report.published.reference_rows)."
        )
    return added


def _yes(value: bool | None) -> str:
    return "—" if value is None else ("yes" if value else "no")


def _number(value: float | None, digits: int, sign: bool = False) -> str:
    if value is None:
        return "—"
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def reproduction_table(
    benchmark: str,
    rows: Sequence[Reproduced],
    display: Callable[[str], str],
    notes: Mapping[str, Sequence[str]] | None = None,
) -> Table | None:
    """The benchmark's Reproduction table (None: no model reproduces one of its paper's models);
    `notes`: per model, what a reader needs beside its rows (reproduction.reproduction_notes)."""
    if not rows:
        return None
    body = []
    for r in rows:
        interval = "" if r.low is None or r.high is None else f" [{r.low:.{r.digits + 1}f}, {r.high:.{r.digits + 1}f}]"
        body.append(
            [
                Cell(display(r.model)),
                Cell(r.paper_model),
                Cell(r.published.table),
                Cell(f"{r.label} ({r.name.rsplit('/', 1)[0]})"),
                Cell(r.published.printed),
                Cell(_number(r.value, r.digits) + interval),
                Cell(_number(r.delta, r.digits, sign=True)),
                Cell(_yes(r.within_interval)),
                Cell(_number(r.floor, r.digits)),
                Cell(_yes(r.within_floor)),
            ]
        )
    cards = [
        Scorecard.of(model, rows_of[0].paper_model, rows_of)
        for model in dict.fromkeys(r.model for r in rows)
        if (rows_of := [r for r in rows if r.model == model])
    ]
    return Table(
        f"{benchmark.replace('-', '_')}_reproduction",
        f"{benchmark}: reproduced beside published",
        [
            "Model",
            "Paper model",
            "Paper table",
            "Cell",
            "Published",
            "Reproduced [interval]",
            "Δ",
            "In interval",
            "Noise floor",
            "Within floor",
        ],
        body,
        footnotes=[f"{display(c.model)} as {c.paper_model}: {c.text()}." for c in cards]
        + [f"{display(model)}: {note}." for model, found in (notes or {}).items() for note in found]
        + [
            "Published: as the paper prints it; Reproduced: this run's value on the same scale with its bootstrap "
            "interval; Δ = reproduced − published; In interval: the published value lies within the interval; "
            "Within floor: |Δ| is within the model's serving-noise floor in that setting (— where it has no pass). "
            "A published value the release contradicts is listed under the benchmark's errata (docs/papers.md)."
        ],
    )


def scorecard_table(cards: Sequence[tuple[str, Scorecard]], display: Callable[[str], str]) -> Table | None:
    """The summary page's scorecard: per benchmark and reproducing model, k of n cells within."""
    if not cards:
        return None
    rows = [
        [
            Cell(benchmark),
            Cell(display(c.model)),
            Cell(c.paper_model),
            Cell(f"{c.within_interval} of {c.with_interval}"),
            Cell(f"{c.within_floor} of {c.with_floor}" if c.with_floor else "—"),
            Cell(f"{c.cells:,}"),
        ]
        for benchmark, c in cards
    ]
    return Table(
        "reproduction_scorecard",
        "Reproduction scorecard",
        ["Benchmark", "Model", "Paper model", "In interval", "Within floor", "Cells"],
        rows,
        footnotes=[
            "Per model that reproduces a paper model (report.published.reproduces): of its cells with an interval, "
            "how many hold the published value; of those with a serving-noise floor, how many differ from the paper "
            "by no more than it. Each benchmark's Reproduction table lists the cells."
        ],
    )
