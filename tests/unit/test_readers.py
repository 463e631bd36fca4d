"""Strict readers: bad input names the file, the row and what was expected."""

from __future__ import annotations

from pathlib import Path

import pytest

from idiombench.data.readers import read_csv_rows, read_jsonl, read_utf8, require_keys
from idiombench.errors import DataError


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_bom_and_crlf_are_handled(tmp_path: Path):
    path = write(tmp_path / "a.csv", "\ufeff一丘之貉,比喻同类\r\n画蛇添足,多此一举\r\n".encode())
    rows = read_csv_rows(path, min_columns=2, max_columns=2)
    assert rows == [(1, ["一丘之貉", "比喻同类"]), (2, ["画蛇添足", "多此一举"])]


def test_non_utf8_bytes_name_file_and_line(tmp_path: Path):
    path = write(tmp_path / "bad.csv", "一丘之貉,比喻同类\r\n".encode() + b"\xff\xfe,x\r\n")
    with pytest.raises(DataError) as info:
        read_utf8(path)
    message = str(info.value)
    assert "bad.csv, row 2" in message and "invalid UTF-8 byte 0xff" in message and "expected UTF-8 text" in message


def test_truncated_csv_is_an_error(tmp_path: Path):
    path = write(tmp_path / "cut.csv", "一丘之貉,比喻同类\r\n画蛇添足,多此".encode())
    with pytest.raises(DataError) as info:
        read_csv_rows(path, min_columns=2, max_columns=2)
    assert "cut.csv, row 2: file ends without a newline: truncated?" in str(info.value)


def test_unterminated_quote_is_an_error(tmp_path: Path):
    path = write(tmp_path / "q.csv", '一丘之貉,"比喻同类\r\n'.encode())
    with pytest.raises(DataError) as info:
        read_csv_rows(path, min_columns=2, max_columns=2, column_names=("expression", "references"))
    assert "q.csv" in str(info.value) and "malformed CSV" in str(info.value)


def test_missing_column_names_the_expected_columns(tmp_path: Path):
    path = write(tmp_path / "m.csv", "一丘之貉,比喻同类\r\n画蛇添足\r\n".encode())
    with pytest.raises(DataError) as info:
        read_csv_rows(path, min_columns=2, max_columns=2, column_names=("expression", "references"))
    assert "m.csv, row 2: 1 column(s)" in str(info.value)
    assert "expected expression, references" in str(info.value)


def test_jsonl_errors(tmp_path: Path):
    path = write(tmp_path / "x.jsonl", b'{"a": 1}\n{"a": \n[1]\n')
    with pytest.raises(DataError, match=r"x.jsonl, row 2: invalid JSON"):
        read_jsonl(path)
    path = write(tmp_path / "y.jsonl", b'{"a": 1}\n[1]\n')
    with pytest.raises(DataError, match=r"y.jsonl, row 2: a list \(expected a JSON object\)"):
        read_jsonl(path)


def test_require_keys(tmp_path: Path):
    with pytest.raises(DataError, match=r"f.json, row 7: missing field\(s\) answer"):
        require_keys(tmp_path / "f.json", 7, {"id": 1}, ["id", "answer"])
