"""`idiombench attention <benchmark> --model <m>`: attention diagnostics of one model's recorded
generations (benchmarks with `attention_diagnostics`), written to
results/analysis/<benchmark>/attention/<model>/:

- items.parquet: one row per measured prompt (the benchmark's labels, the attention mass on
  each span, off-span and generated mass, OtherTop1, per-(layer, head) span scores);
- summary.json: the benchmark's statistics (`attention_summary`), or "skipped" with the reason
  (benchmark disabled, model not listed, a backend without weights), so the static DAG always
  has a truthful output. A model on the vllm backend is measured on its own weights loaded by
  transformers (vLLM returns no attention weights; its greedy outputs may differ slightly from
  transformers', which the per-item greedy agreement shows).

Timings and memory go to results/logs/attention-<benchmark>-<model>.json (they differ between
runs, so they are kept out of the declared outputs).
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path
from typing import Any, NotRequired, TypedDict

import pandas as pd
import pyarrow as pa

from ..analysis.attention import AttentionError, Measurement, locate, measure, use_eager
from ..benchmarks.contexts import AttentionContext, AttentionPrompt
from ..benchmarks.registry import attention_names, get_benchmark
from ..core import paths
from ..core.errors import IdiombenchError
from ..core.io import read_json, read_parquet, staged_directory, write_json, write_parquet
from ..core.progress import Progress
from ..generation.config import HFModel, ModelConfig, VLLMModel
from ..params.schema import Params
from ..templating.prompts import Prompt, read_prompts
from .inputs import SKIPPED, applies, load_generations, load_items

MEASURED = "measured"
WEIGHT_BACKENDS = ("hf", "vllm")  # backends whose weights transformers can load with eager attention


class ItemTiming(TypedDict):
    """One measured prompt's cost (the log's `items`)."""

    prompt_id: str
    seconds: float
    tokens: int
    attention_bytes: int
    peak_rss_mib: float
    cuda_peak_mib: NotRequired[float]


class AttentionLog(TypedDict):
    """results/logs/attention-<benchmark>-<model>.json: what the measurement cost."""

    benchmark: str
    model: str
    device: str
    load_s: float
    items_measured: int
    seconds_total: float
    seconds_per_item: float | None
    peak_rss_mib_after_load: float
    peak_rss_mib: float
    items: list[ItemTiming]


def skip_reason(params: Params, *, benchmark: str, model: str) -> str | None:
    """None when the stage measures `model` on `benchmark`, else why not."""
    reason = applies(params, benchmark=benchmark, model=model)
    if reason is not None:
        return reason
    settings = params.benchmark(benchmark).attention
    if not settings.enabled:
        return f"benchmarks.{benchmark}.attention.enabled is false"
    config = params.models[model]
    if config.backend not in WEIGHT_BACKENDS:
        return (
            f"backend {config.backend} gives no attention weights (the diagnostics need the model's weights: "
            f"a model on the hf or vllm backend)"
        )
    if config.backend == "vllm" and config.gpus > 1:
        return f"models.{model}.gpus is {config.gpus}: transformers measures a vllm model's weights on one GPU"
    if settings.models is not None and model not in settings.models:
        return f"benchmarks.{benchmark}.attention.models does not list {model}"
    return None


def transformers_config(config: ModelConfig) -> HFModel:
    """The hf backend's config for a model's weights: a vllm model's own weights, loaded by
    transformers (vLLM returns no attention weights) on its GPU, or on the CPU for gpus 0."""
    if isinstance(config, HFModel):
        return config
    if not isinstance(config, VLLMModel):  # skip_reason leaves only the WEIGHT_BACKENDS
        raise IdiombenchError(f"backend {config.backend} has no weights for transformers to load")
    return HFModel(
        backend="hf",
        model=config.model,
        revision=config.revision,
        gguf_file=config.gguf_file,
        dtype=config.dtype,
        device="cuda" if config.gpus else "cpu",
        gpus=config.gpus,
        trust_remote_code=config.trust_remote_code,
        display_name=config.display_name,
    )


def load_scores(*, benchmark: str, model: str) -> dict[str, pd.DataFrame]:
    directory = paths.scores_dir(benchmark=benchmark, model=model)
    meta = directory / "scoring_meta.json"
    if not meta.is_file():
        raise IdiombenchError(f"{directory} is not scored: run `idiombench score {benchmark} --model {model}` first")
    return {
        path.stem: read_parquet(path, what="scores table").to_pandas() for path in sorted(directory.glob("*.parquet"))
    }


def load_rendered(benchmark: str) -> dict[str, dict[str, Prompt]]:
    return {
        path.stem: {p.prompt_id: p for p in read_prompts(path)}
        for path in sorted(paths.prompts_dir(benchmark).glob("*.parquet"))
    }


def peak_rss_mib() -> float:
    """This process's peak resident memory so far (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (2**20 if sys.platform == "darwin" else 2**10)


