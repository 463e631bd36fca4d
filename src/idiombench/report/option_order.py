"""The option-order robustness table and figure a benchmark section adds when its option-order
pass ran (scoring/option_order.py computes the numbers; docs/METRICS.md#7-option-order-robustness).

A benchmark hands one `Entry` per (model, task row): the metrics and counts its aggregate wrote
and the name of the scope its option-order cells are in, so every number carries its
bootstrap interval (resampled over items) in the report.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..metrics.spec import specs_by_key
from ..scoring.option_order import ACCURACIES, BIAS, PREFIX, OptionOrderCounts, specs
from .tables import Cell, CellRef, Figure, Table, metric_cell

SPECS = specs_by_key(specs())

COLUMNS = {
    "accuracy_as_released": "As released",
    "rotation_accuracy": "Mean over rotations",
    "circular_accuracy": "CircularEval",
}
CAPTION = (
    "Every choice item asked under each cyclic rotation of its options (the option-order pass). As released: "
    "accuracy on the prompts as released (rotation 0); Mean over rotations: plain accuracy over every "
    "(item, rotation); CircularEval: items answered correctly under every rotation; Position bias: the share of "
    "the most-picked shown position among the answers that picked an option (chance 1/n, a fixed-position "
    "picker 1.00). Accuracies in percent."
)


@dataclass(frozen=True)
class Entry:
    model: str  # the model's key (CellRef) ...
    display: str  # ... and its name in the table
    label: str  # the task row, e.g. "Task 1 (mcq)", "IED 0-shot"
    metrics: Mapping[str, float | None]  # option_order.<metric> -> value (the aggregate's)
    counts: OptionOrderCounts  # scoring.option_order.summarise's counts
    ref_prefix: str  # the cells' scope name + "/", e.g. "mcq/" (cell names: <prefix>option_order.<metric>)


def entry(model: str, display: str, label: str, setting: Mapping[str, Any] | None, ref_prefix: str) -> Entry | None:
    """The entry of one setting's metrics body (metrics, counts.option_order) when its option-order
    pass ran, else None."""
    if not setting:
        return None
    counts = setting["counts"].get("option_order")  # every setting of a metrics body has counts
    if not counts:
        return None
    return Entry(model, display, label, setting["metrics"], counts, ref_prefix)


def part(part_id: str, subject: str, entries: list[Entry], directory: Path) -> tuple[Table | None, Figure | None]:
    """A section's option-order table and figure (`<part_id>.*`), None each when the pass did not run."""
    order_table = table(part_id, f"{subject}: option-order robustness (CircularEval; not in the paper)", entries)
    if order_table is None:
        return None, None
    return order_table, figure(part_id, f"{subject}: picks by shown position", entries, directory)


def table(table_id: str, title: str, entries: list[Entry], marks: str = "") -> Table | None:
    if not entries:
        return None
    rows = []
    for e in entries:
        row = [Cell(e.display), Cell(e.label), Cell(str(e.counts.get("options", "")))]
        for metric in ACCURACIES:
            key = PREFIX + metric
            row.append(
                metric_cell(e.metrics.get(key), SPECS[key].unit, 1, marks, CellRef(e.model, f"{e.ref_prefix}{key}"))
            )
        row.append(Cell(e.counts.get("most_picked_position") or "—"))
        key = PREFIX + BIAS
        row.append(metric_cell(e.metrics.get(key), SPECS[key].unit, 2, marks, CellRef(e.model, f"{e.ref_prefix}{key}")))
        row.append(Cell(f"{e.counts.get('items', 0):,}"))
        rows.append(row)
    incomplete = sum(e.counts.get("items_missing_a_rotation", 0) for e in entries)
    notes = (
        [f"{incomplete} item(s) lack a rotation (a failed or skipped request): not right under every rotation."]
        if incomplete
        else []
    )
    return Table(
        table_id,
        title,
        ["Model", "Task", "Options", *COLUMNS.values(), "Most picked", "Position bias", "Items"],
        rows,
        notes,
        caption=CAPTION,
    )


def figure(figure_id: str, title: str, entries: list[Entry], directory: Path) -> Figure | None:
    """The share of picks per shown position, per model, one panel per task row; chance dashed."""
    entries = [e for e in entries if sum((e.counts.get("picks_by_position") or {}).values())]
    if not entries:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(dict.fromkeys(e.label for e in entries))
    models = list(dict.fromkeys(e.display for e in entries))
    columns = min(3, len(labels))
    rows = -(-len(labels) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(3.4 * columns, 2.6 * rows + 0.6), sharey=True, squeeze=False)
    width = 0.8 / len(models)
    for ax in axes.flat[len(labels) :]:
        ax.set_visible(False)
    for ax, label in zip(axes.flat, labels, strict=False):
        n = 0
        for index, model in enumerate(models):
            entry = next((e for e in entries if e.label == label and e.display == model), None)
            if entry is None:
                continue
            picks = entry.counts["picks_by_position"]
            n = max(n, len(picks))
            total = sum(picks.values())
            ax.bar(
                [p + (index - (len(models) - 1) / 2) * width for p in range(len(picks))],
                [v / total for v in picks.values()],
                width,
                label=model,
            )
            ax.set_xticks(range(len(picks)), list(picks))
        if n:
            ax.axhline(1.0 / n, color="black", linestyle="--", linewidth=0.8)
        ax.set_title(label, fontsize=9)
        ax.set_ylim(0, 1)
        ax.set_xlabel("shown position")
    for row in axes:
        row[0].set_ylabel("share of picks")
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.1 / rows, 1, 1))
    fig.legend(handles, names, loc="lower center", ncol=min(len(models), 4), fontsize=7, frameon=False)
    path = Path(directory) / f"{figure_id}.png"
    fig.savefig(path, dpi=150, metadata={"Software": None})
    plt.close(fig)
    return Figure(
        figure_id,
        title,
        path,
        caption="Share of each shown position among the options picked under the "
        "option-order pass (every rotation of every item); dashed: chance (1/n).",
    )
