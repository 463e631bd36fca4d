"""Worker processes with shard affinity, for CPU-bound work spread over the machine's cores.

`ShardedPool(n, initializer, initargs)` starts n processes (each its own single-process
executor), and `submit(shard, fn, *args)` runs `fn` in the process `shard % n`: everything of
one shard goes to one process, so what a process caches for it (e.g. the segmentation of an
expression's references) is computed once and stays there. Tasks of one process run in the
order they were submitted; results come back through futures, so the caller decides the order
of the output, never the scheduling. Processes start from a fresh interpreter (forkserver,
or spawn where there is none), never by forking the caller: a caller holding a CUDA context,
an OpenMP pool or other threads stays safe.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

WORKERS_ENV = "IDIOMBENCH_SCORE_WORKERS"  # processes for the CPU terms of a score run (0 or 1: in process)


def usable_cores() -> int:
    """The CPUs this process may run on (its affinity mask: a Slurm or container limit)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def worker_count(environ: dict[str, str] | None = None) -> int:
    """IDIOMBENCH_SCORE_WORKERS if set (a non-negative integer), else the usable cores."""
    environ = dict(os.environ) if environ is None else environ
    raw = environ.get(WORKERS_ENV, "").strip()
    if not raw:
        return usable_cores()
    if not raw.isdigit():
        raise ValueError(f"{WORKERS_ENV}={raw!r}: expected a non-negative integer (0 or 1: no worker processes)")
    return int(raw)


def _start_method() -> str:
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


class ShardedPool:
    """n worker processes; a shard's tasks all run in one of them, in submission order."""

    def __init__(
        self,
        processes: int,
        initializer: Callable[..., None] | None = None,
        initargs: tuple[Any, ...] = (),
        preload: tuple[str, ...] = (),
    ):
        """`preload`: modules the forkserver imports once, before it forks the workers (their
        imports are then done); it takes effect when this process starts its forkserver."""
        if processes < 1:
            raise ValueError(f"a pool needs at least one process, got {processes}")
        context = multiprocessing.get_context(_start_method())
        if preload and context.get_start_method() == "forkserver":
            context.set_forkserver_preload(list(preload))
        self.executors = [
            ProcessPoolExecutor(1, mp_context=context, initializer=initializer, initargs=initargs)
            for _ in range(processes)
        ]

    @property
    def processes(self) -> int:
        return len(self.executors)

    def submit(self, shard: int, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        return self.executors[shard % len(self.executors)].submit(fn, *args)

    def close(self, cancel: bool = False) -> None:
        for executor in self.executors:
            executor.shutdown(wait=True, cancel_futures=cancel)

    def __enter__(self) -> ShardedPool:
        return self

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> None:
        self.close(cancel=kind is not None)