def row_of(prompt: AttentionPrompt, result: Measurement | None, reason: str | None) -> dict[str, object]:
    """One row of items.parquet: the prompt, its labels and its measurement (or why none)."""
    row: dict[str, object] = {
        "prompt_id": prompt.prompt_id,
        "setting": prompt.setting,
        "item_id": prompt.item_id,
        **prompt.labels,
        "status": MEASURED if result else "not_measured",
        "reason": reason,
    }
    if result is None:
        return row
    row.update({f"mass_{name}": value for name, value in result.span_mass.items()})
    row.update(
        prompt_other=result.prompt_other,
        generated=result.generated,
        other_top1=result.other_top1,
        positions=result.positions,
        sequence_length=result.sequence_length,
        greedy_agreement=result.greedy_agreement,
        attention_bytes=result.attention_bytes,
    )
    for name, scores in result.head_scores.items():
        row["layers"], row["heads"] = scores.shape
        row[f"heads_{name}"] = [float(v) for v in scores.reshape(-1)]
    return row


def check_attention_benchmark(benchmark: str) -> None:
    """The benchmark has attention diagnostics (and so an attention params section)."""
    if not get_benchmark(benchmark).attention_diagnostics:
        raise IdiombenchError(
            f"benchmark {benchmark} has no attention diagnostics (benchmarks with them: "
            f"{', '.join(attention_names()) or 'none'})"
        )


def run_attention(
    params: Params, *, benchmark: str, model: str, out: Path | None = None, logs: Path | None = None
) -> dict[str, Any]:
    """summary.json, with the log under `log`. (Loosely typed: the summary holds the benchmark's own
    attention_summary, an untyped dict in base.Benchmark, which the CLI reads by key.)"""
    check_attention_benchmark(benchmark)
    bench = get_benchmark(benchmark)
    out = out or paths.attention_dir(benchmark=benchmark, model=model)
    reason = skip_reason(params, benchmark=benchmark, model=model)
    with staged_directory(out, paths.ATTENTION_OUTPUT) as staging:
        if reason is not None:
            summary: dict[str, object] = {"benchmark": benchmark, "model": model, "status": SKIPPED, "reason": reason}
            write_json(staging / "summary.json", summary)
            return summary
        ctx = AttentionContext(
            params=params,
            model=model,
            benchmark=benchmark,
            config=params.benchmark(benchmark),
            generations=load_generations(benchmark=benchmark, model=model),
            items=load_items(benchmark),
            scores=load_scores(benchmark=benchmark, model=model),
            prompts=load_rendered(benchmark),
        )
        prompts = bench.attention_prompts(ctx)
        from ..generation.backends.hf import HFBackend

        started = time.perf_counter()
        backend = HFBackend(
            model, transformers_config(params.models[model]), seed=params.seed, cache_root=paths.cache_dir(model)
        )
        use_eager(backend.model)
        load_s = time.perf_counter() - started
        rss_loaded = peak_rss_mib()
        cuda = backend.device == "cuda"
        rows: list[dict[str, object]] = []
        timings: list[ItemTiming] = []
        progress = Progress(len(prompts), f"attention {benchmark} {model}", unit="prompt")
        for prompt in prompts:
            progress.update(1)  # measured next (or skipped with its reason)
            if prompt.content is None:
                rows.append(row_of(prompt, None, "no content segment in the output"))
                continue
            if cuda:
                backend.torch.cuda.reset_peak_memory_stats()
            try:
                result = measure(
                    backend.model,
                    locate(backend.tokenizer, prompt.messages, prompt.spans, prompt.output, prompt.content),
                )
            except AttentionError as error:
                if "attn_implementation" in str(error) or "fast tokenizer" in str(error):
                    raise
                rows.append(row_of(prompt, None, str(error)))
                continue
            timing: ItemTiming = {
                "prompt_id": prompt.prompt_id,
                "seconds": result.seconds,
                "tokens": result.sequence_length,
                "attention_bytes": result.attention_bytes,
                "peak_rss_mib": peak_rss_mib(),
            }
            if cuda:
                timing["cuda_peak_mib"] = backend.torch.cuda.max_memory_allocated() / 2**20
            timings.append(timing)
            rows.append(row_of(prompt, result, None))
        progress.close()
        identity = backend.identity()
        backend.close()
        frame = pd.DataFrame(rows).sort_values(["setting", "prompt_id"], kind="stable").reset_index(drop=True)
        summary = {
            "benchmark": benchmark,
            "model": model,
            "status": MEASURED,
            "identity": identity,
            "loaded_by": "transformers (hf backend)",
            "attn_implementation": "eager",
            **bench.attention_summary(ctx, frame),
            "notes": ctx.notes,
        }
        write_parquet(staging / "items.parquet", pa.Table.from_pandas(frame, preserve_index=False))
        write_json(staging / "summary.json", summary)
    measured = [t["seconds"] for t in timings]
    log: AttentionLog = {
        "benchmark": benchmark,
        "model": model,
        "device": backend.device,
        "load_s": load_s,
        "items_measured": len(measured),
        "seconds_total": sum(measured),
        "seconds_per_item": sum(measured) / len(measured) if measured else None,
        "peak_rss_mib_after_load": rss_loaded,
        "peak_rss_mib": peak_rss_mib(),
        "items": timings,
    }
    write_json((logs or paths.logs_dir()) / f"attention-{benchmark}-{model}.json", log)
    return {**summary, "log": log}


def read_summary(*, benchmark: str, model: str) -> object:
    """summary.json as written (None: the stage has not run)."""
    path = paths.attention_dir(benchmark=benchmark, model=model) / "summary.json"
    return read_json(path) if path.is_file() else None
