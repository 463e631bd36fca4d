"""One generate process per model at a time.

Two `generate` runs of one model would send every request twice and race on the cache.
So a run holds an exclusive lock on `<cache_dir>/.generate.lock` (fcntl.flock, like the
GPU claims in gpus.py: the kernel releases it when the process ends, even on SIGKILL).
A second run waits up to IDIOMBENCH_GENERATE_WAIT_S seconds (default 0: refuse at once)
and then fails with a message naming the process holding the lock.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from ..core.errors import IdiombenchError
from .gpus import POLL_S, _holder, _release, _try_lock

LOCK_NAME = ".generate.lock"  # starts with ".": never matched as a cache shard
WAIT_ENV = "IDIOMBENCH_GENERATE_WAIT_S"


class ModelBusyError(IdiombenchError):
    """Another generate process holds the model's lock."""


@contextlib.contextmanager
def model_lock(cache_dir: Path, model: str, *, wait_s: float | None = None) -> Iterator[Path]:
    """Hold the model's generate lock for the block; yields the lock file's path."""
    if wait_s is None:
        try:
            wait_s = float(os.environ.get(WAIT_ENV) or 0)
        except ValueError:
            raise IdiombenchError(f"{WAIT_ENV}={os.environ[WAIT_ENV]!r}: expected a number of seconds") from None
    cache_dir.mkdir(parents=True, exist_ok=True)
    path = cache_dir / LOCK_NAME
    deadline = time.monotonic() + wait_s
    while (handle := _try_lock(path)) is None:
        if time.monotonic() >= deadline:
            raise ModelBusyError(
                f"generate {model}: another generate run of this model holds {path} ({_holder(path)}); "
                f"waited {wait_s:g} s (set {WAIT_ENV} to wait longer)"
            )
        time.sleep(POLL_S)
    try:
        yield path
    finally:
        _release([(model, handle)])
