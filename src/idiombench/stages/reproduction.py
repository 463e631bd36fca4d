"""A model that reproduces a paper model (params report.published.reproduces) beside the paper:
each of its cells that the paper prints, with the published value, the difference, and whether
the published value lies within the cell's bootstrap interval and within the model's
serving-noise floor (docs/papers.md#published-values). The report prints them as a
"Reproduction" table per benchmark and a scorecard on the summary page; the track stage logs the
scorecard on the model's parent run."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from ..benchmarks.registry import get_benchmark
from ..metrics import evaluate
from ..metrics.body import AnyBody, plain
from ..metrics.units import Unit
from ..params.schema import Params
from ..report.published import PublishedCell
from ..statistics import interval, replicates

if TYPE_CHECKING:
    import pandas as pd

    from .report_noise import NoiseFloors


def printed_kind(unit: Unit) -> str:
    """How the report prints a metric of `unit`: as a percent, as points (0-100), or as a score."""
    return "percent" if unit.percent else ("points" if unit.name == "points" else "score")


def published_factor(cell: PublishedCell, unit: Unit) -> float:
    """The factor from a published value (in the unit the paper prints) to the report's printed
    scale of a metric of `unit`."""
    kind = printed_kind(unit)
    if cell.unit in ("share", "score") and kind == "percent":
        return 100.0
    if cell.unit in ("percent", "pp", "score100") and kind == "score":
        return 0.01
    return 1.0


def decimals(printed: str) -> int:
    found = re.search(r"[.,](\d+)$", printed)
    return len(found.group(1)) if found else 0


@dataclass(frozen=True)
class Reproduced:
    """One cell of a reproducing model beside the paper's value, both on the report's printed scale."""

    benchmark: str
    model: str
    paper_model: str
    name: str  # the cell: "<scope>/<metric key>"
    label: str  # the metric's label
    published: PublishedCell
    expected: float  # the published value on the printed scale
    value: float | None  # the reproduced value on the printed scale (None: not computed)
    low: float | None  # its interval (None: none)
    high: float | None
    floor: float | None  # the model's serving-noise floor in the cell's setting (None: no pass)

    @property
    def digits(self) -> int:
        return decimals(self.published.printed)

    @property
    def delta(self) -> float | None:
        return None if self.value is None else self.value - self.expected

    @property
    def within_interval(self) -> bool | None:
        if self.low is None or self.high is None:
            return None
        return self.low <= self.expected <= self.high

    @property
    def within_floor(self) -> bool | None:
        if self.floor is None or self.delta is None:
            return None
        return abs(self.delta) <= self.floor


def reproduce(
    params: Params,
    benchmark: str,
    model: str,
    body: object,
    scores: Mapping[str, pd.DataFrame],
    floors: NoiseFloors | None = None,
) -> list[Reproduced]:
    """The cells of `model` on `benchmark` that its paper model has published values for."""
    paper_model = params.report.published.reproduces.get(model)
    if paper_model is None:
        return []
    bench, config = get_benchmark(benchmark), params.benchmark(benchmark)
    published = [c for c in bench.published_cells() if c.model_id == paper_model and c.ref is not None]
    if not published:
        return []
    uncertainty = params.report.uncertainty
    found = evaluate.cells(bench.metric_scopes(scores, config))
    by_name = {c.name: c for c in found}
    out = []
    for cell in published:
        metric = by_name.get(cell.ref or "")
        if metric is None:
            continue
        spec = metric.spec
        scale = spec.unit.scale * spec.unit.display_scale
        stored = evaluate.read(body, metric.path)
        value = None if stored is None else stored * spec.unit.display_scale
        low = high = None
        estimand = evaluate.estimand(metric) if value is not None else None
        if estimand is not None and estimand.n >= uncertainty.min_units:
            reps = replicates([estimand], uncertainty.resamples, uncertainty.seed)[0]
            bounds = interval(estimand.value(), reps, uncertainty.confidence)
            if bounds is not None:
                low, high = bounds.low * scale, bounds.high * scale
        floor = floors.get(model, benchmark, metric.scope.setting) if floors is not None else None
        out.append(
            Reproduced(
                benchmark,
                model,
                paper_model,
                metric.name,
                spec.label,
                cell,
                cell.value * published_factor(cell, spec.unit),
                value,
                low,
                high,
                None if floor is None or math.isnan(floor) else floor * scale,
            )
        )
    return out


@dataclass(frozen=True)
class Scorecard:
    """How many of a model's reproduced cells agree with the paper."""

    model: str
    paper_model: str
    cells: int
    with_interval: int
    within_interval: int
    with_floor: int
    within_floor: int

    @classmethod
    def of(cls, model: str, paper_model: str, rows: list[Reproduced]) -> Scorecard:
        return cls(
            model,
            paper_model,
            len(rows),
            sum(r.within_interval is not None for r in rows),
            sum(bool(r.within_interval) for r in rows),
            sum(r.within_floor is not None for r in rows),
            sum(bool(r.within_floor) for r in rows),
        )

    def metrics(self) -> dict[str, float]:
        """The scorecard as MLflow metrics of the model's parent run."""
        return {
            "reproduction/cells": float(self.cells),
            "reproduction/cells_with_interval": float(self.with_interval),
            "reproduction/within_interval": float(self.within_interval),
            "reproduction/within_floor": float(self.within_floor),
        }

    def text(self) -> str:
        floor = f"; {self.within_floor} of {self.with_floor} within the noise floor" if self.with_floor else ""
        return (
            f"{self.within_interval} of {self.with_interval} cells with an interval hold the published value "
            f"({self.cells} cells reproduced){floor}"
        )


