"""One generate run per model (issue 13, item 4): a second run refuses or waits, naming the
holder; cache entries are written once per key, the first writer winning."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gen_project import write_project
from idiombench.core.errors import IdiombenchError
from idiombench.core.generation_types import Completion
from idiombench.generation.cache import SHARD_PREFIX, GenerationCache
from idiombench.generation.lock import WAIT_ENV, ModelBusyError, model_lock
from idiombench.pipeline.config import load_params
from idiombench.stages.generate import run_generate

SRC = Path(__file__).resolve().parents[3] / "src"
HOLD = """
import sys, time
from pathlib import Path
from idiombench.generation.lock import model_lock
with model_lock(Path(sys.argv[1]), "oracle"):
    print("held", flush=True)
    sys.stdin.readline()  # hold until the parent says so
"""


def done(text: str) -> Completion:
    return Completion(text, 1, 1, "stop", 0.0)


def shard_keys(directory: Path) -> list[str]:
    import json

    return sorted(
        json.loads(line)["key"]
        for shard in directory.glob(f"{SHARD_PREFIX}*")
        for line in shard.read_text(encoding="utf-8").splitlines()
    )


def test_a_second_generate_process_refuses_naming_the_holder(tmp_path: Path, monkeypatch) -> None:
    project = write_project(tmp_path, {"oracle": {"backend": "oracle", "batch_size": 5}})
    monkeypatch.chdir(project)
    monkeypatch.delenv(WAIT_ENV, raising=False)
    cache_dir = project / "results" / "cache" / "oracle"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(cache_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(ModelBusyError) as error:
            run_generate(load_params(project / "params.yaml"), "oracle", echo=lambda _: None)
        assert str(error.value).startswith(
            "generate oracle: another generate run of this model holds results/cache/oracle/.generate.lock "
            f"(pid {holder.pid} since "
        )
        assert "\n" not in str(error.value)
        assert not (project / "results" / "generations" / "oracle").exists()
        assert list(cache_dir.glob(f"{SHARD_PREFIX}*")) == []  # the refused run called no backend
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    # Once the holder has ended, the same run goes through.
    result = run_generate(load_params(project / "params.yaml"), "oracle", echo=lambda _: None)
    assert result.summary["total"]["generated"] > 0


def test_a_waiting_run_proceeds_when_the_holder_releases(tmp_path: Path) -> None:
    release = threading.Event()
    held = threading.Event()

    def hold() -> None:
        with model_lock(tmp_path, "m"):
            held.set()
            release.wait(5)

    thread = threading.Thread(target=hold)
    thread.start()
    assert held.wait(5)
    with pytest.raises(ModelBusyError, match=r"waited 0 s \(set IDIOMBENCH_GENERATE_WAIT_S to wait longer\)$"):
        with model_lock(tmp_path, "m", wait_s=0):
            pass
    threading.Timer(0.3, release.set).start()
    started = time.monotonic()
    with model_lock(tmp_path, "m", wait_s=10):
        waited = time.monotonic() - started
    thread.join()
    assert 0.2 <= waited < 10


def test_a_bad_wait_setting_is_one_line(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(WAIT_ENV, "soon")
    with pytest.raises(IdiombenchError, match=r"^IDIOMBENCH_GENERATE_WAIT_S='soon': expected a number"):
        with model_lock(tmp_path, "m"):
            pass


def test_two_writers_store_one_entry_per_key_and_the_first_wins(tmp_path: Path) -> None:
    # Two caches loaded before either wrote: what two concurrent generate processes would hold.
    first, second = GenerationCache.load(tmp_path), GenerationCache.load(tmp_path)
    first.put_batch([("a" * 64, done("first a")), ("b" * 64, done("first b"))])
    second.put_batch([("b" * 64, done("second b")), ("c" * 64, done("second c"))])
    assert shard_keys(tmp_path) == ["a" * 64, "b" * 64, "c" * 64]
    assert second.get("b" * 64) == done("first b")  # the second writer adopts the stored entry
    reloaded = GenerationCache.load(tmp_path)
    assert {k: c.text for k, c in reloaded.read(reloaded.index).items()} == {
        "a" * 64: "first a",
        "b" * 64: "first b",
        "c" * 64: "second c",
    }
    assert second.put_batch([("a" * 64, done("second a"))]) is None  # nothing new to store


def test_concurrent_writer_threads_never_duplicate_a_key(tmp_path: Path) -> None:
    keys = [f"{i:064x}" for i in range(40)]
    caches = [GenerationCache.load(tmp_path) for _ in range(4)]
    start = threading.Barrier(len(caches))

    def write(index: int) -> None:
        start.wait()
        for offset in range(0, len(keys), 5):  # every writer offers every key, in batches of 5
            caches[index].put_batch((k, done(f"writer {index}")) for k in keys[offset : offset + 5])

    threads = [threading.Thread(target=write, args=(i,)) for i in range(len(caches))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert shard_keys(tmp_path) == keys  # each key exactly once
    stored = GenerationCache.load(tmp_path)
    for cache in caches:  # every writer now agrees with what is stored
        assert {k: cache.get(k) for k in keys} == {k: stored.get(k) for k in keys}
