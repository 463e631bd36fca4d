"""Chengyu-Bench's estimands (report.uncertainty): table 7's cells.

Each is the aggregate's share over the setting's main-pass rows of its primary task: accuracy,
Acc.@k (mean of hit_at_k) and Valid Idiom (valid / predicted idioms, a ratio of sums). The
resampling unit is the PASSAGE for ChID (the score tables' `passage`: blanks of one passage
are drawn together; FewCLUE's test_public has one line per passage) and the item for the
connotation and appropriateness tasks. Rows of one unit (several samples) are resampled together.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from ... import statistics as st
from ...scoring import option_order
from .aggregate import MAIN_PASS
from .metrics import KS
from .score import setting_kind

if TYPE_CHECKING:
    from ..contexts import UncertaintyContext
    from .config import ChengyuBenchConfig


def unit_ids(rows: pd.DataFrame) -> tuple[str, list[str]]:
    """(unit name, each row's unit id): the passage for ChID rows, else the item."""
    passages = rows["passage"]
    if passages.notna().all():
        return "passage", passages.astype(str).tolist()
    return "item", rows["item_id"].astype(str).tolist()


def model_estimands(scores: dict[str, pd.DataFrame], body: Mapping[str, Any]) -> dict[str, st.Estimand]:
    out: dict[str, st.Estimand] = {}
    for setting, frame in sorted(scores.items()):
        task = (body.get("settings", {}).get(setting) or {}).get("task")
        if task is None or not len(frame):
            continue
        rows = frame[(frame["pass"] == MAIN_PASS) & (frame["task"] == task)]
        if rows.empty:
            continue
        unit, ids = unit_ids(rows)
        if setting_kind(setting) in ("label", "choice"):
            out[f"{setting}/accuracy"] = st.mean(ids, rows["correct"].astype(float), unit=unit)
            rotated = option_order.pass_rows(frame[frame["task"] == task])
            if rotated is not None:  # the option-order pass: resampled over items
                out.update(option_order.estimands(rotated, f"{setting}/"))
            continue
        for k in KS:
            out[f"{setting}/acc_at_{k}"] = st.mean(ids, rows[f"hit_at_{k}"].astype(float), unit=unit)
        out[f"{setting}/valid_idiom"] = st.ratio(
            ids, rows["n_valid"].astype(float), rows["n_predicted"].astype(float), unit=unit
        )
    return out


def estimands(ctx: UncertaintyContext[ChengyuBenchConfig]) -> dict[str, dict[str, st.Estimand]]:
    """The Benchmark.estimands hook: model -> "<setting>/<metric>" -> estimand (share, not percent)."""
    return {model: model_estimands(scores, ctx.metrics.get(model, {})) for model, scores in ctx.scores.items()}
