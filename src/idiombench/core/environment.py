"""The software environment a result was produced in: Python, the key libraries, and the
hash of the dependency lock (requirements/*.lock) they were installed from. Recorded on
the report's title page and in every MLflow run."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import os
import platform
import re
from collections.abc import Iterator
from pathlib import Path


def project_root() -> Path:
    """The checkout the package is installed from (editable install: src/idiombench/..)."""
    return Path(__file__).resolve().parents[3]


KEY_DISTRIBUTIONS = ("torch", "transformers", "sentence-transformers", "mlflow", "snakemake", "dvc")
LOCK_LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;\\]+)")


def lock_files(root: Path | None = None) -> list[Path]:
    return sorted((root or project_root()).joinpath("requirements").glob("*.lock"))


def lock_hash(root: Path | None = None) -> str | None:
    """sha256 over the lock files (names and contents, sorted): one value per lock state."""
    files = lock_files(root)
    if not files:
        return None
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(path: Path) -> dict[str, str]:
    """name (normalised) -> pinned version, from a pip-compile style lock."""
    pins: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = LOCK_LINE.match(line)
        if match:
            pins[normalize(match.group(1))] = match.group(2)
    return pins


def installed_version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def environment_info(root: Path | None = None) -> dict[str, str]:
    info = {"python": platform.python_version()}
    for name in KEY_DISTRIBUTIONS:
        info[name] = installed_version(name) or "not installed"
    info["lock_sha256"] = lock_hash(root) or "no lock files"
    return info


def environment_line(root: Path | None = None) -> str:
    info = environment_info(root)
    lock = info.pop("lock_sha256")
    return ", ".join(f"{k} {v}" for k, v in info.items()) + f"; lock {lock[:16]}"


@contextlib.contextmanager
def malformed_source_date_epoch_hidden() -> Iterator[None]:
    """numpy.f2py (imported by scipy, which the CLI's commands import lazily: rouge-score's nltk, the
    attention statistics) calls int(SOURCE_DATE_EPOCH) once, at import: a malformed value
    would crash the command as an internal error. It is hidden while the CLI's modules and
    numpy.f2py load (only then: f2py costs 0.13 s), and restored, so that a later scipy import
    finds f2py loaded and `report` names the value in one line."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is None or epoch.strip().isdigit():
        yield
        return
    del os.environ["SOURCE_DATE_EPOCH"]
    try:
        import numpy.f2py  # noqa: F401

        yield
    finally:
        os.environ["SOURCE_DATE_EPOCH"] = epoch
