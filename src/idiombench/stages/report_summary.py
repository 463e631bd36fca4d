"""The report's summary page: per benchmark, each model's headline metrics (the specs marked
headline) with their intervals and the model's serving-noise floor, and the paper's value where
the model reproduces a paper model — first as a figure, then as a table in one unit convention
(percent, or a score as it is) whose cells never wrap (docs/report-and-mlflow.md)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..metrics import MetricSpec
from ..params.schema import Params
from ..report.tables import Cell, Figure, Table
from ..statistics import interval, replicates
from .report_noise import NoiseFloors
from .report_uncertainty import Target
from .reproduction import Reproduced

DECIMALS = 1
FIGURE_ID = "summary_headline"


@dataclass(frozen=True)
class Headline:
    """One headline cell of a benchmark (its spec marked headline) and, per model, its stored value
    and what stands behind it (its estimand, or why it has none)."""

    benchmark: str
    setting: str
    name: str
    spec: MetricSpec
    values: dict[str, float | None]
    targets: dict[str, Target]


@dataclass(frozen=True)
class SummaryRow:
    """One model's headline cell, every number on the printed scale (percent for percent and
    share units, as it is for scores and points)."""

    benchmark: str
    cell: str  # the cell's scope and the metric's label, e.g. "connotation: Acc."
    model: str
    value: float | None
    half: float | None  # half-width of its interval (None: none)
    floor: float | None  # the model's serving-noise floor in the setting (None: no pass)
    paper: float | None  # the published value of the paper model it reproduces (None: none)
    unit: str  # "%" or ""


def _half_width(value: float | None, target: Target | None, params: Params) -> float | None:
    uncertainty = params.report.uncertainty
    estimand = target.estimand if target is not None else None
    if value is None or estimand is None or estimand.n < uncertainty.min_units:
        return None
    found = interval(
        estimand.value(), replicates([estimand], uncertainty.resamples, uncertainty.seed)[0], uncertainty.confidence
    )
    return None if found is None else found.half_width


def summary_rows(
    params: Params, headlines: Sequence[Headline], floors: NoiseFloors, reproduced: Sequence[Reproduced]
) -> list[SummaryRow]:
    paper = {(r.benchmark, r.model, r.name): r.expected for r in reproduced}
    rows = []
    for h in headlines:
        scale = h.spec.unit.scale * h.spec.unit.display_scale
        for model in params.models:
            if model not in h.values:
                continue
            stored = h.values[model]
            half = _half_width(stored, h.targets.get(model), params)
            floor = floors.get(model, h.benchmark, h.setting)
            rows.append(
                SummaryRow(
                    h.benchmark,
                    f"{h.name.rsplit('/', 1)[0]}: {h.spec.label}",
                    model,
                    None if stored is None else stored * h.spec.unit.display_scale,
                    None if half is None else half * scale,
                    None if floor is None or math.isnan(floor) else floor * scale,
                    paper.get((h.benchmark, model, h.name)),
                    "%" if h.spec.unit.percent else "",
                )
            )
    return rows


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.{DECIMALS}f}"


def summary_table(rows: Sequence[SummaryRow], where: Mapping[str, str], display_name: Callable[[str], str]) -> Table:
    """One row per benchmark, headline cell and model: a handful of short columns, so no cell wraps
    whatever the number of models."""
    body = [
        [
            Cell(r.benchmark),
            Cell(r.cell),
            Cell(display_name(r.model)),
            Cell(_number(r.value) + ("" if r.half is None else f" ±{r.half:.{DECIMALS}f}")),
            Cell(_number(r.floor)),
            Cell(_number(r.paper)),
        ]
        for r in rows
    ]
    sections = "; ".join(f"{benchmark}: {text}" for benchmark, text in where.items())
    return Table(
        "summary",
        "Headline metrics",
        ["Benchmark", "Cell", "Model", "Value", "Floor", "Paper"],
        body,
        footnotes=[
            "Value: the benchmark's headline metric as its paper table prints it, in percent (a score as it is) ± "
            "the half-width of its 95% bootstrap interval, clustered as the benchmark's unit (no ± below "
            "report.uncertainty.min_units units); Floor: the model's serving-noise floor in that setting, in the "
            "same unit (the largest |Δ| of its perturbations; — where it has no pass): a difference between models "
            "smaller than it is not evidence; Paper: the published value of the paper model it reproduces "
            "(report.published.reproduces). The paper tables follow: " + (sections or "none") + "."
        ],
    )


def summary_figure(rows: Sequence[SummaryRow], directory: Path, display_name: Callable[[str], str]) -> Figure | None:
    """Per benchmark, each model's headline cells: the value with its interval, the noise floor as a
    band around it, the paper's value as a cross."""
    plotted = [r for r in rows if r.value is not None]
    if not plotted:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    benchmarks = list(dict.fromkeys(r.benchmark for r in plotted))
    models = list(dict.fromkeys(r.model for r in plotted))
    colours = plt.get_cmap("tab10")
    fig, axes = plt.subplots(len(benchmarks), 1, figsize=(7.0, 1.9 * len(benchmarks) + 0.8), squeeze=False)
    width = 0.8 / max(len(models), 1)
    for ax, benchmark in zip(axes[:, 0], benchmarks, strict=True):
        mine = [r for r in plotted if r.benchmark == benchmark]
        cells = list(dict.fromkeys(r.cell for r in mine))
        for index, model in enumerate(models):
            for r in (r for r in mine if r.model == model):
                x = cells.index(r.cell) + (index - (len(models) - 1) / 2) * width
                assert r.value is not None
                if r.floor:
                    ax.add_patch(
                        plt.Rectangle(
                            (x - width / 2, r.value - r.floor), width, 2 * r.floor, color=colours(index), alpha=0.18
                        )
                    )
                ax.errorbar(
                    x,
                    r.value,
                    yerr=r.half or 0.0,
                    fmt="o",
                    ms=3.5,
                    capsize=2,
                    color=colours(index),
                    label=display_name(model) if r is next(s for s in mine if s.model == model) else None,
                )
                if r.paper is not None:
                    ax.plot(x, r.paper, "x", color="black", ms=5)
        ax.set_xticks(range(len(cells)), [c.replace(": ", "\n") for c in cells], fontsize=6, rotation=0)
        ax.set_title(benchmark, fontsize=8, loc="left")
        ax.tick_params(axis="y", labelsize=6)
        ax.grid(axis="y", alpha=0.3)
        ax.set_xlim(-0.6, len(cells) - 0.4)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    for ax in axes[1:, 0]:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4), fontsize=6, frameon=False)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    path = directory / f"{FIGURE_ID}.png"
    fig.savefig(path, dpi=150, metadata={"Software": None})
    plt.close(fig)
    return Figure(
        FIGURE_ID,
        "Headline metrics per benchmark",
        path,
        caption="Each model's headline cells (percent, or a score as it is) with their 95% bootstrap intervals; the "
        "shaded band is the model's serving-noise floor around the value; × marks the published value of the paper "
        "model a model reproduces.",
    )
