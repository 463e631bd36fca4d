"""Reading mapped records (JSON array, JSON lines or CSV) and checking their fields.

Every problem is a DataError naming the file, the record (line for JSON lines and
CSV, 1-based position for a JSON array) and the field that was expected, including
the params key that names the field so the user knows what to change.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...core.errors import DataError
from ...data.readers import read_csv_rows, read_json_file, read_jsonl
from .config import FileFormat

# CJK Unified Ideographs and Extension A: the characters of a chengyu.
_FOUR_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]{4}")

Record = dict[str, Any]


def is_four_cjk(text: str) -> bool:
    return _FOUR_CJK.fullmatch(text) is not None


def read_records(path: Path, file_format: FileFormat) -> list[tuple[int, Record]]:
    """(row, record) pairs in file order; a missing file or a non-object record is a DataError."""
    if not path.is_file():
        raise DataError(path, "no such file", expected=f"a {file_format} file (see the mapping in params.yaml)")
    if file_format == "jsonl":
        return read_jsonl(path)
    if file_format == "json":
        data = read_json_file(path)
        if not isinstance(data, list):
            raise DataError(path, f"top level is a JSON {type(data).__name__}", expected="a JSON array of objects")
        records = []
        for position, record in enumerate(data, start=1):
            if not isinstance(record, dict):
                raise DataError(
                    path, f"array element is a {type(record).__name__}", row=position, expected="a JSON object"
                )
            records.append((position, record))
        return records
    rows = read_csv_rows(path, min_columns=1, header=True)
    if not rows:
        return []
    header = [name.strip() for name in rows[0][1]]
    records = []
    for line, cells in rows[1:]:
        if len(cells) != len(header):
            expected = f"{len(header)} cells: {', '.join(header)}"
            raise DataError(path, f"{len(cells)} cell(s)", row=line, expected=expected)
        records.append((line, dict(zip(header, cells, strict=True))))
    return records


def require_field(path: Path, row: int, record: Mapping[str, Any], field: str, param: str) -> Any:
    if field not in record:
        present = ", ".join(sorted(record)) or "none"
        raise DataError(
            path,
            f"missing field {field!r} (fields present: {present})",
            row=row,
            expected=f"field {field!r}, named by params {param}",
        )
    return record[field]


def text_field(path: Path, row: int, record: Mapping[str, object], field: str, param: str) -> str:
    """A non-empty string, stripped of surrounding whitespace."""
    value = require_field(path, row, record, field, param)
    if not isinstance(value, str) or not value.strip():
        raise DataError(path, f"field {field!r} is {value!r}", row=row, expected=f"non-empty text in {field!r}")
    return value.strip()


def texts_field(path: Path, row: int, record: Mapping[str, object], field: str, param: str) -> list[str]:
    """A non-empty string, or a non-empty list of non-empty strings."""
    value = require_field(path, row, record, field, param)
    values = value if isinstance(value, list) else [value]
    if not values or not all(isinstance(v, str) and v.strip() for v in values):
        raise DataError(
            path, f"field {field!r} is {value!r}", row=row, expected=f"text or a non-empty list of texts in {field!r}"
        )
    return [v.strip() for v in values]


def label_text(value: object) -> str | None:
    """How a label cell is compared: JSON text for numbers and booleans, strings as written."""
    if isinstance(value, str):
        return value.strip().casefold()
    if isinstance(value, bool | int):
        return json.dumps(value)
    return None


def label_field(
    path: Path,
    row: int,
    record: Mapping[str, object],
    field: str,
    param: str,
    spellings: Mapping[str, Sequence[str]],
) -> str:
    """The normalised class of a label cell, from the configured spellings of each class."""
    value = require_field(path, row, record, field, param)
    text = label_text(value)
    for label, accepted in spellings.items():
        if text is not None and text in {s.strip().casefold() for s in accepted}:
            return label
    options = "; ".join(f"{label}: {', '.join(map(repr, accepted))}" for label, accepted in spellings.items())
    raise DataError(
        path,
        f"unknown label {value!r} in field {field!r}",
        row=row,
        expected=f"one of the spellings in params {param.rsplit('.', 1)[0]}.labels ({options})",
    )


def optional_id(path: Path, row: int, record: Mapping[str, object], field: str | None, param: str) -> object:
    """The release's own id (kept in meta), or None when no id field is mapped."""
    if field is None:
        return None
    value = require_field(path, row, record, field, param)
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise DataError(path, f"field {field!r} is {value!r}", row=row, expected=f"a string or integer id in {field!r}")
    return value
