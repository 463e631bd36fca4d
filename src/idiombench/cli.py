"""The one entry point: each subcommand is a pipeline stage. Rules in the Snakefile and
stages in dvc.yaml only call these commands."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, ParamSpec, TypeVar

import click
import typer
import typer.core
from rich.console import Console

from .core.environment import malformed_source_date_epoch_hidden

if TYPE_CHECKING:
    # the Context typer's command classes take: typer >= 0.24 vendors its own copy of click
    from typer._click.core import Context as TyperClickContext

    from .params.schema import Params


# numpy.f2py reads SOURCE_DATE_EPOCH when imported: a malformed value is hidden meanwhile
with malformed_source_date_epoch_hidden():
    from .benchmarks.registry import NAMES, get_benchmark
    from .core import paths
    from .core.errors import IdiombenchError
    from .core.io import check_output_file, check_output_folder
    from .core.redact import scrub, scrub_message
    from .pipeline.config import DEFAULT_PARAMS, load_params


@contextlib.contextmanager
def _usage_errors_scrubbed() -> Iterator[None]:
    """click's usage errors quote what was typed ("Invalid value for '--model': ..."): their
    message is scrubbed of credentials (redact.scrub_message) before click prints it."""
    try:
        yield
    except (click.ClickException, typer.TyperException) as exc:  # typer >= 0.24 raises its own copy of click's
        exc.message = scrub_message(exc.message)  # type: ignore[misc]  # typer's stubs mark it Final; it is read at print time
        raise


class _ScrubbedGroup(typer.core.TyperGroup):
    """The command group: parsing its own arguments (make_context) and a subcommand's (inside
    invoke) raise click's usage errors here, where they are scrubbed."""

    def make_context(self, *args: Any, **kwargs: Any) -> TyperClickContext:
        with _usage_errors_scrubbed():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: TyperClickContext) -> Any:
        with _usage_errors_scrubbed():
            return super().invoke(ctx)


app = typer.Typer(
    cls=_ScrubbedGroup,
    add_completion=False,
    no_args_is_help=True,
    help="idiombench: evaluate LLMs on idiom and multiword-expression benchmarks.",
)
console = Console(stderr=True, highlight=False)

P = ParamSpec("P")
R = TypeVar("R")

ParamsOption = Annotated[Path, typer.Option("--params", "-p", help="The params file.")]
BenchmarkArg = Annotated[str, typer.Argument(help=f"One of: {', '.join(NAMES)}.")]


class _State:
    debug = False  # set by the global --debug option: let a bug's traceback through


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def user_errors(func: Callable[P, R]) -> Callable[P, R]:
    """The error boundary of every command: a user-input error becomes one line on stderr
    and exit 2; any other exception is a bug, reported in one line (exit 1) unless --debug
    asks for its traceback."""

    @wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except (typer.Exit, typer.Abort, click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise  # a command's own exit status or usage error: click reports it
        except IdiombenchError as exc:
            _fail(str(exc), 2)
        except OSError as exc:  # a path the user named: missing, a folder, under a regular file, no access
            if _State.debug:
                raise
            _fail(_os_error(exc), 2)
        except Exception as exc:  # noqa: BLE001 - the boundary: anything else is a bug
            if _State.debug:
                raise
            _fail(
                f"internal error ({type(exc).__name__}: {_one_line(str(exc))[:300]}); "
                "rerun with --debug for the traceback",
                1,
            )

    wrapper.error_boundary = True  # type: ignore[attr-defined]  # checked by a test for every command
    return wrapper


def _os_error(exc: OSError) -> str:
    where = exc.filename if exc.filename is not None else "a file"
    also = f" -> {exc.filename2}" if exc.filename2 is not None else ""
    return f"{where}{also}: {exc.strerror or _one_line(str(exc))}"


def _fail(message: str, code: int) -> NoReturn:
    # soft_wrap and no markup in the message: one line, whatever it contains; never a credential
    console.print("[bold red]error:[/] ", markup=True, end="")
    console.print(_one_line(scrub_message(message)), markup=False, soft_wrap=True)
    raise typer.Exit(code)


@app.callback()
def _options(
    debug: Annotated[bool, typer.Option("--debug", help="Show the Python traceback of an internal error.")] = False,
) -> None:
    """idiombench: evaluate LLMs on idiom and multiword-expression benchmarks."""
    _State.debug = debug


def _check_benchmark(name: str) -> None:
    if name not in NAMES:
        raise IdiombenchError(f"unknown benchmark {name!r} (known: {', '.join(NAMES)})")


def _check_model(loaded: Params, model: str, params: Path) -> None:
    """Before any path is built from it: the model is a key of params `models:` (a valid name)."""
    if model not in loaded.models:
        known = ", ".join(sorted(loaded.models)) or "none"
        raise IdiombenchError(f"unknown model {model!r} (models in {params}: {known})")


@app.command("check-params")
@user_errors
def check_params(
    params: ParamsOption = DEFAULT_PARAMS,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            "-q",
            help="Only validate: print nothing when the file is "
            "valid (dvc.yaml runs this before every command that names a model).",
        ),
    ] = False,
) -> None:
    """Validate the params file and print it as the pipeline sees it (defaults filled in)."""
    loaded = load_params(params)
    if not quiet:
        typer.echo(json.dumps(scrub(loaded.model_dump(mode="json", by_alias=True)), indent=2, ensure_ascii=False))


