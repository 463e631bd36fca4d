"""`idiombench plan`: what a params file's grid costs, before anything is generated.

Per model x benchmark x setting:
- rows: generation rows (prompt x pass x sample) = score rows (score writes one per generation row);
- requests: the distinct requests the model's backend gets (the generate stage's content key:
  messages, sampling, sample index; the option-order pass's rotation 0 is the main pass's request);
- tokens: at most requests x max_new_tokens; expected: requests x the mean length this model's
  generations table shows for that pass (results/generations/<model>/), where one exists and at
  most 5 % of its rows were cut by the length limit (their lengths are the model's, not the cap's);
- traces: the rows `track` makes MLflow traces of (all, or the share `tracking.traces.sample` of
  the setting's items draws: the sampled items' rows);
- hours on the CPU the rates file measured (bench/full_grid.py --write-rates): the generate
  stage's own cost per row and the score and aggregate stages' rows/s per benchmark; track's
  from its cost drivers per benchmark: a job's fixed cost (start, the runs), a cost per row (the
  item table) and one per trace (what dominates it: bench/tracking.py measures them); plus
  the model's generation time, tokens / the tokens/s its last generate run on this machine logged
  (results/logs/generate-<model>.json); none logged: "unmeasured". Reference systems and replay
  generate nothing. The GPU column reads the rates file's `gpu` slot: empty, "unmeasured".
Totals per model, plus render and report once.

The counts come from the stages' own code: every enabled benchmark rendered in memory from the
built items (data/processed, as `render` reads them) and expanded into passes with the generate
stage's rule (stages.generate.prompt_passes); jobs a backend skips (replay without a source or
beyond the main pass, random/majority on a task its benchmark does not declare a classification
task) are left out as the stage leaves them out.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from ..benchmarks.registry import backend_hooks
from ..core import paths
from ..core.errors import DataError
from ..core.io import read_json_object, read_parquet
from ..generation.backends.reference import classification_declared
from ..generation.backends.replay import unsupported_job
from ..generation.cache import canonical_json
from ..generation.config import ModelConfig, ReplayModel
from ..generation.table import GENERATION_SCHEMA
from ..params.schema import Params
from ..templating.prompts import Prompt
from .generate import prompt_passes, rotated_items, select_benchmarks, to_sampling
from .render import render_benchmark

DEFAULT_RATES = Path("bench") / "rates.json"
REFERENCE_BACKENDS = frozenset({"oracle", "echo", "random", "majority", "replay"})  # no model: no tokens
SKIPPING_BACKENDS = frozenset({"random", "majority", "replay"})  # backends that skip jobs (skip_reason)
MAX_LENGTH_CUT_SHARE = 0.05  # observed lengths count only when at most this share hit max_new_tokens
UNMEASURED = "unmeasured"
# what decides a model's requests: its benchmarks, its skipping rule, its replay sources
Signature = tuple[tuple[str, ...], str, str]


# --------------------------------------------------------------------------- counting


@dataclass(frozen=True)
class RenderedPrompt:
    prompt: Prompt
    prompt_hash: str  # computed once: Prompt.prompt_hash hashes the messages on every access


@dataclass
class PassCount:
    rows: int = 0
    requests: int = 0
    max_tokens: int = 0


@dataclass
class SettingCount:
    """One model's counts on one benchmark setting, per generation pass."""

    passes: dict[str, PassCount] = field(default_factory=lambda: defaultdict(PassCount))
    items: set[str] = field(default_factory=set)

    @property
    def rows(self) -> int:
        return sum(p.rows for p in self.passes.values())

    @property
    def requests(self) -> int:
        return sum(p.requests for p in self.passes.values())

    @property
    def max_tokens(self) -> int:
        return sum(p.max_tokens for p in self.passes.values())


def render_in_memory(
    params: Params, benchmark: str, processed_root: Path = paths.PROCESSED, raw_root: Path = paths.RAW
) -> dict[str, list[RenderedPrompt]]:
    """setting -> the benchmark's prompts, as `render` would write them (nothing is written)."""
    output = render_benchmark(benchmark, params.benchmark(benchmark), processed_root / benchmark, raw_root / benchmark)
    if output is None:
        return {}
    return {
        setting: [RenderedPrompt(p, p.prompt_hash) for p in prompts]
        for setting, prompts in sorted(output.prompts.items())
        if prompts
    }


