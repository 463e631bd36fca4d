"""Atomic, deterministic file output.

Every stage writes through these helpers: the content goes to a temporary file in
the destination directory and is renamed into place, so a crash never leaves a
partial file that a later stage could mistake for complete.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

from . import ownership
from .errors import DataError, IdiombenchError
from .ownership import Output

T = TypeVar("T")


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside `path`; rename it onto `path` only on success."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual permissions
    try:
        yield tmp
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


ASIDE_SUFFIX = ".replaced"


def aside_path(target: Path) -> Path:
    """Where `replace_directory` parks the previous output while the new one moves in."""
    return target.parent / f".{target.name}{ASIDE_SUFFIX}"


def recover_directory(path: str | os.PathLike[str]) -> None:
    """Finish or undo a replace that a kill interrupted (see `replace_directory`).

    An aside directory with no current output is the previous complete output, caught
    between its two renames: it is moved back. An aside directory beside a current
    output is the old copy that was about to be deleted: it is deleted. (An aside that is a
    symbolic link, which an earlier version left when the output itself was a link, loses the
    link only, never what it points to.)"""
    target = Path(path)
    aside = aside_path(target)
    if not os.path.lexists(aside):
        return
    if os.path.lexists(target):
        if aside.is_symlink():
            aside.unlink()
        else:
            shutil.rmtree(aside)
    else:
        aside.rename(target)


def replace_directory(staging: Path, target: Path) -> None:
    """Move the complete `staging` directory onto `target`, never deleting before renaming.

    Steps: (1) the old `target` is renamed aside, (2) `staging` is renamed to `target`,
    (3) the aside copy is deleted. Every step is one rename or happens after the new
    output is in place, so a kill at any point leaves either the old or the new complete
    directory (or the old one aside, which `recover_directory` moves back)."""
    recover_directory(target)
    aside = aside_path(target)
    if target.exists():
        target.rename(aside)
    staging.rename(target)
    if aside.exists():
        shutil.rmtree(aside)


def require_complete(directory: str | os.PathLike[str], record: str, *, how: str) -> Path:
    """`directory` when it holds its completion `record` (written last by its stage), else a
    one-line IdiombenchError naming it; `how` says how to make it (e.g. the command)."""
    folder = Path(directory)
    if not folder.is_dir():
        raise IdiombenchError(f"{folder} is missing: {how}")
    if not (folder / record).is_file():
        raise IdiombenchError(f"{folder} is incomplete (no {record}, which its stage writes last): {how}")
    return folder


@contextlib.contextmanager
def staged_directory(path: str | os.PathLike[str], output: Output) -> Iterator[Path]:
    """Yield a fresh staging directory beside `path`; on success it replaces `path` whole.

    Readers see either the previous complete directory or the new complete one, never a
    mix; on an exception the staging directory is removed and `path` is left untouched.
    After the stage's own files, the folder's completion record (ownership.RECORD: `output`'s
    stage and kind, every file with its sha256) is written last; an existing `path` is replaced
    only when it is `output` as a stage wrote it (check_output_folder)."""
    target = check_output_folder(path, output)
    target.parent.mkdir(parents=True, exist_ok=True)
    recover_directory(target)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    os.chmod(staging, 0o777 & ~_umask())  # mkdtemp makes 0700; outputs get the usual permissions
    try:
        yield staging
        write_json(staging / ownership.RECORD, ownership.folder_record(staging, output))
        check_output_folder(target, output)  # again: the folder may have changed during the work
        replace_directory(staging, target)
    finally:
        if staging.exists():
            shutil.rmtree(staging)


def check_writable(path: str | os.PathLike[str]) -> Path:
    """`path` when a stage can create it: no existing ancestor is a regular file. Checked
    before the work, so that a bad --out fails at once, not after generating everything."""
    target = Path(path)
    for ancestor in [target, *target.parents][1:]:
        if ancestor.exists():
            if not ancestor.is_dir():
                raise IdiombenchError(f"{target}: cannot be written: {ancestor} is a file (expected a folder)")
            break
    return target


# A stage replaces only what it provably made (core/ownership.py: the completion record that says who
# wrote an output and what it covers). Checked by the CLI before any work, and again just before
# the swap.
NOT_OURS = "move it away (or delete it) if it is no longer needed, or write elsewhere (--out)"


def check_output_folder(path: str | os.PathLike[str], output: Output) -> Path:
    """`path` when a stage may write its output folder there: it does not exist, is empty, or is
    `output` as idiombench wrote it (ownership.folder_problem). A symbolic link is refused: the
    folder is replaced by renames, which would replace the link, not the folder it points to.
    Otherwise a one-line error, before any work."""
    target = check_writable(path)
    if target.is_symlink():
        raise IdiombenchError(
            f"{target} is a symbolic link (to {os.readlink(target)}); idiombench replaces an output folder whole "
            f"and does not follow a link there: pass the folder it points to (--out), or link a folder above it"
        )
    if not os.path.lexists(target):
        return target
    if not target.is_dir():
        raise IdiombenchError(f"{target} is a file, not an output folder of idiombench: {NOT_OURS}")
    if not any(target.iterdir()):
        return target
    problem = ownership.folder_problem(target, output)
    if problem is None:
        return target
    raise IdiombenchError(
        f"{target} exists and was not written by idiombench ({problem}); it would be replaced whole: {NOT_OURS}"
    )


def check_output_file(path: str | os.PathLike[str], ours: Callable[[Path], bool], what: str) -> Path:
    """`path` when a stage may write its output file there: it does not exist, or `ours`
    recognises it as `what` (e.g. "a metrics file of `idiombench aggregate`"). Otherwise a
    one-line error, before any work. A symbolic link (e.g. DVC's link to its cache) is checked
    through, and then replaced by the new file: the file it points to is never written."""
    target = check_writable(path)
    if not os.path.lexists(target):
        return target
    if target.is_dir():
        raise IdiombenchError(f"{target} is a folder (expected {what}): {NOT_OURS}")
    if not ours(target):
        raise IdiombenchError(f"{target} exists and is not {what}; it would be overwritten: {NOT_OURS}")
    return target


def write_index(path: Path, stage: str) -> None:
    """The list of the files a stage wrote into a folder it fills with files of its own naming
    (report's tables/ and figures/, results/plots/), for the folder's readers."""
    folder = path.parent
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and p != path)
    write_json(path, {"written_by": f"idiombench {stage}", "files": files})


def earlier_index(stage: str) -> Callable[[Path], bool]:
    """The legacy rule of a folder with an index.json (write_index) and no completion record:
    the index names this stage and lists exactly the folder's other files."""

    def recognise(folder: Path) -> bool:
        body = ownership.read_object(folder / "index.json")
        files = None if body is None else body.get("files")
        if body is None or body.get("written_by") != f"idiombench {stage}" or not isinstance(files, list):
            return False
        return sorted(files) == [name for name in ownership.folder_files(folder) if name != "index.json"]

    return recognise


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def dumps_json(obj: object) -> str:
    """Deterministic JSON: sorted keys, UTF-8 kept readable, trailing newline."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=2) + "\n"


def write_json(path: str | os.PathLike[str], obj: object) -> None:
    write_text(path, dumps_json(obj))


def read_json(path: str | os.PathLike[str]) -> Any:
    """A JSON file some stage wrote; unreadable or malformed is a one-line DataError naming it."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        raise DataError(path, "no such file") from None
    except UnicodeDecodeError as exc:
        raise DataError(path, f"not UTF-8 text (offset {exc.start})", expected="a JSON file") from None
    except json.JSONDecodeError as exc:
        raise DataError(path, f"not valid JSON ({exc.msg}, line {exc.lineno}, column {exc.colno})") from None


def read_json_object(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A JSON record some stage wrote (an object at the top level); anything else is a
    one-line DataError naming the file."""
    body = read_json(path)
    if not isinstance(body, dict):
        raise DataError(path, f"a JSON {type(body).__name__} at the top level", expected="a JSON object")
    return body


def write_parquet(path: str | os.PathLike[str], table: pa.Table) -> None:
    """Write a Parquet file atomically and reproducibly (no creation timestamps in metadata)."""
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd", write_statistics=False, store_schema=True)


class ParquetAppender:
    """A Parquet file written in parts (one row group each) with write_parquet's settings, so a
    file written in one part has write_parquet's bytes. Write it inside a staged folder (or
    atomic_path): a file whose writer was not closed is incomplete."""

    def __init__(self, path: str | os.PathLike[str], schema: pa.Schema) -> None:
        self._writer = pq.ParquetWriter(path, schema, compression="zstd", write_statistics=False, store_schema=True)

    def write(self, table: pa.Table) -> None:
        self._writer.write_table(table)

    def close(self) -> None:
        self._writer.close()


def _parquet(path: str | os.PathLike[str], what: str, read: Callable[[], T]) -> T:
    """`read()` of a Parquet file, its failures as one-line DataErrors naming the file."""
    expected = f"a Parquet file ({what})" if what else "a Parquet file"
    if Path(path).is_dir():
        raise DataError(path, "is a folder", expected=expected)
    try:
        return read()
    except FileNotFoundError:
        raise DataError(path, "no such file", expected=expected) from None
    except (pa.ArrowException, OSError) as exc:  # truncated, empty, random bytes
        problem = " ".join(str(exc).split())[:200]
        raise DataError(path, f"not a readable Parquet file ({problem})", expected=expected) from None


def read_parquet(
    path: str | os.PathLike[str], schema: pa.Schema | None = None, *, what: str = "", columns: list[str] | None = None
) -> pa.Table:
    """A Parquet file as a table (only `columns`, given). A missing, truncated or non-Parquet
    file, a missing column, or (given `schema`) a table without the expected columns and types,
    is a one-line DataError naming the file."""
    if columns is not None:
        missing = [c for c in columns if c not in read_parquet_schema(path, what=what).names]
        if missing:
            raise DataError(path, f"missing columns {', '.join(missing)}", expected=f"columns {', '.join(columns)}")
    table = _parquet(path, what, lambda: pq.read_table(path, columns=columns))
    if schema is not None:
        check_columns(path, table.schema, schema, what or "table")
    return table


def parquet_rows(path: str | os.PathLike[str], *, what: str = "") -> int:
    """The number of rows of a Parquet file (its footer only); unreadable is a one-line DataError."""
    return int(_parquet(path, what, lambda: pq.read_metadata(path).num_rows))


def read_parquet_schema(path: str | os.PathLike[str], *, what: str = "") -> pa.Schema:
    """The schema of a Parquet file (its footer only); unreadable is a one-line DataError."""
    return _parquet(path, what, lambda: pq.read_schema(path))


def check_columns(path: str | os.PathLike[str], actual: pa.Schema, expected: pa.Schema, what: str) -> None:
    """Every column of `expected` present with its type (extra columns are an error too: the
    file is then not what the stage wrote)."""
    missing = [f.name for f in expected if f.name not in actual.names]
    extra = [name for name in actual.names if name not in expected.names]
    wrong = [
        f"{f.name} is {actual.field(f.name).type} (expected {f.type})"
        for f in expected
        if f.name in actual.names and not actual.field(f.name).type.equals(f.type)
    ]
    problems = (
        ([f"missing columns {', '.join(missing)}"] if missing else [])
        + ([f"unexpected columns {', '.join(extra)}"] if extra else [])
        + wrong
    )
    if problems:
        raise DataError(path, f"not a {what}: {'; '.join(problems)}", expected=f"columns {', '.join(expected.names)}")


def sha256_file(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def stable_hash(obj: object, length: int = 16) -> str:
    """Hash of a JSON-serialisable object, independent of dict order."""
    blob = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:length]
