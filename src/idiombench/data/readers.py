"""Strict readers for release files: every problem names the file, the row and what was expected."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..core.errors import DataError


def read_utf8(path: Path) -> str:
    """Decode as UTF-8 (a leading BOM is dropped); invalid bytes are an error with their line."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DataError(
            path,
            f"invalid UTF-8 byte 0x{data[exc.start]:02x} at byte offset {exc.start}",
            row=line,
            expected="UTF-8 text",
        ) from exc
    return text.removeprefix("\ufeff")


def read_csv_rows(
    path: Path,
    *,
    min_columns: int,
    max_columns: int | None = None,
    column_names: Sequence[str] = (),
    header: bool = False,
) -> list[tuple[int, list[str]]]:
    """Rows as (line number, cells). Blank lines are skipped; a row with too few or too
    many cells, an unterminated quote, or a missing final newline (a truncated file) is an error."""
    text = read_utf8(path)
    names = ", ".join(column_names) if column_names else f"{min_columns} columns"
    if text and not text.endswith("\n"):
        last_line = text.count("\n") + 1
        raise DataError(path, "file ends without a newline: truncated?", row=last_line, expected="complete rows")
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[tuple[int, list[str]]] = []
    try:
        for cells in reader:
            line = reader.line_num
            if not cells or all(not c.strip() for c in cells):
                continue
            if header and not rows and line == 1:
                rows.append((line, cells))
                continue
            if len(cells) < min_columns or (max_columns is not None and len(cells) > max_columns):
                raise DataError(path, f"{len(cells)} column(s): {cells!r}", row=line, expected=names)
            rows.append((line, cells))
    except csv.Error as exc:
        raise DataError(path, f"malformed CSV ({exc})", row=reader.line_num, expected=names) from exc
    if len(rows) <= (1 if header else 0):  # an empty release file would drop a whole language silently
        raise DataError(path, "no data rows (empty file)", expected=f"rows of {names}")
    return rows


def read_json_file(path: Path) -> Any:
    text = read_utf8(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(path, f"invalid JSON ({exc.msg}, column {exc.colno})", row=exc.lineno) from exc


def read_jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    rows = []
    for number, line in enumerate(read_utf8(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(path, f"invalid JSON ({exc.msg})", row=number, expected="one JSON object per line") from exc
        if not isinstance(record, dict):
            raise DataError(path, f"a {type(record).__name__}", row=number, expected="a JSON object")
        rows.append((number, record))
    if not rows:
        raise DataError(path, "no records (empty file)", expected="one JSON object per line")
    return rows


def require_keys(path: Path, row: int, record: Mapping[str, object], keys: Sequence[str]) -> None:
    missing = [k for k in keys if k not in record]
    if missing:
        raise DataError(path, f"missing field(s) {', '.join(missing)}", row=row, expected=f"fields {', '.join(keys)}")
