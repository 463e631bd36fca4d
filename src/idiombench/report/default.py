"""The report section of a benchmark that has no paper tables of its own (`Benchmark.report_section`'s
default): one table, a row per model and a column per setting and paper metric, each cell its
stored value with its interval (its spec's cell in the default scope of the setting)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..metrics import MetricSpec, evaluate
from .tables import Cell, CellRef, Section, Table, metric_cell

DECIMALS = 2


def metrics_section(
    benchmark: str,
    metrics: Mapping[str, Mapping[str, Any]],
    specs: Sequence[MetricSpec],
    display_name: Callable[[str], str],
) -> Section | None:
    if not metrics:
        return None
    settings = sorted({s for body in metrics.values() for s in body.get("settings") or {}})
    columns = [(setting, spec) for setting in settings for spec in specs if spec.paper]
    rows = [
        [Cell(display_name(model))]
        + [
            metric_cell(
                evaluate.read(body, ("settings", setting, "metrics", spec.key)),
                spec.unit,
                DECIMALS,
                ref=CellRef(model, f"{setting}/{spec.key}"),
            )
            for setting, spec in columns
        ]
        for model, body in sorted(metrics.items())
    ]
    units = sorted({spec.unit.name for _, spec in columns})
    table = Table(
        f"{benchmark.replace('-', '_')}_metrics",
        f"{benchmark}: {', '.join(spec.label for spec in specs if spec.paper)} by setting",
        ["Model"] + [f"{spec.label} ({setting})" for setting, spec in columns],
        rows,
        caption=f"Values in {' / '.join(units)}; percent and shares printed as percentages.",
    )
    return Section(benchmark=benchmark, title=benchmark, tables=[table])
