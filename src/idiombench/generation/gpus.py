"""Claiming GPU device ids for a generate job.

Snakemake's `resources: gpu=N` only limits how many GPUs run at once; on a local
machine it assigns no device ids. So the job claims N free ids itself: one lock file
per device (fcntl.flock, released by the kernel when the process ends, even on
SIGKILL) in a lock directory, then sets CUDA_VISIBLE_DEVICES before anything imports
CUDA. Two 1-GPU jobs started side by side thus run on different devices.

Devices are discovered from IDIOMBENCH_GPUS (a comma list; for tests and clusters),
else CUDA_VISIBLE_DEVICES (as set by a scheduler such as Slurm), else
`nvidia-smi --query-gpu=index --format=csv,noheader`.

Inside a Slurm job (SLURM_JOB_ID set) the devices in CUDA_VISIBLE_DEVICES are the ones Slurm
granted to this job alone, so the locks live in a directory of that job
(idiombench-gpu-locks-slurm-<job id>): two jobs on one node that were granted different GPUs
never wait for each other, even where Slurm numbers each job's GPUs from 0 (ConstrainDevices
with cgroups); jobs sharing one allocation (Snakemake run inside `salloc`) still share the
locks. IDIOMBENCH_GPU_LOCK_DIR overrides the directory.

The lock folder is private to its user (`idiombench-gpu-locks-<uid>` in the temp dir; mode
0700, owner checked, never reached through a symbolic link: open_lock_dir), so the claims of
one user's jobs coordinate; jobs of other users on the same machine are not seen (share GPUs
between users through a scheduler, or give each user their own devices).

When fewer than N devices are free, a standalone claim waits up to IDIOMBENCH_GPU_WAIT_S
seconds (default 0: fail at once) and then fails with a message naming the busy devices
and the processes holding them. A queued claim (IDIOMBENCH_GPU_QUEUE=1, which
workflow/rules/generate.smk sets for its jobs; the command stays the one dvc.yaml runs)
waits for as long as it takes instead,
saying which processes hold the devices when it starts waiting and whenever the holders
change: under Snakemake, `--resources gpu=N` may exceed the GPUs present (Snakefile warns),
and the extra jobs then queue here rather than fail. A claim never holds some devices while
waiting for others. A model with gpus: 0 claims nothing and hides every GPU
(CUDA_VISIBLE_DEVICES="").
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from ..core.errors import IdiombenchError

LOCK_DIR_ENV = "IDIOMBENCH_GPU_LOCK_DIR"
DEVICES_ENV = "IDIOMBENCH_GPUS"
WAIT_ENV = "IDIOMBENCH_GPU_WAIT_S"
QUEUE_ENV = "IDIOMBENCH_GPU_QUEUE"  # "1": wait for busy GPUs without limit (set under Snakemake)
POLL_S = 0.5


class GpuError(IdiombenchError):
    """Not enough GPUs exist, or not enough are free."""


def default_lock_dir() -> Path:
    """The user's own lock folder in the temp dir (a Slurm job's own, inside a job)."""
    slurm_job = os.environ.get("SLURM_JOB_ID", "").strip()
    if slurm_job:
        return Path(tempfile.gettempdir()) / f"idiombench-gpu-locks-slurm-{re.sub(r'[^A-Za-z0-9_.-]', '_', slurm_job)}"
    return Path(tempfile.gettempdir()) / f"idiombench-gpu-locks-{os.geteuid()}"


def lock_dir() -> Path:
    return Path(os.environ.get(LOCK_DIR_ENV) or default_lock_dir())


def _split(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def discover_devices() -> tuple[list[str], str]:
    """(device ids, where they came from)."""
    if DEVICES_ENV in os.environ:
        return _split(os.environ[DEVICES_ENV]), DEVICES_ENV
    if "CUDA_VISIBLE_DEVICES" in os.environ:
        return _split(os.environ["CUDA_VISIBLE_DEVICES"]), "CUDA_VISIBLE_DEVICES"
    try:
        result = subprocess.run(
            ["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
    except (FileNotFoundError, subprocess.CalledProcessError, subprocess.TimeoutExpired):
        return [], "nvidia-smi (not available)"
    return _split(result.stdout.replace("\n", ",")), "nvidia-smi"


def open_lock_dir(directory: Path) -> int:
    """A descriptor of the lock folder, which must be private: created with mode 0700 when
    missing; an existing one must be a folder (a symbolic link is not followed), owned by this
    user and closed to everyone else. In a shared temp dir another user could otherwise create
    it first, or put a link there, and point `gpu-0.lock` at a file of yours: a claim would then
    overwrite it. Lock files are opened relative to this descriptor, never through a link."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkdir(directory, 0o700)
    fix = f"remove it, or set {LOCK_DIR_ENV} to a folder of your own with mode 0700"
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        kind = (
            "a symbolic link"
            if directory.is_symlink()
            else "not a folder"
            if exc.errno == errno.ENOTDIR
            else exc.strerror
        )
        raise GpuError(f"{directory}: the GPU lock folder is {kind}: {fix}") from None
    info = os.fstat(fd)
    problem = (
        f"owned by uid {info.st_uid}, not by you (uid {os.geteuid()})"
        if info.st_uid != os.geteuid()
        else f"open to other users (mode {stat.S_IMODE(info.st_mode):04o})"
        if info.st_mode & 0o077
        else None
    )
    if problem:
        os.close(fd)
        raise GpuError(f"{directory}: the GPU lock folder is {problem}: {fix}")
    return fd


