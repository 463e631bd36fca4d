"""What the specs give, scope by scope: the values the metrics JSON stores, the estimands behind
the report's intervals and tests, each item's outcome (serving noise, disagreement, the summary
page, traces), and the values read back from a metrics body."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel

from ..statistics.estimands import Estimand
from ..statistics.formulas import F1, Statistic
from .spec import MetricSpec, Scope

if TYPE_CHECKING:
    import pandas as pd

OUTCOME_COLUMNS = ("prompt_id", "sample_index", "unit", "outcome", "metric", "binary")


@dataclass(frozen=True)
class Cell:
    """One metric in one scope: `name` is "<scope name>/<spec key>"."""

    name: str
    spec: MetricSpec
    scope: Scope

    @property
    def rows(self) -> pd.DataFrame:
        return self.spec.rows.select(self.scope.rows)

    @property
    def path(self) -> tuple[str, ...]:
        return (*self.scope.path, self.spec.key)


def cells(scopes: Iterable[Scope]) -> list[Cell]:
    return [Cell(name, spec, scope) for scope in scopes for name, spec in scope.cells()]


def value(cell: Cell) -> float | None:
    """The cell's value as the metrics JSON stores it: the statistic on every row in scope, in
    the spec's unit (None: not computed)."""
    rows = cell.rows
    if not len(rows):
        return None
    return cell.spec.unit.store(cell.spec.statistic.value(rows, cell.spec.unit.scale))


def value_of(spec: MetricSpec, rows: pd.DataFrame) -> float | None:
    """A spec's value over `rows` outside any scope (a breakdown by gold label, a curve point)."""
    selected = spec.rows.select(rows)
    return spec.unit.store(spec.statistic.value(selected, spec.unit.scale)) if len(selected) else None


def values(scopes: Iterable[Scope]) -> dict[str, float | None]:
    return {c.name: value(c) for c in cells(scopes)}


def place(body: dict[str, Any], scopes: Iterable[Scope]) -> None:
    """Write every cell's value into `body` at its path (the scope's metrics dict + the key)."""
    for c in cells(scopes):
        if c.spec.omit_empty and not len(c.rows):
            continue
        target = body
        for part in c.scope.path:
            target = target.setdefault(part, {})
        target[c.spec.key] = value(c)


def read(body: object, path: Sequence[str]) -> float | None:
    """The number at `path` in a metrics body, typed (metrics.body.MetricsBody) or plain JSON
    (None: absent or not computed)."""
    found: object = body
    for part in path:
        if isinstance(found, BaseModel):
            found = getattr(found, part, None)
        elif isinstance(found, Mapping) and part in found:
            found = found[part]
        else:
            return None
    return float(found) if isinstance(found, (int, float)) and not isinstance(found, bool) else None


def _shared(statistic: Statistic, rows: pd.DataFrame) -> frozenset[str]:
    if isinstance(statistic, F1):
        gold = [str(g) for g in rows[statistic.gold]]
        return frozenset(gold) | {p for p in statistic.predicted(rows) if p is not None}
    return frozenset()


def estimand(cell: Cell, shared: frozenset[str] = frozenset()) -> Estimand | None:
    """The cell's statistic over resampled units (None: no row, or the spec has no interval).
    `shared`: the F1 label universe of every model compared (the same for each)."""
    rows = cell.rows
    if not len(rows) or cell.spec.no_interval is not None:
        return None
    statistic = cell.spec.statistic
    if shared and isinstance(statistic, F1):
        universe = sorted(shared)
        statistic = replace(statistic, labels=lambda _rows: universe)
    unit, ids = cell.spec.resampling.units(rows)
    return statistic.estimand(rows, ids, unit, cell.spec.higher_is_better)


class ModelEstimands(Mapping[str, "tuple[MetricSpec, Estimand | None]"]):
    """One model's cells by name -> (spec, estimand), each estimand computed when first asked for
    (a report references some of a benchmark's cells, not all)."""

    def __init__(self, found: Mapping[str, Cell], universe: Callable[[str], frozenset[str]]) -> None:
        self.cells = found
        self._universe = universe
        self._done: dict[str, tuple[MetricSpec, Estimand | None]] = {}

    def __getitem__(self, name: str) -> tuple[MetricSpec, Estimand | None]:
        if name not in self._done:
            c = self.cells[name]
            self._done[name] = (c.spec, estimand(c, self._universe(name)))
        return self._done[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.cells)

    def __len__(self) -> int:
        return len(self.cells)


