"""The generate stage: every prompt of every selected benchmark x generation pass, one model.

1. Read the prompts of each enabled benchmark (restricted by the model's `benchmarks:`)
   from results/prompts/<bench>/*.parquet and join them with their items
   (data/processed/<bench>/<task>.parquet) into ItemContexts.
2. Expand passes: the benchmark's `generate.main` pass and each `generate.extra` pass,
   n samples each, into Requests keyed by content (cache.request_key). The option-order pass
   (`rotate_options`) runs on the items render rotated, under every rotation (rotation 0 is
   the prompt as released: with the main pass's sampling, the same request, generated once);
   every other pass runs on the prompts as released only.
3. Batch deterministically: the unique requests sorted by (sampling, prompt length, key)
   (the backend's token count where it has one, `prompt_length`, else a character
   estimate; similar lengths share a batch, so little padding) and cut into batches over the
   FULL list, so a resumed run meets the same batches and regenerates exactly those not in the
   cache; batches fully cached are skipped; each completed batch is one cache shard.
4. Write results/generations/<model>/<bench>/<setting>.parquet plus generation_info.json
   into a staging directory renamed into place (the output is complete or absent), and a
   run summary (cache hits, timings, tokens/s) under results/logs/.
"""

from __future__ import annotations

import dataclasses
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NotRequired, TypedDict

from ..benchmarks.registry import NAMES, backend_hooks
from ..core import paths
from ..core.errors import DataError, IdiombenchError
from ..core.foreign import storable_text
from ..core.generation_types import MAIN_PASS, Backend, Completion, ItemContext, Request, Sampling, item_context
from ..core.io import dumps_json, require_complete, staged_directory, write_json
from ..core.items import Item, read_items
from ..core.progress import Progress
from ..core.redact import scrub
from ..generation.backends import make_backend
from ..generation.cache import GenerationCache, canonical_json, request_key
from ..generation.config import GenerateConfig, HFModel, ModelConfig, SamplingConfig
from ..generation.lock import model_lock
from ..generation.table import GenerationRow, write_generations
from ..params.schema import Params
from ..templating.prompts import Prompt, read_prompts

RENDER_STATS = "render_stats.json"  # render.STATS_FILE

Job = tuple[str, str, str, str]  # (benchmark, task, setting, pass)
Tables = dict[tuple[str, str], list[GenerationRow]]  # (benchmark, setting) -> the rows of its table

# generation_info.json's skipped job (functional syntax: `pass` is a keyword)
SkippedJobRecord = TypedDict(
    "SkippedJobRecord", {"benchmark": str, "task": str, "setting": str, "pass": str, "reason": str}
)


class GenerationInfo(TypedDict):
    """generation_info.json: what ran, with which identity, and what was skipped."""

    model: str
    backend: str
    identity: dict[str, object]
    config: dict[str, object]
    batch_size: int
    seed: int
    benchmarks: list[str]
    tables: dict[str, int]  # "<benchmark>/<setting>" -> rows
    skipped_jobs: list[SkippedJobRecord]


class JobSummary(TypedDict):
    """The run summary's counts of one (benchmark, setting), or of the whole run."""

    items: int
    rows: int
    requests: int
    cached: int
    generated: int
    failed: int
    completion_tokens: int
    generation_s: float
    tokens_per_s: float | None
    cache_hit_rate: float | None


class TotalSummary(JobSummary):
    elapsed_s: float


class SkippedJob(TypedDict):
    job: str
    reason: str


class GenerateSummary(TypedDict):
    """The run summary (results/logs/generate-<model>.json)."""

    model: str
    out_dir: str
    cache_dir: str
    cache_problems: int
    jobs: dict[str, JobSummary]
    total: TotalSummary
    skipped: list[SkippedJob]
    backend: list[str]
    lines: list[str]
    finished_at: str
    gpus: NotRequired[list[str]]  # the device ids the job claimed
    backend_summary: NotRequired[dict[str, object]]  # Backend.summary()


@dataclass(frozen=True)
class Row:
    """One output row: a prompt, a pass, a sample."""

    prompt: Prompt
    pass_name: str
    request: Request

    @property
    def job(self) -> Job:
        return (self.prompt.benchmark, self.prompt.task, self.prompt.setting, self.pass_name)


