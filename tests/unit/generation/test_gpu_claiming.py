"""GPU claiming with lock files: concurrent jobs get different device ids; a job that finds
none free fails at once with a clear message (or waits when IDIOMBENCH_GPU_WAIT_S is set)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from idiombench.core.errors import IdiombenchError
from idiombench.generation.gpus import GpuError, claim_gpus, discover_devices

CLAIM = """
import os, sys, time
from pathlib import Path
from idiombench.generation.gpus import claim_gpus
release = Path(sys.argv[1])
with claim_gpus(1, who="job") as ids:
    print(os.environ["CUDA_VISIBLE_DEVICES"], flush=True)
    while not release.exists():
        time.sleep(0.05)
"""


@pytest.fixture
def fake_gpus(tmp_path: Path, monkeypatch) -> dict[str, str]:
    env = {"IDIOMBENCH_GPUS": "0,1", "IDIOMBENCH_GPU_LOCK_DIR": str(tmp_path / "locks")}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("IDIOMBENCH_GPU_WAIT_S", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)  # claim_gpus sets it; restored afterwards
    src = Path(__file__).resolve().parents[3] / "src"
    return {**os.environ, **env, "PYTHONPATH": str(src)}


def start(env: dict[str, str], release: Path) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", CLAIM, str(release)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    return proc


def test_two_jobs_get_different_devices_and_a_third_fails_clearly(fake_gpus, tmp_path: Path):
    release = tmp_path / "release"
    first, second = start(fake_gpus, release), start(fake_gpus, release)
    try:
        ids = {first.stdout.readline().strip(), second.stdout.readline().strip()}
        assert ids == {"0", "1"}
        third = subprocess.run(
            [sys.executable, "-c", CLAIM, str(release)], env=fake_gpus, capture_output=True, text=True, timeout=60
        )
        assert third.returncode != 0
        assert "job needs 1 GPU(s) but only 0 of 2 are free (busy: 0 (pid " in third.stderr
        assert "set IDIOMBENCH_GPU_WAIT_S to wait longer" in third.stderr
    finally:
        release.touch()
        first.wait(timeout=30)
        second.wait(timeout=30)
    assert first.returncode == 0 and second.returncode == 0


def test_a_waiting_job_gets_the_device_once_it_is_released(fake_gpus, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("IDIOMBENCH_GPUS", "7")
    env = {**fake_gpus, "IDIOMBENCH_GPUS": "7"}
    release = tmp_path / "release"
    holder = start(env, release)
    try:
        assert holder.stdout.readline().strip() == "7"
        with pytest.raises(GpuError, match="only 0 of 1 are free"):
            with claim_gpus(1):
                pass
        started = time.monotonic()
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import time, pathlib, sys; time.sleep(1); pathlib.Path(sys.argv[1]).touch()",
                str(release),
            ]
        )
        with claim_gpus(1, wait_s=30) as ids:
            assert ids == ["7"] and os.environ["CUDA_VISIBLE_DEVICES"] == "7"
            assert time.monotonic() - started >= 0.9
    finally:
        release.touch()
        holder.wait(timeout=30)


def test_a_killed_holder_frees_its_device(fake_gpus, tmp_path: Path):
    holder = start(fake_gpus, tmp_path / "never")
    assert holder.stdout.readline().strip() == "0"
    holder.kill()
    holder.wait(timeout=30)
    with claim_gpus(2) as ids:
        assert ids == ["0", "1"] and os.environ["CUDA_VISIBLE_DEVICES"] == "0,1"


def test_asking_for_more_gpus_than_exist_is_a_clear_error(fake_gpus):
    with pytest.raises(GpuError, match=r"needs 3 GPU\(s\) but 2 exist \(IDIOMBENCH_GPUS: \['0', '1'\]\)"):
        with claim_gpus(3):
            pass


def test_zero_gpus_claims_nothing_and_hides_every_device(fake_gpus, tmp_path: Path):
    with claim_gpus(0) as ids:
        assert ids == [] and os.environ["CUDA_VISIBLE_DEVICES"] == ""
    assert not (tmp_path / "locks").exists()


def test_device_discovery_order(monkeypatch):
    monkeypatch.setenv("IDIOMBENCH_GPUS", "2, 3")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    assert discover_devices() == (["2", "3"], "IDIOMBENCH_GPUS")
    monkeypatch.delenv("IDIOMBENCH_GPUS")
    assert discover_devices() == (["0"], "CUDA_VISIBLE_DEVICES")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    monkeypatch.setenv("PATH", "/nonexistent")
    assert discover_devices() == ([], "nvidia-smi (not available)")


def test_a_queued_claimer_waits_naming_the_holder_and_gets_the_device(fake_gpus, tmp_path: Path):
    """Under Snakemake (IDIOMBENCH_GPU_QUEUE=1, as generate.smk sets) a busy GPU is waited
    for, without IDIOMBENCH_GPU_WAIT_S, and the message names the holding process."""
    env = {**fake_gpus, "IDIOMBENCH_GPUS": "7"}
    first_release, second_release = tmp_path / "first", tmp_path / "second"
    holder = start(env, first_release)
    waiter = None
    try:
        assert holder.stdout.readline().strip() == "7"
        waiter = start({**env, "IDIOMBENCH_GPU_QUEUE": "1"}, second_release)
        message = waiter.stderr.readline()
        assert f"job needs 1 GPU(s), 0 of 1 free: waiting for 7 (pid {holder.pid} since" in message
        time.sleep(1.0)
        assert waiter.poll() is None  # still waiting: queueing never gives up by itself
        first_release.touch()
        assert waiter.stdout.readline().strip() == "7"  # the device, once the holder released it
        assert "job: got GPU(s) 7 after waiting" in waiter.stderr.readline()
    finally:
        first_release.touch()
        second_release.touch()
        holder.wait(timeout=30)
        if waiter is not None:
            waiter.wait(timeout=30)
    assert holder.returncode == 0 and waiter.returncode == 0


def test_queue_argument_overrides_the_environment(fake_gpus, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("IDIOMBENCH_GPUS", "5")
    release = tmp_path / "release"
    holder = start({**fake_gpus, "IDIOMBENCH_GPUS": "5"}, release)
    try:
        assert holder.stdout.readline().strip() == "5"
        monkeypatch.setenv("IDIOMBENCH_GPU_QUEUE", "1")
        with pytest.raises(GpuError, match="only 0 of 1 are free"):
            with claim_gpus(1, queue=False):
                pass
        told: list[str] = []
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import time, pathlib, sys; time.sleep(1); pathlib.Path(sys.argv[1]).touch()",
                str(release),
            ]
        )
        with claim_gpus(1, notify=told.append, who="generate m") as ids:  # queue from IDIOMBENCH_GPU_QUEUE
            assert ids == ["5"]
        assert told[0].startswith("generate m needs 1 GPU(s), 0 of 1 free: waiting for 5 (pid ")
        assert told[-1].startswith("generate m: got GPU(s) 5 after waiting")
    finally:
        release.touch()
        holder.wait(timeout=30)


def test_oversubscribed_gpu_resource_is_warned(fake_gpus):
    from idiombench.generation.gpus import gpu_oversubscription_warning

    assert gpu_oversubscription_warning(2) is None
    warning = gpu_oversubscription_warning(3)
    assert warning is not None and "--resources gpu=3 but 2 GPU(s) are present (IDIOMBENCH_GPUS: ['0', '1'])" in warning


def test_inside_a_slurm_job_the_locks_are_the_jobs_own(tmp_path: Path, monkeypatch):
    """Slurm grants a job its GPUs alone and, with ConstrainDevices, numbers them from 0 in
    every job: two jobs on one node both see CUDA_VISIBLE_DEVICES=0 and must not queue
    behind each other. Jobs of one allocation (same SLURM_JOB_ID) still share the locks."""
    from idiombench.generation.gpus import default_lock_dir

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    for key in ("IDIOMBENCH_GPUS", "IDIOMBENCH_GPU_LOCK_DIR", "IDIOMBENCH_GPU_WAIT_S", "IDIOMBENCH_GPU_QUEUE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    assert default_lock_dir().name == f"idiombench-gpu-locks-{os.geteuid()}"  # the user's own
    src = Path(__file__).resolve().parents[3] / "src"
    base = {**os.environ, "PYTHONPATH": str(src), "CUDA_VISIBLE_DEVICES": "0", "TMPDIR": str(tmp_path)}
    release = tmp_path / "release"
    first = start({**base, "SLURM_JOB_ID": "101"}, release)
    assert first.stdout.readline().strip() == "0"
    second = start({**base, "SLURM_JOB_ID": "102"}, release)  # another job, its own GPU 0
    assert second.stdout.readline().strip() == "0"
    same = subprocess.run(
        [sys.executable, "-c", CLAIM, str(release)],
        env={**base, "SLURM_JOB_ID": "101"},
        capture_output=True,
        text=True,
        timeout=60,
    )  # a step of the first job's allocation
    release.touch()
    assert first.wait(timeout=30) == 0 and second.wait(timeout=30) == 0
    assert same.returncode != 0 and "busy: 0 (pid" in same.stderr, same.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("idiombench-gpu-locks")) == [
        "idiombench-gpu-locks-slurm-101",
        "idiombench-gpu-locks-slurm-102",
    ]


# ---- issue 30: the lock folder is private, and no lock is opened through a link ----------------


def test_the_default_lock_folder_is_created_private(tmp_path: Path, monkeypatch):
    import tempfile

    from idiombench.generation.gpus import default_lock_dir

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # gettempdir() caches its first answer
    monkeypatch.setenv("IDIOMBENCH_GPUS", "0")
    for key in ("IDIOMBENCH_GPU_LOCK_DIR", "SLURM_JOB_ID", "CUDA_VISIBLE_DEVICES"):
        monkeypatch.delenv(key, raising=False)
    with claim_gpus(1, who="job") as ids:
        assert ids == ["0"]
    folder = default_lock_dir()
    assert folder.parent == tmp_path and oct(folder.stat().st_mode & 0o777) == oct(0o700)
    assert oct((folder / "gpu-0.lock").stat().st_mode & 0o777) == oct(0o600)


@pytest.mark.parametrize("problem", ["a symbolic link", "owned by another user", "open to other users", "a file"])
def test_a_lock_folder_that_is_not_private_is_refused(problem: str, fake_gpus, tmp_path: Path, monkeypatch):
    """Another local user could make the folder first (in the shared temp dir), or link it, and
    point gpu-0.lock at a file of yours, which a claim would overwrite."""
    folder = tmp_path / "locks"
    victim = tmp_path / "victim.txt"
    victim.write_text("yours\n", encoding="utf-8")
    if problem == "a symbolic link":
        (tmp_path / "theirs").mkdir(mode=0o700)
        folder.symlink_to(tmp_path / "theirs")
        expected = "the GPU lock folder is a symbolic link"
    elif problem == "owned by another user":
        folder.mkdir(mode=0o700)
        monkeypatch.setattr(os, "geteuid", lambda: os.stat(folder).st_uid + 1)  # as seen by another user
        expected = f"the GPU lock folder is owned by uid {os.stat(folder).st_uid}, not by you"
    elif problem == "open to other users":
        folder.mkdir()
        folder.chmod(0o777)
        expected = "the GPU lock folder is open to other users (mode 0777)"
    else:
        folder.write_text("", encoding="utf-8")
        expected = "the GPU lock folder is not a folder"
    with pytest.raises(GpuError, match=re.escape(f"{folder}: {expected}")):
        with claim_gpus(1, who="job"):
            pass
    assert victim.read_text(encoding="utf-8") == "yours\n"


def test_a_lock_file_that_is_a_link_is_not_followed(fake_gpus, tmp_path: Path):
    folder = tmp_path / "locks"
    folder.mkdir(mode=0o700)
    victim = tmp_path / "victim.txt"
    victim.write_text("yours\n", encoding="utf-8")
    (folder / "gpu-0.lock").symlink_to(victim)
    with pytest.raises(
        IdiombenchError, match="gpu-0.lock: the lock file cannot be opened .*a symbolic link is not followed"
    ):
        with claim_gpus(1, who="job"):
            pass
    assert victim.read_text(encoding="utf-8") == "yours\n"