@app.command()
@user_errors
def acquire(
    benchmark: BenchmarkArg,
    params: ParamsOption = DEFAULT_PARAMS,
    out: Annotated[Path | None, typer.Option(help="Destination (default data/raw/<benchmark>).")] = None,
) -> None:
    """Copy the benchmark's release files from the mirror (else the pinned upstream), sha256-checked."""
    from .data.acquire import acquire as run_acquire
    from .data.acquire import resolve_mirror

    _check_benchmark(benchmark)
    loaded = load_params(params)
    bench = get_benchmark(benchmark)
    dest = check_output_folder(out or paths.raw_dir(benchmark), paths.ACQUIRE_OUTPUT)
    mirror = resolve_mirror(loaded.data.mirror)
    specs = bench.file_specs(loaded.benchmark(benchmark))
    report = run_acquire(
        benchmark,
        specs,
        dest,
        mirror,
        download=loaded.data.download,
        timeout=loaded.data.timeout_s,
        record_path=dest / paths.ACQUIRED,
    )
    sources = ", ".join(f"{n} {source}" for source, n in sorted(report.counts().items()))
    console.print(f"acquire {benchmark}: {len(report.files)} files verified ({sources}) -> {dest}")
    if report.removed:
        console.print(f"acquire {benchmark}: removed {len(report.removed)} files no longer declared")
    for line in bench.acquire_notes(loaded.benchmark(benchmark)):
        console.print(f"acquire {benchmark}: {line}")


@app.command()
@user_errors
def build(
    benchmark: BenchmarkArg,
    params: ParamsOption = DEFAULT_PARAMS,
    raw: Annotated[Path | None, typer.Option(help="Acquired files (default data/raw/<benchmark>).")] = None,
    out: Annotated[Path | None, typer.Option(help="Destination (default data/processed/<benchmark>).")] = None,
) -> None:
    """Normalise the release files into items (Parquet) plus build_stats.json."""
    from .benchmarks.base import write_build

    _check_benchmark(benchmark)
    loaded = load_params(params)
    bench = get_benchmark(benchmark)
    dest = check_output_folder(out or paths.processed_dir(benchmark), paths.BUILD_OUTPUT)
    raw_dir = raw or paths.raw_dir(benchmark)
    record = raw_dir / paths.ACQUIRED
    if not record.exists():
        raise IdiombenchError(f"{record} is missing: run `idiombench acquire {benchmark}` first")
    result = bench.build(raw_dir, loaded.benchmark(benchmark))
    stats = write_build(result, dest)
    tasks = ", ".join(f"{task} {n:,}" for task, n in stats["tasks"].items())
    dropped = sum(v["count"] for v in stats["dropped"].values())
    console.print(
        f"build {benchmark}: {stats['rows_read_total']:,} rows read, {stats['rows_kept_total']:,} kept, "
        f"{dropped:,} dropped; items: {tasks}"
    )
    for line in stats["notes"]:
        if line.startswith("NOT AVAILABLE"):
            console.print(f"build {benchmark}: {line}")


