"""Replacing a stage's output directory survives a kill at any point (issue 13, item 1).

A child process replaces results/generations/<model> (generate's `write_output`) with every
filesystem step slowed down and announced; the parent SIGKILLs it at random times (20
kills) and at each announced step. After every kill, a reader (`load_generations`, what
`score` reads) must either refuse with one line or see one complete version, never a
mix; and after recovery the output exists and is complete (the old one is never lost).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from idiombench.core.errors import IdiombenchError
from idiombench.core.io import aside_path, recover_directory, require_complete, staged_directory
from idiombench.core.ownership import Output
from idiombench.stages.generate import write_output
from idiombench.stages.inputs import load_generations

SRC = Path(__file__).resolve().parents[3] / "src"
TABLES = [("b1", "s1"), ("b1", "s2"), ("b2", "s1"), ("b2", "s2")]
PAUSE_S = 0.03

CHILD = r"""
import os, shutil, signal, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from idiombench.stages import generate as stage  # imported once: each replace runs in a fork of this process
from versions import tables, info

target, pause = Path(sys.argv[2]), float(sys.argv[3])
die_at = 0
events = 0

def event(name):
    # Announce a step; with die_at, SIGKILL ourselves exactly at that step.
    global events
    events += 1
    print(f"{events} {name}", flush=True)
    if events == die_at:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(pause)

real_rename = Path.rename
def rename(self, dst):
    kind = "aside" if Path(dst).name.endswith(".replaced") else ("back" if self.name.endswith(".replaced") else "in")
    event(f"before-rename-{kind}")
    result = real_rename(self, dst)
    event(f"after-rename-{kind}")
    return result
Path.rename = rename

def rmtree(path, *args, **kwargs):  # file by file, announced: a kill can land mid-deletion
    for p in sorted(Path(path).rglob("*"), key=lambda p: len(p.parts), reverse=True):
        event("rmtree")
        p.rmdir() if p.is_dir() else p.unlink()
    Path(path).rmdir()
shutil.rmtree = rmtree

real_write = stage.write_generations
def write_generations(path, rows):
    event("write-table")
    real_write(path, rows)
stage.write_generations = write_generations

print("ready", flush=True)
for command in sys.stdin:
    version, die_at = command.split()[0], int(command.split()[1])
    pid = os.fork()
    if pid == 0:
        print(f"started {os.getpid()}", flush=True)
        stage.write_output(target, tables(version), info(version), {"backend": "test"})
        print("done", flush=True)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    print(f"exit {status}", flush=True)
"""

VERSIONS = r"""
TABLES = [("b1", "s1"), ("b1", "s2"), ("b2", "s1"), ("b2", "s2")]

def row(version, benchmark, setting, i):
    return {"prompt_id": f"p{i:03d}", "benchmark": benchmark, "task": "t", "setting": setting,
            "item_id": f"i{i}", "prompt_hash": "h", "pass": "main", "sample_index": 0, "rotation": 0,
            "text": f"{version}-{benchmark}-{setting}-{i}", "prompt_tokens": 1, "completion_tokens": 1,
            "finish_reason": "stop", "error": None, "request_key": f"{i:064d}"}

def tables(version):
    return [((b, s), [row(version, b, s, i) for i in range(5)]) for b, s in TABLES]

def info(version):
    return {"model": "m", "version": version}