def skip_reason(model: ModelConfig, benchmark: str, task: str, setting: str, pass_name: str) -> str | None:
    """Why the model's backend skips a job, as the generate stage would be told (None: served)."""
    if isinstance(model, ReplayModel):
        return unsupported_job(model.sources, benchmark, task, setting, pass_name)
    if model.backend in ("random", "majority"):
        if classification_declared(backend_hooks(), benchmark, task) is False:
            return f"{model.backend}: not a classification task"
    return None


@dataclass
class ModelCounts:
    """One model's counts so far, and the requests it has met (the generate stage's key, less the
    identity and seed that every request of the model shares)."""

    settings: dict[tuple[str, str], SettingCount] = field(default_factory=dict)
    seen: set[tuple[str, str, int]] = field(default_factory=set)


def count_benchmark(
    params: Params,
    model: ModelConfig,
    benchmark: str,
    rendered: Mapping[str, list[RenderedPrompt]],
    counts: ModelCounts,
) -> None:
    """Add the model's rows, requests and token bound on one benchmark, per setting and pass."""
    generate = params.benchmark(benchmark).generate
    skipped: dict[tuple[str, str, str, str], str | None] = {}
    samplings: dict[str, str] = {}  # pass -> its sampling as the request key holds it (one string each)
    for setting, prompts in rendered.items():
        rotated = rotated_items(r.prompt for r in prompts)
        count = SettingCount()
        for rendered_prompt in prompts:
            prompt = rendered_prompt.prompt
            for pass_name, config in prompt_passes(generate, prompt, rotated):
                job = (benchmark, prompt.task, setting, pass_name)
                if job not in skipped:
                    skipped[job] = skip_reason(model, *job)
                if skipped[job] is not None:
                    continue
                if pass_name not in samplings:
                    samplings[pass_name] = canonical_json(to_sampling(config).to_json())
                sampling = samplings[pass_name]
                tally = count.passes[pass_name]
                count.items.add(prompt.item_id)
                for sample_index in range(config.n):
                    tally.rows += 1
                    key = (rendered_prompt.prompt_hash, sampling, sample_index)
                    if key not in counts.seen:
                        counts.seen.add(key)
                        tally.requests += 1
                        tally.max_tokens += config.max_new_tokens
        if count.rows:
            counts.settings[(benchmark, setting)] = count


# --------------------------------------------------------------------------- measured rates


@dataclass(frozen=True)
class TrackCost:
    """What one `track` job of a benchmark costs on the rates' machine: seconds = job_s + per_row_s x
    rows + per_trace_s x traces (bench/tracking.py: three runs of the job, at the sample, at a
    sample of one item and with traces off)."""

    job_s: float  # the process, the store, the runs and their artifacts: traces off
    per_row_s: float  # each score row: read, joined, in the run's item table
    per_trace_s: float  # each traced row: its trace built and written

    def seconds(self, rows: int, traces: int, jobs: float = 1.0) -> float:
        return jobs * self.job_s + rows * self.per_row_s + traces * self.per_trace_s


TRACK_COST_KEYS = ("job_s", "per_row_s", "per_trace_s")


@dataclass(frozen=True)
class Rates:
    """rows/s per stage and benchmark on one device, from a rates file (bench/full_grid.py)."""

    source: str  # one line: where and when they were measured
    stages: dict[str, dict[str, float]]  # stage -> benchmark (or "all") -> rows/s
    fraction: float | None = None  # the share of the grid they were measured on (bench/full_grid.py --fraction)
    fractions: dict[str, float] = field(default_factory=dict)  # per benchmark, where runs were merged
    track: dict[str, TrackCost] = field(default_factory=dict)  # benchmark -> track's cost drivers
    track_source: str | None = None  # where track's were measured, when not with the rest

    def rate(self, stage: str, benchmark: str) -> float | None:
        return self.stages.get(stage, {}).get(benchmark)

    def hours(self, stage: str, benchmark: str, rows: int) -> float | None:
        rate = self.rate(stage, benchmark)
        return None if rate is None else rows / rate / 3600

    def track_hours(self, benchmark: str, rows: int, traces: int, jobs: float) -> float | None:
        cost = self.track.get(benchmark)
        return None if cost is None else cost.seconds(rows, traces, jobs) / 3600


