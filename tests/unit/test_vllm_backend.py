"""The vllm backend against tests/fakes/vllm, a fake module enforcing vLLM 0.8.3's signatures.

This is as far as the vllm backend is verified here: vLLM cannot be installed on these
machines (no CUDA)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from idiombench.generation.config import VLLMModel
from idiombench.generation.types import ItemContext, Message, Request, Sampling

ROOT = Path(__file__).resolve().parents[2]
FAKES = ROOT / "tests" / "fakes"


@pytest.fixture
def fake_vllm(monkeypatch: pytest.MonkeyPatch):
    """The fake `vllm` importable for this test only."""
    monkeypatch.syspath_prepend(str(FAKES))
    monkeypatch.delitem(sys.modules, "vllm", raising=False)
    import vllm

    assert vllm.__file__ == str(FAKES / "vllm" / "__init__.py")
    vllm.INSTANCES.clear()
    yield vllm
    # Not monkeypatch.delitem: its undo would put the fake back into sys.modules.
    sys.modules.pop("vllm", None)


def model(**overrides) -> VLLMModel:
    return VLLMModel(**{"backend": "vllm", "model": "org/tiny-chat", "revision": "abc123", **overrides})


def request(
    text: str, *, index: int = 0, seed: int = 7, sampling: Sampling | None = None, system: str | None = None
) -> Request:
    messages = ((Message("system", system),) if system else ()) + (Message("user", text),)
    return Request(
        key=f"key-{text}-{index}",
        prompt_id=f"prompt-{text}",
        messages=messages,
        sampling=sampling or Sampling(),
        seed=seed,
        sample_index=index,
        item=ItemContext(benchmark="b", task="t", setting="s", item_id=text, input=text),
    )


def test_llm_is_constructed_once_with_the_models_settings(fake_vllm):
    from idiombench.generation.backends.vllm import ENGINE_SEED, VLLMBackend

    backend = VLLMBackend(model(gpus=2, dtype="bfloat16", gpu_memory_utilization=0.8, max_model_len=4096))
    backend.generate([request("a b")])
    backend.generate([request("c d")])
    (llm,) = fake_vllm.INSTANCES
    assert llm.init_kwargs == {
        "model": "org/tiny-chat",
        "revision": "abc123",
        "tensor_parallel_size": 2,  # from gpus
        "enable_prefix_caching": True,
        "dtype": "bfloat16",
        "gpu_memory_utilization": 0.8,
        "max_model_len": 4096,
        "seed": ENGINE_SEED,
        "trust_remote_code": False,
    }
    assert len(llm.calls) == 2


def test_a_batch_is_one_chat_call_with_per_request_sampling_and_seeds(fake_vllm):
    from idiombench.generation.backends.vllm import VLLMBackend

    backend = VLLMBackend(model())
    sampled = Sampling(temperature=0.7, top_p=0.9, max_new_tokens=32, stop=("\n\n", "###"))
    requests = [
        request("first", system="be brief"),
        request("second", index=0, sampling=sampled),
        request("second", index=3, sampling=sampled),
    ]
    backend.generate(requests)
    (call,) = fake_vllm.INSTANCES[0].calls
    assert call.use_tqdm is False
    assert call.conversations == [
        [{"role": "system", "content": "be brief"}, {"role": "user", "content": "first"}],
        [{"role": "user", "content": "second"}],
        [{"role": "user", "content": "second"}],
    ]
    greedy, first, fourth = call.sampling_params
    assert (greedy.temperature, greedy.top_p, greedy.max_tokens, greedy.stop, greedy.n) == (0.0, 1.0, 256, [], 1)
    assert (first.temperature, first.top_p, first.max_tokens, first.stop) == (0.7, 0.9, 32, ["\n\n", "###"])
    # seed = run seed + sample index
    assert [p.seed for p in call.sampling_params] == [7, 7, 10]


def test_outputs_map_to_completions_in_order(fake_vllm):
    from idiombench.generation.backends.vllm import VLLMBackend

    backend = VLLMBackend(model())
    texts = ["one", "two words", "three little words", "stop ### here"]
    completions = backend.generate([request(t, sampling=Sampling(stop=("###",))) for t in texts])
    assert [c.text for c in completions] == ["one", "two words", "three little words", "stop"]
    assert [c.completion_tokens for c in completions] == [1, 2, 3, 1]
    # the fake's prompt: "<|user|>\n{text}\n<|assistant|>\n" split on whitespace
    assert [c.prompt_tokens for c in completions] == [3, 4, 5, 5]
    assert all(c.finish_reason == "stop" and c.error is None for c in completions)
    assert all(c.latency_s >= 0 for c in completions)
    assert len({c.latency_s for c in completions}) == 1  # batch wall time / n


def test_finish_reason_length_is_kept(fake_vllm):
    from idiombench.generation.backends.vllm import VLLMBackend

    backend = VLLMBackend(model())
    three = Sampling(max_new_tokens=3)
    short, cut = backend.generate([request("a b c", sampling=three), request("a b c d e", sampling=three)])
    assert (short.text, short.finish_reason) == ("a b c", "stop")
    assert (cut.text, cut.finish_reason, cut.completion_tokens) == ("a b c", "length", 3)
    assert not cut.failed


def test_a_prompt_over_max_model_len_fails_alone(fake_vllm):
    from idiombench.generation.backends.vllm import VLLMBackend

    backend = VLLMBackend(model(max_model_len=6))
    ok, too_long, ok_too = backend.generate(
        [request("fits"), request("this prompt is far too long"), request("fits too")]
    )
    assert (ok.text, ok_too.text) == ("fits", "fits too")
    assert too_long.failed and too_long.finish_reason == "error"
    assert "longer than the maximum model length of 6" in too_long.error


def test_identity_names_backend_model_revision_dtype_and_vllm_version(fake_vllm):
    from idiombench.generation.backends.vllm import VLLMBackend

    assert VLLMBackend(model(dtype="float16")).identity() == {
        "backend": "vllm",
        "model": "org/tiny-chat",
        "revision": "abc123",
        "dtype": "float16",
        "vllm_version": "0.8.3+fake",
    }


def test_empty_batch_calls_nothing(fake_vllm):
    from idiombench.generation.backends.vllm import VLLMBackend

    backend = VLLMBackend(model())
    assert backend.generate([]) == []
    assert fake_vllm.INSTANCES[0].calls == []


def test_the_fake_rejects_misspelt_keywords_as_vllm_would(fake_vllm):
    """So a misspelt keyword in the backend cannot pass these tests."""
    with pytest.raises(TypeError, match="tensor_parallel"):
        fake_vllm.LLM(model="m", tensor_parallel=2)
    with pytest.raises(TypeError, match="enable_prefix_cache"):
        fake_vllm.LLM(model="m", enable_prefix_cache=True)  # EngineArgs field is enable_prefix_caching
    with pytest.raises(TypeError):
        fake_vllm.LLM("m", None)  # keyword-only after model
    with pytest.raises(TypeError, match="max_new_tokens"):
        fake_vllm.SamplingParams(max_new_tokens=5)
    llm = fake_vllm.LLM(model="m")
    with pytest.raises(TypeError, match="sampling_param"):
        llm.chat([[{"role": "user", "content": "x"}]], sampling_param=[fake_vllm.SamplingParams()])
    with pytest.raises(ValueError, match="lengths of prompts and params"):
        llm.chat([[{"role": "user", "content": "x"}]], sampling_params=[])
    with pytest.raises(ValueError, match="top_p"):
        fake_vllm.SamplingParams(top_p=0.0)


def test_a_backend_bug_in_sampling_keywords_is_caught(fake_vllm, monkeypatch):
    """Simulate the backend passing a wrong SamplingParams keyword: generate must fail."""
    from idiombench.generation.backends import vllm as backend_module

    backend = backend_module.VLLMBackend(model())

    def misspelt(self, req):
        return self._vllm.SamplingParams(temperature=0.0, max_new_tokens=req.sampling.max_new_tokens)

    monkeypatch.setattr(backend_module.VLLMBackend, "_sampling_params", misspelt)
    with pytest.raises(TypeError, match="max_new_tokens"):
        backend.generate([request("x")])


def test_missing_vllm_is_a_clear_error(monkeypatch):
    from idiombench.generation.backends.vllm import BackendUnavailable, VLLMBackend

    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm -> ImportError
    with pytest.raises(BackendUnavailable, match=r"needs `pip install idiombench\[vllm\]` on a CUDA machine"):
        VLLMBackend(model())


def test_importing_the_backend_does_not_import_vllm():
    """Lazy import: with the fake importable, merely importing the module must not load it."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(FAKES)])}
    code = "import sys, idiombench.generation.backends.vllm; assert 'vllm' not in sys.modules, 'imported'"
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_vllm_models_need_a_gpu():
    with pytest.raises(ValueError, match="gpus"):
        model(gpus=0)
    assert model().gpus == 1


def test_the_fake_does_not_leak_into_other_tests():
    assert "vllm" not in sys.modules or sys.modules["vllm"] is None


def test_vllm_is_an_optional_extra_only():
    import re
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = [re.split(r"[<>=!~\[; ]", dep, maxsplit=1)[0].lower() for dep in project["dependencies"]]
    assert "vllm" not in names and not any(name.startswith("nvidia-") for name in names)
    assert project["optional-dependencies"]["vllm"] == ["vllm>=0.8.3"]


def test_make_passes_the_params_seed_to_the_engine_and_reports(fake_vllm):
    from idiombench.generation.backends.vllm import make

    backend = make("tiny", model(gpus=4), seed=5, cache_root=Path("/unused"))
    assert fake_vllm.INSTANCES[0].init_kwargs["seed"] == 5
    assert backend.report() == [
        "vllm 0.8.3+fake: org/tiny-chat@abc123, tensor_parallel_size=4, prefix caching on"
    ]
