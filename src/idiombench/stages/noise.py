"""The serving-noise stage: how much of a model's score is its serving setup
(docs/METRICS.md#8-serving-noise).

1. Sample: per benchmark, `serving_noise.sample_size` items drawn (seeded) over its (task,
   setting) strata from the rendered prompts, the same for every model (they depend only on the
   prompts and the seed); the main pass's greedy request of each, as released (no rotation).
2. Per perturbation (a change of the model's own config, params `serving_noise.perturbations`):
   the model loaded under the changed config, the sample generated through the generate stage's
   own planning and batches, each request cached under the changed identity (results/cache/
   <model>/: a rerun generates nothing). A change that resolves to the configured identity
   (float32 where dtype auto is float32 already) or names a key the backend lacks is recorded,
   not run.
3. Score the perturbed outputs with the benchmark's own scorer; compare each item's headline
   outcome (Benchmark.item_outcomes) with the configured run's (results/scores/<model>/):
   items compared, share with a different output, share whose outcome flipped, the headline
   difference with a paired bootstrap interval clustered as the benchmark's unit.
4. Write results/noise/<model>/: figures.json (every figure, also for the report and MLflow),
   <perturbation>/<benchmark>.parquet (per item: both outputs and outcomes), the perturbed
   generations, sample.json; in a staging folder swapped into place.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, NotRequired, TypedDict

import pandas as pd

from ..benchmarks.contexts import ScoreContext
from ..benchmarks.registry import backend_hooks, get_benchmark
from ..core import paths
from ..core.errors import IdiombenchError
from ..core.generation_types import MAIN_PASS, ItemContext
from ..core.io import read_json_object, read_parquet, require_complete, staged_directory, write_json
from ..core.sampling import stratified_subset
from ..generation.backends import make_backend
from ..generation.cache import GenerationCache
from ..generation.config import ModelConfig
from ..generation.lock import model_lock
from ..generation.table import write_generations
from ..params.schema import NOISE_BACKENDS, Params, perturbed_config
from ..statistics.agreement import paired_figures
from ..templating.prompts import Prompt
from .generate import (
    Tables,
    assemble_tables,
    check_failures,
    generate_batches,
    load_prompts,
    make_batches,
    plan_requests,
    select_benchmarks,
)
from .inputs import GenerationTables, _make_scorers, load_items

if TYPE_CHECKING:
    from ..scoring import Scorers

FIGURES = "figures.json"
SAMPLE = "sample.json"
MEASURED: Final = "measured"
NO_CHANGE: Final = "no change"
NOT_APPLICABLE: Final = "not applicable"
SKIPPED: Final = "skipped"

Joined = dict[str, list[tuple[Prompt, ItemContext]]]


class FigureKeys(TypedDict):
    """What every figures row of one perturbation names."""

    model: str
    perturbation: str
    change: dict[str, object]  # the model config keys it changes, sorted


class BenchmarkFigureKeys(FigureKeys):
    benchmark: str
    identity_change: dict[str, object]  # what the perturbed identity says differently


class MeasuredFigure(BenchmarkFigureKeys):
    """The figures of a (benchmark, setting, metric) (NaN: null)."""

    setting: str
    metric: str
    status: Literal["measured"]
    items: int
    units: int
    changed_share: float | None
    flipped_share: float | None
    configured: float | None
    perturbed: float | None
    difference: float | None
    low: float | None
    high: float | None


class StatusFigure(FigureKeys):
    """A benchmark the perturbation was not measured on, and why."""

    benchmark: str
    status: Literal["not applicable", "no change", "skipped"]
    reason: str


# one row of figures.json's `figures`
NoiseFigure = MeasuredFigure | StatusFigure


class NoiseBody(TypedDict):
    """figures.json: a model's serving-noise figures, or why it has none (status skipped)."""

    model: str
    status: Literal["measured", "skipped"]
    figures: list[NoiseFigure]
    reason: NotRequired[str]
    sample_size: NotRequired[int]
    seed: NotRequired[int]
    configured_identity: NotRequired[dict[str, object]]