@dataclass
class JobCounts:
    prompts: set[str] = field(default_factory=set)
    rows: int = 0
    keys: set[str] = field(default_factory=set)
    cached: int = 0
    generated: int = 0
    failed: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


def select_benchmarks(params: Params, model_name: str, model: ModelConfig) -> list[str]:
    wanted = model.benchmarks
    if wanted is not None:
        unknown = sorted(set(wanted) - set(NAMES))
        if unknown:
            raise IdiombenchError(f"models.{model_name}.benchmarks: unknown {unknown} (known: {', '.join(NAMES)})")
    return [b for b in NAMES if params.benchmark(b).enabled and (wanted is None or b in wanted)]


def to_sampling(config: SamplingConfig) -> Sampling:
    return Sampling(
        temperature=float(config.temperature),
        top_p=float(config.top_p),
        max_new_tokens=config.max_new_tokens,
        stop=tuple(config.stop),
    )


def passes(config: GenerateConfig) -> list[tuple[str, SamplingConfig]]:
    if MAIN_PASS in config.extra:
        raise IdiombenchError(f"generate.extra: a pass may not be called {MAIN_PASS!r}")
    if config.main.settings is not None:
        raise IdiombenchError(
            "generate.main.settings: the main pass runs on every setting; "
            "restrict settings in the render section instead"
        )
    return [(MAIN_PASS, config.main), *sorted(config.extra.items())]


def load_prompts(benchmark: str, prompts_root: Path, items_root: Path) -> list[tuple[Prompt, ItemContext]]:
    """Every prompt of a benchmark joined with its item; a prompt without an item is an error."""
    directory = prompts_root / benchmark
    if directory.is_dir():  # render writes render_stats.json last: without it the folder is not render's
        require_complete(directory, RENDER_STATS, how=f"run `idiombench render {benchmark}` first")
    files = sorted(directory.glob("*.parquet")) if directory.is_dir() else []
    if not files:
        raise IdiombenchError(f"{directory}: no prompt tables (run `idiombench render {benchmark}` first)")
    items: dict[str, dict[str, Item]] = {}
    joined: list[tuple[Prompt, ItemContext]] = []
    for path in files:
        for row, prompt in enumerate(read_prompts(path)):
            if prompt.benchmark != benchmark:
                raise DataError(
                    path,
                    f"prompt {prompt.prompt_id} belongs to {prompt.benchmark}",
                    row=row,
                    expected=f"benchmark {benchmark}",
                )
            if prompt.task not in items:
                items_path = items_root / benchmark / f"{prompt.task}.parquet"
                if not items_path.is_file():
                    raise DataError(path, f"prompt {prompt.prompt_id}: items file {items_path} is missing", row=row)
                items[prompt.task] = {i.item_id: i for i in read_items(items_path)}
            item = items[prompt.task].get(prompt.item_id)
            if item is None:
                raise DataError(
                    path,
                    f"prompt {prompt.prompt_id}: item {prompt.item_id} is not in "
                    f"{items_root / benchmark / (prompt.task + '.parquet')}",
                    row=row,
                )
            joined.append((prompt, item_context(item, prompt.setting, prompt.rotation)))
    return joined


def rotated_items(prompts: Iterable[Prompt]) -> set[tuple[str, str, str]]:
    """(setting, task, item_id) of every item render rotated (the option-order pass's items)."""
    return {(p.setting, p.task, p.item_id) for p in prompts if p.rotation}


def prompt_passes(
    generate: GenerateConfig, prompt: Prompt, rotated: Collection[tuple[str, str, str]]
) -> list[tuple[str, SamplingConfig]]:
    """The passes a prompt gets (each n samples): those whose `settings` include its setting; a
    rotation only the rotating (option-order) pass, which runs only on the items render rotated.
    The one rule, read by the generate stage and by `idiombench plan`."""
    chosen = []
    for pass_name, config in passes(generate):
        if config.settings is not None and prompt.setting not in config.settings:
            continue
        if prompt.rotation and not config.rotate_options:
            continue  # a rotation is the option-order pass's
        if config.rotate_options and (prompt.setting, prompt.task, prompt.item_id) not in rotated:
            continue  # the option-order pass runs on the items render rotated
        chosen.append((pass_name, config))
    return chosen


