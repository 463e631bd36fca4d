"""vLLM offline inference: one `vllm.LLM` per process, every batch in one `LLM.chat` call.

API followed: vLLM 0.8.3, the lower bound of the `vllm` extra. Signatures from
  - https://docs.vllm.ai/en/v0.8.3/api/offline_inference/llm.html  (`LLM.__init__`, `LLM.chat`)
  - https://docs.vllm.ai/en/v0.8.3/api/inference_params.html       (`SamplingParams`)
and cross-checked against vllm-project/vllm `vllm/entrypoints/llm.py` (commit 0012cf69, and
main at 10fdb8f0), `vllm/engine/arg_utils.py` (`EngineArgs.enable_prefix_caching`,
`EngineArgs.max_model_len`, reached through `LLM(**kwargs)`) and `vllm/outputs.py`
(`RequestOutput.prompt_token_ids`, `CompletionOutput.text/token_ids/finish_reason`).
Every argument below is passed by keyword and exists under the same name in all of them.

Verified here only against tests/fakes/vllm, a fake module that enforces those
signatures: vLLM cannot be installed on the development and CI machines (no CUDA).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from ...errors import IdiombenchError
from ..config import VLLMModel
from ..types import Completion, Request
from .seeds import sample_seed

INSTALL_HINT = "the vllm backend needs `pip install idiombench[vllm]` on a CUDA machine"

# Default seed of the engine's own generator (make() passes params `seed`). Every
# SamplingParams carries its own seed (seeds.sample_seed), so this only reaches vLLM internals.
ENGINE_SEED = 0


class BackendUnavailable(IdiombenchError):
    """The library a backend needs is not installed here."""


class VLLMBackend:
    """`types.Backend` over vLLM's offline `LLM`; tensor_parallel_size is the model's `gpus`."""

    def __init__(self, config: VLLMModel, *, engine_seed: int = ENGINE_SEED, use_tqdm: bool = False) -> None:
        try:
            import vllm  # lazy: an optional, CUDA-only dependency
        except ImportError as error:
            raise BackendUnavailable(f"{INSTALL_HINT} (import vllm failed: {error})") from error
        self._vllm = vllm
        self._config = config
        self._use_tqdm = use_tqdm
        self._llm = vllm.LLM(
            model=config.model,
            revision=config.revision,
            tensor_parallel_size=config.gpus,
            dtype=config.dtype,
            gpu_memory_utilization=config.gpu_memory_utilization,
            max_model_len=config.max_model_len,
            enable_prefix_caching=config.enable_prefix_caching,
            seed=engine_seed,
            trust_remote_code=config.trust_remote_code,
        )

    def identity(self) -> dict[str, Any]:
        return {
            "backend": "vllm",
            "model": self._config.model,
            "revision": self._config.revision,
            "dtype": self._config.dtype,
            "vllm_version": getattr(self._vllm, "__version__", "unknown"),
        }

    def generate(self, requests: Sequence[Request]) -> list[Completion]:
        if not requests:
            return []
        conversations = [_conversation(request) for request in requests]
        params = [self._sampling_params(request) for request in requests]
        start = time.perf_counter()
        try:
            outputs = self._llm.chat(conversations, sampling_params=params, use_tqdm=self._use_tqdm)
        except ValueError:
            # vLLM rejects a whole batch when one prompt is invalid (e.g. longer than
            # max_model_len); isolate it so only that request fails.
            return [self._generate_one(conversation, param) for conversation, param in zip(conversations, params)]
        per_request = (time.perf_counter() - start) / len(requests)
        if len(outputs) != len(requests):
            raise RuntimeError(f"vLLM returned {len(outputs)} outputs for {len(requests)} requests")
        return [_completion(output, per_request) for output in outputs]

    def report(self) -> list[str]:
        config = self._config
        return [
            f"vllm {getattr(self._vllm, '__version__', 'unknown')}: {config.model}"
            f"{'@' + config.revision if config.revision else ''}, tensor_parallel_size={config.gpus}, "
            f"prefix caching {'on' if config.enable_prefix_caching else 'off'}"
        ]

    def close(self) -> None:
        # vLLM frees the engine (and its GPU memory) when the LLM object is collected.
        self._llm = None

    def _generate_one(self, conversation: list[dict[str, str]], params: Any) -> Completion:
        start = time.perf_counter()
        try:
            (output,) = self._llm.chat([conversation], sampling_params=[params], use_tqdm=False)
        except ValueError as error:
            return Completion(
                text="",
                prompt_tokens=None,
                completion_tokens=None,
                finish_reason="error",
                latency_s=time.perf_counter() - start,
                error=f"vLLM rejected the request: {error}",
            )
        return _completion(output, time.perf_counter() - start)

    def _sampling_params(self, request: Request) -> Any:
        sampling = request.sampling
        return self._vllm.SamplingParams(
            n=1,
            temperature=sampling.temperature,  # 0 is greedy in vLLM
            top_p=sampling.top_p,
            max_tokens=sampling.max_new_tokens,
            stop=list(sampling.stop) or None,
            seed=sample_seed(request),
        )


def _conversation(request: Request) -> list[dict[str, str]]:
    return [{"role": message.role, "content": message.content} for message in request.messages]


def _completion(output: Any, latency_s: float) -> Completion:
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


def make(name: str, config: VLLMModel, *, seed: int = ENGINE_SEED, **_: Any) -> VLLMBackend:
    """Entry point for backends.make_backend."""
    return VLLMBackend(config, engine_seed=seed)
