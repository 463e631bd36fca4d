"""SemanticQA's estimands (report.uncertainty): tables 3 and 4 and the LCC F1 table, over items.

As the aggregate (aggregate.atomic_metrics) computes them, per atomic setting and task over
the main-pass rows: ACC / ACC_s = mean of `correct` (rows with a gold); macro-, micro- and
weighted-F1 of LCC from per-resample confusion counts, with one label set per (setting, task)
for every model (the gold labels and every model's recognised predictions: a label a model
never predicts still counts, as it does in the aggregate when it is a gold label); METEOR,
ROUGE-L, BERTScore = mean of the column over the rows with a gold. Sequential settings have no
estimands (their tables show no interval). The option-order pass's cells of IED and NCC
(scoring/option_order.py) resample items, each with its rotations.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from ... import statistics as st
from ...scoring import option_order
from ..contexts import outcome_frame
from .adapters import ADAPTERS
from .aggregate import INTERPRETATION_COLUMNS, MAIN_PASS, PRIMARY, recognised_label
from .score import sequential_setting

if TYPE_CHECKING:
    from ..contexts import UncertaintyContext
    from .config import SemanticQAConfig

F1_NAMES = {"macro-F1": "macro", "micro-F1": "micro", "weighted-F1": "weighted"}


def _has_gold(frame: pd.DataFrame) -> pd.Series:
    return ~frame["flags"].apply(lambda f: "no_gold" in list(f))


def _predicted(frame: pd.DataFrame, count_format_deviations: bool) -> list[str | None]:
    return [
        recognised_label(p, ok, f, count_format_deviations)
        for p, ok, f in zip(frame["parsed"], frame["ok"], frame["flags"], strict=True)
    ]


def estimands(ctx: UncertaintyContext[SemanticQAConfig]) -> dict[str, dict[str, st.Estimand]]:
    """The Benchmark.estimands hook: model -> "<setting>/<task>/<metric>" -> estimand (a share;
    the report prints it x 100)."""
    deviations = ctx.config.score.count_format_deviations
    main = {
        model: {s: f[f["pass"] == MAIN_PASS] for s, f in scores.items() if not sequential_setting(s, ctx.config.score)}
        for model, scores in ctx.scores.items()
    }
    labels: dict[tuple[str, str], set[str]] = {}
    for frames in main.values():
        for setting, frame in frames.items():
            for task, group in frame.groupby("task"):
                if ADAPTERS[task].kind == "label":
                    scored = group[group["correct"].notna()]
                    found = labels.setdefault((setting, task), set())
                    found |= {str(g) for g in scored["gold"]} | {
                        p for p in _predicted(scored, deviations) if p is not None
                    }
    out: dict[str, dict[str, st.Estimand]] = {}
    for model, frames in main.items():
        mine = out.setdefault(model, {})
        for setting in sorted(frames):
            for task, group in sorted(ctx.scores[model][setting].groupby("task")):
                rotated = option_order.pass_rows(group)
                if rotated is not None:
                    mine.update(option_order.estimands(rotated, f"{setting}/{task}/"))
        for setting, frame in sorted(frames.items()):
            for task, group in sorted(frame.groupby("task")):
                kind = ADAPTERS[task].kind
                key = f"{setting}/{task}"
                if kind in ("mcq", "label", "extraction"):
                    mine[f"{key}/{PRIMARY[kind]}"] = st.mean(
                        group["item_id"].astype(str).tolist(), group["correct"].astype(float)
                    )
                    if kind == "label":
                        scored = group[group["correct"].notna()]
                        ids = scored["item_id"].astype(str).tolist()
                        gold = [str(g) for g in scored["gold"]]
                        predicted = _predicted(scored, deviations)
                        universe = sorted(labels[(setting, task)])
                        for name, average in F1_NAMES.items():
                            mine[f"{key}/{name}"] = st.f1(ids, gold, predicted, universe, average)
                    continue
                scored = group[_has_gold(group)]
                for name, column in INTERPRETATION_COLUMNS.items():
                    values = scored[column].astype(float)
                    if values.notna().any():
                        mine[f"{key}/{name}"] = st.mean(scored["item_id"].astype(str).tolist(), values)
    return out


def item_outcomes(frame: pd.DataFrame, setting: str, config: SemanticQAConfig) -> pd.DataFrame | None:
    """The Benchmark.item_outcomes hook, over items: `correct` (ACC / ACC_s) of the option, label
    and extraction tasks; ROUGE-L (graded) of the interpretation tasks. Sequential settings: none."""
    if sequential_setting(setting, config.score):
        return None
    rows = frame[frame["pass"] == MAIN_PASS]
    kinds = rows["task"].map(lambda task: ADAPTERS[task].kind)
    graded = kinds == "interpretation"
    rouge = rows["rouge_l"].astype(float).where(_has_gold(rows))
    outcome = rows["correct"].astype(float).where(~graded, rouge)
    metric = kinds.map(lambda kind: "ROUGE-L" if kind == "interpretation" else "ACC")
    return outcome_frame(rows, rows["task"].astype(str) + "/" + rows["item_id"].astype(str), outcome, metric, ~graded)
