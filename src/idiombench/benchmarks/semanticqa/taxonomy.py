"""The lexical-function taxonomy files (taxonomy/SEM_REL_CATEGORY*.txt).

Tab-separated with a header row; the columns differ per file (`ID Label Examples
Semantic Gloss`, `Label Examples Semantic Gloss` or `Label Semantic Gloss`), and
some cells carry trailing spaces (`4 \tBon \t...`), stripped when parsed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...core.errors import DataError
from ...data.readers import read_utf8

KNOWN_COLUMNS = ("ID", "Label", "Examples", "Semantic Gloss")


@dataclass(frozen=True)
class Relation:
    label: str
    id: str | None
    examples: tuple[str, ...]
    gloss: str
    row: int


@dataclass(frozen=True)
class Taxonomy:
    path: Path
    columns: tuple[str, ...]
    relations: tuple[Relation, ...]

    @property
    def labels(self) -> list[str]:
        return [r.label for r in self.relations]

    def get(self, label: str) -> Relation | None:
        return next((r for r in self.relations if r.label == label), None)


def read_taxonomy(path: Path) -> Taxonomy:
    lines = read_utf8(path).replace("\r\n", "\n").split("\n")
    header = tuple(cell.strip() for cell in lines[0].split("\t"))
    if not {"Label", "Semantic Gloss"} <= set(header) or not set(header) <= set(KNOWN_COLUMNS):
        raise DataError(path, f"header {list(header)}", row=1, expected=f"tab-separated columns among {KNOWN_COLUMNS}")
    relations: list[Relation] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = [cell.strip() for cell in line.split("\t")]
        if len(cells) != len(header):
            raise DataError(path, f"{len(cells)} tab-separated cells", row=number, expected=f"{len(header)}: {header}")
        row = dict(zip(header, cells, strict=True))
        label = row["Label"]
        if not label:
            raise DataError(path, "empty label", row=number, expected="a lexical function name")
        if label in seen:
            raise DataError(path, f"label {label!r} repeated (first on row {seen[label]})", row=number)
        seen[label] = number
        examples = tuple(e.strip() for e in row.get("Examples", "").split(",") if e.strip())
        relations.append(Relation(label, row.get("ID"), examples, row["Semantic Gloss"], number))
    if not relations:
        raise DataError(path, "no relations", expected="one row per lexical function")
    return Taxonomy(path, header, tuple(relations))


def prompt_text(path: Path, shots: int) -> str:
    """The text that fills {{taxonomy}}, as the authors' `load_taxonomy` builds it: every line
    verbatim for few-shot prompts; for zero-shot prompts only label and gloss (no example
    collocations); the header's `Semantic Gloss` becomes `Meaning`."""
    read_taxonomy(path)  # validates the layout first
    text = ""
    for line in read_utf8(path).replace("\r\n", "\n").splitlines(keepends=True):
        cells = line.split("\t")
        if shots > 0:
            text += line
        elif len(cells) == 2:
            text += cells[0] + "\t" + cells[1]
        elif len(cells) == 3:
            text += cells[0] + "\t" + cells[2]
        elif len(cells) == 4:
            text += cells[1] + "\t" + cells[3]
    return text.replace("Semantic Gloss", "Meaning")
