"""The papers' published values as data: a benchmark package's `published_cells.yaml`, read and
validated into `PublishedCells` (docs/papers.md#published-values).

One file per benchmark: the paper, its tables that the report reproduces, one entry per printed
number (`cells`), the cells the authors' released files contradict (`errata`) and what was left
out and why (`omitted`). A cell names its place in the paper (table, row labels, value column,
which number of the cell) and what it is to this project: the paper's model (as printed and as
a stable `model_id`), the project's setting and metric key (null where the project has none),
the unit the paper prints it in. A bad file is one `DataError` naming the file and the line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal, TypeVar

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from ..core.errors import DataError
from ..core.schema import StrictModel

FILE = "published_cells.yaml"
FORMAT = 1
# how the paper prints a value: percent (a share x 100), share (0-1), score (a 0-1 score that is
# not a share), score100 (a score on a 0-100 scale: BLEU, chrF, 100 x cosine), pp (a difference
# of two percents, in percentage points)
Unit = Literal["percent", "share", "score", "score100", "pp"]
# where a value was read: the paper's text, or (with a reason) a figure or somewhere the text
# does not print it
Source = Literal["text", "figure", "not_in_text"]
# a printed number: sign, digits, a decimal point or comma (SemanticQA table 13's subscripts)
NUMBER = re.compile(r"[+-]?\d+(?:[.,]\d+)?")


def number(printed: str) -> float:
    """The value of a printed number (a decimal comma read as a point)."""
    return float(printed.replace(",", "."))


class PublishedCell(StrictModel):
    """One printed number of a paper table."""

    benchmark: str
    paper: str
    table: str  # as the paper captions it: "Table 3", "Figure 5"
    model: str | None  # the row's model as printed; None where the table has no model column
    model_id: str | None  # the paper's model, the same across the paper's tables
    setting: str | None  # the project's setting; None where the paper's cell has no such setting
    metric: str | None  # the project's key under the setting; None where the project has none
    printed: str = Field(alias="value")  # the number as the paper prints it
    unit: Unit
    row: tuple[str, ...]  # the row's labels, outermost first (e.g. model, then setting)
    label: str  # the paper's column header, levels joined by " / "
    col: int = Field(ge=1)  # the value column, counted from 1 after the row labels
    num: int = Field(default=1, ge=1)  # which number of the cell: 2 for "65.57 (+7.55)"'s 7.55
    source: Source = "text"
    reason: str | None = None  # why a value is not read from the text
    note: str | None = None
    line: int  # the line of the data file

    @field_validator("printed")
    @classmethod
    def _a_number(cls, value: str) -> str:
        if not NUMBER.fullmatch(value):
            raise ValueError(f"value {value!r} is not a number as printed (a sign, digits, one decimal point or comma)")
        return value

    @model_validator(mode="after")
    def _source_reason(self) -> PublishedCell:
        if (self.source != "text") != (self.reason is not None):
            raise ValueError("a cell not read from the text needs a reason, and only such a cell has one")
        if not self.row:
            raise ValueError("row: at least one label")
        return self

    @property
    def value(self) -> float:
        return number(self.printed)

    @property
    def ref(self) -> str | None:
        """`<setting>/<metric>`: the name the report's cell (`tables.CellRef`) and the metrics body
        give the value, where both are known."""
        return None if self.setting is None or self.metric is None else f"{self.setting}/{self.metric}"

    def place(self) -> str:
        """Where it stands in the paper, for messages."""
        part = "" if self.num == 1 else f", number {self.num}"
        return f"{self.table}, row {' / '.join(self.row)}, column {self.col} ({self.label}){part}"


class PublishedTable(StrictModel):
    table: str
    title: str
    report: tuple[str, ...]  # the report's tables (ids) that reproduce it
    note: str | None = None


class Erratum(StrictModel):
    """A printed value the authors' released files contradict: the cell (by its place), the value
    printed, the value the release gives, how that was computed, and why it is an erratum."""

    table: str
    row: tuple[str, ...]
    col: int = Field(ge=1)
    num: int = Field(default=1, ge=1)
    printed: str
    release: str
    computed: str
    reason: str

    def key(self) -> tuple[str, tuple[str, ...], int, int]:
        return (self.table, self.row, self.col, self.num)


class Omission(StrictModel):
    """A reproduced table or figure, or part of one, whose printed values are not transcribed."""

    table: str
    reason: str


@dataclass(frozen=True)
class PublishedCells:
    """A benchmark's published values (`Benchmark.published_cells()`)."""

    benchmark: str
    paper: str
    tables: tuple[PublishedTable, ...]
    cells: tuple[PublishedCell, ...]
    errata: tuple[Erratum, ...]
    omitted: tuple[Omission, ...]
    source: str  # the data file, for messages

    @classmethod
    def none(cls, benchmark: str) -> PublishedCells:
        """No published values (a benchmark without a paper, or not transcribed)."""
        return cls(benchmark, "", (), (), (), (), "")

    def __iter__(self) -> Iterator[PublishedCell]:
        return iter(self.cells)

    def __len__(self) -> int:
        return len(self.cells)

    def erratum(self, cell: PublishedCell) -> Erratum | None:
        key = (cell.table, cell.row, cell.col, cell.num)
        return next((e for e in self.errata if e.key() == key), None)

    def find(
        self,
        *,
        table: str | None = None,
        model_id: str | None = None,
        setting: str | None = None,
        metric: str | None = None,
    ) -> list[PublishedCell]:
        """The cells matching every criterion given."""
        wanted = {"table": table, "model_id": model_id, "setting": setting, "metric": metric}
        return [c for c in self.cells if all(getattr(c, k) == v for k, v in wanted.items() if v is not None)]