"""


def texts(version: str) -> dict[tuple[str, str], list[str]]:
    return {(b, s): [f"{version}-{b}-{s}-{i}" for i in range(5)] for b, s in TABLES}


def observe(target: Path) -> str:
    """What a later stage gets: 'refused', or the one complete version it read. A mix of
    versions, a missing table, or tables disagreeing with the completion record is 'partial'."""
    seen: dict[tuple[str, str], list[str]] = {}
    try:
        for benchmark in ("b1", "b2"):
            for setting, frame in load_generations(benchmark=benchmark, model="m", generations_dir=target).items():
                seen[(benchmark, setting)] = list(frame["text"])
    except IdiombenchError as error:
        assert "\n" not in str(error) and str(target) in str(error)
        return "refused"
    version = json.loads((target / "generation_info.json").read_text(encoding="utf-8"))["version"]
    return version if seen == texts(version) else "partial"


class Child:
    """A process that imports the writer once, then forks one replace per request."""

    def __init__(self, tmp: Path, target: Path) -> None:
        script = tmp / "child.py"
        script.write_text(CHILD, encoding="utf-8")
        (tmp / "versions.py").write_text(VERSIONS, encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": f"{tmp}{os.pathsep}{SRC}"}
        command = [sys.executable, str(script), str(SRC), str(target), str(PAUSE_S)]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        assert self.readline() == "ready"

    def readline(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, "the child process ended"
        return line.strip()

    def start(self, version: str, die_at: int = 0) -> int:
        """Start one replace; returns the pid of the process doing it."""
        assert self.process.stdin is not None
        self.process.stdin.write(f"{version} {die_at}\n")
        self.process.stdin.flush()
        word, pid = self.readline().split()
        assert word == "started"
        return int(pid)

    def settle(self) -> list[str]:
        """The steps the replace announced, once it has ended (done or killed)."""
        steps = []
        while not (line := self.readline()).startswith("exit"):
            if line[0].isdigit():
                steps.append(line.split(" ", 1)[1])
        return steps

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


def check_after_kill(target: Path, old: str, new: str, outcomes: dict[str, int]) -> None:
    state = observe(target)
    outcomes[state] = outcomes.get(state, 0) + 1
    assert state in ("refused", old, new), f"a later stage accepted a partial output: {state}"
    recover_directory(target)  # what the next writer does first
    assert observe(target) in (old, new), "the previous complete output was lost"
    assert not aside_path(target).exists()


def test_kill_at_every_step_and_at_20_random_times_never_leaves_an_accepted_partial(tmp_path: Path) -> None:
    target = tmp_path / "results" / "generations" / "m"
    child = Child(tmp_path, target)
    try:
        # Calibration: an unkilled replace creating version A, then one replacing it with B (timed).
        child.start("A")
        child.settle()
        assert observe(target) == "A"
        started = time.monotonic()
        child.start("B")
        events = child.settle()
        duration = time.monotonic() - started
        assert observe(target) == "B"
        assert {"before-rename-aside", "after-rename-aside", "before-rename-in", "after-rename-in", "rmtree"} <= set(
            events
        )
        outcomes: dict[str, int] = {}
        current = "B"
        # 1. A kill at each announced step of a replace.
        for step in range(1, len(events) + 1):
            new = "A" if current == "B" else "B"
            child.start(new, die_at=step)
            assert len(child.settle()) == step
            check_after_kill(target, current, new, outcomes)
            current = observe(target)
        # 2. Twenty SIGKILLs at random moments (seeded), spread over the replace's duration.
        rng = random.Random(13)
        for index in range(20):
            new = "A" if current == "B" else "B"
            pid = child.start(new)
            time.sleep(duration * (index + rng.random()) / 20)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            child.settle()
            check_after_kill(target, current, new, outcomes)
            current = observe(target)
    finally:
        child.close()
    assert outcomes.get("partial", 0) == 0
    assert sum(outcomes.values()) == len(events) + 20
    print(f"kill loop: {len(events)} step kills + 20 random kills; outcomes {outcomes}")


def test_recover_moves_an_orphaned_aside_back_and_drops_a_stale_one(tmp_path: Path) -> None:
    target = tmp_path / "out"
    aside = aside_path(target)
    aside.mkdir()
    (aside / "record.json").write_text("old", encoding="utf-8")
    recover_directory(target)  # killed between the two renames: the old output comes back
    assert (target / "record.json").read_text(encoding="utf-8") == "old" and not aside.exists()
    aside.mkdir()
    (aside / "record.json").write_text("older", encoding="utf-8")
    recover_directory(target)  # killed while deleting the old copy: the new output stays
    assert (target / "record.json").read_text(encoding="utf-8") == "old" and not aside.exists()


def test_staged_directory_never_deletes_before_the_new_output_is_in(tmp_path: Path) -> None:
    target = tmp_path / "out"
    with staged_directory(target, Output("test", "a file")) as staging:
        (staging / "a.txt").write_text("1", encoding="utf-8")
    assert oct(target.stat().st_mode & 0o777) != oct(0o700)  # not mkdtemp's private mode
    with pytest.raises(RuntimeError), staged_directory(target, Output("test", "a file")) as staging:
        (staging / "a.txt").write_text("2", encoding="utf-8")
        raise RuntimeError("the stage failed")
    assert (target / "a.txt").read_text(encoding="utf-8") == "1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_generations_folder_without_its_record_is_refused_in_one_line(tmp_path: Path) -> None:
    target = tmp_path / "m"
    write_output(target, [(("b1", "s1"), [])], {"model": "m"}, {"backend": "test"})
    assert list(load_generations(benchmark="b1", model="m", generations_dir=target)) == ["s1"]
    (target / "generation_info.json").unlink()
    with pytest.raises(IdiombenchError) as error:
        load_generations(benchmark="b1", model="m", generations_dir=target)
    assert str(error.value) == (
        f"{target} is incomplete (no generation_info.json, which its stage writes last): "
        "run `idiombench generate --model m` first"
    )
    with pytest.raises(IdiombenchError, match=f"^{tmp_path / 'none'} is missing: make it$"):
        require_complete(tmp_path / "none", "x.json", how="make it")
