"""The pieces a benchmark's report section builds its tables from, beside `tables.cell`: the
footnotes of a table's marks, and a count as printed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import SupportsInt


class Marks:
    """Collects the footnotes of the marks a table's cells carry, in first-use order. A mark is
    explained once per distinct note, or, with `per_mark`, once (its first note)."""

    def __init__(self, *, per_mark: bool = False) -> None:
        self.per_mark = per_mark
        self.notes: dict[str, str] = {}

    def add(self, mark: str, note: str | None) -> str:
        """`mark`, its note recorded for the footnotes (nothing recorded without a mark or a note)."""
        if mark and note:
            self.notes.setdefault(mark if self.per_mark else f"{mark} {note}", f"{mark} {note}")
        return mark

    def footnotes(self) -> list[str]:
        return list(self.notes.values())


def count_text(counts: Mapping[str, SupportsInt | None], key: str) -> str:
    """A count with thousands separators; — when the counts lack it."""
    value = counts.get(key)
    return "—" if value is None else f"{int(value):,}"
