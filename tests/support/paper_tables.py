"""The papers' tables as their texts print them (the papers folder beside the release mirror, or
IDIOMBENCH_PAPERS): what tests/unit/report/test_published_cells_text.py holds each transcribed
published cell against.

A table is the block of non-blank lines just above its caption line (`Table 3: ...`,
`Figure 5: ...`), one printed row per line, its cells separated by tabs (the texts' layout for
every table the data files transcribe). A line's leading fields that are not numbers are its
row labels (`Qwen-3-14B`, `Zero-shot`; `↪ + three-shot` continues the model above it), the rest
its value cells, counted from 1. A cell may print more than one number: `65.57 (+7.55)`,
`98.9 <sub>1,0</sub>` (a mean and its standard deviation with a decimal comma).

A row is found by a path of labels, each searched after the previous one in the table's order
of labels: [`Qwen-3-14B`, `+CoT`] is the first `+CoT` row at or after the `Qwen-3-14B` label.
Labels compare with HTML tags removed and whitespace collapsed, exactly otherwise.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

PAPERS_ENV = "IDIOMBENCH_PAPERS"
# each benchmark's paper text in the papers folder
PAPER_FILES = {
    "orderprobe": "orderprobe-paper.txt",
    "g-idiomalign": "g-idiomalign-paper.txt",
    "semanticqa": "semanticqa-paper.md",
    "chengyu-bench": "chengyu-bench-paper.md",
}

TAG = re.compile(r"<[^>]*>")
# a printed number: sign, digits, a decimal point or (SemanticQA table 13's subscripts) a decimal comma
NUMBER = re.compile(r"[+-]?\d+(?:[.,]\d+)?")
# a cell that prints a value: a number (not `0-shot`) or a bound (`< 0.001`)
NUMERIC_CELL = re.compile(r"^(?:[+-]?\d+(?:[.,]\d+)?(?=$|[\s(<$])|<\s*\d)")
# a dash or nothing: a value cell without a value
EMPTY_CELL = re.compile(r"^(?:[-–—_]|)$")


def papers_dir(mirrors: list[Path]) -> tuple[Path | None, str]:
    """The folder of the papers' texts and how it was found: IDIOMBENCH_PAPERS when set (an error
    when it names no folder holding them: a set variable is never skipped over), else a `papers`
    folder beside one of the mirror directories (developers' machines and CI keep the papers beside
    the releases). (None, why) when neither is there."""
    named = os.environ.get(PAPERS_ENV)
    if named:
        path = Path(named).resolve()
        missing = [name for name in PAPER_FILES.values() if not (path / name).is_file()]
        if missing:
            raise FileNotFoundError(f"{PAPERS_ENV}={named}: no {', '.join(missing)} there")
        return path, f"{PAPERS_ENV}={named}"
    for mirror in mirrors:
        candidate = mirror.parent / "papers"
        if all((candidate / name).is_file() for name in PAPER_FILES.values()):
            return candidate, f"beside the mirror directory {mirror}"
    shown = ", ".join(str(m) for m in mirrors) or "none"
    return None, f"{PAPERS_ENV} is unset and no mirror directory ({shown}) has a papers folder beside it"


def clean(text: str) -> str:
    """A field as compared: HTML tags removed, whitespace collapsed."""
    return " ".join(TAG.sub(" ", text).split())


def is_value(field: str) -> bool:
    text = clean(field)
    return NUMERIC_CELL.match(text) is not None or EMPTY_CELL.match(text) is not None


@dataclass(frozen=True)
class Row:
    line: int  # 1-based line of the paper text
    labels: tuple[str, ...]
    values: tuple[str, ...]  # the value cells, as printed (tags kept)


@dataclass(frozen=True)
class PaperTable:
    caption: str  # "Table 3", "Figure 5"
    caption_line: int
    header: tuple[str, ...]  # the block's lines above its first row with a value
    rows: tuple[Row, ...]

    def find(self, path: list[str]) -> Row:
        """The row a label path leads to (see the module's docstring); KeyError naming the label
        not found."""
        labels = [
            (index, position, label) for index, row in enumerate(self.rows) for position, label in enumerate(row.labels)
        ]
        start = 0
        found: tuple[int, int, str] | None = None
        for wanted in path:
            target = clean(wanted)
            hit = next((k for k in range(start, len(labels)) if labels[k][2] == target), None)
            if hit is None:
                after = f" after {found[2]!r} (line {self.rows[found[0]].line})" if found else ""
                raise KeyError(f"{self.caption}: no row label {wanted!r}{after}")
            found = labels[hit]
            start = hit + 1
        assert found is not None, "an empty row path"
        return self.rows[found[0]]

    def header_text(self) -> str:
        """The header lines as compared with a cell's label: cleaned, LaTeX's `$\\Delta\\text{Acc}@0.80$`
        read as `ΔAcc@0.80`."""
        text = clean(" ".join(self.header)).replace("\\Delta", "Δ")
        return re.sub(r"\\text\{([^}]*)\}", r"\1", text).replace("$", "")


def numbers(cell: str) -> list[str]:
    """The numbers a value cell prints, in order, as printed."""
    return NUMBER.findall(TAG.sub(" ", cell))


def table(text: str, caption: str) -> PaperTable:
    """The table whose caption line starts `<caption>:` (exactly one such line)."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.lstrip("#* ").startswith(f"{caption}:")]
    if len(starts) != 1:
        raise KeyError(f"{len(starts)} caption lines start {caption + ':'!r}")
    end = starts[0]
    top = end
    while top > 0 and not lines[top - 1].strip():
        top -= 1
    bottom = top
    while top > 0 and lines[top - 1].strip():
        top -= 1
    header: list[str] = []
    rows: list[Row] = []
    valued = False
    for number in range(top, bottom):
        fields = lines[number].split("\t")
        while fields and not clean(fields[0]):
            fields.pop(0)
        split = next((i for i, f in enumerate(fields) if is_value(f)), len(fields))
        labels = tuple(clean(f) for f in fields[:split])
        values = tuple(fields[split:])
        printed = [clean(v) for v in values if clean(v)]
        valued = valued or bool(printed and NUMERIC_CELL.match(printed[0]))
        if not valued:
            header.append(lines[number])
        rows.append(Row(number + 1, labels, values))
    return PaperTable(caption, end + 1, tuple(header), tuple(rows))
