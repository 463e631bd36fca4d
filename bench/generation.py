"""Throughput of a model's generate backend on the project's own rendered prompts: per
(benchmark, setting) and batch size, requests/s, prompt tokens/s and new tokens/s, plus a
prefill-only pass (1 new token) so that prompt processing and decoding can be told apart.

    PYTHONPATH=src python bench/generation.py [--params params.yaml] [--model smollm2]
        [--prompts orderprobe/zero_shot orderprobe/three_shot] [--requests 16]
        [--batch-sizes 8 16] [--max-new-tokens 48] [--dtypes float32 bfloat16]

For an hf model every figure is printed per dtype (default float32 and bfloat16), with the
dtype that `dtype: auto` picks on this machine and why (native bf16 or not). Emulate a CPU
without bf16 instructions with ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2.

`--backends hf vllm` adds rows (`vllm/<dtype>`) of the vllm backend on the same weights (a
GGUF through the same dense copy), dtypes and prompts, prefix caching off (the 1-token pass
would otherwise leave every prompt cached for the next); run it with vLLM's interpreter
(`make vllm-env`), where both backends import:

    .venv-vllm/bin/python bench/generation.py --backends hf vllm --dtypes float32

Needs results/prompts/<benchmark>/ and data/processed/<benchmark>/ (run the pipeline up to
render first). Nothing is cached or written: every figure is a fresh generate() call.

A real model shape on a GPU without downloading weights:

    PYTHONPATH=src python bench/generation.py --random-weights llama3-8b \
        [--prompt-tokens 60] [--requests 1024] [--batch-sizes 64 256 512 auto] \
        [--max-new-tokens 128] [--caches dynamic static] [--plain]

builds the shape's config (RANDOM_SHAPES), initialises random bf16 weights on the GPU
(or the CPU when none is visible), saves them with the tiny offline test tokenizer
(tests/support/tiny_model.py) into a temporary directory and measures the hf backend on
synthetic prompts of about --prompt-tokens tokens (lengths spread +-20 %, seeded),
batched as the generate stage batches them (sorted by token count). The first and last
batch of each configuration run once untimed first (CUDA warm-up; torch.compile of the
static cache's shapes). --plain adds plain `model.generate` on the same token batches.
Random weights rarely emit the end token, so nearly every request decodes all new tokens.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from idiombench.benchmarks.registry import backend_hooks  # noqa: E402
from idiombench.core.generation_types import ItemContext, Message, Request, Sampling  # noqa: E402
from idiombench.generation.backends import make_backend  # noqa: E402
from idiombench.pipeline.config import load_params  # noqa: E402
from idiombench.stages.generate import load_prompts, make_batches  # noqa: E402

# Published shapes (the models' config.json), written out so no download is needed.
RANDOM_SHAPES: dict[str, dict] = {
    "llama3-8b": dict(
        model_type="llama",
        hidden_size=4096,
        num_hidden_layers=32,
        num_attention_heads=32,
        num_key_value_heads=8,
        head_dim=128,
        intermediate_size=14336,
        vocab_size=128256,
        max_position_embeddings=8192,
        rms_norm_eps=1e-5,
        tie_word_embeddings=False,
        rope_parameters={"rope_type": "default", "rope_theta": 500000.0},
    ),
    "qwen3-8b": dict(
        model_type="qwen3",
        hidden_size=4096,
        num_hidden_layers=36,
        num_attention_heads=32,
        num_key_value_heads=8,
        head_dim=128,
        intermediate_size=12288,
        vocab_size=151936,
        max_position_embeddings=40960,
        rms_norm_eps=1e-6,
        tie_word_embeddings=False,
        rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
    ),
    "tiny": dict(  # for a quick check of this script on a CPU
        model_type="llama",
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        intermediate_size=128,
        vocab_size=4096,
        max_position_embeddings=2048,
        rms_norm_eps=1e-5,
        tie_word_embeddings=False,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
    ),
}


def requests_for(benchmark: str, setting: str, count: int) -> list[Request]:
    joined = [
        (p, i)
        for p, i in load_prompts(benchmark, ROOT / "results" / "prompts", ROOT / "data" / "processed")
        if p.setting == setting
    ]
    if not joined:
        raise SystemExit(f"no rendered prompts for {benchmark}/{setting}")
    return [
        Request(
            key=f"bench-{n}",
            prompt_id=prompt.prompt_id,
            messages=prompt.messages,
            sampling=Sampling(),
            seed=0,
            sample_index=0,
            item=item,
        )
        for n, (prompt, item) in enumerate(joined[:count])
    ]


def vllm_twin(config, dtype: str):
    """The vllm backend on an hf model's weights (GGUF: the same dense copy) and dtype."""
    from idiombench.generation.config import VLLMModel

    on_gpu = config.device == "cuda" or config.gpus > 0
    return VLLMModel(
        backend="vllm",
        model=config.model,
        revision=config.revision,
        gguf_file=config.gguf_file,
        dtype=dtype,
        gpus=1 if on_gpu else 0,
        trust_remote_code=config.trust_remote_code,
        enable_prefix_caching=False,
    )