ModelT = TypeVar("ModelT", bound=StrictModel)

# libyaml's loader where PyYAML has it: the pure-Python one takes seconds on a thousand cells
LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load(text: str, where: str) -> tuple[object, dict[str, list[int]]]:
    """The file's body, and per top-level list (cells, errata, ...) the 1-based line of each entry."""
    loader = LOADER(text)
    try:
        root = loader.get_single_node()
        body = None if root is None else loader.construct_document(root)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or error
        raise DataError(where, f"not YAML: {problem}", row=mark.line + 1 if mark else None) from None
    finally:
        loader.dispose()
    lines: dict[str, list[int]] = {}
    if isinstance(root, yaml.MappingNode):
        for key, value in root.value:
            if isinstance(value, yaml.SequenceNode):
                lines[str(key.value)] = [item.start_mark.line + 1 for item in value.value]
    return body, lines


def _problem(error: ValidationError) -> str:
    first = error.errors()[0]
    field = ".".join(str(p) for p in first["loc"])
    return f"{field}: {first['msg']}" if field else str(first["msg"])


def _entries(
    body: Mapping[str, object], key: str, lines: dict[str, list[int]], where: str
) -> list[tuple[int, dict[str, object]]]:
    entries = body.get(key)
    if entries is None:
        entries = []
    if not isinstance(entries, list):
        raise DataError(where, f"`{key}` must be a list")
    out = []
    for index, entry in enumerate(entries):
        line = lines.get(key, [])[index] if index < len(lines.get(key, [])) else None
        if not isinstance(entry, dict):
            raise DataError(where, f"`{key}` entry {index + 1} is not a mapping", row=line)
        out.append((line or 0, entry))
    return out


def _tuples(entry: Mapping[str, object], *keys: str) -> dict[str, object]:
    """`row` and `report` read from YAML lists as tuples (the models are frozen and strict)."""
    return {k: tuple(v) if k in keys and isinstance(v, list) else v for k, v in entry.items()}


