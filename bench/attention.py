"""Time and peak memory per item of the attention stage (G-IdiomAlign's attention diagnostics)
for one hf model, on the project's own recorded generations:

    PYTHONPATH=src python bench/attention.py [--params params.yaml] [--model smollm2]
        [--items 16] [--warmup 1]

Needs the embedded default run up to `score` (results/prompts, data/processed,
results/generations/<model>, results/scores/<model>/g-idiomalign). It draws the items as the
stage does (`benchmarks.g-idiomalign.attention`, `--items` overrides the count), loads the model
as the stage does (hf backend, eager attention) and measures every prompt (both conditions)
after `--warmup` untimed passes. Per item it prints the seconds of the forward pass with its
hooks and reductions, and the memory: on CPU the peak resident memory of the process during
the item above its level before it (sampled every 5 ms from /proc/self/statm), on
CUDA torch's peak allocation; plus the largest attention tensor alive at once (one layer) beside
what keeping every layer's weights would take. Nothing is written.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from idiombench.analysis.attention import locate, measure, use_eager  # noqa: E402
from idiombench.benchmarks.contexts import AttentionContext  # noqa: E402
from idiombench.benchmarks.registry import get_benchmark  # noqa: E402
from idiombench.core import paths  # noqa: E402
from idiombench.pipeline.config import load_params  # noqa: E402
from idiombench.stages.attention import load_rendered, load_scores, transformers_config  # noqa: E402
from idiombench.stages.inputs import load_generations, load_items  # noqa: E402

BENCHMARK = "g-idiomalign"
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as handle:
        return int(handle.read().split()[1]) * PAGE


class PeakRss:
    """The highest resident memory seen while the block runs (a sampling thread)."""

    def __enter__(self) -> PeakRss:
        self.start = self.peak = rss_bytes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_bytes())
            time.sleep(0.005)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_bytes())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--items", type=int, default=None, help="Task 2 items (default: the params' attention.items)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed passes first (oneDNN / CUDA set-up)")
    args = parser.parse_args()

    params = load_params(args.params)
    config = params.benchmark(BENCHMARK)
    if args.items is not None:
        config = config.model_copy(update={"attention": config.attention.model_copy(update={"items": args.items})})
    ctx = AttentionContext(
        params=params,
        model=args.model,
        benchmark=BENCHMARK,
        config=config,
        generations=load_generations(benchmark=BENCHMARK, model=args.model),
        items=load_items(BENCHMARK),
        scores=load_scores(benchmark=BENCHMARK, model=args.model),
        prompts=load_rendered(BENCHMARK),
    )
    prompts = [p for p in get_benchmark(BENCHMARK).attention_prompts(ctx) if p.content is not None]

    from idiombench.generation.backends.hf import HFBackend

    started = time.perf_counter()
    backend = HFBackend(
        args.model,
        transformers_config(params.models[args.model]),
        seed=params.seed,
        cache_root=paths.cache_dir(args.model),
    )
    use_eager(backend.model)
    load_s = time.perf_counter() - started
    torch = backend.torch
    cuda = backend.device == "cuda"
    located = [locate(backend.tokenizer, p.messages, p.spans, p.output, p.content) for p in prompts]
    for item in located[: args.warmup]:
        measure(backend.model, item)
    print(
        f"model {args.model}: {backend.describe()}; loaded in {load_s:.1f} s; torch threads {torch.get_num_threads()}; "
        f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())} on {os.cpu_count()} CPUs "
        "(other processes slow it)"
    )
    print(
        f"{len(located)} prompts ({len(located) // 2 if len(located) > 1 else len(located)} items x conditions), "
        f"{args.warmup} warm-up pass(es) untimed"
    )
    print(f"{'prompt':<60} {'tokens':>6} {'T':>3} {'s':>7} {'peak MiB':>9} {'attn MiB':>9} {'all-layer MiB':>14}")
    seconds, peaks = [], []
    layers = backend.model.config.get_text_config().num_hidden_layers
    for prompt, item in zip(prompts, located, strict=True):
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
        with PeakRss() as rss:
            result = measure(backend.model, item)
            if cuda:
                torch.cuda.synchronize()
        peak = (torch.cuda.max_memory_allocated() - base) if cuda else (rss.peak - rss.start)
        seconds.append(result.seconds)
        peaks.append(peak)
        print(
            f"{prompt.prompt_id[-60:]:<60} {result.sequence_length:>6} {result.positions:>3} {result.seconds:>7.3f} "
            f"{peak / 2**20:>9.1f} {result.attention_bytes / 2**20:>9.3f} "
            f"{layers * result.attention_bytes / 2**20:>14.3f}"
        )
    what = "CUDA peak allocation above the item's start" if cuda else "peak RSS above the item's start"
    print(
        f"per item: mean {statistics.mean(seconds):.3f} s, median {statistics.median(seconds):.3f} s, "
        f"max {max(seconds):.3f} s; total {sum(seconds):.1f} s for {len(seconds)} prompts"
    )
    print(
        f"memory per item ({what}): mean {statistics.mean(peaks) / 2**20:.1f} MiB, max {max(peaks) / 2**20:.1f} MiB; "
        f"process RSS {rss_bytes() / 2**20:.0f} MiB now "
        "(model loaded: weights "
        f"{sum(p.numel() * p.element_size() for p in backend.model.parameters()) / 2**20:.0f} MiB)"
    )


if __name__ == "__main__":
    main()
