"""Throughput of a model's generate backend on the project's own rendered prompts: per
(benchmark, setting) and batch size, requests/s, prompt tokens/s and new tokens/s, plus a
prefill-only pass (1 new token) so that prompt processing and decoding can be told apart.

    PYTHONPATH=src python bench/generation.py [--params params.yaml] [--model smollm2]
        [--prompts orderprobe/zero_shot orderprobe/three_shot] [--requests 16]
        [--batch-sizes 8 16] [--max-new-tokens 48] [--dtypes float32 bfloat16]

For an hf model every figure is printed per dtype (default float32 and bfloat16), with the
dtype that `dtype: auto` picks on this machine and why (native bf16 or not). Emulate a CPU
without bf16 instructions with ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2.

Needs results/prompts/<benchmark>/ and data/processed/<benchmark>/ (run the pipeline up to
render first). Nothing is cached or written: every figure is a fresh generate() call.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from idiombench.config import load_params  # noqa: E402
from idiombench.generation.backends import make_backend  # noqa: E402
from idiombench.generation.stage import load_prompts  # noqa: E402
from idiombench.generation.types import Request, Sampling  # noqa: E402


def requests_for(benchmark: str, setting: str, count: int) -> list[Request]:
    joined = [(p, i) for p, i in load_prompts(benchmark, ROOT / "results" / "prompts", ROOT / "data" / "processed")
              if p.setting == setting]
    if not joined:
        raise SystemExit(f"no rendered prompts for {benchmark}/{setting}")
    return [
        Request(key=f"bench-{n}", prompt_id=prompt.prompt_id, messages=prompt.messages, sampling=Sampling(),
                seed=0, sample_index=0, item=item)
        for n, (prompt, item) in enumerate(joined[:count])
    ]


def measure(backend, requests: list[Request], batch_size: int, max_new_tokens: int) -> tuple[float, int, int]:
    sampling = Sampling(max_new_tokens=max_new_tokens)
    started = time.perf_counter()
    prompt_tokens = new_tokens = 0
    for start in range(0, len(requests), batch_size):
        batch = [Request(**{**r.__dict__, "sampling": sampling}) for r in requests[start:start + batch_size]]
        for completion in backend.generate(batch):
            prompt_tokens += completion.prompt_tokens or 0
            new_tokens += completion.completion_tokens or 0
    return time.perf_counter() - started, prompt_tokens, new_tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--params", default=str(ROOT / "params.yaml"))
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--prompts", nargs="+", default=["orderprobe/zero_shot", "orderprobe/three_shot"])
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=[8, 16])
    parser.add_argument("--max-new-tokens", type=int, default=48)
    parser.add_argument("--dtypes", nargs="+", default=["float32", "bfloat16"],
                        help="hf models: the dtypes to measure (default both)")
    args = parser.parse_args()

    params = load_params(args.params)
    config = params.models[args.model]
    if config.backend == "hf":
        from idiombench.hardware import auto_dtype

        choice = auto_dtype("cuda" if config.device == "cuda" else "cpu")
        print(f"{args.model}: dtype {choice.reason}")
        configs = [(d, config.model_copy(update={"dtype": d})) for d in args.dtypes]
    else:
        configs = [("-", config)]
    print(f"{'dtype':9} {'prompts':28} {'batch':>5} {'new':>4} {'req/s':>7} {'prompt tok':>10} {'new tok':>8} "
          f"{'prompt tok/s':>12} {'new tok/s':>9}")
    for dtype, model_config in configs:
        started = time.perf_counter()
        backend = make_backend(args.model, model_config, seed=params.seed)
        print(f"{args.model} ({dtype}): loaded in {time.perf_counter() - started:.1f} s ({backend.describe()})")
        for spec in args.prompts:
            benchmark, setting = spec.split("/")
            requests = requests_for(benchmark, setting, args.requests)
            for batch_size in args.batch_sizes:
                for new in (1, args.max_new_tokens):
                    seconds, prompt_tokens, new_tokens = measure(backend, requests, batch_size, new)
                    print(f"{dtype:9} {spec:28} {batch_size:5d} {new:4d} {len(requests) / seconds:7.2f} "
                          f"{prompt_tokens:10,d} {new_tokens:8,d} {prompt_tokens / seconds:12.0f} "
                          f"{new_tokens / seconds:9.1f}")
        backend.close()


if __name__ == "__main__":
    main()