EXAMPLES = 3  # published cells without a counterpart named in the note


def reproduction_notes(
    params: Params, benchmark: str, model: str, body: object, rows: Sequence[Reproduced]
) -> list[str]:
    """What a reader needs beside the model's Reproduction rows (`reproduce`'s): the paper's cells
    this run has no counterpart of (a setting or task it did not run), the settings scored on a
    sample (their values are not the paper's full-data ones), and the scorer roles that ran with
    another model than the paper's (the cells of the metrics they compute differ by the scorer)."""
    paper_model = params.report.published.reproduces.get(model)
    if paper_model is None:
        return []
    bench, config = get_benchmark(benchmark), params.benchmark(benchmark)
    reproduced = {row.name for row in rows}  # a row's name is its published cell's ref
    published = [c for c in bench.published_cells() if c.model_id == paper_model and c.ref is not None]
    missing = [c for c in published if c.ref not in reproduced]
    notes = []
    if missing:
        shown = "; ".join(f"{c.table} {c.ref}" for c in missing[:EXAMPLES])
        notes.append(
            f"{len(missing)} of the {len(published)} published cells of {paper_model} have no counterpart in this "
            f"run (a setting or task it did not run), e.g. {shown}"
        )
    dumped = body if isinstance(body, Mapping) else plain(cast("AnyBody", body))
    provenance = dumped.get("provenance") or {}
    sampled = sorted(
        f"{setting} ({cover['scored']:,} of {cover['available']:,} {cover['unit']}s)"
        for setting, cover in (provenance.get("coverage") or {}).items()
        if not cover.get("complete", True)
    )
    if sampled:
        notes.append(
            f"computed on a sample ({', '.join(sampled)}): not comparable with the paper's full-data values "
            f"(benchmarks.{benchmark}.render.sample)"
        )
    used = bench.roles_used(config)
    for role, record in sorted((provenance.get("roles") or {}).items()):
        if role in used and isinstance(record, Mapping) and record.get("status") != "paper":
            notes.append(
                f"scorer role {role} ran {record.get('model') or 'no model'} ({record.get('status')}), the paper's "
                f"{record.get('paper_model')}: the cells of the metrics it computes differ by the scorer"
            )
    return notes
