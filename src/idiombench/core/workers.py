"""Worker processes with shard affinity, for CPU-bound work spread over the machine's cores.

`ShardedPool(n, initializer, initargs)` starts n processes (each its own single-process
executor), and `submit(shard, fn, *args)` runs `fn` in the process `shard % n`: everything of
one shard goes to one process, so what a process caches for it (e.g. the segmentation of an
expression's references) is computed once and stays there. Tasks of one process run in the
order they were submitted; results come back through futures, so the caller decides the order
of the output, never the scheduling. Processes start from a fresh interpreter (forkserver,
or spawn where there is none), never by forking the caller: a caller holding a CUDA context,
an OpenMP pool or other threads stays safe.

How many (`worker_count`): the threads the process was granted, never more than its usable
cores. Under Snakemake that is the job's `threads` (Snakemake exports it as OMP_NUM_THREADS),
so jobs running side by side never start more workers than the cores Snakemake shares among
them; IDIOMBENCH_SCORE_WORKERS sets the number explicitly.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from types import TracebackType
from typing import Any, TypeVar

WORKERS_ENV = "IDIOMBENCH_SCORE_WORKERS"  # processes for the CPU terms of a score run (0 or 1: in process)
# The threads a job was granted: Snakemake sets it (and the BLAS libraries' variables) to the
# job's `threads` for every shell command, locally and inside a Slurm job step, so a score job's
# workers follow what Snakemake (--cores, --max-threads, --set-threads) or the profile granted.
THREADS_ENV = "OMP_NUM_THREADS"


def usable_cores() -> int:
    """The CPUs this process may run on (its affinity mask: a Slurm or container limit)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _chosen(environ: dict[str, str]) -> int | None:
    """IDIOMBENCH_SCORE_WORKERS: None when unset; a ValueError naming it when malformed."""
    raw = environ.get(WORKERS_ENV, "").strip()
    if not raw:
        return None
    if not raw.isdigit():
        raise ValueError(f"{WORKERS_ENV}={raw!r}: expected a non-negative integer (0 or 1: no worker processes)")
    return int(raw)


def _granted(environ: dict[str, str]) -> int | None:
    """OMP_NUM_THREADS's thread count (the first of an OpenMP list such as "4,2"), None when it
    is unset or not a positive integer (OpenMP ignores such a value too)."""
    first = environ.get(THREADS_ENV, "").split(",")[0].strip()
    return int(first) if first.isdigit() and int(first) > 0 else None


def worker_budget(environ: dict[str, str] | None = None, cores: int | None = None) -> tuple[int, str]:
    """(worker processes, where that number comes from), never more than the usable cores:
    IDIOMBENCH_SCORE_WORKERS if set; else the threads granted to this process (OMP_NUM_THREADS,
    which Snakemake sets to the job's threads); else one per usable core."""
    environ = dict(os.environ) if environ is None else environ
    cores = usable_cores() if cores is None else cores
    chosen = _chosen(environ)
    if chosen is not None:
        source = f"{WORKERS_ENV}={chosen}"
    else:
        chosen = _granted(environ)
        source = f"{THREADS_ENV}={chosen}: the threads granted" if chosen is not None else "one per usable core"
        chosen = cores if chosen is None else chosen
    if chosen > cores:
        return cores, f"{source}, capped at the {cores} usable cores"
    return chosen, f"{source}; {cores} usable cores"


def worker_count(environ: dict[str, str] | None = None, cores: int | None = None) -> int:
    """The worker processes of a score run (worker_budget): IDIOMBENCH_SCORE_WORKERS, else the
    threads granted (OMP_NUM_THREADS), else the usable cores; never more than the usable cores."""
    return worker_budget(environ, cores)[0]


def _start_method() -> str:
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


ResultT = TypeVar("ResultT")


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

    def submit(self, shard: int, fn: Callable[..., ResultT], *args: object) -> Future[ResultT]:
        return self.executors[shard % len(self.executors)].submit(fn, *args)

    def close(self, cancel: bool = False) -> None:
        for executor in self.executors:
            executor.shutdown(wait=True, cancel_futures=cancel)

    def __enter__(self) -> ShardedPool:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close(cancel=kind is not None)
