"""Files and text produced elsewhere (replay sources, `evaluate-predictions` files, model outputs):
their size limits, and text made storable.

Limits (docs/troubleshooting.md#size-limits): a foreign file is at most `MAX_FILE_BYTES`
and a line of a line-based file at most `MAX_LINE_BYTES`; beyond either the reader stops
with one line naming the file (and row) before reading it whole, so a wrong file never
exhausts memory. A model output of 1 MB is well within both.

Text: Python strings may hold lone UTF-16 surrogates (a JSON `"\\ud800"` escape, an HTTP
body decoded leniently), which no UTF-8 file (Parquet, JSON, the cache) can store.
`storable_text` replaces each with U+FFFD; everything else (NUL, control and direction
characters) is stored as written; parsing normalises it (parsing.normalise_output).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from .errors import DataError

MAX_FILE_BYTES = 2 * 1024**3  # 2 GiB: a paper-scale generations table is a few hundred MB
MAX_LINE_BYTES = 16 * 1024**2  # 16 MiB per line (record): 16 times the longest output a model is given room for
REPLACEMENT = "\ufffd"
SURROGATE = re.compile("[\ud800-\udfff]")


def human_size(size: int) -> str:
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= scale:
            return f"{size / scale:g} {unit}"
    return f"{size} bytes"


def check_file_size(path: str | os.PathLike[str], what: str, limit: int | None = None) -> None:
    """DataError when the file is larger than the limit for foreign files."""
    limit = MAX_FILE_BYTES if limit is None else limit
    size = Path(path).stat().st_size
    if size > limit:
        raise DataError(
            path,
            f"{what} of {human_size(size)} is larger than the {human_size(limit)} a foreign file may have",
            expected="a file split into parts below the limit (docs/troubleshooting.md)",
        )


def text_lines(path: str | os.PathLike[str], what: str, expected: str) -> Iterator[tuple[int, str]]:
    """(line number from 1, the line decoded as UTF-8) of a foreign line-based file; the file
    and every line checked against the limits first, undecodable bytes a DataError naming the row."""
    check_file_size(path, what)
    with open(path, "rb") as handle:
        number = 0
        while True:
            raw = handle.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            number += 1
            if len(raw) > MAX_LINE_BYTES:
                raise DataError(path, f"a line longer than {human_size(MAX_LINE_BYTES)}", row=number, expected=expected)
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataError(
                    path, f"invalid UTF-8 byte 0x{raw[exc.start]:02x}", row=number, expected=expected
                ) from None
            yield number, line


def storable_text(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD (a surrogate pair becomes its character),
    so that it can be written as UTF-8; any other text unchanged."""
    if not SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
