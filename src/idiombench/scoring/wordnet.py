"""WordNet 3.0 for NLTK (METEOR's synonym stage) without NLTK's downloader.

NLTK's downloader needs raw.githubusercontent.com; this project installs WordNet from
Debian's packages instead: `wordnet-base` (the WordNet 3.0 database: data.*, index.*,
*.exc) and `wordnet-sense-index` (index.sense, which NLTK's reader opens when it loads).
`install()` fetches both with `apt-get download` (no root needed), unpacks them with
`dpkg-deb -x`, and lays them out as NLTK expects:

    <data dir>/corpora/wordnet/{data,index}.{noun,verb,adj,adv}, *.exc, index.sense, lexnames

Debian does not ship `lexnames` (the list of the 45 lexicographer files, `man 5 lexnames`);
it is written from LEXNAMES below and checked against the table in the package's own
lexnames(5WN) man page when that page is present.

The data directory is project-local and git-ignored: `<project root>/.nltk_data`, or
$IDIOMBENCH_NLTK_DATA. `activate()` puts it first on nltk.data.path (the project sets
it; users do not set NLTK_DATA). A WordNet that NLTK's own downloader installed (for
instance `python -m nltk.downloader -d <dir> wordnet` on a machine with internet, then
IDIOMBENCH_NLTK_DATA=<dir>) is accepted as well.

Run by `make setup`:  python -m idiombench.scoring.wordnet
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from ..core.errors import IdiombenchError
from ..core.io import check_output_folder
from ..core.ownership import Output, files_named_by


class Lemma(Protocol):
    def name(self) -> str: ...


class Synset(Protocol):
    def lemmas(self) -> Iterable[Lemma]: ...


class WordNetReader(Protocol):
    """What METEOR reads of NLTK's WordNet reader (scoring.meteor)."""

    def synsets(self, lemma: str) -> Iterable[Synset]: ...


DATA_DIR_ENV = "IDIOMBENCH_NLTK_DATA"
PACKAGES = ("wordnet-base", "wordnet-sense-index")
POS_FILES = ("noun", "verb", "adj", "adv")
DATABASE_FILES = (
    *(f"data.{pos}" for pos in POS_FILES),
    *(f"index.{pos}" for pos in POS_FILES),
    *(f"{pos}.exc" for pos in POS_FILES),
    "index.sense",
)
REQUIRED_FILES = (*DATABASE_FILES, "lexnames")
# Copied along when the packages have them (NLTK does not need them).
OPTIONAL_FILES = ("cntlist.rev", "cntlist", "frames.vrb", "sentidx.vrb", "sents.vrb")
RECORD = "IDIOMBENCH_WORDNET.json"
# The install is ours when its record (written last) parses and lists every file in it.
WORDNET_OUTPUT = Output(
    "wordnet",
    "WordNet 3.0 database",
    legacy_record=RECORD,
    legacy=files_named_by(
        RECORD, lambda body: [str(name) for name in body["files"]] if isinstance(body["packages"], dict) else []
    ),
)

# The WordNet 3.0 lexicographer files, in file-number order (lexnames(5WN)). The third
# column of `lexnames` is the syntactic category: 1 noun, 2 verb, 3 adjective, 4 adverb.
LEXNAMES = (
    "adj.all",
    "adj.pert",
    "adv.all",
    "noun.Tops",
    "noun.act",
    "noun.animal",
    "noun.artifact",
    "noun.attribute",
    "noun.body",
    "noun.cognition",
    "noun.communication",
    "noun.event",
    "noun.feeling",
    "noun.food",
    "noun.group",
    "noun.location",
    "noun.motive",
    "noun.object",
    "noun.person",
    "noun.phenomenon",
    "noun.plant",
    "noun.possession",
    "noun.process",
    "noun.quantity",
    "noun.relation",
    "noun.shape",
    "noun.state",
    "noun.substance",
    "noun.time",
    "verb.body",
    "verb.change",
    "verb.cognition",
    "verb.communication",
    "verb.competition",
    "verb.consumption",
    "verb.contact",
    "verb.creation",
    "verb.emotion",
    "verb.motion",
    "verb.perception",
    "verb.possession",
    "verb.social",
    "verb.stative",
    "verb.weather",
    "adj.ppl",
)
CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}

