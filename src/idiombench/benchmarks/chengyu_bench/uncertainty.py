"""Chengyu-Bench's estimands (report.uncertainty): table 7's cells over items.

Each is the aggregate's share over the setting's main-pass rows of its primary task: accuracy,
Acc.@k (mean of hit_at_k) and Valid Idiom (valid / predicted idioms, a ratio of sums). Rows
of one item (several samples) are resampled together.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ... import statistics as st
from .aggregate import MAIN_PASS
from .metrics import KS
from .score import setting_kind


def model_estimands(scores: dict[str, pd.DataFrame], body: dict[str, Any]) -> dict[str, st.Estimand]:
    out: dict[str, st.Estimand] = {}
    for setting, frame in sorted(scores.items()):
        task = (body.get("settings", {}).get(setting) or {}).get("task")
        if task is None or not len(frame):
            continue
        rows = frame[(frame["pass"] == MAIN_PASS) & (frame["task"] == task)]
        if rows.empty:
            continue
        ids = rows["item_id"].astype(str).tolist()
        if setting_kind(setting) in ("label", "choice"):
            out[f"{setting}/accuracy"] = st.mean(ids, rows["correct"].astype(float))
            continue
        for k in KS:
            out[f"{setting}/acc_at_{k}"] = st.mean(ids, rows[f"hit_at_{k}"].astype(float))
        out[f"{setting}/valid_idiom"] = st.ratio(ids, rows["n_valid"].astype(float), rows["n_predicted"].astype(float))
    return out


def estimands(ctx: Any) -> dict[str, dict[str, st.Estimand]]:
    """The Benchmark.estimands hook: model -> "<setting>/<metric>" -> estimand (share, not percent)."""
    return {model: model_estimands(scores, ctx.metrics.get(model, {})) for model, scores in ctx.scores.items()}
