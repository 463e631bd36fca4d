"""Owned outputs: a stage replaces only what it provably made.

A name proves nothing (a user's folder may hold a `summary.json` or an `index.json` too), so an
output carries a completion record that says who wrote it and what it covers:

* an output **folder** holds `idiombench-output.json`, written last into the staged folder
  (io.staged_directory), before the folder is swapped into place:

      {"format": 1, "tool": "idiombench", "stage": "attention", "kind": "attention diagnostics",
       "files": {"items.parquet": {"sha256": "<hex>", "size": 123}, "summary.json": {...}}}

  The folder is ours when that record parses, names the stage and kind of the command about to
  write it, and covers the folder: every file in it (the record itself and Snakemake's
  `.snakemake_timestamp` aside) is listed, with the size and sha256 the stage wrote. A file the
  record does not list, or a listed file whose content changed, is someone else's: refused.
* an output **JSON file** (metrics, tracking record) carries the same facts in a key of its own,
  `"idiombench_output": {"tool", "stage", "kind", "sha256"}`, where sha256 is that of the rest of
  the object in canonical JSON (sorted keys, no spaces): a hand-made or edited file is refused.

Outputs of earlier versions (no such record) are recognised only by `Output.legacy`, as narrowly
as their content allows: the completion record they did write must parse and name every file in
the folder (core/paths.py lists the rules, docs/ARCHITECTURE.md "Owned output" explains them).
This module reads and checks; core/io.py writes (atomically) and refuses.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, cast

RECORD = "idiombench-output.json"
STAMP = "idiombench_output"  # the key of a JSON output file's record
TOOL = "idiombench"
FORMAT = 1
# Files a workflow tool adds to a folder output of ours: Snakemake's mtime carrier of directory
# outputs (.dvcignore lists it, so DVC's hash is the same whichever tool wrote the folder).
WORKFLOW_MARKERS = frozenset({".snakemake_timestamp"})


class FileFacts(TypedDict):
    """What a completion record says of one file."""

    sha256: str
    size: int


class FolderRecord(TypedDict):
    """A folder's completion record (RECORD)."""

    format: int
    tool: str
    stage: str
    kind: str
    files: dict[str, FileFacts]


@dataclass(frozen=True)
class Output:
    """What a stage writes: the command (`stage`) and what the output is (`kind`). `legacy`
    recognises a folder of ours that carries no record of this format (an earlier version's
    output; or, for the dense model copies and the WordNet install, the module's own record,
    which lists its files): as narrow as the content allows."""

    stage: str
    kind: str
    legacy: Callable[[Path], bool] | None = None
    legacy_record: str | None = None  # the record the legacy rule reads (named in refusals)

    @property
    def who(self) -> str:
        return f"`{TOOL} {self.stage}` ({self.kind})"


# ------------------------------------------------------------------------------ contents

UNREADABLE = object()  # what read_json gives for a file that is absent, unreadable or not JSON


def read_json(path: Path) -> object:
    """A record's JSON, or UNREADABLE: a record that cannot be read is not ours (the caller
    refuses the output in one line), never an error of its own."""
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return UNREADABLE


def folder_files(folder: Path) -> list[str]:
    """Every entry of `folder` that holds content, as a sorted relative POSIX path: files,
    symbolic links (DVC's link cache types put links to its cache here) and anything else that
    is not a directory; not the record itself nor a workflow tool's marker. Directories are
    walked, never followed through a link."""
    found: list[str] = []
    for top, dirs, files in os.walk(folder, followlinks=False):
        base = Path(top)
        linked = [name for name in dirs if (base / name).is_symlink()]
        for name in [*files, *linked]:
            relative = (base / name).relative_to(folder).as_posix()
            if relative != RECORD and name not in WORKFLOW_MARKERS:
                found.append(relative)
    return sorted(found)


_DIGESTS: dict[tuple[int, int, int, int], str] = {}  # (device, inode, size, mtime_ns) -> sha256


def file_sha256(path: Path) -> str:
    """sha256 of a file's content, once per process for an unchanged file (the CLI checks an
    output before the work and io.staged_directory again before the swap)."""
    stat = path.stat()
    key = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
    if key not in _DIGESTS:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            while block := handle.read(1 << 20):
                digest.update(block)
        _DIGESTS[key] = digest.hexdigest()
    return _DIGESTS[key]


def folder_record(folder: Path, output: Output) -> FolderRecord:
    """The record of a complete staged folder: every file it holds, with size and sha256."""
    files: dict[str, FileFacts] = {}
    for name in folder_files(folder):
        path = folder / name
        files[name] = {"sha256": file_sha256(path), "size": path.stat().st_size}
    return {"format": FORMAT, "tool": TOOL, "stage": output.stage, "kind": output.kind, "files": files}


def _shown(names: Iterable[str], limit: int = 3) -> str:
    names = list(names)
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def record_problem(body: object, output: Output) -> str | None:
    """Why a parsed record is not one of `output`'s (None when it is)."""
    if not isinstance(body, dict) or body.get("tool") != TOOL or body.get("format") != FORMAT:
        return f"its {RECORD} is not a record of {TOOL} (format {FORMAT})"
    if (body.get("stage"), body.get("kind")) != (output.stage, output.kind):
        stage, kind = (str(body.get(key))[:60] for key in ("stage", "kind"))  # a forged record's text, clipped
        return f"its {RECORD} is that of `{TOOL} {stage}` ({kind}), not of {output.who}"
    files = body.get("files")
    if not isinstance(files, dict) or not all(
        isinstance(facts, dict) and isinstance(facts.get("sha256"), str) and isinstance(facts.get("size"), int)
        for facts in files.values()
    ):
        return f"its {RECORD} lists no files with their sha256 and size"
    return None


