"""The kill-and-resume test: `idiombench generate` on the tiny hf model, SIGKILLed after the
first cache shards appear, rerun to completion, must write exactly the bytes of an
uninterrupted run, regenerate only what was missing, and a further rerun must be all
cache hits."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gen_project import write_project
from idiombench.generation.cache import GenerationCache

pytestmark = pytest.mark.slow
SRC = Path(__file__).resolve().parents[2] / "src"


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(SRC), "IDIOMBENCH_GPUS": ""}


def generate(project: Path) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, "-m", "idiombench.cli", "generate", "--model", "tiny"],
        cwd=project,
        env=env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    return result


def summary(project: Path) -> dict:
    return json.loads((project / "results" / "logs" / "generate-tiny.json").read_text(encoding="utf-8"))


def output_files(project: Path) -> dict[str, bytes]:
    out = project / "results" / "generations" / "tiny"
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_killed_generate_resumes_to_the_same_bytes(tiny_chat_model: Path, tmp_path: Path, model_dtype: str):
    # in either dtype: whole batches are cached, so a resumed run meets the same batches
    models = {
        "tiny": {"backend": "hf", "model": str(tiny_chat_model), "batch_size": 2, "device": "cpu", "dtype": model_dtype}
    }
    options = {"copies": 1, "consistency_n": 2, "max_new_tokens": 12}  # 72 batches: time enough to kill it after 3
    killed = write_project(tmp_path / "killed", models, **options)
    straight = write_project(tmp_path / "straight", models, **options)
    total = 24 * 2 * (1 + 2)  # items x settings x (main + 2 consistency samples)

    cache_dir = killed / "results" / "cache" / "tiny"
    proc = subprocess.Popen(
        [sys.executable, "-m", "idiombench.cli", "generate", "--model", "tiny"],
        cwd=killed,
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 300
    while len(list(cache_dir.glob("shard-*.jsonl"))) < 3:
        assert proc.poll() is None, "generate finished before it could be killed"
        assert time.monotonic() < deadline, "no shards appeared"
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert not (killed / "results" / "generations" / "tiny").exists()  # no partial output
    # an interrupted shard write leaves a temporary file: it must be ignored
    (cache_dir / ".shard-interrupted.jsonl.abc.tmp").write_text('{"key": "trunc', encoding="utf-8")
    at_kill = GenerationCache.load(cache_dir)
    shards = len(list(cache_dir.glob("shard-*.jsonl")))
    assert at_kill.problems == [] and 0 < len(at_kill) < total
    assert len(at_kill) == 2 * shards  # only whole batches are on disk

    generate(killed)
    resumed = summary(killed)["total"]
    assert resumed["requests"] == total and resumed["failed"] == 0
    assert resumed["cached"] == len(at_kill)  # nothing completed before the kill is redone
    assert resumed["generated"] == total - len(at_kill)  # only what was missing

    generate(straight)
    assert summary(straight)["total"]["generated"] == total
    assert output_files(killed) == output_files(straight)
    assert sorted(output_files(killed)) == [
        "generation_info.json",
        "identity.json",
        "idiombench-output.json",
        "orderprobe/cot.parquet",
        "orderprobe/zero_shot.parquet",
    ]

    again = generate(killed)
    rerun = summary(killed)["total"]
    assert rerun["cached"] == total and rerun["generated"] == 0 and rerun["cache_hit_rate"] == 1.0
    assert "(100% cache hits" in again.stderr
    assert output_files(killed) == output_files(straight)