def _rates_section(path: Path, body: object, key: str) -> Rates | None:
    if body is None:
        return None
    if not isinstance(body, dict) or not isinstance(body.get("stages"), dict):
        raise DataError(
            path,
            f"`{key}` is not a measurement",
            expected="an object with `stages` (bench/full_grid.py --write-rates writes it) or null",
        )
    stages: dict[str, dict[str, float]] = {}
    track: dict[str, TrackCost] = {}
    for stage, per_benchmark in body["stages"].items():
        if not isinstance(per_benchmark, dict):
            raise DataError(path, f"`{key}.stages.{stage}` is not an object", expected="benchmark -> {rows_per_s}")
        for benchmark, figures in per_benchmark.items():
            if stage == "track":  # its cost drivers, not rows/s (track's time is set by its traces)
                cost = _track_cost(path, f"{key}.stages.track.{benchmark}", figures)
                if cost is not None:
                    track[benchmark] = cost
                continue
            rate = figures.get("rows_per_s") if isinstance(figures, dict) else None
            if rate is None:
                continue
            if not isinstance(rate, (int, float)) or isinstance(rate, bool) or not rate > 0 or math.isinf(rate):
                raise DataError(
                    path,
                    f"`{key}.stages.{stage}.{benchmark}.rows_per_s` is {rate!r}",
                    expected="a positive number or null",
                )
            stages.setdefault(stage, {})[benchmark] = float(rate)
    machine = body.get("machine") or {}
    where = body.get("device") or " ".join(
        str(x) for x in (machine.get("cpu"), f"({machine.get('cores')} cores, {machine.get('isa')})") if x
    )
    source = (
        f"{where}, {body.get('date', 'undated')}, bench/full_grid.py at fraction {body.get('fraction', '?')}, "
        f"roles {body.get('roles', '?')}, load average {_load(body.get('load_average_start'))}"
    )
    fraction = body.get("fraction")
    found = body.get("fractions")
    fractions: Mapping[object, object] = found if isinstance(found, dict) else {}
    measured = body.get("track_measured")
    track_source = None
    if isinstance(measured, dict):
        where = measured.get("machine") or {}
        track_source = (
            f"{where.get('cpu')} ({where.get('cores')} cores, {where.get('isa')}), {measured.get('date', 'undated')}, "
            f"{measured.get('what', 'bench/tracking.py')}, load average {_load(measured.get('load_average_start'))}"
        )
    return Rates(
        source,
        stages,
        float(fraction) if isinstance(fraction, (int, float)) else None,
        {str(k): float(v) for k, v in fractions.items() if isinstance(v, (int, float)) and not isinstance(v, bool)},
        track,
        track_source,
    )


def _track_cost(path: Path, where: str, figures: object) -> TrackCost | None:
    """A benchmark's track costs (None: not measured; an old file's rows/s alone is not a cost model)."""
    if not isinstance(figures, dict) or not all(k in figures for k in TRACK_COST_KEYS):
        return None
    values = []
    for name in TRACK_COST_KEYS:
        value = figures[name]
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not value >= 0 or math.isinf(value):
            raise DataError(path, f"`{where}.{name}` is {value!r}", expected="seconds: a number >= 0")
        values.append(float(value))
    return TrackCost(*values)


def _load(value: object) -> str:
    """The load average the measurement started at (a busy machine's rates are not its speed)."""
    if isinstance(value, list) and all(isinstance(x, (int, float)) for x in value):
        return " ".join(f"{x:.2f}" for x in value)
    return "?"


def read_rates(path: Path) -> tuple[Rates | None, Rates | None]:
    """(CPU rates, GPU rates) of a rates file; either None where it holds none."""
    body = read_json_object(path)
    if body.get("format") != 1:
        raise DataError(
            path, f"rates format {body.get('format')!r}", expected="format 1 (bench/full_grid.py --write-rates)"
        )
    return _rates_section(path, body.get("cpu"), "cpu"), _rates_section(path, body.get("gpu"), "gpu")


