"""A fake `vllm` for tests: the real API's signatures, a deterministic echo instead of a model.

Put on sys.path only by the `fake_vllm` fixture of the tests that need it (vLLM itself
cannot be installed on the development and CI machines: no CUDA).

Signatures copied from vLLM 0.8.3 (the lower bound of the `vllm` extra):
  - `LLM.__init__`, `LLM.chat`: https://docs.vllm.ai/en/v0.8.3/api/offline_inference/llm.html
    Parameter names as in 0.8.3; everything after `model` is keyword-only as in later releases
    (vllm/entrypoints/llm.py), the stricter of the two, so a positional call fails here too.
    `**kwargs` go to `EngineArgs` (a dataclass): unknown names raise TypeError, as they do there.
  - `SamplingParams`: https://docs.vllm.ai/en/v0.8.3/api/inference_params.html, public fields,
    with the checks of its `_verify_args` that a caller can trip (ValueError, as in vLLM).
  - `RequestOutput`, `CompletionOutput`: vllm/outputs.py.

Behaviour: the "model" answers every conversation with its last user message, split on
whitespace into "tokens"; `max_tokens` truncates it (finish_reason "length"), a stop string
cuts it (finish_reason "stop", stop_reason the string). Prompts longer than `max_model_len`
tokens are rejected with ValueError for the whole call, like vLLM's input validation.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

__version__ = "0.8.3+fake"

# EngineArgs fields reachable through LLM(**kwargs) (vllm/engine/arg_utils.py), minus the
# ones LLM.__init__ names itself.
ENGINE_ARGS_FIELDS = frozenset(
    {
        "served_model_name", "download_dir", "load_format", "config_format", "kv_cache_dtype",
        "max_model_len", "distributed_executor_backend", "pipeline_parallel_size",
        "max_parallel_loading_workers", "block_size", "enable_prefix_caching",
        "disable_sliding_window", "max_num_batched_tokens", "max_num_seqs", "max_logprobs",
        "disable_log_stats", "code_revision", "rope_scaling", "rope_theta", "tokenizer_pool_size",
        "tokenizer_pool_type", "tokenizer_pool_extra_config", "limit_mm_per_prompt",
        "disable_mm_preprocessor_cache", "enable_lora", "enable_lora_bias", "max_loras",
        "max_lora_rank", "fully_sharded_loras", "lora_extra_vocab_size", "lora_dtype",
        "max_cpu_loras", "device", "num_scheduler_steps", "multi_step_stream_outputs",
        "num_gpu_blocks_override", "num_lookahead_slots", "model_loader_extra_config",
        "ignore_patterns", "preemption_mode", "scheduler_delay_factor", "enable_chunked_prefill",
        "guided_decoding_backend", "logits_processor_pattern", "speculative_model",
        "num_speculative_tokens", "qlora_adapter_name_or_path", "otlp_traces_endpoint",
        "collect_detailed_traces", "scheduling_policy", "worker_cls", "kv_transfer_config",
        "generation_config", "override_generation_config", "enable_sleep_mode", "model_impl",
        "calculate_kv_scales",
    }
)

_DTYPES = frozenset({"auto", "half", "float16", "bfloat16", "float", "float32"})

# Every LLM constructed while the fake is imported, for tests to inspect.
INSTANCES: list[LLM] = []


class SamplingParams:
    def __init__(
        self,
        n: int = 1,
        best_of: int | None = None,
        presence_penalty: float = 0.0,
        frequency_penalty: float = 0.0,
        repetition_penalty: float = 1.0,
        temperature: float = 1.0,
        top_p: float = 1.0,
        top_k: int = -1,
        min_p: float = 0.0,
        seed: int | None = None,
        stop: str | list[str] | None = None,
        stop_token_ids: list[int] | None = None,
        ignore_eos: bool = False,
        max_tokens: int | None = 16,
        min_tokens: int = 0,
        logprobs: int | None = None,
        prompt_logprobs: int | None = None,
        detokenize: bool = True,
        skip_special_tokens: bool = True,
        spaces_between_special_tokens: bool = True,
        logits_processors: Any | None = None,
        include_stop_str_in_output: bool = False,
        truncate_prompt_tokens: int | None = None,
        output_kind: Any = None,
        guided_decoding: Any | None = None,
        logit_bias: dict[int, float] | None = None,
        allowed_token_ids: list[int] | None = None,
        extra_args: dict[str, Any] | None = None,
        bad_words: list[str] | None = None,
    ) -> None:
        self.n = n
        self.best_of = best_of
        self.temperature = temperature
        self.top_p = top_p
        self.top_k = top_k
        self.min_p = min_p
        self.seed = seed
        # vLLM normalises stop to a list.
        self.stop = [] if stop is None else [stop] if isinstance(stop, str) else list(stop)
        self.max_tokens = max_tokens
        self.min_tokens = min_tokens
        self.include_stop_str_in_output = include_stop_str_in_output
        self._verify(presence_penalty, frequency_penalty, repetition_penalty)

    def _verify(self, presence_penalty: float, frequency_penalty: float, repetition_penalty: float) -> None:
        if not isinstance(self.n, int) or self.n < 1:
            raise ValueError(f"n must be at least 1, got {self.n}.")
        if not -2.0 <= presence_penalty <= 2.0:
            raise ValueError(f"presence_penalty must be in [-2, 2], got {presence_penalty}.")
        if not -2.0 <= frequency_penalty <= 2.0:
            raise ValueError(f"frequency_penalty must be in [-2, 2], got {frequency_penalty}.")
        if repetition_penalty <= 0.0:
            raise ValueError(f"repetition_penalty must be greater than zero, got {repetition_penalty}.")
        if self.temperature < 0.0:
            raise ValueError(f"temperature must be non-negative, got {self.temperature}.")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}.")
        if self.top_k < -1 or self.top_k == 0:
            raise ValueError(f"top_k must be -1 (disable), or at least 1, got {self.top_k}.")
        if not 0.0 <= self.min_p <= 1.0:
            raise ValueError(f"min_p must be in [0, 1], got {self.min_p}.")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {self.max_tokens}.")
        if self.seed is not None and not isinstance(self.seed, int):
            raise ValueError(f"seed must be an int or None, got {self.seed!r}.")
        if any(not isinstance(s, str) or not s for s in self.stop):
            raise ValueError(f"stop must be non-empty strings, got {self.stop!r}.")

    def __repr__(self) -> str:
        return (
            f"SamplingParams(n={self.n}, temperature={self.temperature}, top_p={self.top_p}, "
            f"seed={self.seed}, stop={self.stop}, max_tokens={self.max_tokens})"
        )


@dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: list[int]
    cumulative_logprob: float | None
    logprobs: Any | None
    finish_reason: str | None = None
    stop_reason: int | str | None = None
    lora_request: Any | None = None


@dataclass
class RequestOutput:
    request_id: str
    prompt: str | None
    prompt_token_ids: list[int] | None
    prompt_logprobs: Any | None
    outputs: list[CompletionOutput]
    finished: bool
    metrics: Any | None = None
    lora_request: Any | None = None
    encoder_prompt: str | None = None
    encoder_prompt_token_ids: list[int] | None = None
    num_cached_tokens: int | None = None


@dataclass
class ChatCall:
    """One `LLM.chat` call as the fake received it."""

    conversations: list[list[dict[str, Any]]]
    sampling_params: list[SamplingParams]
    use_tqdm: bool
    kwargs: dict[str, Any] = field(default_factory=dict)


class LLM:
    def __init__(
        self,
        model: str,
        *,
        tokenizer: str | None = None,
        tokenizer_mode: str = "auto",
        skip_tokenizer_init: bool = False,
        trust_remote_code: bool = False,
        allowed_local_media_path: str = "",
        tensor_parallel_size: int = 1,
        dtype: str = "auto",
        quantization: str | None = None,
        revision: str | None = None,
        tokenizer_revision: str | None = None,
        seed: int | None = None,
        gpu_memory_utilization: float = 0.9,
        swap_space: float = 4,
        cpu_offload_gb: float = 0,
        enforce_eager: bool | None = None,
        max_seq_len_to_capture: int = 8192,
        disable_custom_all_reduce: bool = False,
        disable_async_output_proc: bool = False,
        hf_overrides: Any | None = None,
        mm_processor_kwargs: dict[str, Any] | None = None,
        task: str = "auto",
        override_pooler_config: Any | None = None,
        compilation_config: int | dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        unknown = sorted(set(kwargs) - ENGINE_ARGS_FIELDS)
        if unknown:
            raise TypeError(f"EngineArgs.__init__() got an unexpected keyword argument '{unknown[0]}'")
        if not isinstance(model, str) or not model:
            raise ValueError(f"model must be a non-empty string, got {model!r}")
        if dtype not in _DTYPES:
            raise ValueError(f"Unknown dtype: {dtype}")
        if not isinstance(tensor_parallel_size, int) or tensor_parallel_size < 1:
            raise ValueError(f"tensor_parallel_size must be a positive integer, got {tensor_parallel_size!r}")
        if not 0.0 < gpu_memory_utilization <= 1.0:
            raise ValueError(f"GPU memory utilization must be within (0, 1], got {gpu_memory_utilization}")
        self.init_kwargs: dict[str, Any] = {
            "model": model,
            "trust_remote_code": trust_remote_code,
            "tensor_parallel_size": tensor_parallel_size,
            "dtype": dtype,
            "revision": revision,
            "seed": seed,
            "gpu_memory_utilization": gpu_memory_utilization,
            **kwargs,
        }
        self.max_model_len: int | None = kwargs.get("max_model_len")
        self.calls: list[ChatCall] = []
        INSTANCES.append(self)

    def chat(
        self,
        messages: list[dict[str, Any]] | list[list[dict[str, Any]]],
        sampling_params: SamplingParams | list[SamplingParams] | None = None,
        use_tqdm: bool = True,
        lora_request: Any | None = None,
        chat_template: str | None = None,
        chat_template_content_format: str = "auto",
        add_generation_prompt: bool = True,
        continue_final_message: bool = False,
        tools: list[dict[str, Any]] | None = None,
        mm_processor_kwargs: dict[str, Any] | None = None,
    ) -> list[RequestOutput]:
        conversations = messages if messages and isinstance(messages[0], list) else [messages]
        if sampling_params is None:
            params = [SamplingParams() for _ in conversations]
        elif isinstance(sampling_params, SamplingParams):
            params = [sampling_params] * len(conversations)
        else:
            params = list(sampling_params)
            if len(params) != len(conversations):
                raise ValueError("The lengths of prompts and params must be the same.")
        for param in params:
            if not isinstance(param, SamplingParams):
                raise TypeError(f"sampling_params must be SamplingParams, got {type(param).__name__}")
        self.calls.append(ChatCall([list(c) for c in conversations], params, use_tqdm))

        prompts = [_render(conversation) for conversation in conversations]
        for prompt in prompts:  # validated before anything runs, as vLLM does
            length = len(prompt.split())
            if self.max_model_len is not None and length > self.max_model_len:
                raise ValueError(
                    f"The decoder prompt (length {length}) is longer than the maximum model length "
                    f"of {self.max_model_len}. Make sure that `max_model_len` is no smaller than the "
                    "number of text tokens."
                )
        return [
            _answer(str(index), prompt, conversation, param)
            for index, (prompt, conversation, param) in enumerate(zip(prompts, conversations, params))
        ]


def _render(conversation: list[dict[str, Any]]) -> str:
    for message in conversation:
        if set(message) != {"role", "content"} or not isinstance(message["content"], str):
            raise ValueError(f"each message needs exactly 'role' and 'content' (str), got {message!r}")
    turns = "".join(f"<|{m['role']}|>\n{m['content']}\n" for m in conversation)
    return turns + "<|assistant|>\n"


def _token_ids(text: str) -> list[int]:
    return [zlib.crc32(word.encode("utf-8")) % 32000 for word in text.split()]


def _answer(
    request_id: str, prompt: str, conversation: list[dict[str, Any]], params: SamplingParams
) -> RequestOutput:
    user_turns = [m["content"] for m in conversation if m["role"] == "user"]
    text = user_turns[-1] if user_turns else ""
    finish_reason, stop_reason = "stop", None
    for stop in params.stop:
        if stop in text:
            text, stop_reason = text[: text.index(stop)], stop
    words = text.split()
    if params.max_tokens is not None and len(words) > params.max_tokens:
        words, finish_reason, stop_reason = words[: params.max_tokens], "length", None
    output = CompletionOutput(
        index=0,
        text=" ".join(words),
        token_ids=_token_ids(" ".join(words)),
        cumulative_logprob=None,
        logprobs=None,
        finish_reason=finish_reason,
        stop_reason=stop_reason,
    )
    return RequestOutput(
        request_id=request_id,
        prompt=prompt,
        prompt_token_ids=_token_ids(prompt),
        prompt_logprobs=None,
        outputs=[output],
        finished=True,
    )
