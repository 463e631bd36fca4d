"""G-IdiomAlign's estimands (report.uncertainty): tables 3 and 4, resampled over source IDIOMS.

An idiom is asked in several directions (one source idiom into up to 6 target languages in
Task 1, up to 11 in Task 2): those answers are not independent, so the bootstrap draws the
idiom with all of its items (the score tables' `idiom` column, `<language>:<idiom>`). The
reverse directions of one aligned pair (A -> B, B -> A) stay apart: tying them as well joins
29,294 of Task 2's 37,570 items into one cluster (the alignment graph is connected), which
leaves nothing to resample (docs/METRICS.md#6-intervals-and-significance).

As aggregate.py computes them from the main-pass rows: Task 1 accuracy per target group and
overall, micro (mean of `correct`) and macro (mean over directions of each direction's
accuracy), with and without the duplicate-option items; Task 2 MeanSim, Acc@t and EM, macro
over directions (a direction not drawn in a resample leaves that resample's macro mean, as it
would leave the aggregate). The With-gloss − No-gloss deltas have none (two settings). The
option-order pass's cells (scoring/option_order.py) resample items, each with its rotations.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from ... import statistics as st
from ...scoring import option_order
from .aggregate import ADDITIONAL_SUFFIX, GENERATION_CONDITIONS, OVERALL, main_pass, threshold_name
from .score import MCQ_SETTING
from .task1 import GROUPS

if TYPE_CHECKING:
    from ..contexts import UncertaintyContext
    from .config import GIdiomAlignConfig

IDIOM = "idiom"


def _accuracy(ids: list[str], rows: pd.DataFrame, kind: str) -> st.Estimand:
    values = rows["correct"].astype(float)
    if kind == "micro":
        return st.mean(ids, values, unit=IDIOM)
    return st.macro_mean(ids, values, rows["direction"].astype(str).tolist(), unit=IDIOM)


def mcq_estimands(frame: pd.DataFrame) -> dict[str, st.Estimand]:
    rows = main_pass(frame)
    out: dict[str, st.Estimand] = {}
    for prefix, part in (
        ("accuracy", rows),
        ("accuracy_without_duplicate_option", rows[~rows["duplicate_option"].astype(bool)]),
    ):
        for scope in (*GROUPS, OVERALL):
            chosen = part if scope == OVERALL else part[part["group"] == scope]
            if chosen.empty:
                continue
            ids = chosen[IDIOM].astype(str).tolist()
            for kind in ("macro", "micro"):
                out[f"{MCQ_SETTING}/{prefix}.{kind}.{scope}"] = _accuracy(ids, chosen, kind)
    return out


def generation_estimands(setting: str, rows: pd.DataFrame, thresholds: list[float]) -> dict[str, st.Estimand]:
    ids = rows[IDIOM].astype(str).tolist()
    directions = rows["direction"].astype(str).tolist()
    sims = rows["similarity"].astype(float)
    out = {f"{setting}/EM": st.macro_mean(ids, rows["exact_match"].astype(float), directions, unit=IDIOM)}
    if sims.notna().any():
        out[f"{setting}/MeanSim"] = st.macro_mean(ids, sims, directions, unit=IDIOM)
        for t in thresholds:
            out[f"{setting}/{threshold_name(t)}"] = st.macro_mean(
                ids, (sims >= t).astype(float).where(sims.notna()), directions, unit=IDIOM
            )
    return out


def estimands(ctx: UncertaintyContext[GIdiomAlignConfig]) -> dict[str, dict[str, st.Estimand]]:
    """The Benchmark.estimands hook: model -> "<setting>/<metric>" -> estimand (a share; printed x 100)."""
    thresholds = list(ctx.config.score.thresholds)

    def of_setting(setting: str, frame: pd.DataFrame) -> dict[str, st.Estimand]:
        out: dict[str, st.Estimand] = {}
        if setting == MCQ_SETTING:
            out.update(mcq_estimands(frame))
            rotated = option_order.pass_rows(frame)
            if rotated is not None:  # the option-order pass: resampled over items
                out.update(option_order.estimands(rotated, f"{MCQ_SETTING}/"))
        elif setting in GENERATION_CONDITIONS:
            rows = main_pass(frame)
            for additional, suffix in ((False, ""), (True, ADDITIONAL_SUFFIX)):
                part = rows[rows["additional"].astype(bool) == additional]
                if len(part):
                    out.update(generation_estimands(setting + suffix, part, thresholds))
        return out

    return st.by_model(ctx.scores, of_setting)