@app.command()
@user_errors
def render(
    benchmark: BenchmarkArg,
    params: ParamsOption = DEFAULT_PARAMS,
    items: Annotated[Path | None, typer.Option(help="Built items (default data/processed/<benchmark>).")] = None,
    raw: Annotated[
        Path | None, typer.Option(help="Acquired files (default data/raw/<benchmark>; SemanticQA's templates).")
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Destination (default results/prompts/<benchmark>).")] = None,
) -> None:
    """Render every configured prompt setting into results/prompts/<benchmark>/<setting>.parquet + render_stats.json."""
    from .stages.render import run_render

    _check_benchmark(benchmark)
    loaded = load_params(params)
    check_output_folder(out or paths.prompts_dir(benchmark), paths.RENDER_OUTPUT)
    result = run_render(benchmark, loaded.benchmark(benchmark), processed_dir=items, raw_dir=raw, out_dir=out)
    for line in result.summary_lines():
        console.print(line, soft_wrap=True)


@app.command()
@user_errors
def generate(
    model: Annotated[str, typer.Option("--model", "-m", help="A model named in params `models:`.")],
    params: ParamsOption = DEFAULT_PARAMS,
    out: Annotated[Path | None, typer.Option(help="Destination (default results/generations/<model>).")] = None,
) -> None:
    """Generate completions for every prompt of the model's benchmarks (weights loaded once).

    Claims the model's `gpus` free device ids (lock files) and sets CUDA_VISIBLE_DEVICES
    before any CUDA import; completed batches are cached, so a rerun or a resumed run only
    generates what is missing."""
    from .generation.gpus import claim_gpus

    loaded = load_params(params)
    _check_model(loaded, model, params)
    check_output_folder(out or paths.generations_dir(model), paths.GENERATE_OUTPUT)
    with claim_gpus(loaded.models[model].gpus, who=f"generate {model}") as devices:
        if devices:
            console.print(f"generate {model}: claimed GPU(s) {', '.join(devices)} (CUDA_VISIBLE_DEVICES)")
        from .stages.generate import run_generate  # imports backends (and CUDA) only now

        run_generate(
            loaded,
            model,
            out_dir=out,
            devices=devices,
            echo=lambda line: console.print(line, markup=False, soft_wrap=True),
        )


@app.command("prepare-models")
@user_errors
def prepare_models(params: ParamsOption = DEFAULT_PARAMS) -> None:
    """Convert each hf model's GGUF file (gguf_load: dense) once into a dense local copy,
    so that no generate job pays the conversion (make setup runs this)."""
    from .generation.backends.hf import file_sha256, resolve
    from .generation.config import HFModel
    from .generation.dense import ensure_dense

    loaded = load_params(params)
    for name, config in loaded.models.items():
        if not isinstance(config, HFModel) or not config.gguf_file or config.gguf_load != "dense":
            continue
        gguf = resolve(config).weight_files[0]
        directory, converted = ensure_dense(gguf, file_sha256(gguf))
        console.print(
            f"prepare-models {name}: {'converted' if converted else 'already have'} {gguf.name} -> {directory}"
        )


ModelOption = Annotated[str, typer.Option("--model", "-m", help="A model name from params `models:`.")]


@app.command()
@user_errors
def score(
    benchmark: BenchmarkArg,
    model: ModelOption,
    params: ParamsOption = DEFAULT_PARAMS,
    out: Annotated[Path | None, typer.Option(help="Destination (default results/scores/<model>/<benchmark>).")] = None,
) -> None:
    """Score one model's generations on one benchmark: per-item scores per setting."""
    from .core.workers import worker_budget
    from .stages.score import run_score

    _check_benchmark(benchmark)
    loaded = load_params(params)
    _check_model(loaded, model, params)
    budget = None
    if get_benchmark(benchmark).score_workers:
        # the CPU this job may use: the threads Snakemake granted it (OMP_NUM_THREADS), at most the cores
        try:
            budget = worker_budget()
        except ValueError as error:
            raise IdiombenchError(str(error)) from None
    meta = run_score(
        loaded,
        model=model,
        benchmark=benchmark,
        out=check_output_folder(out or paths.scores_dir(benchmark=benchmark, model=model), paths.SCORE_OUTPUT),
    )
    if meta["status"] == "skipped":
        console.print(f"score {benchmark} {model}: skipped ({meta['reason']})")
    else:
        rows = ", ".join(f"{s} {n:,}" for s, n in meta["settings"].items())
        console.print(f"score {benchmark} {model}: {rows}")
        if budget is not None:
            workers = f"{budget[0]} worker process" + ("" if budget[0] == 1 else "es")
            console.print(f"score {benchmark} {model}: at most {workers} ({budget[1]})")
        used = get_benchmark(benchmark).roles_used(loaded.benchmark(benchmark))
        for role, status in sorted(meta["roles"].items()):
            if role in used and status.get("status") != "paper":  # the roles this benchmark's scores ran with
                console.print(
                    f"score {benchmark} {model}: scorer role {role}: {status.get('status')} ({status.get('note', '')})"
                )


@app.command()
@user_errors
def construct(
    benchmark: BenchmarkArg,
    params: ParamsOption = DEFAULT_PARAMS,
    out: Annotated[Path | None, typer.Option(help="Destination (default results/construction/<benchmark>).")] = None,
) -> None:
    """Rebuild a benchmark's own data-construction pipeline from its release and compare (G-IdiomAlign)."""
    from .stages.construct import run_construct

    _check_benchmark(benchmark)
    body = run_construct(
        load_params(params),
        benchmark,
        check_output_folder(out or paths.construction_dir(benchmark), paths.CONSTRUCT_OUTPUT),
    )
    if body.get("status") == "skipped":
        console.print(f"construct {benchmark}: skipped ({body['reason']})")
        return
    totals = body.get("totals", {})
    console.print(
        f"construct {benchmark}: {len(body.get('pairs', []))} pair(s), {body.get('glosses_embedded', 0):,} glosses "
        f"embedded with {body.get('role', {}).get('model')} ({body.get('role', {}).get('status')}); "
        f"rebuilt {totals.get('rebuilt', 0):,}, "
        f"overlap with the release {totals.get('overlap', 0):,} of {totals.get('released_pairs', 0):,}"
    )


@app.command()
@user_errors
def noise(
    model: ModelOption,
    params: ParamsOption = DEFAULT_PARAMS,
) -> None:
    """Serving noise of one model (hf, vllm): a seeded sample of items generated again under each
    perturbation of `serving_noise` (batch size, dtype, attention, ...), cached under its own
    identity and scored by the benchmark's scorer; figures in results/noise/<model>/. Other models
    are recorded as skipped with the reason."""
    from .generation.gpus import claim_gpus
    from .stages.noise import why_not

    loaded = load_params(params)
    _check_model(loaded, model, params)
    check_output_folder(paths.noise_dir(model), paths.NOISE_OUTPUT)
    gpus = loaded.models[model].gpus if why_not(loaded, model) is None else 0
    with claim_gpus(gpus, who=f"noise {model}"):
        from .stages.noise import run_noise  # imports backends (and CUDA) only now

        body = run_noise(loaded, model=model, echo=lambda line: console.print(line, markup=False, soft_wrap=True))
    if body["status"] != "measured":
        console.print(f"noise {model}: skipped ({body['reason']})")


@app.command()
@user_errors
def attention(
    benchmark: BenchmarkArg,
    model: ModelOption,
    params: ParamsOption = DEFAULT_PARAMS,
    out: Annotated[
        Path | None, typer.Option(help="Destination (default results/analysis/<benchmark>/attention/<model>).")
    ] = None,
) -> None:
    """Attention diagnostics of a model's recorded generations (its weights in transformers: hf or vllm
    backend; G-IdiomAlign): per-item span attention and the paper's statistics; other models are
    recorded as skipped with the reason."""
    from .generation.gpus import claim_gpus
    from .stages.attention import check_attention_benchmark, run_attention, skip_reason

    _check_benchmark(benchmark)
    check_attention_benchmark(benchmark)
    loaded = load_params(params)
    _check_model(loaded, model, params)
    destination = check_output_folder(
        out or paths.attention_dir(benchmark=benchmark, model=model), paths.ATTENTION_OUTPUT
    )
    gpus = loaded.models[model].gpus if skip_reason(loaded, benchmark=benchmark, model=model) is None else 0
    with claim_gpus(gpus, who=f"attention {benchmark} {model}"):
        summary = run_attention(loaded, benchmark=benchmark, model=model, out=destination)
    if summary["status"] != "measured":
        console.print(f"attention {benchmark} {model}: skipped ({summary['reason']})")
        return
    log = summary["log"]
    counts = ", ".join(f"{c} {n['measured']}/{n['prompts']}" for c, n in summary.get("counts", {}).items())
    per_item = log["seconds_per_item"]
    console.print(
        f"attention {benchmark} {model}: measured {counts} prompt(s) with eager attention on {log['device']}; "
        f"model load {log['load_s']:.1f} s, {per_item if per_item is None else round(per_item, 3)} s per item, "
        f"peak RSS {log['peak_rss_mib']:.0f} MiB (timings: results/logs/attention-{benchmark}-{model}.json)"
    )


@app.command()
@user_errors
def aggregate(
    benchmark: BenchmarkArg,
    model: ModelOption,
    params: ParamsOption = DEFAULT_PARAMS,
    out: Annotated[
        Path | None, typer.Option(help="Destination (default results/metrics/<benchmark>/<model>.json).")
    ] = None,
) -> None:
    """Aggregate per-item scores into the metrics JSON (a DVC metrics file)."""
    from .stages.aggregate import is_metrics_file, run_aggregate

    _check_benchmark(benchmark)
    loaded = load_params(params)
    _check_model(loaded, model, params)
    destination = check_output_file(
        out or paths.metrics_file(benchmark=benchmark, model=model),
        lambda path: is_metrics_file(path, benchmark, model),
        "a metrics file of `idiombench aggregate`",
    )
    body = run_aggregate(loaded, benchmark=benchmark, model=model, out=destination)
    console.print(f"aggregate {benchmark} {model}: {body['status']}, {len(body.get('settings', {}))} setting(s)")


@app.command()
@user_errors
def track(
    benchmark: BenchmarkArg,
    model: ModelOption,
    params: ParamsOption = DEFAULT_PARAMS,
    out: Annotated[
        Path | None, typer.Option(help="Destination (default results/tracking/<benchmark>/<model>.json).")
    ] = None,
) -> None:
    """Log one model's settings on a benchmark as MLflow runs (updated in place when re-tracked)."""
    from .stages.track import is_tracking_record, tracking_uri
    from .stages.track import track as run_track

    _check_benchmark(benchmark)
    loaded = load_params(params)
    _check_model(loaded, model, params)
    destination = check_output_file(
        out or paths.tracking_record(benchmark=benchmark, model=model),
        lambda path: is_tracking_record(path, benchmark, model),
        "a tracking record of `idiombench track`",
    )
    record = run_track(loaded, benchmark=benchmark, model=model, out=destination)
    counts = record["counts"]
    if record["status"] != "scored":
        console.print(f"track {benchmark} {model}: nothing to log ({record['status']})")
        return
    console.print(
        f"track {benchmark} {model}: {len(record['runs'])} run(s) in MLflow experiment {benchmark!r} "
        f"({counts['created']} created, {counts['updated']} updated, {counts['replaced']} replaced); "
        f"store: {'MLFLOW_TRACKING_URI' if tracking_uri() != 'sqlite:///mlflow.db' else 'sqlite:///mlflow.db'}; "
        f"browse (after `mlflow ui`): {record['ui']}"
    )
    for key, run in record["runs"].items():
        traced = run.get("traces")
        if traced:
            console.print(
                f"track {key}: {traced['traced']:,} of {traced['rows']:,} rows traced"
                + (" (a sample: every row is in the run's items/ artifact)" if traced["sampled"] else "")
                + f" ({traced['written']:,} written, {traced['unchanged']:,} unchanged, {traced['deleted']:,} deleted"
                + (
                    f", {traced['deleted_with_human_feedback']:,} of them with human feedback"
                    if traced["deleted_with_human_feedback"]
                    else ""
                )
                + f"); items: {run['items_ui']}"
            )


@app.command("track-comparison")
@user_errors
def track_comparison(
    benchmark: BenchmarkArg,
    params: ParamsOption = DEFAULT_PARAMS,
    out: Annotated[Path | None, typer.Option(help="Destination (default results/comparison/<benchmark>.json).")] = None,
) -> None:
    """Log where the models disagree on a benchmark to its MLflow comparison run, and tag the
    disagreeing items' traces (after every model's `track`)."""
    from .stages.track_comparison import is_comparison_record
    from .stages.track_comparison import track_comparison as run_comparison

    _check_benchmark(benchmark)
    loaded = load_params(params)
    destination = check_output_file(
        out or paths.comparison_record(benchmark),
        is_comparison_record,
        "a comparison record of `idiombench track-comparison`",
    )
    record = run_comparison(loaded, benchmark=benchmark, out=destination)
    traces = record["traces"]
    where = (
        f"run {record['run']['run_id']} (model comparison) in MLflow experiment {benchmark!r}"
        if record["run"]
        else "no comparison run (no two models with right/wrong outcomes in a common setting: fewer than two "
        "models scored, or the headline metrics are graded, e.g. ROUGE-L)"
    )
    console.print(
        f"track-comparison {benchmark}: {record['disagreeing_rows']:,} disagreeing row(s) over "
        f"{record['pairs']:,} pair(s) of models, settings and metrics; {where}; traces: "
        f"{traces['tagged']:,} tagged ({traces['changed']:,} changed, {traces['cleared']:,} cleared); "
        f"browse (after `mlflow ui`): {record['ui']}"
    )


labels_app = typer.Typer(no_args_is_help=True, help="Human labels given to items in the MLflow UI.")
app.add_typer(labels_app, name="labels")


@labels_app.command("pull")
@user_errors
def labels_pull(
    benchmark: BenchmarkArg,
    model: ModelOption,
    params: ParamsOption = DEFAULT_PARAMS,
    out: Annotated[
        Path | None,
        typer.Option(
            help="The annotation file (default: the one the benchmark's params "
            "name, e.g. benchmarks.g-idiomalign.attention.annotations)."
        ),
    ] = None,
) -> None:
    """Write the labels people gave a model's items in the MLflow UI (human feedback on its traces)
    into the benchmark's annotation file; the stages that read it rerun (DVC, Snakemake)."""
    from .stages.labels import pull
    from .stages.track import tracking_uri

    _check_benchmark(benchmark)
    loaded = load_params(params)
    _check_model(loaded, model, params)
    summary = pull(loaded, benchmark=benchmark, model=model, uri=tracking_uri(), out=out)
    console.print(
        f"labels pull {benchmark} {model}: {summary['labelled']:,} labelled of {summary['traces']:,} traces"
        + (
            f" ({summary['conflicts']:,} with labellers disagreeing: the latest label stands)"
            if summary["conflicts"]
            else ""
        )
        + (f"; {summary['ignored']:,} labels on other passes or samples ignored" if summary["ignored"] else "")
        + f" -> {summary['file']} ({summary['rows']:,} rows)"
    )


@app.command()
@user_errors
def report(
    params: ParamsOption = DEFAULT_PARAMS,
    out: Annotated[
        Path | None, typer.Option(help="The PDF (default reports/all_tables.pdf); tables/ and figures/ beside it.")
    ] = None,
) -> None:
    """Write reports/all_tables.pdf and the tables as CSV, Markdown and LaTeX."""
    from .stages.report import build_report, check_report_outputs

    loaded = load_params(params)
    summary = build_report(loaded, check_report_outputs(out or paths.report_pdf()))
    sections = ", ".join(summary["sections"]) or "none (nothing scored yet)"
    console.print(
        f"report: {summary['pdf']}: sections {sections}; {summary['tables']} tables, {summary['figures']} figures"
    )


@app.command("plot-data")
@user_errors
def plot_data(params: ParamsOption = DEFAULT_PARAMS) -> None:
    """Write results/plots/ for `dvc plots`: per-pattern Recovery and Acc@t, one file per model."""
    from .stages.plots import write_plot_data

    counts = write_plot_data(load_params(params))
    console.print("plot-data: " + ", ".join(f"{name}: {n} model(s)" for name, n in counts.items()))


@app.command()
@user_errors
def plan(
    params: ParamsOption = DEFAULT_PARAMS,
    rates: Annotated[
        Path | None,
        typer.Option(
            help="Measured stage rates (`bench/full_grid.py --write-rates`; default bench/rates.json where it exists)."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the plan as one JSON object instead.")] = False,
) -> None:
    """What the params' grid costs before it runs: per model x benchmark x setting the requests, rows,
    generated tokens and estimated hours (from measured rates; "unmeasured" where there are none).
    Reads the built items (run acquire and build first); writes nothing."""
    from .stages.plan import DEFAULT_RATES, build_plan, plan_json, plan_lines

    loaded = load_params(params)
    if rates is None and DEFAULT_RATES.is_file():
        rates = DEFAULT_RATES
    result = build_plan(loaded, str(params), rates)
    if as_json:
        typer.echo(json.dumps(plan_json(result), ensure_ascii=False, sort_keys=True))
        return
    for line in plan_lines(result):
        typer.echo(line)


def _replaceable_params(path: Path) -> bool:
    """merge-params replaces a params file (params.yaml: DVC reads only that; `git checkout`
    restores it), never another file: one it merged (sealed: its header alone proves nothing),
    or one that validates as params."""
    from .core.ownership import is_sealed

    if is_sealed(path):
        return True
    try:
        load_params(path)
    except (OSError, UnicodeDecodeError, IdiombenchError):
        return False
    return True


@app.command("merge-params")
@user_errors
def merge_params(
    overlay: Annotated[
        Path, typer.Argument(help="An overlay params file (one with `overlay_of:`), e.g. overlays/paper.yaml.")
    ],
    out: Annotated[
        Path, typer.Option("--out", help="Where to write the merged params (DVC reads params.yaml).")
    ] = Path("params.yaml"),
) -> None:
    """Write an overlay merged onto its base as one full, validated params file (for DVC)."""
    import yaml

    from .core.io import write_text
    from .core.ownership import sealed
    from .params.overlay import read_params_raw
    from .pipeline.config import parse_params

    merged = read_params_raw(overlay)
    parse_params(merged, str(overlay))  # validate before anything is written
    check_output_file(
        out,
        _replaceable_params,
        "a params file (one that `idiombench check-params` accepts, or that merge-params wrote)",
    )
    header = (
        f"# GENERATED by `idiombench merge-params {overlay}`: the overlay merged onto its base.\n"
        "# Edit the overlay (or the base) and merge again; `git checkout params.yaml` restores the default.\n"
    )
    write_text(out, sealed(header + yaml.safe_dump(merged, allow_unicode=True, sort_keys=False, width=120)))
    console.print(f"merge-params: wrote {out} ({overlay} merged onto its base)")


@app.command("code-record")
@user_errors
def code_record(benchmark: BenchmarkArg, params: ParamsOption = DEFAULT_PARAMS) -> None:
    """Write the records of a benchmark's code (results/code/<benchmark>/) where they changed, and
    a plugin's params section with its defaults (results/params/<benchmark>.json: DVC's params)."""
    from .pipeline.records import write_records

    _check_benchmark(benchmark)
    written = write_records(benchmark, load_params(params))
    console.print(f"code-record {benchmark}: " + (f"wrote {', '.join(map(str, written))}" if written else "unchanged"))


def _write_records() -> list[Path]:
    """The code records every benchmark's stages depend on, and each plugin's params section with
    its defaults from params.yaml (DVC reads those before any stage runs: `dvc repro --dry`)."""
    from .benchmarks.registry import BUILTIN
    from .pipeline.records import refresh

    plugins = [name for name in NAMES if name not in BUILTIN]
    return refresh(params=load_params(DEFAULT_PARAMS) if plugins else None)


@app.command("dvc-yaml")
@user_errors
def dvc_yaml(
    out: Annotated[Path, typer.Option("--out", help="Where to write it.")] = Path("dvc.yaml"),
    check: Annotated[bool, typer.Option("--check", help="Only compare: exit 2 when the file differs.")] = False,
) -> None:
    """Write dvc.yaml from the benchmark registry (the stages the Snakefile runs) and the records its stages
    depend on (results/code/, a plugin's results/params/); --check exits 2 when dvc.yaml differs."""
    from .core.io import write_text
    from .pipeline.dag import dvc_yaml as generate_dvc_yaml
    from .pipeline.dag import generated_dvc_yaml

    text = generate_dvc_yaml()
    if check:
        current = out.read_text(encoding="utf-8") if out.is_file() else None
        if current != text:
            raise IdiombenchError(f"{out} is not what the registry generates: run `idiombench dvc-yaml`")
        console.print(f"dvc-yaml: {out} is up to date")
        return
    check_output_file(
        out, generated_dvc_yaml, "a dvc.yaml that `idiombench dvc-yaml` generated (as its seal, the last line, proves)"
    )
    write_text(out, text)
    written = _write_records()
    console.print(f"dvc-yaml: wrote {out}" + (f" and {', '.join(map(str, written))}" if written else ""))


@app.command("new-benchmark")
@user_errors
def new_benchmark(
    name: Annotated[str, typer.Argument(help="The new benchmark's name (a params key).")],
    data: Annotated[Path, typer.Argument(help="A JSON-lines file of records (one object per line).")],
    shape: Annotated[
        str | None, typer.Option("--shape", help="multiple_choice, label or cloze (default: from the records).")
    ] = None,
    input_field: Annotated[str | None, typer.Option("--input", help="The field asked about.")] = None,
    gold: Annotated[str | None, typer.Option("--gold", help="The field holding the gold answer.")] = None,
    options: Annotated[str | None, typer.Option("--options", help="The field listing options or candidates.")] = None,
) -> None:
    """Write benchmarks/NAME.yaml and data/NAME/ from a JSON-lines file: a working declaration to edit
    (docs/ARCHITECTURE.md, "Add a benchmark"), built once to prove it; an existing one is never replaced."""
    from typing import cast, get_args

    from .benchmarks.declared.scaffold import scaffold
    from .benchmarks.declared.schema import Shape

    shapes = get_args(Shape)
    if shape is not None and shape not in shapes:
        raise IdiombenchError(f"--shape {shape!r}: expected one of {', '.join(shapes)}")
    made = scaffold(
        name,
        data,
        taken=frozenset(NAMES),
        shape=cast("Shape | None", shape),  # one of Shape's values, checked above
        input_field=input_field,
        gold=gold,
        options=options,
    )
    found = made.guess
    fields = ", ".join(f"{key}: {value}" for key, value in found.fields.items())
    items = ", ".join(f"{task}: {n}" for task, n in made.items.items())
    typer.echo(f"new-benchmark: wrote {made.declaration} ({found.shape}; {fields}) and {made.data}")
    if found.labels:
        typer.echo(f"new-benchmark: labels {', '.join(found.labels)}")
    for note in found.notes:
        typer.echo(f"new-benchmark: {note}")
    typer.echo(f"new-benchmark: built {items} item(s); edit the template, then:")
    typer.echo(f"  dvc add {made.data.parent} && idiombench dvc-yaml")


@app.command("evaluate-predictions")
@user_errors
def evaluate_predictions(
    file: Annotated[Path, typer.Argument(help="The predictions file.")],
    benchmark: Annotated[str, typer.Option(help=f"One of: {', '.join(NAMES)}.")],
    task: Annotated[str, typer.Option(help="Task (SemanticQA: the instance file stem, e.g. idiom_detection).")],
    setting: Annotated[
        str, typer.Option(help="Setting, e.g. 0-shot, 3-shot, 5-shot (SemanticQA), zero_shot (OrderProbe).")
    ],
    model: Annotated[str, typer.Option(help="A name for the system that produced the predictions.")] = "predictions",
    format: Annotated[
        str,
        typer.Option(
            "--format",
            help="idiombench (this project's generations table; the default "
            "for .parquet) or a benchmark's published format (e.g. semanticqa; the default "
            "for other files of a benchmark that registers one).",
        ),
    ] = "",
    denominator: Annotated[
        str,
        typer.Option(
            help="test-set: every item of the task (an item without a prediction is wrong); records: only the items "
            "the file has a record for (the SemanticQA authors' own evaluation). Default: test-set, records with "
            "--compatibility released. Both go in --json; see docs/METRICS.md#5-denominators-of-evaluate-predictions."
        ),
    ] = "",
    compatibility: Annotated[
        str,
        typer.Option(
            help="The benchmark's score.compatibility for this run: paper, or released (the authors' released scorer "
            "exactly; SemanticQA, OrderProbe). Default: as params say."
        ),
    ] = "",
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print only a JSON object: the metrics (percent) with the "
            "chosen denominator, both denominators' metrics and the coverage counts.",
        ),
    ] = False,
    params: ParamsOption = DEFAULT_PARAMS,
) -> None:
    """Score predictions produced elsewhere with the pipeline's own scoring code."""
    from .stages.predictions import default_format, with_compatibility
    from .stages.predictions import evaluate_predictions as run

    _check_benchmark(benchmark)
    fmt = format or default_format(benchmark, file)
    loaded = load_params(params)
    if compatibility:
        loaded = with_compatibility(loaded, benchmark, compatibility)
    denominator = denominator or ("records" if compatibility == "released" else "test-set")
    result = run(
        loaded,
        benchmark=benchmark,
        model=model,
        task=task,
        setting=setting,
        path=file,
        fmt=fmt,
        denominator=denominator,
    )
    missing = "scored as wrong" if denominator == "test-set" else "not in the denominator"
    console.print(
        f"evaluate-predictions {benchmark}/{task}/{setting} ({model}): {result.items:,} items, "
        f"{result.predicted:,} with a prediction, {result.items - result.predicted:,} without ({missing}); "
        f"{result.lines:,} lines read, {len(result.unmatched_lines):,} matched no item"
        + (
            f" (lines {', '.join(map(str, result.unmatched_lines[:10]))}"
            f"{' ...' if len(result.unmatched_lines) > 10 else ''})"
            if result.unmatched_lines
            else ""
        )
        + "".join(f", {problem}" for problem in result.problems)
        + f"; denominator {denominator}: {result.items if denominator == 'test-set' else result.recorded:,} items"
    )
    for note in result.notes:
        console.print(f"note: {note}")
    if as_json:
        typer.echo(json.dumps(result.to_json(), ensure_ascii=False, sort_keys=True))
    else:
        from .metrics import display

        bench = get_benchmark(benchmark)
        units = {spec.key: spec.unit for spec in bench.metric_specs(loaded.benchmark(benchmark))}
        for name, value in result.metrics.items():
            unit = units.get(name.rsplit("/", 1)[-1])  # a share prints as a percent, as the tables do
            number = isinstance(value, (int, float))
            shown = display(value, unit, 2) if number and unit is not None else f"{value:.2f}" if number else value
            typer.echo(f"{name}\t{shown}")


def main() -> None:  # pragma: no cover - console entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
