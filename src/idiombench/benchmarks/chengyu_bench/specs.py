"""Chengyu-Bench's metrics (paper table 7), each declared once, and where they are evaluated.

Percent of the setting's main-pass rows of its paper task (the one task it rendered, `chid`
for the ChID settings), stored rounded to 6 decimals: Accuracy (label and choice settings),
Acc.@k and Valid Idiom (ranked settings: valid / predicted distinct idioms, a ratio of sums),
and the format and parse-failure rates. Resampled over PASSAGES for ChID (the score tables'
`passage`: blanks of one passage are drawn together) and over items for the other tasks. Each
setting's other tasks (chid_train_few, chid_dev_few when built) are breakdowns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from ...metrics import ITEM, MAIN_PASS, PERCENT, MetricSpec, Resampling, Scope
from ...scoring import option_order
from ...statistics.formulas import Ratio
from .metrics import KS
from .score import setting_kind

if TYPE_CHECKING:
    import pandas as pd

    from .config import ChengyuBenchConfig

PAPER_TASK = {"chid_open_cloze": "chid", "chid_candidates": "chid"}
PERCENT6 = PERCENT.rounded(6)
PASSAGE = Resampling("passage", "passage", fallback=ITEM)
CLASSIFICATION = frozenset({"label", "choice"})
RANKED = frozenset({"ranked"})


def flag(column: str) -> Callable[[pd.DataFrame], pd.Series]:
    """A boolean column counted as 1/0 (a missing value counts as set, as pandas' astype(bool))."""
    return lambda rows: rows[column].astype(bool)


def acc_at(k: int) -> MetricSpec:
    """Acc.@k: an acceptable idiom among the first k ranked predictions."""
    return MetricSpec(
        f"acc_at_{k}",
        f"Acc.@{k}",
        Ratio(flag(f"hit_at_{k}")),
        PERCENT6,
        kinds=RANKED,
        resampling=PASSAGE,
        headline=k == 1,
    )


ACCURACY = MetricSpec(
    "accuracy", "Acc.", Ratio(flag("correct")), PERCENT6, kinds=CLASSIFICATION, resampling=PASSAGE, headline=True
)
TASK_METRICS = (
    MetricSpec("format_ok", "Format followed", Ratio(flag("ok")), PERCENT6, resampling=PASSAGE, paper=False),
    MetricSpec(
        "parse_failure_rate",
        "Parse failures",
        Ratio(flag("parse_failed")),
        PERCENT6,
        higher_is_better=False,
        resampling=PASSAGE,
        paper=False,
    ),
    ACCURACY,
    *(acc_at(k) for k in KS),
    MetricSpec(
        "valid_idiom",
        "Valid Idiom",
        Ratio("n_valid", "n_predicted"),
        PERCENT6,
        kinds=RANKED,
        resampling=PASSAGE,
        binary=False,
    ),
)
METRICS = (*TASK_METRICS, *option_order.specs(frozenset({"choice"})))


def paper_task(setting: str, tasks: list[str]) -> str | None:
    preferred = PAPER_TASK.get(setting)
    if preferred in tasks:
        return preferred
    return tasks[0] if tasks else None


def main_tasks(frame: pd.DataFrame) -> list[str]:
    """The tasks of a score table's main-pass rows, in name order."""
    main = frame[frame["pass"] == MAIN_PASS] if len(frame) else frame
    return sorted(main["task"].unique()) if len(main) else []


def scopes(scores: Mapping[str, pd.DataFrame], config: ChengyuBenchConfig | None = None) -> list[Scope]:
    """Per setting: its paper task's rows (settings.<s>.metrics), and each task's rows as a
    breakdown (breakdowns.tasks.<s>.<task>.metrics)."""
    out: list[Scope] = []
    for setting, frame in sorted(scores.items()):
        kind = setting_kind(setting)
        tasks = main_tasks(frame)
        task = paper_task(setting, tasks)
        rows = frame[frame["task"] == task] if task is not None else frame.iloc[0:0]
        out.append(Scope(setting, setting, rows, ("settings", setting, "metrics"), kind, METRICS, task=task))
        for other in tasks:
            out.append(
                Scope(
                    f"{setting}[{other}]",
                    setting,
                    frame[frame["task"] == other],
                    ("breakdowns", "tasks", setting, other, "metrics"),
                    kind,
                    TASK_METRICS,
                    task=other,
                    breakdown=True,
                )
            )
    return out
