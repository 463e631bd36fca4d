"""The report stage: collect every scored benchmark's section, write the tables and the PDF."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..benchmarks.contexts import ReportContext
from ..benchmarks.registry import NAMES, get_benchmark
from ..core import paths
from ..core.environment import environment_line
from ..core.errors import IdiombenchError
from ..core.io import (
    check_output_file,
    check_output_folder,
    earlier_index,
    read_json,
    read_json_object,
    sha256_file,
    staged_directory,
    write_index,
)
from ..core.ownership import Output
from ..core.progress import Progress
from ..core.redact import scrub, scrub_url
from ..metrics import evaluate
from ..metrics.body import plain
from ..params.schema import Params
from ..report.pdf import TITLE, TitlePage, is_report_pdf, write_pdf
from ..report.tables import Cell, Section, Table
from .inputs import SCORED, applies, read_metrics, score_tables
from .report_noise import (
    FLOOR_COLUMNS,
    FLOOR_NOTE,
    NoiseFloors,
    disagreement_tables,
    floor_columns,
    noise_figures,
    noise_table,
    outcomes,
)
from .report_published import add_reference_rows, reproduction_table, scorecard_table
from .report_summary import Headline, summary_figure, summary_rows, summary_table
from .report_uncertainty import Target, annotate_section, section_estimands
from .reproduction import Reproduced, Scorecard, reproduce, reproduction_notes

FAILED = "failed"  # the text of a failed model's cells


def git_commit(root: Path = Path(".")) -> str:
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return commit + (" (with uncommitted changes)" if dirty else "")


def report_date() -> str:
    """Today, or SOURCE_DATE_EPOCH when set (reproducible builds)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and not epoch.strip().isdigit():
        raise IdiombenchError(
            f"environment variable SOURCE_DATE_EPOCH={epoch!r}: expected a whole number of "
            "seconds since 1970-01-01 UTC (or unset it)"
        )
    when = dt.datetime.fromtimestamp(int(epoch), dt.UTC) if epoch else dt.datetime.now(dt.UTC)
    return when.strftime("%Y-%m-%d")


def failed_models(params: Params, benchmark: str) -> dict[str, str]:
    """model -> why it has no results on `benchmark`: its last generate failed (more failed
    requests than models.<m>.max_failed_share allows; paths.generate_failure)."""
    out = {}
    for model in params.models:
        record = paths.generate_failure(model)
        if record.is_file() and applies(params, benchmark=benchmark, model=model) is None:
            out[model] = str(read_json_object(record).get("reason") or "generate failed")
    return out


def mark_failed(table: Table, failed: dict[str, str], display_name: Callable[[str], str]) -> None:
    """A row of "failed" cells for each failed model in a table with a row per model, and a
    footnote with the reason: a failed model never shows as a score (0.00 or an older run's)."""
    if not failed or not table.columns or table.columns[0] != "Model":
        return
    for model, reason in sorted(failed.items()):
        table.rows.append([Cell(display_name(model))] + [Cell(FAILED) for _ in table.columns[1:]])
        table.footnotes.append(f"{FAILED}: {display_name(model)}: {reason}")


def failed_section(benchmark: str, failed: dict[str, str], display_name: Callable[[str], str]) -> Section:
    """The section of a benchmark on which every model that runs it failed."""
    table = Table(f"{benchmark.replace('-', '_')}_failed", f"{benchmark}: no results", ["Model", "Status"], [])
    mark_failed(table, failed, display_name)
    return Section(
        benchmark=benchmark, title=benchmark, intro=["Every model that runs this benchmark failed."], tables=[table]
    )


def collect_metrics(params: Params, benchmark: str) -> dict[str, dict[str, object]]:
    out = {}
    failed = failed_models(params, benchmark)
    for model in params.models:
        if model in failed:
            continue  # an older run's metrics are not this configuration's results
        path = paths.metrics_file(benchmark=benchmark, model=model)
        if path.exists():
            body = read_metrics(path, benchmark)
            if plain(body).get("status") == SCORED:
                out[model] = body
    return out


def uncertainty_tables(
    params: Params,
    benchmark: str,
    estimands: Mapping[str, Mapping[str, Target]],
    section: Section,
    display_name: Callable[[str], str],
    floors: NoiseFloors | None = None,
) -> list[Table]:
    """Intervals and significance marks in the section's tables (report.uncertainty), and the
    companion tables with the bounds and the p / q values (written beside them, not in the PDF),
    each paired test with the two models' serving-noise floors beside it."""
    config = params.report.uncertainty
    if not config.enabled or not estimands:
        return []
    floor = (FLOOR_COLUMNS, floor_columns(floors, benchmark), FLOOR_NOTE) if floors is not None else None
    return annotate_section(section, estimands, config, display_name, floor)


