"""A metric, declared once (`MetricSpec`): its key and the paper's label, unit, direction, the
rows it reads, its resampling unit, its per-item outcome and its statistic. Everything else is
derived from it (metrics/evaluate.py): the value in the metrics JSON and its bootstrap interval
(one formula), the MLflow metrics, the trace assessment of each item, `evaluate-predictions`,
the serving-noise and disagreement outcomes, the summary page and the report cell.

A benchmark lists its specs (`Benchmark.metric_specs`) and says where they are evaluated
(`Benchmark.metric_scopes`: a setting of the metrics body, or a task or language within one,
with the score rows behind it); docs/ARCHITECTURE.md, "Add a metric".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..core.generation_types import MAIN_PASS
from ..statistics.formulas import Column, Statistic, Where, column_values, in_scope
from .units import PERCENT, Unit

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Rows:
    """Which score rows a metric reads within its scope: the generation passes (None: all), the
    tasks (None: all), and any further condition."""

    passes: tuple[str, ...] | None = (MAIN_PASS,)
    tasks: tuple[str, ...] | None = None
    where: Where = None

    def select(self, frame: pd.DataFrame) -> pd.DataFrame:
        keep = np.ones(len(frame), dtype=bool)
        if self.passes is not None and len(frame):
            keep &= frame["pass"].isin(self.passes).to_numpy()
        if self.tasks is not None and len(frame):
            keep &= frame["task"].isin(self.tasks).to_numpy()
        if self.where is not None and len(frame):
            keep &= in_scope(frame, self.where)
        return frame[keep]


MAIN = Rows()


@dataclass(frozen=True)
class Resampling:
    """What the bootstrap draws (the cluster): its name as the report says it ("item",
    "expression") and the score column holding each row's unit; `fallback` where that column
    has a missing value (ChID rows have a passage, the other tasks' rows none)."""

    name: str
    column: str
    fallback: Resampling | None = None

    def units(self, rows: pd.DataFrame) -> tuple[str, list[str]]:
        values = rows[self.column] if self.column in rows.columns else None
        if values is not None and values.notna().all():
            return self.name, values.astype(str).tolist()
        if self.fallback is not None:
            return self.fallback.units(rows)
        raise ValueError(f"resampling unit {self.name!r}: column {self.column!r} is missing or has no value")


ITEM = Resampling("item", "item_id")


@dataclass(frozen=True)
class MetricSpec:
    """One metric of a benchmark (see the module docstring).

    key: its name in the metrics JSON (and MLflow, `evaluate-predictions`, the cell name);
    label: the paper's label; statistic: the formula (statistics.formulas); unit: how it is
    stored and printed; higher_is_better: the direction (the report's best mark); rows: the
    score rows it reads in its scope; kinds: the scope kinds it applies to (None: every scope;
    a benchmark names its scopes' kinds, e.g. a setting's task kind); resampling: the
    bootstrap's unit; outcome: each item's outcome (None: the statistic's own, where it has
    one, e.g. the value of a mean's column); binary: whether that outcome is right/wrong;
    headline: shown on the MLflow parent run, results/headline.json and the summary page;
    paper: a paper cell (`evaluate-predictions` prints it); no_interval: why the metric has no
    interval (else it has one wherever enough units stand behind it); omit_empty: left out of
    the metrics body where its scope has no row it reads (e.g. a pass that did not run),
    instead of stored as not computed.
    """

    key: str
    label: str
    statistic: Statistic
    unit: Unit = PERCENT
    higher_is_better: bool = True
    rows: Rows = MAIN
    kinds: frozenset[str] | None = None
    resampling: Resampling = ITEM
    outcome: Column | None = None
    binary: bool = True
    headline: bool = False
    paper: bool = True
    no_interval: str | None = None
    omit_empty: bool = False
    description: str = field(default="", compare=False)

    def applies(self, kind: str) -> bool:
        return self.kinds is None or kind in self.kinds

    def item_outcome(self, rows: pd.DataFrame) -> np.ndarray | None:
        """Each row's outcome (NaN where the row is not scored), or None without one."""
        if self.outcome is not None:
            return column_values(rows, self.outcome)
        return self.statistic.outcome(rows)


@dataclass(frozen=True)
class Scope:
    """Where specs are evaluated: `name`, the prefix of its cells' names ("3-shot/idiom_detection");
    `setting`, the metrics body's setting; `rows`, every score row behind it (all passes: a spec
    selects its own); `path`, the body's dict its values sit in; `kind`, which specs apply
    (MetricSpec.kinds); `task`, the task whose rows it holds where the benchmark reports tasks
    apart (`evaluate-predictions --task`); `breakdown`: not one of the paper's cells but a part
    of one (a per-task, per-language or per-category view of the same metrics)."""

    name: str
    setting: str
    rows: pd.DataFrame
    path: tuple[str, ...]
    kind: str = ""
    specs: Sequence[MetricSpec] = ()
    task: str | None = None
    breakdown: bool = False

    def cells(self) -> list[tuple[str, MetricSpec]]:
        """(cell name, spec) of every spec that applies here."""
        return [(f"{self.name}/{spec.key}", spec) for spec in self.specs if spec.applies(self.kind)]


def specs_by_key(specs: Sequence[MetricSpec]) -> dict[str, MetricSpec]:
    """The specs by key; a key declared twice is a bug in the declaring benchmark."""
    out: dict[str, MetricSpec] = {}
    for spec in specs:
        if spec.key in out and out[spec.key] != spec:
            raise ValueError(f"metric {spec.key!r} is declared twice")
        out[spec.key] = spec
    return out


Outcome = Callable[["pd.DataFrame"], np.ndarray]