def parse_published_cells(text: str, where: str, benchmark: str) -> PublishedCells:
    """A data file's text -> its validated cells; `where` names it in errors."""
    body, lines = _load(text, where)
    if not isinstance(body, dict):
        raise DataError(where, "not a mapping", expected="format, benchmark, paper, tables, cells, errata, omitted")
    unknown = sorted(set(body) - {"format", "benchmark", "paper", "tables", "cells", "errata", "omitted"})
    if unknown:
        raise DataError(where, f"unknown keys: {', '.join(map(str, unknown))}")
    if body.get("format") != FORMAT:
        raise DataError(where, f"format {body.get('format')!r}", expected=f"format: {FORMAT}")
    if body.get("benchmark") != benchmark:
        raise DataError(where, f"benchmark {body.get('benchmark')!r}", expected=f"benchmark: {benchmark}")
    paper = body.get("paper")
    if not isinstance(paper, str) or not paper:
        raise DataError(where, "`paper` must name the paper")

    def build(model: type[ModelT], line: int, entry: Mapping[str, object]) -> ModelT:
        try:
            return model.model_validate(entry)
        except ValidationError as error:
            raise DataError(where, _problem(error), row=line) from None

    tables = [build(PublishedTable, n, _tuples(e, "report")) for n, e in _entries(body, "tables", lines, where)]
    names = [t.table for t in tables]
    if len(set(names)) != len(names):
        raise DataError(where, f"a table listed twice in `tables`: {sorted({n for n in names if names.count(n) > 1})}")
    cells: list[PublishedCell] = []
    places: dict[tuple[str, tuple[str, ...], int, int], int] = {}
    keys: dict[tuple[str, str | None, str | None, str], int] = {}
    for line, entry in _entries(body, "cells", lines, where):
        reserved = sorted({"benchmark", "paper", "line"} & set(entry))
        if reserved:
            raise DataError(where, f"a cell may not set {', '.join(reserved)} (the file's)", row=line)
        cell = build(
            PublishedCell, line, {**_tuples(entry, "row"), "benchmark": benchmark, "paper": paper, "line": line}
        )
        if cell.table not in names:
            raise DataError(where, f"table {cell.table!r} is not in `tables`", row=line)
        place = (cell.table, cell.row, cell.col, cell.num)
        if place in places:
            raise DataError(where, f"{cell.place()} is transcribed twice (line {places[place]})", row=line)
        places[place] = line
        if cell.metric is not None:
            key = (cell.table, cell.model_id, cell.setting, cell.metric)
            if key in keys:
                raise DataError(
                    where,
                    f"{cell.table} {cell.model_id} {cell.setting} {cell.metric}: a second cell (line {keys[key]})",
                    row=line,
                )
            keys[key] = line
        cells.append(cell)
    by_place = {(c.table, c.row, c.col, c.num): c for c in cells}
    errata = []
    for line, entry in _entries(body, "errata", lines, where):
        erratum = build(Erratum, line, _tuples(entry, "row"))
        corrected = by_place.get(erratum.key())
        if corrected is None:
            raise DataError(where, "erratum of a cell that is not transcribed", row=line)
        if corrected.printed != erratum.printed:
            raise DataError(where, f"erratum printed {erratum.printed!r}, the cell {corrected.printed!r}", row=line)
        errata.append(erratum)
    omitted = [build(Omission, n, e) for n, e in _entries(body, "omitted", lines, where)]
    return PublishedCells(benchmark, paper, tuple(tables), tuple(cells), tuple(errata), tuple(omitted), where)


@cache
def load_published_cells(package: str, benchmark: str) -> PublishedCells:
    """The published values a benchmark package ships (`published_cells.yaml` beside its code)."""
    resource = resources.files(package).joinpath(FILE)
    where = f"{package.replace('.', '/')}/{FILE}"
    if not resource.is_file():
        raise DataError(where, "missing: the package declares published values but ships no file")
    return parse_published_cells(resource.read_text(encoding="utf-8"), where, benchmark)
