"""Strict readers: bad input names the file, the row and what was expected."""

from __future__ import annotations

from pathlib import Path

import pytest

from idiombench.core.errors import DataError
from idiombench.data.readers import read_csv_rows, read_jsonl, read_utf8, require_keys


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


# Readers of the project's own files: one-line DataErrors naming the file (issue 13, item 2).


def test_parquet_truncated_empty_or_without_the_columns(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from idiombench.core.io import read_parquet

    schema = pa.schema([pa.field("a", pa.string()), pa.field("b", pa.int64())])
    good = tmp_path / "good.parquet"
    pq.write_table(pa.table({"a": ["x"] * 100, "b": list(range(100))}, schema=schema), good)
    assert read_parquet(good, schema).num_rows == 100
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(good.read_bytes()[:200])
    (tmp_path / "empty.parquet").write_bytes(b"")
    for path in (cut, tmp_path / "empty.parquet"):
        with pytest.raises(
            DataError, match=rf"^{path}: not a readable Parquet file \(.*\) \(expected a Parquet file\)$"
        ):
            read_parquet(path)
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"a": [1], "c": ["y"]}), other)
    with pytest.raises(DataError) as info:
        read_parquet(other, schema, what="test table")
    assert str(info.value) == (
        f"{other}: not a test table: missing columns b; unexpected columns c; a is int64 "
        "(expected string) (expected columns a, b)"
    )
    with pytest.raises(DataError, match="no such file"):
        read_parquet(tmp_path / "absent.parquet")


def test_repeated_item_ids_are_named_with_their_row(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from idiombench.core.items import ITEM_SCHEMA, Item, read_items

    row = Item(item_id="i1", benchmark="b", task="t", language="en", input="x").to_row()
    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pylist([row, {**row, "item_id": "i2"}, row], schema=ITEM_SCHEMA), path)
    with pytest.raises(DataError, match=rf"^{path}, row 2: item_id 'i1' repeated \(expected item ids unique"):
        read_items(path)


def test_empty_release_file_and_bad_json(tmp_path: Path) -> None:
    from idiombench.core.io import read_json

    empty = tmp_path / "Japanese.csv"
    empty.write_bytes(b"")
    with pytest.raises(DataError, match=rf"^{empty}: no data rows \(empty file\)"):
        read_csv_rows(empty, min_columns=1)
    header_only = tmp_path / "header.csv"
    header_only.write_text("a,b\n", encoding="utf-8")
    with pytest.raises(DataError, match="no data rows"):
        read_csv_rows(header_only, min_columns=2, header=True)
    (tmp_path / "empty.jsonl").write_text("\n", encoding="utf-8")
    with pytest.raises(DataError, match="no records"):
        read_jsonl(tmp_path / "empty.jsonl")
    (tmp_path / "bad.json").write_text('{"a": ', encoding="utf-8")
    with pytest.raises(DataError, match=r"bad.json: not valid JSON \(Expecting value, line 1, column 7\)"):
        read_json(tmp_path / "bad.json")


def test_an_output_path_under_a_regular_file_is_refused_before_the_work(tmp_path: Path) -> None:
    from idiombench.core.errors import IdiombenchError
    from idiombench.core.io import check_writable

    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(
        IdiombenchError,
        match=rf"^{tmp_path / 'file' / 'a' / 'b'}: cannot be written: "
        rf"{tmp_path / 'file'} is a file \(expected a folder\)$",
    ):
        check_writable(tmp_path / "file" / "a" / "b")
    assert check_writable(tmp_path / "new" / "dir") == tmp_path / "new" / "dir"