def why_not(params: Params, model: str) -> str | None:
    """None when the model gets a serving-noise pass, else why not."""
    if model not in params.models:
        raise IdiombenchError(f"unknown model {model!r} (params models: {', '.join(params.models) or 'none'})")
    if not params.serving_noise.enabled:
        return "serving_noise.enabled is false"
    backend = params.models[model].backend
    if backend not in NOISE_BACKENDS:
        return f"backend {backend} has no serving settings to vary (only {' and '.join(NOISE_BACKENDS)} models)"
    if not params.serving_noise.perturbations:
        return "serving_noise.perturbations is empty"
    return None


def sample_prompts(
    params: Params, benchmark: str, joined: list[tuple[Prompt, ItemContext]]
) -> list[tuple[Prompt, ItemContext]]:
    """The benchmark's sample: prompts as released (rotation 0), stratified by (task, setting)."""
    released = {p.prompt_id: (p, item) for p, item in joined if p.rotation == 0}
    strata: dict[Hashable, list[str]] = {}
    for prompt_id, (prompt, _) in released.items():
        strata.setdefault((prompt.task, prompt.setting), []).append(prompt_id)
    config = params.serving_noise
    chosen = stratified_subset(strata, config.sample_size, config.seed, "serving_noise", benchmark)
    return [released[prompt_id] for prompt_id in chosen]


def sampled_prompts(params: Params, benchmarks: list[str]) -> Joined:
    return {
        b: sample_prompts(params, b, load_prompts(b, paths.RESULTS / "prompts", paths.PROCESSED)) for b in benchmarks
    }


def configured_identity(model: str) -> dict[str, object]:
    root = require_complete(
        paths.generations_dir(model), paths.GENERATION_INFO, how=f"run `idiombench generate --model {model}` first"
    )
    return dict(read_json_object(root / paths.GENERATION_INFO)["identity"])


def generate_variant(
    params: Params, model: str, config: ModelConfig, prompts: Joined, configured: Mapping[str, object], label: str
) -> tuple[dict[str, object], Tables] | None:
    """The sample's outputs under `config` (through the cache), or None when its identity is the
    configured run's (the change changes nothing on this machine)."""
    cache_dir = paths.cache_dir(model)
    backend = make_backend(model, config, seed=params.seed, cache_root=cache_dir.parent, benchmarks=backend_hooks())
    try:
        plan = plan_requests(
            params,
            model,
            config,
            backend,
            prompts,
            keep=lambda row: row.pass_name == MAIN_PASS and row.request.sample_index == 0,
        )
        if plan.identity == configured:
            return None
        cache = GenerationCache.load(cache_dir)
        batches = make_batches([row.request for row in plan.rows], plan.batch_size, backend.prompt_length)
        generated = generate_batches(backend, config, batches, cache, label)
    finally:
        backend.close()
    check_failures(model, config, generated.failures, generated.total)
    tables, _ = assemble_tables(plan.rows, cache, generated)
    return plan.identity, tables


def score_variant(
    params: Params, benchmark: str, model: str, folder: Path, scorers: Scorers | None
) -> dict[str, pd.DataFrame]:
    """setting -> score table of the generations in `folder` (the benchmark's own scorer)."""
    files = {path.stem: path for path in sorted(folder.glob("*.parquet"))}
    generations = GenerationTables(files)  # a Mapping read setting by setting, as the score stage's
    ctx = ScoreContext(
        params=params,
        model=model,
        benchmark=benchmark,
        config=params.benchmark(benchmark),
        generations=generations,
        items=load_items(benchmark),
        scorers=scorers,
    )
    chunks: dict[str, list[pd.DataFrame]] = {}
    for setting, frame in get_benchmark(benchmark).score_chunks(ctx):
        chunks.setdefault(setting, []).append(frame)
    return {setting: pd.concat(frames, ignore_index=True) for setting, frames in chunks.items()}


