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

Accuracies are percent in the metrics JSON; position_bias is a share (0-1). The estimands
resample the ITEM, each with all of its rotations.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .. import statistics as st
from ..core.items import OPTION_LETTERS

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


def _percent(values: pd.Series) -> float | None:
    return round(100.0 * float(values.mean()), 10) if len(values) else None


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


def summarise(rows: pd.DataFrame) -> tuple[dict[str, float | None], dict[str, Any]]:
    """(metrics, counts) of one task's option-order rows."""
    scored = _scored(rows)
    n = int(scored["n_options"].max()) if len(scored) else 0
    per_item = _per_item(scored)
    picks = _picks(scored, n)
    picked = sum(picks)
    metrics: dict[str, float | None] = {
        "accuracy_as_released": _percent(scored.loc[scored["rotation"] == 0, "correct"].astype(float)),
        "rotation_accuracy": _percent(scored["correct"].astype(float)),
        "circular_accuracy": _percent(per_item["strict"]),
        BIAS: round(max(picks) / picked, 10) if picked else None,
    }
    counts = {
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
    return metrics, counts


def estimands(rows: pd.DataFrame, prefix: str) -> dict[str, st.Estimand]:
    """`<prefix>option_order.<metric>` -> estimand (shares), every one resampling items."""
    scored = _scored(rows)
    if scored.empty:
        return {}
    ids = scored["item_id"].astype(str).tolist()
    correct = scored["correct"].astype(float).to_numpy()
    released = (scored["rotation"] == 0).to_numpy()
    per_item = _per_item(scored)
    out = {
        f"{prefix}{PREFIX}accuracy_as_released": st.mean(ids, correct, released),
        f"{prefix}{PREFIX}rotation_accuracy": st.mean(ids, correct),
        f"{prefix}{PREFIX}circular_accuracy": st.mean(
            per_item.index.astype(str).tolist(), per_item["strict"].to_numpy()
        ),
    }
    n = int(scored["n_options"].max())
    positions = scored["position"].to_numpy(dtype=float)
    onehot = np.zeros((len(scored), n))
    answered = ~np.isnan(positions)
    onehot[np.flatnonzero(answered), positions[answered].astype(int)] = 1.0

    def most_picked_share(sums: np.ndarray) -> np.ndarray:
        total = sums.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(total > 0, sums.max(axis=1) / np.where(total > 0, total, 1.0), np.nan)

    out[f"{prefix}{PREFIX}{BIAS}"] = st.custom(
        ids, onehot, most_picked_share, f"position_bias:{n}", higher_is_better=False
    )
    return out
