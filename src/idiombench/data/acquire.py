"""Acquisition: copy each declared file from the first mirror directory that holds it,
else download it from the pinned upstream commit, and verify its sha256 on every copy.

A mirror is a list of directories, each laid out `<benchmark>/<path>` (a file's
`mirror_path`): the benchmark releases and the authors' released code may live in different
directories (params.yaml `data.mirror`, or IDIOMBENCH_MIRROR)."""

from __future__ import annotations

import json
import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..core import paths
from ..core.errors import AcquireError, ChecksumError
from ..core.io import sha256_bytes, sha256_file, staged_directory, write_bytes, write_json
from ..core.ownership import folder_files
from .manifest import DERIVE_DROP_FIELDS, FileSpec

MIRROR_ENV = "IDIOMBENCH_MIRROR"

Fetcher = Callable[[str, float], bytes]
Mirrors = Path | Sequence[Path] | None


def resolve_mirror(configured: str | Sequence[str] | None) -> list[Path]:
    """The mirror directories, in the order they are searched. The environment variable
    (directories separated by os.pathsep, `:` on POSIX) wins over params.yaml's
    `data.mirror` (one directory or a list): CI and users point it elsewhere."""
    from_env = os.environ.get(MIRROR_ENV)
    if from_env:
        entries: Sequence[str] = from_env.split(os.pathsep)
    elif configured is None:
        entries = []
    elif isinstance(configured, str):
        entries = [configured]
    else:
        entries = list(configured)
    return [Path(entry).expanduser() for entry in entries if entry.strip()]


def mirror_list(mirrors: Mirrors) -> list[Path]:
    """One directory, several, or none, as a list (callers pass either)."""
    if mirrors is None:
        return []
    if isinstance(mirrors, Path):
        return [mirrors]
    return list(mirrors)


def http_fetch(url: str, timeout: float) -> bytes:
    request = urllib.request.Request(url, headers={"User-Agent": "idiombench"})
    with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (pinned https URLs)
        body: bytes = response.read()
        return body