def measure(backend, requests: list[Request], batch_size: int, max_new_tokens: int) -> tuple[float, int, int]:
    sampling = Sampling(max_new_tokens=max_new_tokens)
    started = time.perf_counter()
    prompt_tokens = new_tokens = 0
    for start in range(0, len(requests), batch_size):
        batch = [Request(**{**r.__dict__, "sampling": sampling}) for r in requests[start : start + batch_size]]
        for completion in backend.generate(batch):
            prompt_tokens += completion.prompt_tokens or 0
            new_tokens += completion.completion_tokens or 0
    return time.perf_counter() - started, prompt_tokens, new_tokens


def build_random_model(shape: str, directory: Path) -> Path:
    """A model directory of the named shape: random bf16 weights initialised on the GPU
    (no download), the tiny offline test tokenizer and a generation config."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, GenerationConfig

    sys.path.insert(0, str(ROOT / "tests"))
    from tiny_model import build_tiny_chat_model

    tokenizer = AutoTokenizer.from_pretrained(build_tiny_chat_model(directory / "tokenizer-source"))
    values = dict(RANDOM_SHAPES[shape])
    config = AutoConfig.for_model(
        values.pop("model_type"),
        **values,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    device = "cuda" if torch.cuda.is_available() else "cpu"
    started = time.perf_counter()
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    target = directory / shape
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    GenerationConfig(eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id).save_pretrained(target)
    params = sum(p.numel() for p in model.parameters())
    del model
    if device == "cuda":
        torch.cuda.empty_cache()
    print(
        f"{shape}: {params / 1e9:.2f} B random bf16 parameters initialised on {device} and saved to {target} "
        f"in {time.perf_counter() - started:.1f} s"
    )
    return target


SYNTHETIC_ITEM = ItemContext(
    benchmark="synthetic", task="synthetic", setting="zero_shot", item_id="synthetic", input="", answer=""
)


def synthetic_requests(tokenizer, count: int, prompt_tokens: int, max_new_tokens: int, seed: int = 0) -> list[Request]:
    """`count` one-message chats whose templated prompts have about prompt_tokens tokens
    (each length drawn from +-20 %), from the tiny tokenizer's training sentences."""
    import random

    sys.path.insert(0, str(ROOT / "tests"))
    from tiny_model import CORPUS

    words = " ".join(CORPUS).split()
    rng = random.Random(seed)

    def length(n_words: int, offset: int) -> int:
        text = " ".join(words[(offset + i) % len(words)] for i in range(n_words))
        chat = tokenizer.apply_chat_template(
            [{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True
        )
        return len(tokenizer(chat, add_special_tokens=False)["input_ids"])

    sampling = Sampling(max_new_tokens=max_new_tokens)
    requests = []
    for n in range(count):
        target, offset = rng.randint(int(prompt_tokens * 0.8), int(prompt_tokens * 1.2)), rng.randrange(len(words))
        low, high = 1, 4 * target
        while low < high:  # fewest words reaching the target length
            middle = (low + high) // 2
            low, high = (middle + 1, high) if length(middle, offset) < target else (low, middle)
        text = " ".join(words[(offset + i) % len(words)] for i in range(low))
        requests.append(
            Request(
                key=f"synthetic-{n}",
                prompt_id=f"synthetic-{n}",
                messages=(Message("user", text),),
                sampling=sampling,
                seed=0,
                sample_index=0,
                item=SYNTHETIC_ITEM,
            )
        )
    return requests


def timed_batches(run, batches: list[list[Request]]) -> tuple[float, int, int]:
    """Warm up on the shortest and longest batch, then time every batch: (s, prompt tok, new tok)."""
    run(batches[0])
    if len(batches) > 1:
        run(batches[-1])
    started = time.perf_counter()
    prompt_tokens = new_tokens = 0
    for batch in batches:
        p, n = run(batch)
        prompt_tokens, new_tokens = prompt_tokens + p, new_tokens + n
    return time.perf_counter() - started, prompt_tokens, new_tokens


def random_weights_main(args: argparse.Namespace) -> None:
    import tempfile

    import torch

    from idiombench.generation.backends.hf import STATIC_PAD_MULTIPLE, HFBackend
    from idiombench.generation.config import HFModel

    with tempfile.TemporaryDirectory(prefix="idiombench-random-") as tmp:
        directory = build_random_model(args.random_weights, Path(tmp))
        started = time.perf_counter()
        config = HFModel(backend="hf", model=str(directory), dtype="bfloat16", device="auto")
        backend = HFBackend(args.random_weights, config)
        print(f"loaded in {time.perf_counter() - started:.1f} s ({backend.describe()})")
        if backend.device == "cuda":
            print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}")
        import transformers

        print(f"transformers {transformers.__version__}")
        requests = synthetic_requests(backend.tokenizer, args.requests, args.prompt_tokens, args.max_new_tokens)
        lengths = sorted(backend.prompt_length(r) for r in requests)
        print(
            f"{len(requests)} synthetic prompts, {lengths[0]}-{lengths[-1]} tokens "
            f"(median {lengths[len(lengths) // 2]}), "
            f"{args.max_new_tokens} new tokens each"
        )
        tok = backend.tokenizer

        def hf_run(batch: list[Request]) -> tuple[int, int]:
            completions = backend.generate(batch)
            errors = [c.error for c in completions if c.error]
            if errors:
                raise SystemExit(errors[0])
            return sum(c.prompt_tokens or 0 for c in completions), sum(c.completion_tokens or 0 for c in completions)

        def plain_run(batch: list[Request], cache: str) -> tuple[int, int]:
            static = cache == "static"
            encoded = tok(
                [backend._chat_text(r) for r in batch],
                return_tensors="pt",
                padding=True,
                add_special_tokens=False,
                pad_to_multiple_of=STATIC_PAD_MULTIPLE if static else None,
            )
            encoded = encoded.to(backend.device)
            with torch.inference_mode():
                output = backend.model.generate(
                    **encoded,
                    max_new_tokens=args.max_new_tokens,
                    do_sample=False,
                    pad_token_id=tok.pad_token_id,
                    cache_implementation=cache,
                )
            return int(encoded["attention_mask"].sum()), int(output[:, encoded["input_ids"].shape[1] :].numel())

        rows = []
        print(f"{'path':40} {'batch':>5} {'batches':>7} {'new tok':>8} {'s':>7} {'new tok/s':>9}", flush=True)
        for cache in args.caches:
            backend.config = config.model_copy(update={"cache_implementation": cache})
            for size in args.batch_sizes:
                batch_size = int(size) if size != "auto" else backend.choose_batch_size(requests)[0]
                if size == "auto":
                    print(f"  auto batch size ({cache}): {backend.choose_batch_size(requests)}")
                batches = make_batches(requests, batch_size, backend.prompt_length)
                paths = [(f"hf backend, {cache} cache", hf_run)]
                if args.plain:
                    paths.append((f"plain generate, {cache} cache", lambda b, c=cache: plain_run(b, c)))
                for name, run in paths:
                    seconds, _prompt, new = timed_batches(run, batches)
                    label = f"{batch_size} (auto)" if size == "auto" else str(batch_size)
                    rows.append((name, label, len(batches), new, seconds))
                    print(
                        f"{name:40} {label:>5} {len(batches):7d} {new:8,d} {seconds:7.1f} {new / seconds:9,.0f}",
                        flush=True,
                    )
                if backend.device == "cuda":
                    torch.cuda.empty_cache()
        backend.close()
        print()
        print(
            f"| path | batch | new tok/s |  ({args.random_weights}, ~{args.prompt_tokens}-token prompts, "
            f"{args.max_new_tokens} new tokens)"
        )
        print("|---|---|---|")
        for name, label, _n, new, seconds in rows:
            print(f"| {name} | {label} | {new / seconds:,.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--params", default=str(ROOT / "params.yaml"))
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--prompts", nargs="+", default=["orderprobe/zero_shot", "orderprobe/three_shot"])
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument(
        "--batch-sizes",
        nargs="+",
        default=[8, 16],
        help="batch sizes; with --random-weights `auto` too (batch_size: auto)",
    )
    parser.add_argument("--max-new-tokens", type=int, default=48)
    parser.add_argument(
        "--dtypes", nargs="+", default=["float32", "bfloat16"], help="hf models: the dtypes to measure (default both)"
    )
    parser.add_argument(
        "--random-weights",
        choices=sorted(RANDOM_SHAPES),
        help="measure a random-weight model of this shape on synthetic prompts (no params, no download)",
    )
    parser.add_argument("--prompt-tokens", type=int, default=60, help="--random-weights: prompt length")
    parser.add_argument(
        "--caches",
        nargs="+",
        choices=["dynamic", "static"],
        default=["dynamic", "static"],
        help="--random-weights: KV cache implementations to measure",
    )
    parser.add_argument("--plain", action="store_true", help="--random-weights: also plain model.generate")
    parser.add_argument(
        "--backends",
        nargs="+",
        choices=["hf", "vllm"],
        default=["hf"],
        help="hf models: the backends to measure on the same weights (vllm: run with .venv-vllm/bin/python)",
    )
    args, _ = parser.parse_known_args()
    if args.random_weights:
        parser.set_defaults(batch_sizes=["64", "256", "512", "auto"], requests=1024, max_new_tokens=128)
        args = parser.parse_args()
        args.batch_sizes = [str(b) for b in args.batch_sizes]
        random_weights_main(args)
        return
    args = parser.parse_args()

    params = load_params(args.params)
    config = params.models[args.model]
    if config.backend == "hf":
        from idiombench.core.hardware import auto_dtype

        choice = auto_dtype("cuda" if config.device == "cuda" else "cpu")
        print(f"{args.model}: dtype {choice.reason}")
        configs = [(d, config.model_copy(update={"dtype": d})) for d in args.dtypes] if "hf" in args.backends else []
        configs += [(f"vllm/{d}", vllm_twin(config, d)) for d in args.dtypes] if "vllm" in args.backends else []
    else:
        configs = [("-", config)]
    print(
        f"{'dtype':12} {'prompts':28} {'batch':>5} {'new':>4} {'req/s':>7} {'prompt tok':>10} {'new tok':>8} "
        f"{'prompt tok/s':>12} {'new tok/s':>9}"
    )
    for dtype, model_config in configs:
        started = time.perf_counter()
        backend = make_backend(args.model, model_config, seed=params.seed, benchmarks=backend_hooks())
        print(f"{args.model} ({dtype}): loaded in {time.perf_counter() - started:.1f} s ({backend.describe()})")
        for spec in args.prompts:
            benchmark, setting = spec.split("/")
            requests = requests_for(benchmark, setting, args.requests)
            for batch_size in map(int, args.batch_sizes):
                for new in (1, args.max_new_tokens):
                    seconds, prompt_tokens, new_tokens = measure(backend, requests, batch_size, new)
                    print(
                        f"{dtype:12} {spec:28} {batch_size:5d} {new:4d} {len(requests) / seconds:7.2f} "
                        f"{prompt_tokens:10,d} {new_tokens:8,d} {prompt_tokens / seconds:12.0f} "
                        f"{new_tokens / seconds:9.1f}"
                    )
        backend.close()


if __name__ == "__main__":
    main()
