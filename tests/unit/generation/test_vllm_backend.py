"""The vllm backend against tests/fakes/vllm, a fake module enforcing vLLM 0.32.0's signatures
(the newest release of the range the backend follows). The real engine runs in
tests/integration/test_vllm_real.py where .venv-vllm exists (make vllm-env)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from idiombench.core.generation_types import ItemContext, Message, Request, Sampling
from idiombench.generation.config import VLLMModel

ROOT = Path(__file__).resolve().parents[3]
FAKES = ROOT / "tests" / "fakes"


FAKE_MODULES = ("vllm", "vllm.exceptions", "vllm.platforms")
COMMIT = "0123456789abcdef0123456789abcdef01234567"
OTHER_COMMIT = "fedcba9876543210fedcba9876543210fedcba98"


@pytest.fixture
def hub_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty Hugging Face cache, offline (this machine cannot reach the Hub): a branch
    resolves only where a test writes its refs."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    return tmp_path / "hf-cache"


def pin_branch(cache: Path, repo: str, commit: str, branch: str = "main") -> None:
    """The cache's record that `branch` of `repo` points to `commit` (what a download leaves)."""
    refs = cache / f"models--{repo.replace('/', '--')}" / "refs"
    refs.mkdir(parents=True, exist_ok=True)
    (refs / branch).write_text(commit, encoding="utf-8")


@pytest.fixture
def fake_vllm(monkeypatch: pytest.MonkeyPatch, hub_cache: Path):
    """The fake `vllm` importable for this test only."""
    monkeypatch.syspath_prepend(str(FAKES))
    for name in FAKE_MODULES:
        monkeypatch.delitem(sys.modules, name, raising=False)
    import vllm

    assert vllm.__file__ == str(FAKES / "vllm" / "__init__.py")
    vllm.INSTANCES.clear()
    yield vllm
    # Not monkeypatch.delitem: its undo would put the fake back into sys.modules.
    for name in FAKE_MODULES:
        sys.modules.pop(name, None)


def model(**overrides) -> VLLMModel:
    return VLLMModel(**{"backend": "vllm", "model": "org/tiny-chat", "revision": COMMIT, **overrides})


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
        "revision": COMMIT,
        "tensor_parallel_size": 2,  # from gpus
        "enable_prefix_caching": True,
        "dtype": "bfloat16",
        "gpu_memory_utilization": 0.8,
        "max_model_len": 4096,
        "enforce_eager": False,
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


def test_identity_names_everything_that_decides_an_output(fake_vllm):
    from idiombench.generation.backends.vllm import VLLMBackend

    assert VLLMBackend(model(dtype="auto", gpus=2, max_model_len=512)).identity() == {
        "backend": "vllm",
        "model": "org/tiny-chat",
        "revision": COMMIT,
        "dtype": "bfloat16",  # what auto became (the engine's ModelConfig)
        "device": "cuda",
        "kernels": "NVIDIA H100 80GB HBM3 (compute capability 9.0)",
        "tensor_parallel_size": 2,
        "enforce_eager": False,
        "enable_prefix_caching": True,
        "max_model_len": 512,
        "vllm_version": "0.32.0+fake",
        "source": {"source": "hub", "revision": COMMIT},
    }


def test_a_branch_is_resolved_to_its_commit_and_that_commit_is_loaded(fake_vllm, hub_cache):
    from idiombench.generation.backends.vllm import VLLMBackend

    pin_branch(hub_cache, "org/tiny-chat", COMMIT)
    backend = VLLMBackend(model(revision=None))
    assert backend.identity()["revision"] == COMMIT
    assert fake_vllm.INSTANCES[0].init_kwargs["revision"] == COMMIT  # not "whatever main is by then"
    assert not any("unpinned" in line for line in backend.report())


def test_a_commit_only_the_loaded_engine_knows_is_taken_from_it(fake_vllm):
    from idiombench.generation.backends.vllm import VLLMBackend

    fake_vllm.HUB_COMMITS[("org/tiny-chat", "v1.0")] = OTHER_COMMIT  # vLLM/transformers resolved it while loading
    assert VLLMBackend(model(revision="v1.0")).identity()["revision"] == OTHER_COMMIT


def test_an_unresolvable_revision_warns_unpinned_and_is_never_reused(fake_vllm):
    from idiombench.generation.backends.vllm import VLLMBackend

    first, second = VLLMBackend(model(revision=None), name="tiny"), VLLMBackend(model(revision=None), name="tiny")
    assert first.identity()["revision"].startswith("unresolved-")
    assert first.identity()["revision"] != second.identity()["revision"]  # two runs never share an entry
    warning = first.report()[-1]
    assert "WARNING org/tiny-chat is unpinned" in warning and "pin models.tiny.revision to a commit" in warning


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
    with pytest.raises(fake_vllm.exceptions.VLLMValidationError, match=r"lengths of prompts \(1\) and params \(0\)"):
        llm.chat([[{"role": "user", "content": "x"}]], sampling_params=[])
    with pytest.raises(fake_vllm.exceptions.VLLMValidationError, match="top_p"):
        fake_vllm.SamplingParams(top_p=0.0)
    # 0.32: best_of is gone, the validation error is no ValueError
    with pytest.raises(TypeError, match="best_of"):
        fake_vllm.SamplingParams(best_of=2)
    assert not issubclass(fake_vllm.exceptions.VLLMValidationError, ValueError)


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
    with pytest.raises(
        BackendUnavailable, match=r"`pip install idiombench\[vllm\]` on a CUDA machine, or `make vllm-env`"
    ):
        VLLMBackend(model())