def _lock_name(device: str) -> str:
    return f"gpu-{re.sub(r'[^A-Za-z0-9_.-]', '_', device)}.lock"


def _holder(path: str | Path, dir_fd: int | None = None) -> str:
    """Who holds a lock file: the line its holder wrote (relative to `dir_fd`, given)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return "unknown process"
    with os.fdopen(fd, encoding="utf-8", errors="replace") as handle:
        return handle.read(200).strip() or "unknown process"


def _try_lock(path: str | Path, dir_fd: int | None = None, shown: Path | None = None) -> IO[str] | None:
    """The lock file `path` (relative to `dir_fd`, given), locked and saying who holds it; None
    when another process holds it. Never opened through a symbolic link."""
    shown = shown or Path(path)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    except OSError as exc:
        raise IdiombenchError(
            f"{shown}: the lock file cannot be opened ({exc.strerror}; a symbolic link is not followed): remove it"
        ) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise IdiombenchError(f"{shown}: the lock file is not a regular file: remove it")
    handle = os.fdopen(fd, "r+", encoding="utf-8")
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()} since {time.strftime('%Y-%m-%dT%H:%M:%S')}\n")
    handle.flush()
    return handle


def _release(held: list[tuple[str, IO[str]]]) -> None:
    for _device, handle in held:
        with contextlib.suppress(OSError):
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        handle.close()


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def gpu_oversubscription_warning(requested: int) -> str | None:
    """A warning when `--resources gpu=N` asks for more GPUs than this machine has (the
    surplus jobs then wait for a device instead of running side by side)."""
    devices, source = discover_devices()
    if requested <= len(devices):
        return None
    return (
        f"WARNING: --resources gpu={requested} but {len(devices)} GPU(s) are present ({source}: "
        f"{devices or 'none'}); generate jobs beyond that wait for a free GPU"
    )


@contextlib.contextmanager
def claim_gpus(
    count: int,
    *,
    wait_s: float | None = None,
    who: str = "generate",
    queue: bool | None = None,
    notify: Callable[[str], None] = _stderr,
) -> Iterator[list[str]]:
    """Hold `count` free device ids for the duration of the block; CUDA_VISIBLE_DEVICES is
    set to them (to "" when count is 0). queue=True (default: IDIOMBENCH_GPU_QUEUE=1) waits
    without limit (wait_s and IDIOMBENCH_GPU_WAIT_S are then ignored), telling `notify`
    who holds the devices."""
    if count == 0:
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
        yield []
        return
    devices, source = discover_devices()
    if count > len(devices):
        raise GpuError(
            f"{who} needs {count} GPU(s) but {len(devices)} exist ({source}: {devices or 'none'}); "
            f"lower the model's gpus or set {DEVICES_ENV}"
        )
    if queue is None:
        queue = os.environ.get(QUEUE_ENV) == "1"
    if wait_s is None:
        wait_s = float(os.environ.get(WAIT_ENV) or 0)
    directory = lock_dir()
    directory_fd = open_lock_dir(directory)
    try:
        with _claimed(devices, count, directory, directory_fd, wait_s, who, queue, notify) as ids:
            yield ids
    finally:
        os.close(directory_fd)


@contextlib.contextmanager
def _claimed(
    devices: list[str],
    count: int,
    directory: Path,
    directory_fd: int,
    wait_s: float,
    who: str,
    queue: bool,
    notify: Callable[[str], None],
) -> Iterator[list[str]]:
    deadline = time.monotonic() + wait_s
    started = time.monotonic()
    told: list[str] | None = None  # the busy list last reported while queueing
    while True:
        held: list[tuple[str, IO[str]]] = []
        try:
            for device in devices:
                handle = _try_lock(_lock_name(device), directory_fd, directory / _lock_name(device))
                if handle is not None:
                    held.append((device, handle))
                    if len(held) == count:
                        break
        except IdiombenchError:
            _release(held)
            raise
        if len(held) == count:
            break
        _release(held)  # never hold some devices while waiting for the rest
        busy = [f"{d} ({_holder(_lock_name(d), directory_fd)})" for d in devices if d not in {h for h, _ in held}]
        if queue:
            if busy != told:
                notify(
                    f"{who} needs {count} GPU(s), {len(held)} of {len(devices)} free: waiting for "
                    f"{', '.join(busy)} (locks in {directory})"
                )
                told = busy
            time.sleep(POLL_S)
            continue
        if time.monotonic() >= deadline:
            raise GpuError(
                f"{who} needs {count} GPU(s) but only {len(held)} of {len(devices)} are free "
                f"(busy: {', '.join(busy)}; locks in {directory}); waited {wait_s:.0f} s "
                f"(set {WAIT_ENV} to wait longer)"
            )
        time.sleep(POLL_S)
    ids = [device for device, _ in held]
    if told is not None:
        notify(f"{who}: got GPU(s) {', '.join(ids)} after waiting {time.monotonic() - started:.0f} s")
    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(ids)
    try:
        yield ids
    finally:
        _release(held)