def model_tokens_per_s(model: str, logs_dir: Path = paths.RESULTS / "logs") -> tuple[float | None, str]:
    """The model's generation speed its last generate run logged on this machine, and where from."""
    path = logs_dir / f"generate-{model}.json"
    if not path.is_file():
        return None, f"no {path}"
    body = read_json_object(path)
    total = body.get("total")
    if not isinstance(total, dict):
        total = {}
    rate = total.get("tokens_per_s")
    if not isinstance(rate, (int, float)) or isinstance(rate, bool) or rate <= 0:
        return None, f"{path} holds no tokens/s (nothing generated in that run)"
    devices = body.get("gpus") or []
    where = f"GPU {', '.join(map(str, devices))}" if devices else "CPU"
    return float(rate), f"{path} ({where}, {body.get('finished_at', 'undated')})"


def observed_lengths(
    model: str, benchmark: str, setting: str, generations_root: Path = paths.RESULTS / "generations"
) -> dict[str, float]:
    """pass -> mean completion tokens of this model's generations table, where it measures the
    model's lengths (at most MAX_LENGTH_CUT_SHARE of the rows cut by the length limit)."""
    path = generations_root / model / benchmark / f"{setting}.parquet"
    if not (generations_root / model / paths.GENERATION_INFO).is_file() or not path.is_file():
        return {}
    table = (
        read_parquet(path, GENERATION_SCHEMA, what="generations table")
        .select(["pass", "completion_tokens", "finish_reason", "error"])
        .to_pylist()
    )
    # pass -> (completion tokens, cut by the length limit) of each row that completed
    by_pass: dict[str, list[tuple[int, bool]]] = defaultdict(list)
    for row in table:
        if row["error"] is None and row["completion_tokens"] is not None:
            by_pass[row["pass"]].append((row["completion_tokens"], row["finish_reason"] == "length"))
    lengths = {}
    for pass_name, rows in by_pass.items():
        cut = sum(1 for _, was_cut in rows if was_cut)
        if rows and cut <= MAX_LENGTH_CUT_SHARE * len(rows):
            lengths[pass_name] = sum(tokens for tokens, _ in rows) / len(rows)
    return lengths


# --------------------------------------------------------------------------- the plan


def traced_rows(params: Params, count: SettingCount) -> int:
    """The rows `track` makes traces of: every row, or those of the `tracking.traces.sample` items
    the draw picks (track_traces: an item's rows are traced together), as a share of the rows."""
    traces = params.tracking.traces
    if not traces.enabled:
        return 0
    if traces.sample is None or traces.sample >= len(count.items):
        return count.rows
    return round(count.rows * traces.sample / len(count.items))


@dataclass
class PlanRow:
    model: str
    benchmark: str
    setting: str
    rows: int
    traces: int  # rows track traces (tracking.traces)
    requests: int
    max_tokens: int
    expected_tokens: int | None  # from observed lengths; None: unmeasured (the bound is max_tokens)
    generate_hours: float | None  # the model's tokens / its tokens/s (0 for a reference system)
    cpu_hours: float | None  # the generate stage's own cost + score + aggregate + track on the rates' CPU
    gpu_score_hours: float | None


@dataclass
class Plan:
    params_file: str
    rows: list[PlanRow]
    once: dict[str, float | None]  # render (per benchmark) and report: run once, not per model
    model_speed: dict[str, str]  # model -> where its tokens/s came from
    cpu: Rates | None
    gpu: Rates | None
    notes: list[str]


PER_ROW_STAGES = ("score", "aggregate")


def cpu_hours(rates: Rates | None, benchmark: str, rows: int, traces: int, jobs: float) -> float | None:
    """The stages' own time for these rows: generate (per row, the stand-in model's run), score,
    aggregate (per row), track (`jobs`: this setting's share of the model's track job of the
    benchmark, its rows and traces); None when a stage has no measured rate."""
    if rates is None:
        return None
    parts = [
        rates.hours("generate", "all", rows),
        *(rates.hours(stage, benchmark, rows) for stage in PER_ROW_STAGES),
        rates.track_hours(benchmark, rows, traces, jobs),
    ]
    measured = [part for part in parts if part is not None]
    return None if len(measured) < len(parts) else sum(measured)


