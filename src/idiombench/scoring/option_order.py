"""The option-order pass's metrics (docs/METRICS.md#7-option-order-robustness), shared by the
benchmarks with choice tasks (G-IdiomAlign Task 1, ChID with candidates, SemanticQA IED/NCC).

The pass (`generate.extra.<pass>.rotate_options`) asks every choice item under each cyclic
rotation of its options (items.rotate: rotation r shows at position i the option released at
(i + r) mod n). From the pass's rows of one task, a frame with the columns

    item_id, rotation, correct (1/0; NaN: not scored, e.g. no gold), position (the shown
    position of the option picked, 0-based; NaN: no option read), n_options

this computes, over the scored items:

- accuracy_as_released: accuracy on rotation 0 (the prompts as released; with the main pass's
  sampling these are the main pass's answers);
- rotation_accuracy: plain accuracy averaged over every (item, rotation);
- circular_accuracy: OpenCompass's CircularEval, the share of items answered correctly under
  EVERY rotation (an item missing a rotation is not; counted);
- position_bias: the share of the most-picked shown position among the answers that picked an
  option (1/n when picks are spread evenly; 1.0 for a fixed-position picker).

Accuracies are percent in the metrics JSON; position_bias is a share (0-1). Each is a metric spec
(`specs`): its interval resamples the ITEM, each with all of its rotations.
"""

from __future__ import annotations

from typing import TypedDict

import numpy as np
import pandas as pd

from ..core.items import OPTION_LETTERS
from ..metrics.spec import MetricSpec, Resampling, Rows
from ..metrics.units import PERCENT, SCORE, Unit
from ..statistics.formulas import Custom, Features, Mean, Statistic, Summation, add, divide

PREFIX = "option_order."
ACCURACIES = ("accuracy_as_released", "rotation_accuracy", "circular_accuracy")
BIAS = "position_bias"
METRICS = (*ACCURACIES, BIAS)


def pass_rows(frame: pd.DataFrame) -> pd.DataFrame | None:
    """The option-order pass's rows of a score table: the pass that holds rotated prompts (its
    rotation-0 rows included), or None when no pass rotated any option."""
    if "rotation" not in frame.columns:
        return None
    passes = sorted(set(frame.loc[frame["rotation"] > 0, "pass"]))
    if not passes:
        return None
    return frame[frame["pass"].isin(passes)]


def _scored(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows["correct"].notna()]


def _per_item(scored: pd.DataFrame) -> pd.DataFrame:
    """Per item: whether every rotation is there and right (CircularEval)."""
    per = scored.groupby("item_id", sort=True).agg(
        rotations=("rotation", "nunique"), n=("n_options", "max"), worst=("correct", "min")
    )
    per["complete"] = per["rotations"] >= per["n"]
    per["strict"] = (per["complete"] & (per["worst"] >= 1.0)).astype(float)
    return per


def _picks(scored: pd.DataFrame, n: int) -> list[int]:
    positions = scored["position"].dropna().astype(int)
    return [int((positions == p).sum()) for p in range(n)]


def _rotated(frame: pd.DataFrame) -> pd.Series:
    """The rows of the option-order pass (the passes holding a rotated prompt) that were scored."""
    found = pass_rows(frame)
    keep = pd.Series(False, index=frame.index)
    if found is not None:
        keep[found.index] = True
    return keep & frame["correct"].notna() if "correct" in frame.columns else keep


ROWS = Rows(passes=None, where=_rotated)
ITEMS = Resampling("item", "item_id")


def _circular(rows: pd.DataFrame) -> Features:
    """Per item: 1 when it was answered right under every rotation (CircularEval)."""
    per_item = _per_item(rows)
    strict = per_item["strict"].to_numpy(dtype=float)
    values = np.column_stack([strict, np.ones(len(strict))])
    return Features(
        values,
        np.array([add(strict, Summation.EXACT), float(len(strict))]),
        "mean",
        per_item.index.astype(str).tolist(),
    )


def _mean_share(sums: np.ndarray, scale: float) -> np.ndarray:
    return divide(sums[:, 0], sums[:, 1]) * scale


def _picks_onehot(rows: pd.DataFrame) -> Features:
    n = int(rows["n_options"].max()) if len(rows) else 0
    positions = rows["position"].to_numpy(dtype=float)
    onehot = np.zeros((len(rows), n))
    answered = ~np.isnan(positions)
    onehot[np.flatnonzero(answered), positions[answered].astype(int)] = 1.0
    return Features(onehot, onehot.sum(axis=0), f"position_bias:{n}")


def _most_picked_share(sums: np.ndarray, scale: float) -> np.ndarray:
    total = sums.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, scale * sums.max(axis=1) / np.where(total > 0, total, 1.0), np.nan)


def specs(kinds: frozenset[str] | None = None) -> tuple[MetricSpec, ...]:
    """The pass's metrics (`option_order.<metric>` in a setting's metrics), for a benchmark's scopes
    of `kinds`: left out of the metrics body where the pass did not run; resampled over items."""

    def spec(key: str, label: str, statistic: Statistic, unit: Unit, higher_is_better: bool = True) -> MetricSpec:
        return MetricSpec(
            PREFIX + key,
            label,
            statistic,
            unit,
            higher_is_better=higher_is_better,
            rows=ROWS,
            kinds=kinds,
            resampling=ITEMS,
            paper=False,
            omit_empty=True,
        )

    percent = PERCENT.rounded(10)
    released = Mean("correct", where=lambda f: f["rotation"] == 0, summation=Summation.NUMPY)
    return (
        spec("accuracy_as_released", "As released", released, percent),
        spec("rotation_accuracy", "Mean over rotations", Mean("correct", summation=Summation.NUMPY), percent),
        spec("circular_accuracy", "CircularEval", Custom(_circular, _mean_share), percent),
        # a share of picks, printed as one (chance 1/n)
        spec(BIAS, "Position bias", Custom(_picks_onehot, _most_picked_share), SCORE.rounded(10), False),
    )


class OptionOrderCounts(TypedDict):
    """The counts of one task's option-order rows (a metrics body's `counts.option_order`)."""

    items: int
    rows: int
    options: int
    items_missing_a_rotation: int
    items_right_under_every_rotation: int
    rows_without_an_option: int
    rows_not_scored: int
    picks_by_position: dict[str, int]  # shown position (letter) -> answers that picked it
    most_picked_position: str | None  # ties joined by "/": "A/B/C/D" for picks spread evenly


def counts(rows: pd.DataFrame) -> OptionOrderCounts:
    """The counts of one task's option-order rows (the metrics are `specs()`)."""
    scored = _scored(rows)
    n = int(scored["n_options"].max()) if len(scored) else 0
    per_item = _per_item(scored)
    picks = _picks(scored, n)
    picked = sum(picks)
    return {
        "items": int(len(per_item)),
        "rows": int(len(scored)),
        "options": n,
        "items_missing_a_rotation": int((~per_item["complete"]).sum()),
        "items_right_under_every_rotation": int(per_item["strict"].sum()),
        "rows_without_an_option": int(scored["position"].isna().sum()),
        "rows_not_scored": int(len(rows) - len(scored)),
        "picks_by_position": {OPTION_LETTERS[p]: count for p, count in enumerate(picks)},
        # ties: every position picked most, e.g. "A/B/C/D" for picks spread evenly
        "most_picked_position": "/".join(OPTION_LETTERS[p] for p, c in enumerate(picks) if c == max(picks))
        if picked
        else None,
    }