def headline_cells(
    benchmark: str, metrics: Mapping[str, Mapping[str, object]], estimands: Mapping[str, Mapping[str, Target]]
) -> list[Headline]:
    """The benchmark's headline cells (its specs marked headline, outside breakdowns), each with
    every model's stored value and what stands behind it, in the order of its scopes."""
    found: dict[str, Headline] = {}
    for model, targets in estimands.items():
        for name, c in getattr(targets, "cells", {}).items():
            if not c.spec.headline or c.scope.breakdown:
                continue
            entry = found.setdefault(name, Headline(benchmark, c.scope.setting, name, c.spec, {}, {}))
            entry.values[model] = evaluate.read(metrics[model], c.path)
            entry.targets[model] = targets[name]
    return list(found.values())


def noise_and_disagreement(
    params: Params,
    benchmark: str,
    metrics: dict[str, dict[str, object]],
    section: Section,
    figures: list[dict[str, object]],
    display_name: Callable[[str], str],
) -> list[Table]:
    """The section's Serving noise and disagreement tables (appended to it: in the PDF), and the
    tables written beside them only (every disagreeing item)."""
    found = outcomes(params, benchmark, list(metrics))
    noise = noise_table(benchmark, figures, display_name)
    tables = ([noise] if noise is not None else []) + disagreement_tables(params, benchmark, found, display_name)
    section.tables += tables[:-1] if len(tables) > 1 and tables[-1].table_id.endswith("_items") else tables
    return tables[-1:] if tables and tables[-1].table_id.endswith("_items") else []


# The identity's settings that decide greedy outputs (generation/backends/hf.py, the stage's
# batch_size), named on the title page with the numbers they produced.
GENERATION_SETTINGS = (
    "dtype",
    "device",
    "kernels",
    "cache_implementation",
    "attn_implementation",
    "batch_size",
    "torch_version",
    "transformers_version",
    "vllm_version",
)


def model_lines(params: Params) -> list[str]:
    lines = []
    for name, config in params.models.items():
        parts = [f"{config.display_name or name} [{name}]: backend {config.backend}"]
        for key in ("model", "revision", "gguf_file", "base_url"):
            value = getattr(config, key, None)
            if value:
                parts.append(f"{key} {scrub_url(value) if key == 'base_url' else value}")
        identity = paths.generations_dir(name) / "identity.json"
        if paths.generations_complete(name) and identity.exists():  # never from a partial folder
            ident = scrub(read_json(identity))
            for key in ("weights_sha256", "revision", "loaded"):
                if ident.get(key):
                    parts.append(f"{key} {str(ident[key])[:64]}")
            settings = [f"{key} {ident[key]}" for key in GENERATION_SETTINGS if key in ident]
            if settings:
                parts.append("generated with " + ", ".join(settings))
        if paths.generate_failure(name).is_file():
            parts.append(f"FAILED: its last generate run failed ({paths.generate_failure(name)})")
        lines.append(", ".join(parts))
    return lines


def _origin(entry: dict[str, str]) -> str:
    """Where an acquired file came from: its upstream commit, its URL, or the project's own file."""
    if entry.get("source_repo"):
        return f"{entry['source_repo']}@{entry['source_commit'][:10]}"
    if entry.get("local"):
        return f"local {entry['local']}"
    return entry.get("url") or "unknown origin"


def data_lines() -> list[str]:
    lines = []
    for name in NAMES:
        record = paths.acquired_record(name)
        if record.exists():
            body = read_json_object(record)
            origins = sorted({_origin(f) for f in body["files"]})
            lines.append(f"{name}: {sha256_file(record)[:16]} ({len(body['files'])} files; {', '.join(origins)})")
        else:
            lines.append(f"{name}: not acquired")
    return lines


TABLE_SUFFIXES = (".csv", ".md", ".tex")  # Table.write: every table in the three formats


def _earlier_report_folder(folder: Path, pdf: Path) -> bool:
    """A tables/ or figures/ folder an earlier version of `report` wrote (before index.json):
    beside a PDF this project wrote, holding only what report writes there (every table as
    .csv, .md and .tex; figures as .png)."""
    if not is_report_pdf(pdf):
        return False
    entries = list(folder.iterdir())
    if not all(entry.is_file() for entry in entries):
        return False
    if folder.name == "figures":
        return all(entry.suffix == ".png" for entry in entries)
    stems: dict[str, set[str]] = {}
    for entry in entries:
        stems.setdefault(entry.stem, set()).add(entry.suffix)
    return all(suffixes == set(TABLE_SUFFIXES) for suffixes in stems.values())


def report_outputs(out_pdf: Path) -> tuple[Path, Path, Path]:
    """The PDF and the folders written beside it: tables/ and figures/."""
    return out_pdf, out_pdf.parent / "tables", out_pdf.parent / "figures"


def report_folder_output(folder: Path, pdf: Path) -> Output:
    """tables/ or figures/ beside `pdf`: the report's, recognised by its completion record, or as
    an earlier version left it: with an index.json listing exactly its files, or (before
    index.json) by its layout beside a PDF of ours."""
    index = earlier_index("report")
    return Output(
        "report",
        f"report {folder.name}",
        legacy_record=paths.INDEX,
        legacy=lambda found: index(found) or _earlier_report_folder(found, pdf),
    )