def configured_rows(
    benchmark: str, model: str, setting: str, prompt_ids: set[str]
) -> tuple[pd.DataFrame, dict[str, str]]:
    """The configured run's score rows of the sampled prompts, and their output texts."""
    scores = read_parquet(paths.scores_dir(benchmark=benchmark, model=model) / f"{setting}.parquet").to_pandas()
    scores = scores[scores["prompt_id"].isin(prompt_ids)]
    generations = read_parquet(paths.generations_file(benchmark=benchmark, model=model, setting=setting)).to_pandas()
    main = generations[(generations["pass"] == MAIN_PASS) & (generations["sample_index"] == 0)]
    return scores, dict(zip(main["prompt_id"], main["text"], strict=True))


def compare_setting(
    params: Params, benchmark: str, model: str, setting: str, perturbed: pd.DataFrame, texts: dict[str, str]
) -> pd.DataFrame | None:
    """Per sampled item of a setting and headline metric: both outputs and both outcomes (None: no
    per-item outcome)."""
    bench, config = get_benchmark(benchmark), params.benchmark(benchmark)
    configured, configured_texts = configured_rows(benchmark, model, setting, set(perturbed["prompt_id"]))
    a = bench.item_outcomes(configured, setting, config)
    b = bench.item_outcomes(perturbed, setting, config)
    if a is None or b is None:
        return None
    keys = ["prompt_id", "sample_index", "metric"]  # a setting may have several headline metrics: one row each
    joined = a.merge(b[[*keys, "outcome"]], on=keys, suffixes=("_configured", "_perturbed"), validate="one_to_one")
    joined.insert(0, "setting", setting)
    joined["text_configured"] = joined["prompt_id"].map(configured_texts)
    joined["text_perturbed"] = joined["prompt_id"].map(texts)
    joined["changed"] = joined["text_configured"] != joined["text_perturbed"]
    joined["flipped"] = (joined["outcome_configured"] - joined["outcome_perturbed"]).abs() > 1e-9
    return joined.sort_values(["setting", "prompt_id", "metric"]).reset_index(drop=True)


def _number(value: float | None) -> float | None:
    """A figure for JSON: NaN (undefined) as null."""
    return None if value is None or value != value else float(value)


def figure_rows(params: Params, common: BenchmarkFigureKeys, items: pd.DataFrame) -> list[MeasuredFigure]:
    """One figures row per (setting, metric) of a benchmark's compared items."""
    uncertainty = params.report.uncertainty
    rows: list[MeasuredFigure] = []
    for (setting, metric), group in items.groupby(["setting", "metric"], sort=True):
        found = paired_figures(
            group["unit"].tolist(),
            group["outcome_configured"].tolist(),
            group["outcome_perturbed"].tolist(),
            group["text_configured"].tolist(),
            group["text_perturbed"].tolist(),
            resamples=uncertainty.resamples,
            confidence=uncertainty.confidence,
            seed=uncertainty.seed,
        )
        rows.append(
            {
                **common,
                "setting": setting,
                "metric": metric,
                "status": MEASURED,
                "items": found.items,
                "units": found.units,
                "changed_share": _number(found.changed_share),
                "flipped_share": _number(found.flipped_share),
                "configured": _number(found.value_a),
                "perturbed": _number(found.value_b),
                "difference": _number(found.difference),
                "low": _number(found.low),
                "high": _number(found.high),
            }
        )
    return rows