def build_plan(
    params: Params,
    params_file: str,
    rates_file: Path | None,
    processed_root: Path = paths.PROCESSED,
    raw_root: Path = paths.RAW,
    results_root: Path = paths.RESULTS,
) -> Plan:
    cpu, gpu = read_rates(rates_file) if rates_file is not None else (None, None)
    notes: list[str] = []
    selected = {name: select_benchmarks(params, name, model) for name, model in params.models.items()}
    # models that get the same requests (same benchmarks, same skipping rule) are counted once
    signatures = {
        name: (
            tuple(selected[name]),
            model.backend if model.backend in SKIPPING_BACKENDS else "every job",
            canonical_json([s.model_dump(mode="json") for s in model.sources])
            if isinstance(model, ReplayModel)
            else "",
        )
        for name, model in params.models.items()
    }
    counted: dict[Signature, ModelCounts] = {signature: ModelCounts() for signature in signatures.values()}
    prompts_per_benchmark: dict[str, int] = {}
    for benchmark in sorted({b for benchmarks in selected.values() for b in benchmarks}):
        rendered = render_in_memory(params, benchmark, processed_root, raw_root)  # one benchmark's prompts at a time
        prompts_per_benchmark[benchmark] = sum(len(p) for p in rendered.values())
        done: set[Signature] = set()
        for name, signature in signatures.items():
            if benchmark in selected[name] and signature not in done:
                count_benchmark(params, params.models[name], benchmark, rendered, counted[signature])
                done.add(signature)
    rows: list[PlanRow] = []
    speeds: dict[str, str] = {}
    for name, model in params.models.items():
        reference = model.backend in REFERENCE_BACKENDS
        tokens_per_s, speeds[name] = (
            (None, "a reference system: no model") if reference else model_tokens_per_s(name, results_root / "logs")
        )
        settings = counted[signatures[name]].settings
        settings_of: dict[str, int] = defaultdict(int)
        for benchmark, _ in settings:
            settings_of[benchmark] += 1  # a track job per (model, benchmark): a share of it per setting
        for (benchmark, setting), count in sorted(settings.items()):
            traces = traced_rows(params, count)
            lengths = {} if reference else observed_lengths(name, benchmark, setting, results_root / "generations")
            expected = None
            if lengths and all(p in lengths for p in count.passes):
                expected = round(
                    sum(
                        min(lengths[p], c.max_tokens / max(c.requests, 1)) * c.requests for p, c in count.passes.items()
                    )
                )
            tokens = 0 if reference else (expected if expected is not None else count.max_tokens)
            rows.append(
                PlanRow(
                    model=name,
                    benchmark=benchmark,
                    setting=setting,
                    rows=count.rows,
                    traces=traces,
                    requests=count.requests,
                    max_tokens=0 if reference else count.max_tokens,
                    expected_tokens=None if reference else expected,
                    generate_hours=0.0 if reference else (tokens / tokens_per_s / 3600 if tokens_per_s else None),
                    cpu_hours=cpu_hours(cpu, benchmark, count.rows, traces, 1 / settings_of[benchmark]),
                    gpu_score_hours=gpu.hours("score", benchmark, count.rows) if gpu is not None else None,
                )
            )
    once: dict[str, float | None] = {}
    for benchmark, prompts in prompts_per_benchmark.items():
        once[f"render {benchmark}"] = cpu.hours("render", benchmark, prompts) if cpu is not None else None
    once["report"] = cpu.hours("report", "all", sum(r.rows for r in rows)) if cpu is not None else None
    for kind, rates in (("CPU", cpu), ("GPU", gpu)):
        if rates is not None and rates.fraction is not None and rates.fraction < 1:
            partial = ", ".join(f"{name} on {share:g}" for name, share in rates.fractions.items() if share < 1)
            share = partial or f"{rates.fraction:g}"
            notes.append(
                f"the {kind} rates were measured on {share} of the paper grid: each stage's fixed "
                "cost (imports, reading the releases, loading models) weighs on few rows there, so these hours "
                "are too high; measure at full size (bench/full_grid.py without --fraction)"
            )
    if cpu is not None and not cpu.track:
        notes.append(
            "the CPU rates hold no track costs (a job's, per row, per trace): track unmeasured; measure them with "
            "`python bench/tracking.py --project <a bench/full_grid.py folder> --write-rates FILE`"
        )
    if rates_file is None:
        notes.append(
            f"no rates file ({DEFAULT_RATES} is missing): hours unmeasured; measure them with "
            "`python bench/full_grid.py --write-rates bench/rates.json`"
        )
    return Plan(params_file, rows, once, speeds, cpu, gpu, notes)