def build_rows(
    params: Params,
    prompts: dict[str, list[tuple[Prompt, ItemContext]]],
    identity: Mapping[str, object],
    item_identity: Callable[[ItemContext], object] | None = None,
) -> list[Row]:
    """Every request of every prompt x pass x sample, keyed by `identity` (plus, for a backend
    that answers from the item's data, `item_identity(item)`)."""
    rows: list[Row] = []
    for benchmark, joined in prompts.items():
        generate = params.benchmark(benchmark).generate
        rotated = rotated_items(p for p, _ in joined)
        for prompt, item in joined:
            for pass_name, config in prompt_passes(generate, prompt, rotated):
                sampling = to_sampling(config)
                keyed: Mapping[str, object] = (
                    identity if item_identity is None else {**identity, "item": item_identity(item)}
                )
                for sample_index in range(config.n):
                    key = request_key(keyed, prompt.messages, sampling, params.seed, sample_index)
                    request = Request(
                        key=key,
                        prompt_id=prompt.prompt_id,
                        messages=prompt.messages,
                        sampling=sampling,
                        seed=params.seed,
                        sample_index=sample_index,
                        item=item,
                        pass_name=pass_name,
                    )
                    rows.append(Row(prompt, pass_name, request))
    return rows


def prompt_size(request: Request) -> int:
    """A cheap, backend-independent estimate of prompt length (characters)."""
    return sum(len(m.content) for m in request.messages)


def make_batches(
    requests: Sequence[Request], batch_size: int, length: Callable[[Request], int] = prompt_size
) -> list[list[Request]]:
    """Unique requests in a stable order, cut into batches of one sampling setting each.

    The order depends only on the requests' content (sampling, length, key), so a rerun
    over the same requests meets the same batches whatever was cached before."""
    unique: dict[str, Request] = {}
    for request in requests:
        unique.setdefault(request.key, request)
    ordered = sorted(unique.values(), key=lambda r: (canonical_json(r.sampling.to_json()), length(r), r.key))
    batches: list[list[Request]] = []
    for request in ordered:
        if batches and len(batches[-1]) < batch_size and batches[-1][0].sampling == request.sampling:
            batches[-1].append(request)
        else:
            batches.append([request])
    return batches


def resolve_batch_size(
    model_name: str, model: ModelConfig, backend: Backend, requests: Sequence[Request]
) -> tuple[int, str | None]:
    """(batch size, a line saying how `auto` was resolved, or None for a number)."""
    if model.batch_size != "auto":
        return int(model.batch_size), None
    chosen = backend.choose_batch_size(requests)
    if chosen is None:
        raise IdiombenchError(f"models.{model_name}: batch_size auto needs a backend that sizes batches (hf)")
    size, why = chosen
    return size, f"generate {model_name}: batch_size auto -> {size} ({why})"


@dataclass
class GenerateResult:
    out_dir: Path
    summary: GenerateSummary
    lines: list[str]


def run_generate(
    params: Params,
    model_name: str,
    *,
    out_dir: Path | None = None,
    prompts_root: Path = paths.RESULTS / "prompts",
    items_root: Path = paths.PROCESSED,
    cache_dir: Path | None = None,
    logs_dir: Path | None = None,
    echo: Callable[[str], None] = print,
    backend: Backend | None = None,
    devices: Sequence[str] = (),
) -> GenerateResult:
    """Generate one model's outputs, holding the model's lock (lock.py) throughout: a second
    run of the same model waits or refuses instead of calling the backend twice."""
    if model_name not in params.models:
        known = ", ".join(sorted(params.models)) or "none"
        raise IdiombenchError(f"unknown model {model_name!r} (models in params: {known})")
    cache_dir = Path(cache_dir) if cache_dir is not None else paths.cache_dir(model_name)
    with model_lock(cache_dir, model_name):
        return _run_generate(
            params,
            model_name,
            out_dir=out_dir,
            prompts_root=prompts_root,
            items_root=items_root,
            cache_dir=cache_dir,
            logs_dir=logs_dir,
            echo=echo,
            backend=backend,
            devices=devices,
        )


def check_model(model_name: str, model: ModelConfig) -> None:
    """What the hf backend cannot run, refused before anything is read."""
    if isinstance(model, HFModel) and model.device == "cuda" and model.gpus == 0:
        raise IdiombenchError(f"models.{model_name}: device cuda needs gpus >= 1 (the job claims its GPUs)")
    if isinstance(model, HFModel) and model.gpus > 1:
        raise IdiombenchError(
            f"models.{model_name}: the hf backend runs on one GPU (gpus: 1); use the vllm backend "
            f"for tensor parallelism over {model.gpus} GPUs"
        )