def estimands(per_model: Mapping[str, Sequence[Scope]]) -> dict[str, ModelEstimands]:
    """model -> cell name -> (spec, estimand) over every model's scopes (computed when asked for),
    the F1 label universe of a cell shared by every model (their paired tests compare like with like)."""
    found = {model: {c.name: c for c in cells(scopes)} for model, scopes in per_model.items()}
    universes: dict[str, frozenset[str]] = {}

    def universe(name: str) -> frozenset[str]:
        if name not in universes:
            shared: frozenset[str] = frozenset()
            for model_cells in found.values():
                c = model_cells.get(name)
                if c is not None and isinstance(c.spec.statistic, F1) and len(rows := c.rows):
                    shared |= _shared(c.spec.statistic, rows)
            universes[name] = shared
        return universes[name]

    return {model: ModelEstimands(model_cells, universe) for model, model_cells in found.items()}


def outcomes(cell: Cell) -> pd.DataFrame | None:
    """Each main-pass row's outcome of the cell's metric, a frame of OUTCOME_COLUMNS (prompt_id,
    sample_index, unit: the bootstrap's cluster, outcome: 1/0 or graded, NaN where not scored,
    metric: the spec's key, binary); None where the metric has no per-item outcome."""
    import pandas as pd

    rows = cell.rows
    found = cell.spec.item_outcome(rows) if len(rows) else None
    if found is None:
        return None
    _, units = cell.spec.resampling.units(rows)
    frame = pd.DataFrame(
        {
            "prompt_id": rows["prompt_id"].astype(str).to_numpy(),
            "sample_index": rows["sample_index"].astype(int).to_numpy(),
            "unit": [f"{cell.scope.name}/{u}" for u in units] if cell.scope.name != cell.scope.setting else units,
            "outcome": np.asarray(found, dtype=float),
        }
    )
    frame["metric"] = cell.spec.key
    frame["binary"] = cell.spec.binary
    return frame[list(OUTCOME_COLUMNS)]


def headline_outcomes(scopes: Sequence[Scope], setting: str) -> pd.DataFrame | None:
    """The per-item outcomes of the headline specs in the (non-breakdown) scopes of `setting`,
    one frame; None where none has one."""
    import pandas as pd

    frames = [
        found
        for c in cells(s for s in scopes if s.setting == setting and not s.breakdown)
        if c.spec.headline and (found := outcomes(c)) is not None
    ]
    return pd.concat(frames, ignore_index=True) if frames else None


def paper_cells(
    benchmark: str, body: Mapping[str, object], scopes: Sequence[Scope], task: str | None, setting: str
) -> dict[str, float | None]:
    """The paper cells (specs with `paper`) of one setting, read from a metrics body: "<key>",
    or "<task>/<key>" where the setting has a scope per task and no task is asked for."""
    from ..core.errors import IdiombenchError

    mine = [s for s in scopes if s.setting == setting]
    if not mine:
        scored = sorted({s.setting for s in scopes})
        raise IdiombenchError(f"{benchmark}: no scores for setting {setting!r} (scored: {', '.join(scored) or 'none'})")
    per_task = len({s.task for s in mine if not s.breakdown}) > 1
    if task is not None:
        chosen = [s for s in mine if s.task == task and not s.breakdown] or [s for s in mine if s.task == task]
        if not chosen and all(s.task is None for s in mine):  # a setting's scopes not split by task
            chosen = [s for s in mine if not s.breakdown]
        if not chosen:
            tasks = sorted({s.task for s in mine if s.task is not None})
            raise IdiombenchError(
                f"{benchmark}/{setting}: no scores for task {task!r} (scored: {', '.join(tasks) or 'none'})"
            )
        return {c.spec.key: read(body, c.path) for c in cells(chosen[:1]) if c.spec.paper}
    chosen = [s for s in mine if not s.breakdown]
    return {
        (f"{c.scope.task}/{c.spec.key}" if per_task else c.spec.key): read(body, c.path)
        for c in cells(chosen)
        if c.spec.paper
    }


def headline(body: Mapping[str, object], specs: Sequence[MetricSpec]) -> dict[str, float]:
    """The headline specs' values of every setting of a metrics body, as "<setting>/<key>" (or
    "<setting>/<task>.<key>" where a setting's metrics are per task): the MLflow parent run's
    metrics and results/headline.json."""
    keys = {spec.key for spec in specs if spec.headline}
    out: dict[str, float] = {}
    settings = body.get("settings")
    for setting, entry in sorted(settings.items()) if isinstance(settings, Mapping) else []:
        metrics = entry.get("metrics") if isinstance(entry, Mapping) else None
        for name, found in sorted(metrics.items()) if isinstance(metrics, Mapping) else []:
            inner = found.items() if isinstance(found, Mapping) else [(None, found)]
            for key, number in inner:
                flat = name if key is None else f"{name}.{key}"
                if (key or name) in keys and isinstance(number, (int, float)) and not isinstance(number, bool):
                    out[f"{setting}/{flat}"] = float(number)
    return out