def derive(spec: FileSpec, upstream: bytes) -> bytes:
    """Rebuild a derived file from its upstream source (see FileSpec.derive)."""
    assert spec.derive is not None
    drop = set(spec.derive.get(DERIVE_DROP_FIELDS, []))
    lines = []
    for number, line in enumerate(upstream.decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise AcquireError(f"{spec.upstream_url}, line {number}: not JSON ({exc.msg})") from exc
        lines.append(json.dumps({k: v for k, v in record.items() if k not in drop}, ensure_ascii=False))
    return "".join(line + "\n" for line in lines).encode("utf-8")


@dataclass(frozen=True)
class AcquiredFile:
    file: str
    sha256: str
    source: str  # "present", "local", "mirror" or "upstream"


@dataclass(frozen=True)
class AcquireReport:
    files: list[AcquiredFile]
    removed: list[str]  # stray files from an earlier manifest, deleted

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for f in self.files:
            out[f.source] = out.get(f.source, 0) + 1
        return out


def acquire_file(
    spec: FileSpec,
    dest_root: Path,
    mirror: Mirrors,
    *,
    download: bool,
    timeout: float = 60.0,
    fetch: Fetcher = http_fetch,
    previous: Path | None = None,
) -> AcquiredFile:
    """One file into `dest_root`: kept when already there with its hash, copied from the
    `previous` acquisition when that holds it intact, else from a mirror, else downloaded. A
    file of the project (`spec.local`) is always read where it is and checked: a copy kept from
    before would hide that the project's file changed."""
    dest = dest_root / spec.file
    if spec.local is not None:
        # a file of the project (versioned by DVC): read where it is, checked like any copy
        data = Path(spec.local).read_bytes()
        actual = sha256_bytes(data)
        if actual != spec.sha256:
            raise ChecksumError(spec.file, spec.local, spec.sha256, actual)
        write_bytes(dest, data)
        return AcquiredFile(spec.file, actual, "local")

    if dest.exists() and sha256_file(dest) == spec.sha256:
        return AcquiredFile(spec.file, spec.sha256, "present")
    kept = previous / spec.file if previous is not None else None
    if kept is not None and kept.is_file() and sha256_file(kept) == spec.sha256:
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(kept, dest)
        return AcquiredFile(spec.file, spec.sha256, "present")

    mirrors = mirror_list(mirror)
    for root in mirrors:
        source_path = root / spec.mirror_path
        if not source_path.is_file():
            continue
        # The first directory holding the file decides: a wrong copy there is an error, not
        # a reason to look further (two differing copies would make the source ambiguous).
        data = source_path.read_bytes()
        actual = sha256_bytes(data)
        if actual != spec.sha256:
            raise ChecksumError(spec.file, str(source_path), spec.sha256, actual)
        write_bytes(dest, data)
        return AcquiredFile(spec.file, actual, "mirror")

    tried = (
        "mirror " + ", ".join(str(root / spec.mirror_path) for root in mirrors) if mirrors else "no mirror configured"
    )
    if not download:
        raise AcquireError(
            f"{spec.file}: not found ({tried}) and downloads are disabled (data.download: false); "
            f"expected sha256 {spec.sha256}"
        )
    try:
        data = fetch(spec.upstream_url, timeout)
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        raise AcquireError(
            f"{spec.file}: not found ({tried}) and the download of {spec.upstream_url} failed: {exc}; "
            f"expected sha256 {spec.sha256}. Set {MIRROR_ENV} or data.mirror to directories of which one "
            f"holds {spec.mirror_path}."
        ) from exc
    if spec.derive is not None:
        data = derive(spec, data)
    actual = sha256_bytes(data)
    if actual != spec.sha256:
        raise ChecksumError(spec.file, spec.upstream_url, spec.sha256, actual)
    write_bytes(dest, data)
    return AcquiredFile(spec.file, actual, "upstream")


def acquire(
    benchmark: str,
    specs: list[FileSpec],
    dest_root: Path,
    mirror: Mirrors,
    *,
    download: bool,
    timeout: float = 60.0,
    fetch: Fetcher = http_fetch,
    record_path: Path | None = None,
) -> AcquireReport:
    """Acquire every file into a staging folder, write the record last (its presence means:
    complete), then swap the folder in whole (io.staged_directory): a failed acquire (a checksum
    mismatch, a failed download) leaves the previous folder as it was."""
    record_path = record_path or dest_root / "ACQUIRED.json"
    record_name = record_path.relative_to(dest_root)  # the record lives in the folder it completes
    with staged_directory(dest_root, paths.ACQUIRE_OUTPUT) as staging:
        results = [
            acquire_file(spec, staging, mirror, download=download, timeout=timeout, fetch=fetch, previous=dest_root)
            for spec in specs
        ]
        # Files an earlier manifest declared are not carried over (they would be read as current data).
        declared = {spec.file for spec in specs}
        stray = [
            name
            for name in (folder_files(dest_root) if dest_root.is_dir() else [])
            if name != record_name.as_posix() and name not in declared
        ]
        write_json(staging / record_name, _record(benchmark, specs))
    return AcquireReport(files=results, removed=stray)


def _record(benchmark: str, specs: list[FileSpec]) -> dict[str, object]:
    # The record holds no machine-specific facts (where a file came from is logged, not
    # recorded), so that acquiring from the mirror or from upstream gives identical outputs.
    # A declarative benchmark's files also name their URL or their place in the project.
    return {
        "benchmark": benchmark,
        "files": [
            {
                "file": spec.file,
                "sha256": spec.sha256,
                "source_repo": spec.source_repo,
                "source_commit": spec.source_commit,
                "source_path": spec.source_path,
                **({"url": spec.url} if spec.url is not None else {}),
                **({"local": spec.local} if spec.local is not None else {}),
            }
            for spec in sorted(specs, key=lambda s: s.file)
        ],
    }