@dataclass
class Plan:
    """The requests of one generate run, keyed by everything that decides an output."""

    rows: list[Row]
    identity: dict[str, object]
    batch_size: int
    chosen: str | None  # how batch_size auto was resolved
    skipped: dict[Job, str]  # job -> why the backend does not run it
    lines: list[str]  # the backend's report


def plan_requests(
    params: Params,
    model_name: str,
    model: ModelConfig,
    backend: Backend,
    prompts: dict[str, list[tuple[Prompt, ItemContext]]],
    keep: Callable[[Row], bool] = lambda row: True,
) -> Plan:
    """The rows of every prompt x pass x sample that `keep` keeps, keyed by the backend's identity
    (plus the batch size where it changes outputs, plus the item where the backend answers from
    it), without the jobs the backend does not support."""
    identity = backend.identity()

    def rows_of(
        identity: Mapping[str, object], item_identity: Callable[[ItemContext], object] | None = None
    ) -> list[Row]:
        return [row for row in build_rows(params, prompts, identity, item_identity) if keep(row)]

    rows = rows_of(identity)
    batch_size, chosen = resolve_batch_size(model_name, model, backend, [row.request for row in rows])
    if backend.batch_size_changes_outputs:  # part of what decides an output: of the key
        identity = {**identity, "batch_size": batch_size}
        rows = rows_of(identity)
    backend.prepare([row.request for row in rows])
    if backend.answers_from_items:  # it answers from the items' data (known after prepare): part of each key
        rows = rows_of(identity, backend.item_identity)
    lines = list(backend.report())
    skipped: dict[Job, str] = {}
    for job_key in sorted({row.job for row in rows}):
        reason = backend.unsupported(*job_key)
        if reason:
            skipped[job_key] = reason
    rows = [row for row in rows if row.job not in skipped]
    return Plan(rows, identity, batch_size, chosen, skipped, lines)


@dataclass
class Generated:
    """What a run of the batches left: the failed completions (not cached), the timing of those
    generated, and the keys the cache already held."""

    failures: dict[str, Completion]
    timing: dict[str, float]
    cached_at_start: set[str]
    total: int


def generate_batches(
    backend: Backend, model: ModelConfig, batches: list[list[Request]], cache: GenerationCache, label: str
) -> Generated:
    """Generate every request the cache lacks, batch by batch (each completed batch is one shard)."""
    total = sum(len(b) for b in batches)
    cached_at_start = {r.key for b in batches for r in b if r.key in cache}
    failures: dict[str, Completion] = {}
    timing: dict[str, float] = {}
    bar = Progress(total, label, unit="request", initial=len(cached_at_start))
    try:
        for batch in batches:
            missing = [r for r in batch if r.key not in cache]
            if not missing:
                continue
            t0 = time.perf_counter()
            # a lone surrogate (an escape in a JSON body) cannot be stored as UTF-8: U+FFFD
            completions = [storable(c) for c in backend.generate(missing)]
            seconds = time.perf_counter() - t0
            if len(completions) != len(missing):
                raise IdiombenchError(
                    f"backend {model.backend} returned {len(completions)} completions for {len(missing)} requests"
                )
            cache.put_batch((r.key, c) for r, c in zip(missing, completions, strict=True))
            for request, completion in zip(missing, completions, strict=True):
                if completion.failed:
                    failures[request.key] = completion
                timing[request.key] = seconds / len(missing)
            bar.update(len(missing))
            bar.set_postfix_str(f"failed {len(failures)}")
    finally:
        bar.close()
    return Generated(failures, timing, cached_at_start, total)


def output_row(row: Row, completion: Completion) -> GenerationRow:
    """One row of a generations table."""
    prompt = row.prompt
    return {
        "prompt_id": prompt.prompt_id,
        "benchmark": prompt.benchmark,
        "task": prompt.task,
        "setting": prompt.setting,
        "item_id": prompt.item_id,
        "prompt_hash": prompt.prompt_hash,
        "pass": row.pass_name,
        "sample_index": row.request.sample_index,
        "rotation": prompt.rotation,
        "text": completion.text,
        "prompt_tokens": completion.prompt_tokens,
        "completion_tokens": completion.completion_tokens,
        "finish_reason": completion.finish_reason,
        "error": completion.error,
        "request_key": row.request.key,
    }