NOT_INSTALLED_HELP = (
    "Install it with `make setup` (runs `python -m idiombench.scoring.wordnet`: apt-get download of Debian's "
    "wordnet-base and wordnet-sense-index). Where apt-get is not available (e.g. macOS), run "
    "`python -m nltk.downloader -d <dir> wordnet` on a machine with internet and set "
    f"{DATA_DIR_ENV}=<dir> (the directory holding corpora/wordnet)."
)


class WordNetMissing(IdiombenchError):
    """WordNet is not installed where the project looks for it."""


class WordNetInstallError(IdiombenchError):
    """`install()` could not obtain or lay out WordNet."""


def project_root() -> Path:
    """The source checkout this module belongs to (src/idiombench/scoring/wordnet.py)."""
    return Path(__file__).resolve().parents[3]


def data_dir() -> Path:
    """Where the project keeps its NLTK data: $IDIOMBENCH_NLTK_DATA, else <project root>/.nltk_data."""
    configured = os.environ.get(DATA_DIR_ENV)
    return Path(configured).expanduser().resolve() if configured else project_root() / ".nltk_data"


def wordnet_dir(root: Path) -> Path:
    return root / "corpora" / "wordnet"


def missing_files(root: Path | None = None) -> list[str]:
    directory = wordnet_dir(root or data_dir())
    return [name for name in REQUIRED_FILES if not (directory / name).is_file()]


def available(root: Path | None = None) -> bool:
    return not missing_files(root)


def lexnames_text() -> str:
    lines = []
    for number, name in enumerate(LEXNAMES):
        lines.append(f"{number:02d}\t{name}\t{CATEGORY[name.split('.')[0]]}\n")
    return "".join(lines)


def lexnames_from_manpage(text: str) -> list[str]:
    """The file names listed in the lexnames(5WN) man page's table, in file-number order."""
    names: dict[int, str] = {}
    for line in text.splitlines():
        match = re.match(r"^(\d\d)\t\s*([a-z]+\.[A-Za-z]+)\s*\t", line)
        if match:
            names[int(match.group(1))] = match.group(2)
    return [names[i] for i in sorted(names)]


def activate(root: Path | None = None) -> Path:
    """Put the project's NLTK data directory first on nltk.data.path and check that NLTK
    reads WordNet 3.0 from it. Call before nltk.corpus.wordnet is first used."""
    root = root or data_dir()
    missing = missing_files(root)
    if missing:
        raise WordNetMissing(
            f"WordNet is not installed in {wordnet_dir(root)} (missing: {', '.join(missing)}). {NOT_INSTALLED_HELP}"
        )
    import nltk.data

    if str(root) not in nltk.data.path:
        nltk.data.path.insert(0, str(root))
    return root


def load(root: Path | None = None) -> WordNetReader:
    """NLTK's WordNet reader over the project's WordNet 3.0 (loaded once; about 5 s)."""
    root = activate(root)
    from nltk.corpus import wordnet

    with warnings.catch_warnings():
        # no Open Multilingual Wordnet here; METEOR uses the English synsets only
        warnings.filterwarnings("ignore", message="The multilingual functions are not available")
        version = wordnet.get_version()
    if version != "3.0":
        raise WordNetMissing(f"NLTK loaded WordNet {version!r}, expected 3.0 (from {wordnet_dir(root)})")
    reader: WordNetReader = wordnet
    return reader


# --------------------------------------------------------------------------- installing


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise WordNetInstallError(f"`{command[0]}` is not available on this machine. {NOT_INSTALLED_HELP}") from exc


def download_packages(workdir: Path, apt_get: str = "apt-get") -> list[Path]:
    """`apt-get download` of PACKAGES into workdir; the .deb files, one per package."""
    done = _run([apt_get, "download", *PACKAGES], workdir)
    debs = {package: sorted(workdir.glob(f"{package}_*.deb")) for package in PACKAGES}
    missing = [package for package, found in debs.items() if not found]
    if done.returncode != 0 or missing:
        detail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise WordNetInstallError(
            f"`{apt_get} download {' '.join(PACKAGES)}` failed (exit {done.returncode}"
            f"{'; no .deb for ' + ', '.join(missing) if missing else ''}): {' | '.join(detail) or 'no output'}. "
            + NOT_INSTALLED_HELP
        )
    return [debs[package][-1] for package in PACKAGES]