def test_importing_the_backend_does_not_import_vllm():
    """Lazy import: with the fake importable, merely importing the module must not load it."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(FAKES)])}
    code = "import sys, idiombench.generation.backends.vllm; assert 'vllm' not in sys.modules, 'imported'"
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_vllm_models_default_to_one_gpu_and_gpus_0_is_the_cpu_build(fake_vllm):
    from idiombench.generation.backends.vllm import VLLMBackend

    with pytest.raises(ValueError, match="gpus"):
        model(gpus=-1)
    assert model().gpus == 1
    backend = VLLMBackend(model(gpus=0))
    assert fake_vllm.INSTANCES[0].init_kwargs["tensor_parallel_size"] == 1
    assert backend.identity()["device"] == "cpu"
    assert "CPU build" in backend.report()[0]


def test_the_fake_does_not_leak_into_other_tests():
    assert "vllm" not in sys.modules or sys.modules["vllm"] is None


def test_vllm_is_an_optional_extra_only():
    import re
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = [re.split(r"[<>=!~\[; ]", dep, maxsplit=1)[0].lower() for dep in project["dependencies"]]
    assert "vllm" not in names and not any(name.startswith("nvidia-") for name in names)
    assert project["optional-dependencies"]["vllm"] == ["vllm>=0.8.3,<0.33"]


def test_make_passes_the_params_seed_to_the_engine_and_reports(fake_vllm):
    from idiombench.generation.backends.vllm import make

    backend = make("tiny", model(gpus=4), seed=5, cache_root=Path("/unused"))
    assert fake_vllm.INSTANCES[0].init_kwargs["seed"] == 5
    (line,) = backend.report()
    assert line.startswith(
        f"vllm 0.32.0+fake: org/tiny-chat@{COMMIT}, tensor_parallel_size=4, prefix caching on, engine loaded in "
    )


def test_a_gguf_model_is_served_from_its_dense_copy_with_the_gguf_hash_as_identity(fake_vllm, tmp_path, monkeypatch):
    """`model` + `gguf_file` as the hf backend takes them: vLLM gets the dense copy's directory."""
    import hashlib

    from idiombench.generation import dense
    from idiombench.generation.backends.vllm import VLLMBackend

    monkeypatch.setenv(dense.MODEL_DIR_ENV, str(tmp_path / "models"))
    weights = tmp_path / "weights"
    weights.mkdir()
    gguf = weights / "tiny.Q4_1.gguf"
    gguf.write_bytes(b"not really a gguf")
    digest = hashlib.sha256(gguf.read_bytes()).hexdigest()
    copy = dense.dense_dir(gguf, digest)  # converted earlier (prepare-models): complete, so reused
    copy.mkdir(parents=True)
    (copy / "model.safetensors").write_bytes(b"dense weights")
    dense.write_record(copy, gguf.name, digest)

    backend = VLLMBackend(model(model=str(weights), gguf_file=gguf.name, revision=None, gpus=0, dtype="float32"))
    (llm,) = fake_vllm.INSTANCES
    assert llm.init_kwargs["model"] == str(copy) and llm.init_kwargs["revision"] is None
    identity = backend.identity()
    assert identity["gguf_file"] == gguf.name and identity["weights_sha256"] == digest
    assert identity["source"] == {"source": "local"} and identity["device"] == "cpu"
    assert "revision" not in identity and identity["kernels"].startswith("cpu ")  # the files' hashes pin it
    assert f"loaded the dense float32 copy of {gguf.name} in {copy}" in backend.report()
    assert backend.describe() == f"{weights} {gguf.name} on vLLM 0.32.0+fake (cpu, served from {copy})"


def test_a_local_directory_is_identified_by_its_files_hashes(fake_vllm, tmp_path):
    from idiombench.generation.backends.vllm import VLLMBackend

    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    (tmp_path / "model.safetensors").write_bytes(b"weights")
    identity = VLLMBackend(model(model=str(tmp_path), revision=None)).identity()
    assert sorted(identity["files_sha256"]) == ["config.json", "model.safetensors"]
    assert fake_vllm.INSTANCES[0].init_kwargs["model"] == str(tmp_path)