TableKey = tuple[str, str]  # (benchmark, setting): one generations table


def rows_by_table(rows: Iterable[Row]) -> dict[TableKey, list[Row]]:
    """The plan's rows per output table, in the table's order (generation.table.SORT_KEY)."""
    grouped: dict[TableKey, list[Row]] = defaultdict(list)
    for row in rows:
        grouped[(row.prompt.benchmark, row.prompt.setting)].append(row)
    for table_rows in grouped.values():
        table_rows.sort(key=lambda r: (r.prompt.prompt_id, r.pass_name, r.request.sample_index))
    return dict(sorted(grouped.items()))


def stream_tables(
    grouped: Mapping[TableKey, list[Row]],
    cache: GenerationCache,
    generated: Generated,
    counts: dict[Job, JobCounts],
) -> Iterator[tuple[TableKey, list[GenerationRow]]]:
    """Each output table's rows, one table at a time: only its completions' texts are read from
    the cache and held (the grid's texts are gigabytes), and `counts` is filled as it goes."""
    for table, rows in grouped.items():
        completions = cache.read({row.request.key for row in rows})
        out: list[GenerationRow] = []
        for row in rows:
            key = row.request.key
            completion = completions.get(key) or generated.failures.get(key)
            assert completion is not None, f"no completion for {row.prompt.prompt_id}"
            out.append(output_row(row, completion))
            count_row(counts[row.job], row, completion, generated)
        del completions
        yield table, out
        del out  # before the next table's texts are read


def count_row(job: JobCounts, row: Row, completion: Completion, generated: Generated) -> None:
    """One row in its job's counts (a key counted once per job)."""
    key = row.request.key
    job.prompts.add(row.prompt.prompt_id)
    job.rows += 1
    if key in job.keys:
        return
    job.keys.add(key)
    if key in generated.cached_at_start:
        job.cached += 1
    elif key in generated.failures:
        job.failed += 1
    else:
        job.generated += 1
        job.completion_tokens += completion.completion_tokens or 0
        job.seconds += generated.timing.get(key, 0.0)


def assemble_tables(
    rows: list[Row], cache: GenerationCache, generated: Generated
) -> tuple[Tables, dict[Job, JobCounts]]:
    """The output tables per (benchmark, setting), in memory, and the counts per job."""
    counts: dict[Job, JobCounts] = defaultdict(JobCounts)
    tables: Tables = dict(stream_tables(rows_by_table(rows), cache, generated, counts))
    return tables, counts


def echo_plan(model_name: str, plan: Plan, cache: GenerationCache, echo: Callable[[str], None]) -> None:
    """The backend's report, unreadable cache entries, skipped jobs and the batch size chosen."""
    for problem in cache.problems:
        plan.lines.append(f"cache: skipped unreadable entry {problem}")
    for line in plan.lines:
        echo(line)
    for (b, t, s, p), reason in sorted(plan.skipped.items()):
        echo(f"generate {model_name} {b}/{t}/{s} [{p}]: skipped: {reason}")
    if plan.chosen:
        plan.lines.append(plan.chosen)
        echo(plan.chosen)


