"""Which generation settings change greedy outputs? One table per model and dtype: for each
setting, how many of N prompts get a different greedy text than the baseline (dynamic KV
cache, batch 8, transformers' default attention, this machine's CPU kernels). A setting
that changes any output must be part of the generation identity (the cache key).

    PYTHONPATH=src python bench/greedy_identity.py [--models smollm2 tiny] [--dtypes float32 bfloat16]
        [--prompts 32] [--max-new-tokens 24] [--batch-sizes 1 32] [--no-isa]
    PYTHONPATH=src python bench/greedy_identity.py --models llama3-8b --dtypes bfloat16   # on a GPU

Models: a name under `models:` in params.yaml (an hf model, e.g. smollm2: its dense copy),
`tiny` (the tests' random 2-layer Llama, tests/support/tiny_model.py), or a shape of
bench/generation.py's RANDOM_SHAPES (random bf16 weights, e.g. llama3-8b on a GPU).
Prompts: N of the project's rendered prompts spread over every benchmark and setting
(results/prompts: run the pipeline up to render first), or synthetic ones of about 60
tokens where there are none or the model is a random shape.

Settings compared with the baseline, one at a time: `cache_implementation: static`, each
of --batch-sizes (the stage's batching: sorted by token count, left-padded), attention
`eager` instead of the default `sdpa`, and on a CPU with AVX512 the same baseline run with
PyTorch and oneDNN held to AVX2 (ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2, a child
process), which is what another kind of CPU computes. Nothing is cached or written.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "support"))

BASE_BATCH = 8
AVX2 = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
RANDOM = ", random bf16 weights"  # a RANDOM_SHAPES model: synthetic prompts (its tokenizer is the tiny one)


def rendered_requests(count: int, max_new_tokens: int) -> list:
    """`count` rendered prompts, spread evenly over every benchmark and setting (stable order)."""
    from idiombench.core.generation_types import Request, Sampling
    from idiombench.stages.generate import load_prompts

    prompts_root, items_root = ROOT / "results" / "prompts", ROOT / "data" / "processed"
    joined = []
    for directory in sorted(p for p in prompts_root.iterdir() if p.is_dir()) if prompts_root.is_dir() else []:
        joined += sorted(load_prompts(directory.name, prompts_root, items_root), key=lambda pair: pair[0].prompt_id)
    if not joined:
        return []
    step = max(1, len(joined) // count)
    sampling = Sampling(max_new_tokens=max_new_tokens)
    return [
        Request(
            key=f"identity-{n}",
            prompt_id=p.prompt_id,
            messages=p.messages,
            sampling=sampling,
            seed=0,
            sample_index=0,
            item=item,
        )
        for n, (p, item) in enumerate(joined[::step][:count])
    ]


def model_config(name: str, dtype: str, workdir: Path):
    """(HFModel for `name` in `dtype`, a line saying what it is)."""
    from idiombench.generation.config import HFModel
    from idiombench.pipeline.config import load_params

    if name == "tiny":
        from tiny_model import build_tiny_chat_model

        path = build_tiny_chat_model(workdir / "tiny")
        return HFModel(
            backend="hf", model=str(path), dtype=dtype, device="cpu"
        ), "tiny random Llama (2 layers, 64 wide)"
    from generation import RANDOM_SHAPES, build_random_model

    if name in RANDOM_SHAPES:
        return (
            HFModel(backend="hf", model=str(build_random_model(name, workdir)), dtype=dtype),
            f"{name} shape{RANDOM}",
        )
    config = load_params(ROOT / "params.yaml").models[name]
    if config.backend != "hf":
        raise SystemExit(f"model {name}: backend {config.backend}, not hf")
    return config.model_copy(update={"dtype": dtype, "cache_implementation": "dynamic"}), f"{name} ({config.model})"


def greedy_texts(backend, requests: list, batch_size: int) -> list[str]:
    """Greedy texts in request order, batched as the generate stage batches."""
    from idiombench.stages.generate import make_batches

    texts: dict[str, str] = {}
    for batch in make_batches(requests, batch_size, backend.prompt_length):
        for request, completion in zip(batch, backend.generate(batch), strict=False):
            if completion.failed:
                raise SystemExit(completion.error)
            texts[request.key] = completion.text
    return [texts[r.key] for r in requests]


def run_settings(
    name: str, dtype: str, count: int, max_new_tokens: int, batch_sizes: list[int], only_baseline: bool = False
) -> dict:
    """{"what", "device", "attention", "prompts", "texts": {setting: [text per prompt]}, "seconds": {...}}."""
    from idiombench.generation.backends.hf import HFBackend

    with tempfile.TemporaryDirectory(prefix="idiombench-identity-") as tmp:
        config, what = model_config(name, dtype, Path(tmp))
        backend = HFBackend(name, config)
        requests = [] if what.endswith(RANDOM) else rendered_requests(count, max_new_tokens)
        source = "rendered prompts"
        if not requests:
            from generation import synthetic_requests

            requests, source = synthetic_requests(backend.tokenizer, count, 60, max_new_tokens), "synthetic prompts"
        runs: dict[str, list[str]] = {}
        seconds: dict[str, float] = {}

        def timed(setting: str, batch_size: int) -> None:
            started = time.perf_counter()
            runs[setting] = greedy_texts(backend, requests, batch_size)
            seconds[setting] = time.perf_counter() - started

        default_attention = backend.model.config._attn_implementation
        timed("baseline", BASE_BATCH)
        if not only_baseline:
            backend.config = config.model_copy(update={"cache_implementation": "static"})
            timed("cache_implementation static", BASE_BATCH)
            backend.config = config
            for size in batch_sizes:
                timed(f"batch_size {size}", size)
            if default_attention != "eager":
                backend.model.set_attn_implementation("eager")
                timed("attention eager", BASE_BATCH)
                backend.model.set_attn_implementation(default_attention)
        device = backend.device
        backend.close()
    return {
        "what": what,
        "device": device,
        "attention": default_attention,
        "source": source,
        "prompts": len(requests),
        "texts": runs,
        "seconds": seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["smollm2", "tiny"])
    parser.add_argument("--dtypes", nargs="+", default=["float32", "bfloat16"])
    parser.add_argument("--prompts", type=int, default=32)
    parser.add_argument("--max-new-tokens", type=int, default=24)
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=[1, 32])
    parser.add_argument("--no-isa", action="store_true", help="skip the AVX2-held child run")
    parser.add_argument("--child", nargs=2, metavar=("MODEL", "DTYPE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # rows appear as they are measured, also into a file
    if args.child:  # the baseline only, as JSON on stdout (run under another CPU capability)
        print(json.dumps(run_settings(*args.child, args.prompts, args.max_new_tokens, [], only_baseline=True)))
        return

    import torch
    import transformers

    capability = torch.backends.cpu.get_cpu_capability()
    print(
        f"torch {torch.__version__}, transformers {transformers.__version__}, CPU capability {capability}"
        + (f", GPU {torch.cuda.get_device_name()}" if torch.cuda.is_available() else "")
        + f"; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}"
    )
    rows = []
    for name in args.models:
        for dtype in args.dtypes:
            result = run_settings(name, dtype, args.prompts, args.max_new_tokens, args.batch_sizes)
            texts = result["texts"]
            if result["device"] == "cpu" and not args.no_isa and capability.upper().startswith("AVX512"):
                child = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--child",
                        name,
                        dtype,
                        "--prompts",
                        str(args.prompts),
                        "--max-new-tokens",
                        str(args.max_new_tokens),
                    ],
                    env={**os.environ, **AVX2},
                    capture_output=True,
                    text=True,
                    check=True,
                )
                held = json.loads(child.stdout.strip().splitlines()[-1])
                texts["CPU held to AVX2"] = held["texts"]["baseline"]
                result["seconds"]["CPU held to AVX2"] = held["seconds"]["baseline"]
            base = texts["baseline"]
            print(
                f"\n{result['what']}, {dtype} on {result['device']}: {result['prompts']} {result['source']}, "
                f"{args.max_new_tokens} new tokens, baseline: dynamic cache, batch {BASE_BATCH}, "
                f"attention {result['attention']}; {len(set(base))} distinct baseline outputs"
            )
            for setting, other in texts.items():
                if setting == "baseline":
                    continue
                differ = [i for i, (a, b) in enumerate(zip(base, other, strict=False)) if a != b]
                rows.append((name, dtype, setting, len(differ), len(base)))
                print(
                    f"  {setting:30} {len(differ):3d} of {len(base)} outputs differ "
                    f"({result['seconds'][setting]:.0f} s)"
                )
                if differ:
                    i = differ[0]
                    print(f"      e.g. baseline {base[i][:60]!r}\n           {setting}: {other[i][:60]!r}")
    print("\n| model | dtype | setting (vs dynamic cache, batch 8, default attention) | outputs that differ |")
    print("|---|---|---|---|")
    for name, dtype, setting, differ, total in rows:
        print(f"| {name} | {dtype} | {setting} | {differ} of {total} |")


if __name__ == "__main__":
    main()