def check_lexnames_manpage(extracted: Path) -> str:
    """Compare LEXNAMES with the package's lexnames(5WN) page; what was checked, for the record."""
    pages = sorted(extracted.glob("usr/share/man/man5/lexnames.5*"))
    if not pages:
        return "no lexnames(5WN) page in the packages; LEXNAMES written unchecked"
    raw = pages[0].read_bytes()
    text = (gzip.decompress(raw) if pages[0].suffix == ".gz" else raw).decode("utf-8", errors="replace")
    listed = lexnames_from_manpage(text)
    if listed != list(LEXNAMES):
        pairs = enumerate(zip(listed, LEXNAMES, strict=False))  # the shorter list's length: where one ends
        first = next((i for i, (a, b) in pairs if a != b), min(len(listed), len(LEXNAMES)))
        raise WordNetInstallError(
            f"{pages[0].name}: the man page lists {len(listed)} lexicographer files that differ from the "
            f"project's list of {len(LEXNAMES)} (first difference at {first})"
        )
    return f"LEXNAMES equals the table of {pages[0].name} ({len(listed)} files)"


def install(
    target: Path | None = None, *, apt_get: str = "apt-get", dpkg_deb: str = "dpkg-deb", force: bool = False
) -> Path:
    """Install WordNet 3.0 into `target` (default data_dir()); a no-op when already there.
    The new directory is assembled beside the old one and renamed into place."""
    target = (target or data_dir()).resolve()
    if available(target) and not force:
        return target
    destination = wordnet_dir(target)
    check_output_folder(destination, WORDNET_OUTPUT)  # replaces only a WordNet this module installed (or none)
    destination.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".wordnet-", dir=destination.parent) as scratch:
        work = Path(scratch)
        debs = download_packages(work, apt_get)
        extracted = work / "extracted"
        for deb in debs:
            done = _run([dpkg_deb, "-x", str(deb), str(extracted)], work)
            if done.returncode != 0:
                raise WordNetInstallError(f"`{dpkg_deb} -x {deb.name}` failed: {done.stderr.strip()}")
        source = extracted / "usr" / "share" / "wordnet"
        absent = [name for name in DATABASE_FILES if not (source / name).is_file()]
        if absent:
            raise WordNetInstallError(
                f"the packages {', '.join(d.name for d in debs)} lack {', '.join(absent)} under usr/share/wordnet"
            )
        staging = work / "wordnet"
        staging.mkdir()
        for name in (*DATABASE_FILES, *OPTIONAL_FILES):
            if (source / name).is_file():
                shutil.copyfile(source / name, staging / name)
        if (source / "lexnames").is_file():
            shutil.copyfile(source / "lexnames", staging / "lexnames")
            lexnames_note = "lexnames from the package"
        else:
            lexnames_note = check_lexnames_manpage(extracted)
            (staging / "lexnames").write_text(lexnames_text(), encoding="utf-8")
        record = {
            "packages": {d.name: hashlib.sha256(d.read_bytes()).hexdigest() for d in debs},
            "files": sorted(p.name for p in staging.iterdir()),
            "lexnames": lexnames_note,
        }
        (staging / RECORD).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        old = work / "old"
        if destination.exists():
            destination.rename(old)
        staging.rename(destination)
    return target


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m idiombench.scoring.wordnet", description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", type=Path, default=None, help=f"NLTK data directory (default: {data_dir()})")
    parser.add_argument("--force", action="store_true", help="reinstall even when WordNet is already there")
    parser.add_argument("--check", action="store_true", help="only load it with NLTK and report")
    args = parser.parse_args(argv)
    try:
        root = args.target.resolve() if args.target else data_dir()
        if not args.check:
            root = install(root, force=args.force)
        load(root)
    except (IdiombenchError, WordNetMissing) as exc:  # WordNetInstallError, or a folder it would not replace
        print(f"wordnet: {exc}", file=sys.stderr)
        return 1
    print(f"wordnet: WordNet 3.0 ready for NLTK in {wordnet_dir(root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