def run_perturbation(
    params: Params,
    model: str,
    name: str,
    prompts: Joined,
    configured: Mapping[str, object],
    staging: Path,
    scorers: Callable[[], Scorers | None],
    echo: Callable[[str], None],
) -> list[NoiseFigure]:
    """The figures of one perturbation on every sampled benchmark (a status row when not run)."""
    change = params.serving_noise.perturbations[name]
    common: FigureKeys = {"model": model, "perturbation": name, "change": dict(sorted(change.items()))}
    config = perturbed_config(params.models[model], change)
    if config is None:
        reason = f"backend {params.models[model].backend} has no {', '.join(sorted(change))}"
        echo(f"noise {model} {name}: not applicable: {reason}")
        return [{**common, "benchmark": b, "status": NOT_APPLICABLE, "reason": reason} for b in prompts]
    variant = generate_variant(params, model, config, prompts, configured, f"noise {model} {name}")
    if variant is None:
        reason = "resolves to the configured run's identity on this machine"
        echo(f"noise {model} {name}: no change: {reason}")
        return [{**common, "benchmark": b, "status": NO_CHANGE, "reason": reason} for b in prompts]
    identity, tables = variant
    rows: list[NoiseFigure] = []
    for benchmark in prompts:
        folder = staging / name / "generations" / benchmark
        texts: dict[str, str] = {}
        for (b, setting), table in sorted(tables.items()):
            if b == benchmark:
                write_generations(folder / f"{setting}.parquet", table)
                texts.update((row["prompt_id"], row["text"]) for row in table)
        compared = [
            compare_setting(params, benchmark, model, setting, frame, texts)
            for setting, frame in sorted(score_variant(params, benchmark, model, folder, scorers()).items())
        ]
        items = pd.concat([c for c in compared if c is not None], ignore_index=True) if compared else pd.DataFrame()
        if items.empty:
            rows.append({**common, "benchmark": benchmark, "status": SKIPPED, "reason": "no per-item outcome"})
            continue
        items.to_parquet(staging / name / f"{benchmark}.parquet", index=False)
        rows += figure_rows(
            params, {**common, "benchmark": benchmark, "identity_change": changed_keys(configured, identity)}, items
        )
    return rows


def changed_keys(configured: Mapping[str, object], identity: Mapping[str, object]) -> dict[str, object]:
    """What the perturbed identity says differently from the configured one."""
    return {
        key: identity.get(key)
        for key in sorted(set(configured) | set(identity))
        if configured.get(key) != identity.get(key)
    }


def run_noise(params: Params, *, model: str, echo: Callable[[str], None] = print) -> NoiseBody:
    out = paths.noise_dir(model)
    reason = why_not(params, model)
    with staged_directory(out, paths.NOISE_OUTPUT) as staging:
        if reason is not None:
            skipped: NoiseBody = {"model": model, "status": SKIPPED, "reason": reason, "figures": []}
            write_json(staging / FIGURES, skipped)
            return skipped
        configured = configured_identity(model)
        benchmarks = select_benchmarks(params, model, params.models[model])
        prompts = sampled_prompts(params, benchmarks)
        write_json(staging / SAMPLE, {b: sorted(p.prompt_id for p, _ in joined) for b, joined in prompts.items()})
        made: list[Scorers | None] = []

        def scorers() -> Scorers | None:  # loaded once, when a perturbation first needs them
            if not made:
                made.append(_make_scorers(params))
            return made[0]

        figures: list[NoiseFigure] = []
        with model_lock(paths.cache_dir(model), model):
            for name in sorted(params.serving_noise.perturbations):
                figures += run_perturbation(params, model, name, prompts, configured, staging, scorers, echo)
        body: NoiseBody = {
            "model": model,
            "status": MEASURED,
            "sample_size": params.serving_noise.sample_size,
            "seed": params.serving_noise.seed,
            "configured_identity": configured,
            "figures": figures,
        }
        write_json(staging / FIGURES, body)
    for row in figures:
        if row["status"] == MEASURED:
            echo(
                f"noise {model} {row['perturbation']} {row['benchmark']}/{row['setting']} [{row['metric']}]: "
                f"{row['items']} items, {row['changed_share']:.0%} changed, {row['flipped_share']:.0%} flipped, "
                f"difference {row['difference']:+.3f}"
            )
    return body


def read_figures(model: str) -> dict[str, Any] | None:
    """A model's serving-noise figures, a NoiseBody (None when the stage has not run for it).
    Untyped while its readers (report_noise, track) take the rows as plain dicts."""
    path = paths.noise_dir(model) / FIGURES
    return read_json_object(path) if path.is_file() else None
