"""Exceptions that the CLI turns into one clear message (never a traceback)."""

from __future__ import annotations

from .redact import scrub_message


class IdiombenchError(Exception):
    """Base class: the message is complete and meant for the user. It is scrubbed of
    credentials when the error is made (redact.scrub_message), so that no printer of it (the
    CLI, Snakemake's parse-time handler, a traceback in DVC's log) can show one."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(scrub_message(arg) if isinstance(arg, str) else arg for arg in args))


class ConfigError(IdiombenchError):
    """params.yaml does not match the schema."""


class DataError(IdiombenchError):
    """An input file is malformed. The message names the file, the row and what was expected."""

    def __init__(self, path: object, problem: str, *, row: int | None = None, expected: str | None = None):
        where = f"{path}" if row is None else f"{path}, row {row}"
        message = f"{where}: {problem}"
        if expected:
            message += f" (expected {expected})"
        super().__init__(message)
        self.path = str(path)
        self.row = row


class ChecksumError(IdiombenchError):
    """A file's sha256 does not match its declaration."""

    def __init__(self, name: str, source: str, expected: str, actual: str):
        super().__init__(f"checksum mismatch for {name} (from {source}): expected sha256 {expected}, got {actual}")
        self.expected = expected
        self.actual = actual


class AcquireError(IdiombenchError):
    """A declared file could not be obtained from any source."""


class ScorerError(IdiombenchError):
    """A scoring role cannot run: not computed in this profile, or its model cannot be loaded.
    The message names the role and the model and says how to change the profile."""

    def __init__(self, role: str, model: str | None, problem: str):
        shown = "null" if model is None else repr(model)
        super().__init__(f"scoring role '{role}' (model {shown}): {problem}")
        self.role = role
        self.model = model