def _run_generate(
    params: Params,
    model_name: str,
    *,
    out_dir: Path | None,
    prompts_root: Path,
    items_root: Path,
    cache_dir: Path,
    logs_dir: Path | None,
    echo: Callable[[str], None],
    backend: Backend | None,
    devices: Sequence[str],
) -> GenerateResult:
    model = params.models[model_name]
    check_model(model_name, model)
    out_dir = Path(out_dir) if out_dir is not None else paths.generations_dir(model_name)
    logs_dir = Path(logs_dir) if logs_dir is not None else paths.logs_dir()
    benchmarks = select_benchmarks(params, model_name, model)
    if not benchmarks:
        raise IdiombenchError(f"model {model_name}: no enabled benchmark to run")
    started = time.perf_counter()
    # Inputs first: a missing prompt table is reported before minutes of model loading.
    prompts = {b: load_prompts(b, prompts_root, items_root) for b in benchmarks}

    if backend is None:
        backend = make_backend(
            model_name, model, seed=params.seed, cache_root=cache_dir.parent, benchmarks=backend_hooks()
        )
    try:
        plan = plan_requests(params, model_name, model, backend, prompts)
        # a replay whose sources name no rendered job: an empty output would mean nothing
        if not plan.rows and model.backend == "replay":
            first = next(iter(sorted(plan.skipped.items())), None)
            raise IdiombenchError(
                f"generate {model_name}: no request to run, every job was skipped"
                + (f" (first: {'/'.join(first[0][:3])}: {first[1]})" if first else "")
                + "; nothing written"
            )
        cache = GenerationCache.load(cache_dir)
        echo_plan(model_name, plan, cache, echo)
        batches = make_batches([row.request for row in plan.rows], plan.batch_size, backend.prompt_length)
        generated = generate_batches(backend, model, batches, cache, f"generate {model_name}")
    finally:
        backend.close()

    failure_record = paths.generate_failure(model_name, logs_dir)
    try:
        check_failures(model_name, model, generated.failures, generated.total)
    except IdiombenchError as exc:
        # Nothing is written to the output; the record tells the report to mark the model failed.
        write_json(
            failure_record,
            {"model": model_name, "failed": len(generated.failures), "total": generated.total, "reason": str(exc)},
        )
        raise
    grouped = rows_by_table(plan.rows)
    info = generation_info(params, model_name, model, plan, benchmarks, {t: len(rows) for t, rows in grouped.items()})
    # identity.json: what the report and MLflow say about the model (stages.aggregate.model_info)
    loaded = backend.describe()
    identity_record = scrub({**plan.identity, "loaded": loaded if loaded is not None else model.backend})
    counts: dict[Job, JobCounts] = defaultdict(JobCounts)
    # one table at a time: the memory of the whole grid's texts is never held at once
    write_output(out_dir, stream_tables(grouped, cache, generated, counts), info, identity_record)
    failure_record.unlink(missing_ok=True)  # this run succeeded: an earlier failure no longer stands

    elapsed = time.perf_counter() - started
    summary = summarise(model_name, counts, plan.skipped, cache_dir, out_dir, elapsed, plan.lines, len(cache.problems))
    summary["gpus"] = list(devices)  # the device ids this job claimed (CUDA_VISIBLE_DEVICES)
    backend_summary = backend.summary()
    if backend_summary is not None:
        summary["backend_summary"] = backend_summary
    write_json(logs_dir / f"generate-{model_name}.json", summary)
    for line in summary["lines"]:
        echo(line)
    return GenerateResult(out_dir, summary, plan.lines)


def generation_info(
    params: Params,
    model_name: str,
    model: ModelConfig,
    plan: Plan,
    benchmarks: list[str],
    table_sizes: Mapping[TableKey, int],
) -> GenerationInfo:
    """generation_info.json: what ran, with which identity, and what was skipped."""
    return {
        "model": model_name,
        "backend": model.backend,
        "identity": plan.identity,
        "config": scrub(model.model_dump(mode="json")),  # never a credential from base_url
        "batch_size": plan.batch_size,  # as used (batch_size auto resolved)
        "seed": params.seed,
        "benchmarks": benchmarks,
        "tables": {f"{b}/{s}": size for (b, s), size in sorted(table_sizes.items())},
        "skipped_jobs": [
            {"benchmark": b, "task": t, "setting": s, "pass": p, "reason": reason}
            for (b, t, s, p), reason in sorted(plan.skipped.items())
        ],
    }


def storable(completion: Completion) -> Completion:
    """The completion with a text and an error the cache and the generations table can write
    (foreign.storable_text)."""
    text = storable_text(completion.text) if isinstance(completion.text, str) else completion.text
    error = storable_text(completion.error) if isinstance(completion.error, str) else completion.error
    if text is completion.text and error is completion.error:
        return completion
    return dataclasses.replace(completion, text=text, error=error)


# Backends whose failed rows are by design ("no answer for this item"), not failed requests.
TOLERANT_BACKENDS = frozenset({"replay", "oracle", "echo", "random", "majority"})