def folder_problem(folder: Path, output: Output) -> str | None:
    """Why `folder` (an existing directory) is not `output` as a stage wrote it, in words that
    complete "exists and was not written by idiombench (...)"; None when it is."""
    record = folder / RECORD
    if not record.is_file():
        return _legacy_problem(folder, output)
    body = read_json(record)
    if body is UNREADABLE:
        return f"its {RECORD} is not valid JSON"
    problem = record_problem(body, output)
    if problem is not None:
        return problem
    listed = cast(FolderRecord, body)["files"]  # record_problem checked its shape
    present = folder_files(folder)
    extra = [name for name in present if name not in listed]
    if extra:
        return f"it holds {_shown(extra)}, which its {RECORD} does not list"
    changed = []
    for name in present:
        path = folder / name
        facts = listed[name]
        try:
            same = path.is_file() and path.stat().st_size == facts["size"] and file_sha256(path) == facts["sha256"]
        except OSError:
            same = False
        if not same:
            changed.append(name)
    if changed:
        return f"{_shown(changed)} differ{'s' if len(changed) == 1 else ''} from what its {RECORD} records"
    return None  # listed files that are gone hold nothing to lose


def _legacy_problem(folder: Path, output: Output) -> str | None:
    if output.legacy is not None and output.legacy(folder):
        return None
    if output.legacy_record is None:
        return f"no {RECORD}"
    if not (folder / output.legacy_record).is_file():
        return f"no {RECORD} and no {output.legacy_record}"
    return f"no {RECORD}, and its {output.legacy_record} is not a record of {output.who} that names every file in it"


# ------------------------------------------------------------------------ JSON output files


def canonical_sha256(body: Mapping[str, object]) -> str:
    blob = json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def stamp(body: Mapping[str, object], output: Output) -> dict[str, object]:
    """`body` with its record: who wrote it and the sha256 of the rest (canonical JSON)."""
    rest = {key: value for key, value in body.items() if key != STAMP}
    return {**rest, STAMP: {"tool": TOOL, "stage": output.stage, "kind": output.kind, "sha256": canonical_sha256(rest)}}


def unstamped(body: Mapping[str, object]) -> dict[str, object]:
    """A JSON output's content without its record (what readers compare)."""
    return {key: value for key, value in body.items() if key != STAMP}


# A text file a command generates whole (dvc.yaml, a merged params file) ends with a comment that
# holds the sha256 of every line above it: a header alone proves nothing (anyone can type it),
# so a hand-made or edited file is never taken for ours.
SEAL = f"# sealed by {TOOL}, the sha256 of the lines above: "


def sealed(text: str) -> str:
    """`text` with its seal as the last line."""
    text = text if text.endswith("\n") else text + "\n"
    return f"{text}{SEAL}{hashlib.sha256(text.encode('utf-8')).hexdigest()}\n"


def is_sealed(path: Path) -> bool:
    """The file ends with the seal of the lines above it (sealed)."""
    try:
        data = path.read_bytes()
    except OSError:
        return False
    body, _, last = data.removesuffix(b"\n").rpartition(b"\n")
    digest = hashlib.sha256(body + b"\n").hexdigest()
    return last == f"{SEAL}{digest}".encode()


def stamped_by(path: Path, output: Output) -> bool:
    """Whether `path` is a JSON file `output`'s stage wrote, unchanged since (its record matches)."""
    body = read_object(path)
    mark = None if body is None else body.get(STAMP)
    if body is None or not isinstance(mark, dict):
        return False
    rest = unstamped(body)
    return (mark.get("tool"), mark.get("stage"), mark.get("kind")) == (TOOL, output.stage, output.kind) and mark.get(
        "sha256"
    ) == canonical_sha256(rest)


# ------------------------------------------------------------------------ earlier versions


def read_object(path: Path) -> dict[str, object] | None:
    """A JSON object from `path`, or None (absent, unreadable, not JSON, not an object)."""
    body = read_json(path)
    return body if isinstance(body, dict) else None


def files_named_by(record: str, names: Callable[[dict[str, Any]], Iterable[str]]) -> Callable[[Path], bool]:
    """A legacy rule: the folder holds `record` (the completion record an earlier version wrote
    last), it parses, and every other file in the folder is one that `names(record body)` names.
    `names` may raise KeyError, TypeError, AttributeError or ValueError on a body of another
    shape: then the folder is not recognised. (Hence the loose type: `names` reads an earlier version's
    record by its old shape and lets a different one raise, instead of checking each value.)"""

    def recognise(folder: Path) -> bool:
        body = read_object(folder / record)
        if body is None:
            return False
        try:
            expected = {str(name) for name in names(body)} | {record}
        except (KeyError, TypeError, AttributeError, ValueError):
            return False
        return all(name in expected for name in folder_files(folder))

    return recognise


def earlier_json_file(path: Path, keys: Iterable[str], allowed: Iterable[str], **equal: str) -> bool:
    """A legacy rule for a JSON output file of an earlier version: an object with every one of
    `keys`, no key outside `allowed` (what that stage wrote), no record of this format, and the
    given values (e.g. benchmark, model) equal to this run's."""
    body = read_object(path)
    if body is None or STAMP in body:
        return False
    return set(keys) <= set(body) <= set(allowed) and all(body.get(key) == value for key, value in equal.items())