def test_cpu_kv_cache_is_exported_for_the_engine_unless_already_set(fake_vllm, monkeypatch):
    from idiombench.generation.backends.vllm import KV_CACHE_ENV, VLLMBackend

    monkeypatch.delenv(KV_CACHE_ENV, raising=False)
    backend = VLLMBackend(model(gpus=0, cpu_kv_cache_gib=2))
    assert os.environ[KV_CACHE_ENV] == "2" and "CPU KV cache 2 GiB" in backend.report()[-1]
    monkeypatch.setenv(KV_CACHE_ENV, "6")
    assert "from the environment" in VLLMBackend(model(gpus=0, cpu_kv_cache_gib=2)).report()[-1]
    assert os.environ[KV_CACHE_ENV] == "6"


def test_a_version_outside_the_range_is_reported(fake_vllm, monkeypatch):
    from idiombench.generation.backends.vllm import VLLMBackend, in_supported_range

    assert in_supported_range("0.32.0") and in_supported_range("0.8.3") and in_supported_range("0.10.1.1")
    assert not in_supported_range("0.33.0") and not in_supported_range("0.8.2")
    monkeypatch.setattr(fake_vllm, "__version__", "0.33.1")
    assert "outside the range this backend follows (>=0.8.3, <0.33.0)" in VLLMBackend(model()).report()[1]


def test_an_older_vllms_value_error_is_caught_too(fake_vllm, monkeypatch):
    """Up to the releases before VLLMValidationError, a rejected prompt raised ValueError."""
    from idiombench.generation.backends.vllm import VLLMBackend

    backend = VLLMBackend(model())
    calls = []

    def chat(conversations, sampling_params=None, use_tqdm=True):
        calls.append(len(conversations))
        raise ValueError("The decoder prompt is longer than the maximum model length")

    monkeypatch.setattr(fake_vllm.INSTANCES[0], "chat", chat)
    failed = backend.generate([request("a"), request("b")])
    assert calls == [2, 1, 1] and all(c.failed and "maximum model length" in c.error for c in failed)


def _moved_branch(fake, cache: Path) -> None:
    pin_branch(cache, "org/tiny-chat", OTHER_COMMIT)  # `main` moved on the Hub since the last run


def _auto_resolves_otherwise(fake, cache: Path) -> None:
    fake.AUTO_DTYPE = "float16"  # e.g. a GPU without bfloat16


def _another_gpu(fake, cache: Path) -> None:
    import vllm.platforms

    vllm.platforms.DEVICE_NAME, vllm.platforms.CAPABILITY = "NVIDIA A100-SXM4-80GB", (8, 0)


# (a field of the identity, the change: of the model entry, or of what the run finds)
VLLM_FIELDS = [
    ("revision", _moved_branch),
    ("tensor_parallel_size", {"gpus": 2}),
    ("enforce_eager", {"enforce_eager": True}),
    ("dtype", _auto_resolves_otherwise),
    ("kernels", _another_gpu),
    ("max_model_len", {"max_model_len": 4096}),
    ("enable_prefix_caching", {"enable_prefix_caching": False}),
]
ENTRY = {"backend": "vllm", "model": "org/tiny-chat", "revision": None, "gpus": 1, "dtype": "auto", "batch_size": 16}


def generate_totals(project: Path) -> tuple[dict, dict]:
    """(the run summary's totals, the identity generation_info.json records)."""
    import json

    from idiombench.pipeline.config import load_params
    from idiombench.stages.generate import run_generate

    result = run_generate(
        load_params(project / "params.yaml"),
        "tiny",
        cache_dir=project / "cache",
        out_dir=project / "out",
        prompts_root=project / "results" / "prompts",
        items_root=project / "data" / "processed",
        logs_dir=project / "logs",
        echo=lambda line: None,
    )
    info = json.loads((project / "out" / "generation_info.json").read_text(encoding="utf-8"))
    return result.summary["total"], info["identity"]


@pytest.mark.parametrize("field, change", [f[:2] for f in VLLM_FIELDS], ids=[f[0] for f in VLLM_FIELDS])
def test_a_field_that_can_change_outputs_misses_the_cache(fake_vllm, hub_cache, tmp_path, field, change):
    from gen_project import write_project

    pin_branch(hub_cache, "org/tiny-chat", COMMIT)
    project = write_project(tmp_path / "project", {"tiny": ENTRY}, consistency_n=1)
    first, before = generate_totals(project)
    assert first["generated"] == first["requests"] > 0
    assert generate_totals(project)[0]["cached"] == first["requests"]  # unchanged: every entry served
    if callable(change):
        change(fake_vllm, hub_cache)
    else:
        write_project(project, {"tiny": {**ENTRY, **change}}, consistency_n=1)
    changed, after = generate_totals(project)
    assert changed["cached"] == 0 and changed["generated"] == first["requests"]
    assert before[field] != after[field]


def test_an_unpinned_model_never_serves_one_runs_outputs_to_another(fake_vllm, tmp_path):
    from gen_project import write_project

    project = write_project(tmp_path / "project", {"tiny": ENTRY}, consistency_n=1)  # no commit known anywhere
    first, _ = generate_totals(project)
    again, identity = generate_totals(project)
    assert again["cached"] == 0 and again["generated"] == first["requests"]
    assert identity["revision"].startswith("unresolved-")