def check_failures(model_name: str, model: ModelConfig, failures: dict[str, Completion], total: int) -> None:
    """Fail the run (nothing written) when more requests failed than the model allows, so that
    an unreachable endpoint or a bad key never yields outputs that score as 0.00."""
    limit = model.max_failed_share
    if limit is None:
        limit = 1.0 if model.backend in TOLERANT_BACKENDS else 0.0
    if not failures or total == 0 or len(failures) / total <= limit:
        return
    first = failures[sorted(failures)[0]].error or "no error text"
    raise IdiombenchError(
        f"generate {model_name}: {len(failures):,} of {total:,} requests failed ({len(failures) / total:.0%}), more "
        f"than models.{model_name}.max_failed_share ({limit:g}) allows; first error: {' '.join(first.split())[:300]}; "
        f"nothing written (successes are cached: a rerun retries only the failures)"
    )


INFO_FILE = paths.GENERATION_INFO  # the completion record: written last, required by every reader


def write_output(
    out_dir: Path,
    tables: Iterable[tuple[TableKey, Sequence[GenerationRow]]],
    info: GenerationInfo,
    identity: Mapping[str, object],
) -> None:
    """Write every table (as `tables` yields them: one at a time) into a staging directory,
    then swap it into place (io.staged_directory: the old output is moved aside, never deleted first)."""
    with staged_directory(out_dir, paths.GENERATE_OUTPUT) as staging:
        for (benchmark, setting), rows in tables:
            write_generations(staging / benchmark / f"{setting}.parquet", rows)
            del rows  # the table's texts go before the next table's are read
        (staging / "identity.json").write_text(dumps_json(identity), encoding="utf-8")
        (staging / INFO_FILE).write_text(dumps_json(info), encoding="utf-8")


def _rate(tokens: int, seconds: float) -> float | None:
    return round(tokens / seconds, 2) if seconds > 0 and tokens > 0 else None


def summarise(
    model_name: str,
    counts: dict[Job, JobCounts],
    skipped: dict[Job, str],
    cache_dir: Path,
    out_dir: Path,
    elapsed: float,
    backend_lines: list[str],
    cache_problems: int,
) -> GenerateSummary:
    by_setting: dict[tuple[str, str], JobCounts] = defaultdict(JobCounts)
    for (b, _t, s, _p), job in counts.items():
        agg = by_setting[(b, s)]
        agg.prompts |= job.prompts
        agg.rows += job.rows
        for name in ("cached", "generated", "failed", "completion_tokens", "seconds"):
            setattr(agg, name, getattr(agg, name) + getattr(job, name))
    total = JobCounts()
    for agg in by_setting.values():
        total.rows += agg.rows
        total.prompts |= agg.prompts
        for name in ("cached", "generated", "failed", "completion_tokens", "seconds"):
            setattr(total, name, getattr(total, name) + getattr(agg, name))

    def entry(job: JobCounts) -> JobSummary:
        requests = job.cached + job.generated + job.failed
        return {
            "items": len(job.prompts),
            "rows": job.rows,
            "requests": requests,
            "cached": job.cached,
            "generated": job.generated,
            "failed": job.failed,
            "completion_tokens": job.completion_tokens,
            "generation_s": round(job.seconds, 3),
            "tokens_per_s": _rate(job.completion_tokens, job.seconds),
            "cache_hit_rate": round(job.cached / requests, 4) if requests else None,
        }

    def line(label: str, e: JobSummary) -> str:
        tps = f"{e['tokens_per_s']:.1f}" if e["tokens_per_s"] is not None else "-"
        return (
            f"generate {model_name} {label}: {e['items']:,} items, {e['requests']:,} requests, "
            f"{e['cached']:,} cached, {e['generated']:,} generated, {e['failed']:,} failed, {tps} tokens/s"
        )

    jobs = {f"{b}/{s}": entry(j) for (b, s), j in sorted(by_setting.items())}
    totals: TotalSummary = {**entry(total), "elapsed_s": round(elapsed, 3)}
    lines = [line(name, e) for name, e in jobs.items()]
    lines.append(line("total", totals) + f" ({totals['cache_hit_rate'] or 0:.0%} cache hits, {elapsed:.1f} s)")
    return {
        "model": model_name,
        "out_dir": str(out_dir),
        "cache_dir": str(cache_dir),
        "cache_problems": cache_problems,
        "jobs": jobs,
        "total": totals,
        "skipped": [{"job": "/".join(job), "reason": reason} for job, reason in sorted(skipped.items())],
        "backend": backend_lines,
        "lines": lines,
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