# --------------------------------------------------------------------------- output


def _hours(value: float | None) -> str:
    if value is None:
        return UNMEASURED
    return "<0.01" if 0 < value < 0.005 else f"{value:,.2f}"


def _sum(values: Iterable[float | None]) -> float | None:
    values = list(values)
    known = [v for v in values if v is not None]
    return None if len(known) < len(values) else sum(known)


def plan_lines(plan: Plan) -> list[str]:
    header = (
        f"{'model':<20} {'benchmark':<14} {'setting':<16} {'rows':>10} {'traces':>8} {'requests':>10} "
        f"{'max tokens':>13} {'exp. tokens':>13} {'gen h':>10} {'CPU h':>10} {'GPU score h':>11}"
    )
    lines = [
        f"plan: {plan.params_file}: {len({r.model for r in plan.rows})} model(s), "
        f"{len({r.benchmark for r in plan.rows})} benchmark(s)",
        f"CPU rates: {plan.cpu.source if plan.cpu else UNMEASURED}",
        *([f"track's costs: {plan.cpu.track_source}"] if plan.cpu and plan.cpu.track_source else []),
        f"GPU rates: {plan.gpu.source if plan.gpu else UNMEASURED}",
        "gen h: the model's generated tokens / its tokens/s (exp. tokens where measured, else max tokens); "
        "CPU h: generate stage + score + aggregate + track at the measured CPU rates (track: per job, row and trace)",
        header,
    ]
    by_model: dict[str, list[PlanRow]] = defaultdict(list)
    for row in plan.rows:
        by_model[row.model].append(row)
    for model, rows in by_model.items():
        for r in rows:
            expected = "-" if r.expected_tokens is None else f"{r.expected_tokens:,}"
            lines.append(
                f"{r.model:<20} {r.benchmark:<14} {r.setting:<16} {r.rows:>10,} {r.traces:>8,} {r.requests:>10,} "
                f"{r.max_tokens:>13,} {expected:>13} {_hours(r.generate_hours):>10} "
                f"{_hours(r.cpu_hours):>10} {_hours(r.gpu_score_hours):>11}"
            )
        lines.append(
            f"{model + ' total':<52} {sum(r.rows for r in rows):>10,} {sum(r.traces for r in rows):>8,} "
            f"{sum(r.requests for r in rows):>10,} "
            f"{sum(r.max_tokens for r in rows):>13,} {'':>13} {_hours(_sum(r.generate_hours for r in rows)):>10} "
            f"{_hours(_sum(r.cpu_hours for r in rows)):>10} "
            f"{_hours(_sum(r.gpu_score_hours for r in rows)):>11}"
        )
    for name, hours in plan.once.items():
        lines.append(f"{name + ' (once)':<52} {'':>10} {'':>8} {'':>10} {'':>13} {'':>13} {'':>10} {_hours(hours):>10}")
    generate = _sum(r.generate_hours for r in plan.rows)
    cpu = _sum([*(r.cpu_hours for r in plan.rows), *plan.once.values()])
    lines.append(
        f"total: {sum(r.rows for r in plan.rows):,} rows ({sum(r.traces for r in plan.rows):,} traced), "
        f"{sum(r.requests for r in plan.rows):,} requests, "
        f"at most {sum(r.max_tokens for r in plan.rows):,} generated tokens; generation "
        f"{_hours(generate)} h, pipeline stages on the CPU {_hours(cpu)} h"
    )
    for model, source in plan.model_speed.items():
        lines.append(f"{model}: tokens/s from {source}")
    lines.extend(f"note: {note}" for note in plan.notes)
    return lines


class PlanJson(TypedDict):
    """`idiombench plan --json`."""

    params: str
    rates: dict[str, str | None]  # cpu, gpu -> where the rates were measured
    rows: list[dict[str, object]]  # PlanRow's fields
    once: dict[str, float | None]
    model_speed: dict[str, str]
    notes: list[str]


def plan_json(plan: Plan) -> PlanJson:
    return {
        "params": plan.params_file,
        "rates": {"cpu": plan.cpu.source if plan.cpu else None, "gpu": plan.gpu.source if plan.gpu else None},
        "rows": [vars(row) for row in plan.rows],
        "once": plan.once,
        "model_speed": plan.model_speed,
        "notes": plan.notes,
    }
