"""Intervals and significance marks for a section's tables (params report.uncertainty).

A cell that names a metric cell (`tables.CellRef`: the model and "<scope>/<key>") gets
`value ±half-width` and its bounds, from the metric's spec evaluated on the model's score
tables (metrics.evaluate.estimands: the same formula as the value the cell prints, resampled);
the value the metrics JSON holds must be the one its score tables give, else the report stops
and says which (never an interval silently dropped). A cell without an interval says why: its
spec has none (its reason), too few units, or no per-unit data. In each comparison group (one
table column, one cell name: the same metric on the same data, one cell per model) the best
model is marked ▲ and those not significantly different from it ≈ (a paired test per pair of
models, Benjamini-Hochberg across the table's comparisons). Two companion tables per table
carry the bounds and the p / q values (reports/tables only).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np

from ..benchmarks.registry import get_benchmark
from ..core.errors import IdiombenchError
from ..metrics import evaluate
from ..report.tables import Cell, CellRef, Section, Table
from ..statistics import Comparison, Estimand, Interval, benjamini_hochberg, compare, interval, replicates
from ..statistics.config import UncertaintyConfig
from .inputs import score_tables

if TYPE_CHECKING:
    import pandas as pd

BEST, TIED = "▲", "≈"
TEST_NAMES = {
    "paired-bootstrap": "paired bootstrap test (the same resamples for both models; replicates of the difference "
    "centred on the observed difference)",
    "paired-permutation": "paired permutation test (each unit's outputs swapped between the two models with "
    "probability 1/2)",
}


@dataclass(frozen=True)
class Target:
    """What stands behind a referenced cell: its estimand (None: no per-unit data), or why its
    metric has no interval (the spec's reason)."""

    estimand: Estimand | None
    no_interval: str | None = None


Estimands = Mapping[str, Mapping[str, Target]]  # model -> cell name -> what stands behind it


class Targets(Mapping[str, Target]):
    """One model's cells -> what stands behind them (each estimand computed when first asked for);
    `cells`: the cells themselves (their specs and scopes), None for a benchmark without specs."""

    def __init__(self, cells: evaluate.ModelEstimands) -> None:
        self._cells = cells
        self.cells = cells.cells

    def __getitem__(self, name: str) -> Target:
        spec, estimand = self._cells[name]
        return Target(estimand, spec.no_interval)

    def __iter__(self) -> Iterator[str]:
        return iter(self._cells)

    def __len__(self) -> int:
        return len(self._cells)


def section_estimands(
    params: Any, benchmark: str, metrics: Mapping[str, Mapping[str, Any]]
) -> dict[str, Mapping[str, Target]]:
    """What stands behind the benchmark's cells for every scored model, from results/scores."""
    return spec_targets(
        benchmark, params.benchmark(benchmark), {model: score_tables(benchmark, model) for model in metrics}
    )


def spec_targets(
    benchmark: str, config: object, scores: Mapping[str, Mapping[str, pd.DataFrame]]
) -> dict[str, Mapping[str, Target]]:
    """Each model's cells -> their estimands, from its score tables through the benchmark's
    metric specs (every model's at once: an F1's label universe is shared across models)."""
    bench = get_benchmark(benchmark)
    found = evaluate.estimands({model: bench.metric_scopes(dict(tables), config) for model, tables in scores.items()})
    return {model: Targets(cells) for model, cells in found.items()}


class Replicates:
    """Bootstrap replicates per (model, name), drawn once per unit set: every estimand on the
    same units is computed in one pass over the same resamples (which pairs them)."""

    def __init__(self, config: UncertaintyConfig) -> None:
        self.config = config
        self._done: dict[tuple[str, str], np.ndarray] = {}

    def prepare(self, wanted: list[tuple[str, str, Estimand]]) -> None:
        by_units: dict[tuple[str, tuple[str, ...]], list[tuple[str, str, Estimand]]] = {}
        for model, name, estimand in wanted:
            if (model, name) not in self._done:
                by_units.setdefault((estimand.unit, tuple(estimand.ids.tolist())), []).append((model, name, estimand))
        for group in by_units.values():
            reps = replicates([e for _, _, e in group], self.config.resamples, self.config.seed)
            for (model, name, _), row in zip(group, reps, strict=True):
                self._done[(model, name)] = row

    def __getitem__(self, key: tuple[str, str]) -> np.ndarray:
        return self._done[key]


@dataclass
class Member:
    row: int
    ref: CellRef
    estimand: Estimand
    interval: Interval
    scale: float  # statistic -> printed number
    digits: int  # the printed number's decimals


def decimals(text: str) -> int:
    match = re.search(r"-?\d+(?:\.(\d+))?", text)
    return len(match.group(1) or "") if match else 0


def row_label(table: Table, row: list[Cell]) -> str:
    """The row's identifying cells besides the model (those before the first number with an estimand)."""
    parts = []
    for column, c in zip(table.columns, row, strict=True):
        if c.ref is not None:
            break
        if column != "Model":
            parts.append(c.text)
    return " / ".join(parts) or "—"


FloorCells = Callable[[str, str, str, float, float], list[Cell]]  # (model A, model B, estimand, A − B, scale)


GroupKey = tuple[int, str]  # a comparison group: (table column, estimand name)
Pair = tuple[GroupKey, Member, Member, Comparison]  # a paired test within one group


def _groups(table: Table) -> dict[GroupKey, list[tuple[int, CellRef]]]:
    """The table's referenced cells (row, ref) by comparison group, in table order."""
    groups: dict[GroupKey, list[tuple[int, CellRef]]] = {}
    for r, row in enumerate(table.rows):
        for col, c in enumerate(row):
            if c.ref is not None:
                groups.setdefault((col, c.ref.name), []).append((r, c.ref))
    return groups


def _prepare_replicates(
    groups: Mapping[GroupKey, list[tuple[int, CellRef]]],
    estimands: Estimands,
    config: UncertaintyConfig,
    reps: Replicates,
) -> set[str]:
    """Draw the replicates of every cell with enough units; return the resampling units the
    table's cells name (for the footnote)."""
    wanted: list[tuple[str, str, Estimand]] = []
    units_named: set[str] = set()
    for refs in groups.values():
        for _, ref in refs:
            target = estimands.get(ref.model, {}).get(ref.name)
            estimand = target.estimand if target is not None else None
            if estimand is not None:
                units_named.add(estimand.unit)
            if estimand is not None and estimand.n >= config.min_units:
                wanted.append((ref.model, ref.name, estimand))
    reps.prepare(wanted)
    return units_named


@dataclass
class _Resolved:
    """A group's cells that get an interval, and the counts of those that do not."""

    members: list[Member]
    missing: int = 0  # no per-unit data, or an interval not defined on resamples
    too_few: int = 0  # fewer units than report.uncertainty.min_units
    reasons: dict[str, int] = field(default_factory=dict)  # a spec's reason for no interval -> cells


def check_value(c: Cell, ref: CellRef, value: float) -> None:
    """A metric cell's stored number must be its score tables' value (the same formula): else the
    metrics JSON is not the aggregate of these score tables, and the report says so."""
    assert c.number is not None and c.unit is not None
    printed = value * c.unit.scale
    tolerance = (0.5 * 10.0**-c.unit.digits if c.unit.digits is not None else 0.0) + 1e-9 * max(1.0, abs(printed))
    if math.isnan(value) or abs(c.number - printed) > tolerance:
        raise IdiombenchError(
            f"{ref.model}, {ref.name}: its metrics file holds {c.number!r} but its score tables give "
            f"{printed!r}: the metrics file is not the aggregate of these scores "
            f"(run `idiombench aggregate` again for this model)"
        )


def _resolve_group(
    table: Table,
    col: int,
    cells: list[tuple[int, CellRef]],
    estimands: Estimands,
    config: UncertaintyConfig,
    reps: Replicates,
) -> _Resolved:
    """The interval of each of a group's cells whose estimand reproduces the printed number."""
    resolved = _Resolved([])
    for r, ref in cells:
        c = table.rows[r][col]
        target = estimands.get(ref.model, {}).get(ref.name)
        if target is not None and target.estimand is None and target.no_interval is not None:
            resolved.reasons[target.no_interval] = resolved.reasons.get(target.no_interval, 0) + 1
            continue
        estimand = target.estimand if target is not None else None
        value = estimand.value() if estimand is not None else math.nan
        if estimand is not None and c.unit is not None:
            check_value(c, ref, value)
        elif estimand is None or math.isnan(value) or not _close(value * c.scale, c.text):
            resolved.missing += 1
            continue
        if estimand is None:
            resolved.missing += 1
            continue
        if estimand.n < config.min_units:
            resolved.too_few += 1
            continue
        found = interval(value, reps[(ref.model, ref.name)], config.confidence)
        if found is None:
            resolved.missing += 1
            continue
        digits = c.decimals if c.unit is not None else decimals(c.text)
        resolved.members.append(Member(r, ref, estimand, found, c.scale, digits))
    return resolved


def _write_intervals(
    table: Table, col: int, members: list[Member], display_name: Callable[[str], str]
) -> list[list[Cell]]:
    """Print `value ±half-width` and the bounds into the members' cells; return their rows of
    the intervals table."""
    rows: list[list[Cell]] = []
    for member in members:
        c = table.rows[member.row][col]
        scale, iv, digits = member.scale, member.interval, member.digits
        table.rows[member.row][col] = replace(
            c, text=f"{c.text} ±{iv.half_width * scale:.{digits}f}", low=iv.low * scale, high=iv.high * scale
        )
        rows.append(
            [
                Cell(table.columns[col]),
                Cell(row_label(table, table.rows[member.row])),
                Cell(display_name(member.ref.model)),
                Cell(f"{iv.value * scale:.{digits + 1}f}"),
                Cell(f"{iv.low * scale:.{digits + 1}f}"),
                Cell(f"{iv.high * scale:.{digits + 1}f}"),
                Cell(f"{member.estimand.n} {member.estimand.unit}s"),
            ]
        )
    return rows


def _compare_pairs(key: GroupKey, members: list[Member], config: UncertaintyConfig, reps: Replicates) -> list[Pair]:
    """A paired test per pair of the group's members (on the shared replicates where they
    resample the same units)."""
    pairs: list[Pair] = []
    for a, b in combinations(members, 2):
        same = a.estimand.same_units(b.estimand)
        result = compare(
            a.ref.model,
            a.estimand,
            b.ref.model,
            b.estimand,
            config.test,
            config.resamples,
            config.seed,
            (reps[(a.ref.model, a.ref.name)], reps[(b.ref.model, b.ref.name)]) if same else None,
        )
        pairs.append((key, a, b, result))
    return pairs


def _comparison_rows(
    table: Table,
    pending: list[Pair],
    config: UncertaintyConfig,
    display_name: Callable[[str], str],
    floor: tuple[list[str], FloorCells, str] | None,
) -> tuple[dict[tuple[GroupKey, str, str], float], list[list[Cell]]]:
    """Benjamini-Hochberg across the table's tests: the q value of each (group, model, model)
    either way round, and the rows of the comparisons table."""
    q_values = benjamini_hochberg([c.p for *_, c in pending])
    q_of: dict[tuple[GroupKey, str, str], float] = {}
    rows: list[list[Cell]] = []
    for (key, a, b, result), q in zip(pending, q_values, strict=True):
        q_of[(key, a.ref.model, b.ref.model)] = q_of[(key, b.ref.model, a.ref.model)] = float(q)
        digits = a.digits
        rows.append(
            [
                Cell(table.columns[key[0]]),
                Cell(row_label(table, table.rows[a.row])),
                Cell(display_name(a.ref.model)),
                Cell(display_name(b.ref.model)),
                Cell(f"{result.difference * a.scale:+.{digits + 1}f}"),
                Cell(f"{result.units} {a.estimand.unit}s"),
                Cell(_p_text(result.p)),
                Cell(_p_text(float(q))),
                Cell("yes" if not math.isnan(q) and q < config.alpha else "no"),
                Cell(result.note),
            ]
            + (floor[1](a.ref.model, b.ref.model, a.ref.name, result.difference, a.scale) if floor is not None else [])
        )
    return q_of, rows


def _companion_tables(
    table: Table,
    config: UncertaintyConfig,
    interval_rows: list[list[Cell]],
    comparison_rows: list[list[Cell]],
    floor: tuple[list[str], FloorCells, str] | None,
) -> list[Table]:
    """The intervals table and the comparisons table of `table` (reports/tables only)."""
    return [
        Table(
            f"{table.table_id}_intervals",
            f"{table.title}: {config.confidence:.0%} bootstrap intervals",
            ["Column", "Row", "Model", "Value", "Low", "High", "Resampled"],
            interval_rows,
        ),
        Table(
            f"{table.table_id}_comparisons",
            f"{table.title}: paired tests ({config.test}, BH over the table)",
            ["Column", "Row", "Model A", "Model B", "A − B", "Units", "p", "q (BH)", f"q < {config.alpha}", "Note"]
            + (floor[0] if floor is not None else []),
            comparison_rows,
            footnotes=[floor[2]] if floor is not None else [],
        ),
    ]


def annotate_table(
    table: Table,
    estimands: Estimands,
    config: UncertaintyConfig,
    reps: Replicates,
    display_name: Callable[[str], str],
    floor: tuple[list[str], FloorCells, str] | None = None,
) -> list[Table]:
    """Rewrite the table's referenced cells in place; return its companion tables."""
    groups = _groups(table)
    if not groups:
        return []
    units_named = _prepare_replicates(groups, estimands, config, reps)

    missing = too_few = 0
    reasons: dict[str, int] = {}
    interval_rows: list[list[Cell]] = []
    pending: list[Pair] = []
    resolved: dict[GroupKey, list[Member]] = {}
    for (col, name), cells in sorted(groups.items()):
        group = _resolve_group(table, col, cells, estimands, config, reps)
        missing += group.missing
        too_few += group.too_few
        for reason, count in group.reasons.items():
            reasons[reason] = reasons.get(reason, 0) + count
        resolved[(col, name)] = group.members
        interval_rows += _write_intervals(table, col, group.members, display_name)
        pending += _compare_pairs((col, name), group.members, config, reps)

    q_of, comparison_rows = _comparison_rows(table, pending, config, display_name, floor)
    for key, members in resolved.items():
        _mark_best(table, key, members, q_of, config.alpha)

    if not interval_rows:
        if too_few or missing or not reasons:
            table.footnotes.append(
                f"No interval: every cell rests on fewer than {config.min_units} {unit_names(units_named)} "
                "(the bootstrap's resampling unit; report.uncertainty.min_units)."
                if too_few and not missing
                else "No interval: no per-unit scores stand behind these numbers (results/scores)."
            )
        table.footnotes += [f"No interval for {count} cell(s): {reason}." for reason, count in sorted(reasons.items())]
        return []
    units_used = {member.estimand.unit for members in resolved.values() for member in members}
    table.footnotes.append(
        footnote(
            table,
            config,
            len(pending),
            units_used,
            missing,
            single=all(len(m) < 2 for m in resolved.values()),
            too_few=too_few,
        )
    )
    table.footnotes += [f"No interval for {count} cell(s): {reason}." for reason, count in sorted(reasons.items())]
    return _companion_tables(table, config, interval_rows, comparison_rows, floor)


def _mark_best(
    table: Table,
    key: tuple[int, str],
    members: list[Member],
    q_of: Mapping[tuple[tuple[int, str], str, str], float],
    alpha: float,
) -> None:
    if len(members) < 2:
        return
    sign = 1.0 if members[0].estimand.higher_is_better else -1.0
    top = max(sign * m.interval.value for m in members)
    best = [m for m in members if math.isclose(sign * m.interval.value, top, rel_tol=1e-12, abs_tol=1e-12)]
    leader = best[0]
    for member in members:
        c = table.rows[member.row][key[0]]
        if member in best:
            mark = BEST
        else:
            q = q_of.get((key, leader.ref.model, member.ref.model), math.nan)
            mark = TIED if not math.isnan(q) and q >= alpha else ""
        if mark:
            table.rows[member.row][key[0]] = replace(c, marks=c.marks + mark)


def unit_names(units: set[str]) -> str:
    return " / ".join(f"{u}s" for u in sorted(units)) or "units"


def footnote(
    table: Table,
    config: UncertaintyConfig,
    comparisons: int,
    units: set[str],
    missing: int,
    single: bool,
    too_few: int = 0,
) -> str:
    text = (
        f"±: half-width of the {config.confidence:.0%} percentile interval of a paired bootstrap "
        f"({config.resamples:,} seeded resamples of the {unit_names(units)}, each drawn with all of its rows, "
        f"seed {config.seed}; the statistic is recomputed on each resample); bounds in "
        f"{table.table_id}_intervals and the CSV's _lo / _hi columns."
    )
    if single:
        text += " One model per comparison: no test, no best mark."
    else:
        text += (
            f" {BEST}: best in its column (per setting); {TIED}: not significantly different from {BEST} "
            f"({TEST_NAMES[config.test]}, two-sided; Benjamini-Hochberg over the table's {comparisons} "
            f"comparisons, q ≥ {config.alpha}); p and q in {table.table_id}_comparisons."
        )
    if missing:
        text += f" {missing} numbered cell(s) without ±: no per-unit data behind them (or not defined on resamples)."
    if too_few:
        text += (
            f" {too_few} numbered cell(s) without ± and outside the tests: fewer than {config.min_units} "
            f"{unit_names(units)} behind them (report.uncertainty.min_units)."
        )
    return text


def _number(text: str) -> float | None:
    match = re.match(r"\s*([-+]?\d+(?:\.\d+)?)", text)
    return float(match.group(1)) if match else None


def _close(value: float, text: str) -> bool:
    """Whether `value` prints as `text` does: within half a unit of its last digit."""
    shown = _number(text)
    return shown is not None and abs(value - shown) <= 0.5 * 10 ** -decimals(text) + 1e-9


def _p_text(p: float) -> str:
    return "—" if math.isnan(p) else f"{p:.4f}"


def annotate_section(
    section: Section,
    estimands: Estimands,
    config: UncertaintyConfig,
    display_name: Callable[[str], str],
    floor: tuple[list[str], FloorCells, str] | None = None,
) -> list[Table]:
    reps = Replicates(config)
    companions: list[Table] = []
    for table in section.tables:
        companions += annotate_table(table, estimands, config, reps, display_name, floor)
    return companions