def check_report_outputs(out_pdf: Path) -> Path:
    """Before any work: the PDF, tables/ and figures/ are absent or this project's (a report
    replaces only what a report wrote)."""
    pdf, tables_dir, figures_dir = report_outputs(out_pdf)
    check_output_file(
        pdf,
        is_report_pdf,
        "a report PDF of idiombench (its author idiombench, its content as sealed by its sha256 keyword)",
    )
    for folder in (tables_dir, figures_dir):
        check_output_folder(folder, report_folder_output(folder, pdf))
    return pdf


def build_report(params: Params, out_pdf: Path | None = None) -> dict[str, Any]:
    out_pdf = check_report_outputs(out_pdf or paths.report_pdf())
    date = report_date()  # before any work: a bad SOURCE_DATE_EPOCH fails first
    _, tables_dir, figures_dir = report_outputs(out_pdf)
    sections: list[Section] = []
    figures = noise_figures(params)
    floors = NoiseFloors.of(figures)
    headlines: list[Headline] = []
    reproductions: list[Reproduced] = []
    scorecards: list[tuple[str, Scorecard]] = []
    where: dict[str, str] = {}
    with (
        staged_directory(tables_dir, report_folder_output(tables_dir, out_pdf)) as tables_stage,
        staged_directory(figures_dir, report_folder_output(figures_dir, out_pdf)) as figures_stage,
    ):
        progress = Progress(sum(params.benchmark(name).enabled for name in NAMES), "report", unit="benchmark")
        for name in NAMES:
            if not params.benchmark(name).enabled:
                continue
            progress.update(1)  # counted as its section starts (sections, intervals and tests take seconds each)
            metrics = collect_metrics(params, name)
            failed = failed_models(params, name)
            context = ReportContext(params=params, benchmark=name, metrics=metrics, figures_dir=figures_stage)
            section = get_benchmark(name).report_section(context) if metrics else None
            if section is None and failed:
                section = failed_section(name, failed, context.display_name)
            if section is None:
                continue  # nothing scored and nothing failed: no section, no placeholder page
            published = get_benchmark(name).published_cells()
            for table in section.tables:
                mark_failed(table, failed, context.display_name)
                if params.report.published.reference_rows:
                    add_reference_rows(table, published, set(params.report.published.reproduces.values()))
            estimands = section_estimands(params, name, metrics) if metrics else {}
            companions = uncertainty_tables(params, name, estimands, section, context.display_name, floors)
            headlines += headline_cells(name, metrics, estimands)
            reproduced: list[Reproduced] = []
            notes: dict[str, list[str]] = {}
            for model in metrics:
                if model not in params.report.published.reproduces:
                    continue  # its score tables are read only for a model that reproduces a paper model
                mine = reproduce(params, name, model, metrics[model], score_tables(name, model), floors)
                if mine:
                    reproduced += mine
                    notes[model] = reproduction_notes(params, name, model, metrics[model], mine)
                    scorecards.append((name, Scorecard.of(model, mine[0].paper_model, mine)))
            reproductions += reproduced
            reproduction = reproduction_table(name, reproduced, context.display_name, notes)
            section.tables += [reproduction] if reproduction is not None else []
            beside = noise_and_disagreement(params, name, metrics, section, figures, context.display_name)
            where[name] = f"section {section.title}; reports/tables/{name.replace('-', '_')}_*.csv"
            for table in section.tables + companions + beside:
                table.write(tables_stage)
            sections.append(section)
        title = TitlePage(
            title=TITLE,
            profile=params.profile,
            date=date,
            git_commit=git_commit(),
            environment=environment_line(),
            models=model_lines(params),
            data=data_lines(),
        )
        progress.close()
        display = ReportContext(params=params, benchmark="", metrics={}, figures_dir=figures_stage).display_name
        cards = scorecard_table(scorecards, display)
        headline_rows = summary_rows(params, headlines, floors, reproductions)
        figure = summary_figure(headline_rows, figures_stage, display)
        summary = Section(
            benchmark="summary",
            title="Summary",
            tables=[summary_table(headline_rows, where, display)] + ([cards] if cards is not None else []),
            figures=[figure] if figure is not None else [],
        )
        for table in summary.tables:
            table.write(tables_stage)
        # The figures are still in the staging directory here; the PDF embeds them from there.
        write_pdf(out_pdf, title, sections, summary=summary)
        write_index(tables_stage / paths.INDEX, "report")
        write_index(figures_stage / paths.INDEX, "report")
    return {
        "pdf": str(out_pdf),
        "sections": [s.benchmark for s in sections],
        "tables": sum(len(s.tables) for s in sections),
        "figures": sum(len(s.figures) for s in sections),
    }
