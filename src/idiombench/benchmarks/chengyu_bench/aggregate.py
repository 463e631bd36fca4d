"""`idiombench aggregate chengyu-bench`: per-setting metrics (percent, as the paper prints
them: the specs of specs.py), counts, breakdowns and provenance, from the per-row scores of
score.py.

A setting's `metrics` and `counts` are those of its paper task: the one task it rendered
(connotation / connotation_sample ...), and `chid` (test_public) for the ChID settings.
Other tasks of a setting (chid_train_few, chid_dev_few when built) are under
breakdowns.tasks. Only the `main` generation pass enters the paper's numbers; rows of other passes are
counted (counts.other_pass_rows). Several samples per prompt: the mean over all rows. With
the option-order pass, chid_candidates also carries `option_order.<metric>` (CircularEval and
position bias over the paper task's rows, scoring/option_order.py) and `counts.option_order`.
A metric that cannot be computed (no rows, no predicted idiom) is None.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from ...core.generation_types import MAIN_PASS
from ...metrics import evaluate
from ...metrics.body import SampleCoverage
from ...scoring import option_order
from ...templating.templates import load_package_templates
from .idioms import PAPER_DICTIONARY, load_idiom_list
from .metrics import TOP_K
from .render import PACKAGE, template_key
from .results import DataSource, coverage
from .score import data_source, setting_kind
from .specs import ACCURACY, acc_at, main_tasks, paper_task, scopes

if TYPE_CHECKING:
    from ..contexts import AggregateContext
    from .config import ChengyuBenchConfig

DATA_DESCRIPTION = {
    "release": "the official Chengyu-Bench release (read through the field mapping in params.yaml)",
    "sample": "the idiombench project's own SAMPLE (not the official Chengyu-Bench data)",
    "chid": "FewCLUE ChID (official data)",
}


def _sum(frame: pd.DataFrame, column: str) -> int:
    return int(frame[column].astype(bool).sum()) if len(frame) else 0


def _count(frame: pd.DataFrame, column: str, value: bool | None) -> int:
    """Rows whose `column` is `value` (None: a missing value)."""
    if not len(frame):
        return 0
    column_values = frame[column]
    return int(column_values.isna().sum()) if value is None else int((column_values.dropna() == value).sum())


def _flagged(frame: pd.DataFrame, flag: str) -> int:
    return int(sum(flag in list(flags) for flags in frame["flags"])) if len(frame) else 0


def task_counts(kind: str, frame: pd.DataFrame) -> dict[str, Any]:
    """The counts of one task's main-pass rows (its metrics are the specs')."""
    rows = len(frame)
    counts: dict[str, int] = {
        "rows": rows,
        "items": int(frame["item_id"].nunique()) if rows else 0,
        "answered": _sum(frame, "answered"),
        "parse_failures": _sum(frame, "parse_failed"),
        "unformatted": _sum(frame, "unformatted"),
        "format_ok": _sum(frame, "ok"),
        "generation_errors": _sum(frame, "generation_error"),
        "prompts_not_matching_template": _count(frame, "prompt_matches_template", False),
        "prompts_unknown": _count(frame, "prompt_matches_template", None),
    }
    if kind in ("label", "choice"):
        counts["correct"] = _sum(frame, "correct")
        if kind == "choice":
            counts["ambiguous"] = _sum(frame, "ambiguous")
            counts["not_a_candidate"] = _sum(frame, "not_a_candidate")
    else:
        for k in range(1, TOP_K + 1):
            counts[f"hit_at_{k}"] = _sum(frame, f"hit_at_{k}")
        counts["predicted_idioms"] = int(frame["n_predicted"].sum()) if rows else 0
        counts["valid_idioms"] = int(frame["n_valid"].sum()) if rows else 0
        answered = frame[frame["answered"].astype(bool)] if rows else frame
        counts["fewer_than_5"] = int((answered["n_predicted"] < TOP_K).sum()) if len(answered) else 0
        counts["more_than_5"] = int((answered["listed"] > TOP_K).sum()) if len(answered) else 0
        counts["duplicates"] = _flagged(answered, "duplicate_items")
    return counts


def by_gold(frame: pd.DataFrame) -> dict[str, object]:
    """Accuracy per gold label and the distribution of predictions (classification settings)."""
    out: dict[str, Any] = {"accuracy": {}, "predictions": {}}
    for gold, group in sorted(frame.groupby("gold"), key=lambda g: str(g[0])):
        out["accuracy"][str(gold)] = {"n": len(group), "accuracy": evaluate.value_of(ACCURACY, group)}
    if len(frame):
        predictions = frame["prediction"].fillna("(no answer)").astype(str).value_counts()
        out["predictions"] = {str(k): int(v) for k, v in sorted(predictions.items())}
    return out


def acc_at_k(frame: pd.DataFrame) -> dict[str, float | None]:
    """The Acc.@k curve, k = 1 … TOP_K (the paper's cells are k = 1, 3, 5)."""
    return {str(k): evaluate.value_of(acc_at(k), frame) for k in range(1, TOP_K + 1)}


def data_info(
    task: str | None, scored_items: int, items: dict[str, dict[str, Any]]
) -> tuple[DataSource, SampleCoverage]:
    """Where a task's items come from, and how many of them were scored."""
    if task is None:
        return DataSource(task=None, source=None, official=None, description="no rows"), coverage(0, 0)
    source = data_source(task)
    found = DataSource(task=task, source=source, official=source != "sample", description=DATA_DESCRIPTION[source])
    return found, coverage(scored_items, len(items.get(task, {})))


def aggregate(ctx: AggregateContext[ChengyuBenchConfig]) -> dict[str, object]:
    settings: dict[str, object] = {}
    breakdowns: dict[str, Any] = {"tasks": {}, "by_gold": {}, "acc_at_k": {}}
    provenance: dict[str, Any] = {"template_hashes": {}, "data": {}, "coverage": {}, "idiom_list": None}
    templates = load_package_templates(PACKAGE, "chengyu_bench")
    for setting, frame in sorted(ctx.scores.items()):
        kind = setting_kind(setting)
        main = frame[frame["pass"] == MAIN_PASS] if len(frame) else frame
        tasks = main_tasks(frame)
        task = paper_task(setting, tasks)
        per_task = {t: task_counts(kind, main[main["task"] == t]) for t in tasks}
        primary = per_task[task] if task is not None else task_counts(kind, main.iloc[0:0])
        info, covered = data_info(task, primary["items"], ctx.items)
        counts = dict(primary, other_pass_rows=len(frame) - len(main))
        rotated = option_order.pass_rows(frame[frame["task"] == task]) if task is not None else None
        if rotated is not None:
            counts["option_order"] = option_order.counts(rotated)
        settings[setting] = {"task": task, "data": info.source, "metrics": {}, "counts": counts}
        parts = {t: data_info(t, c["items"], ctx.items) for t, c in per_task.items()}
        breakdowns["tasks"][setting] = {
            t: {"metrics": {}, "counts": c, "data": parts[t][0].model_dump(mode="json")} for t, c in per_task.items()
        }
        provenance["coverage"][setting] = covered.model_copy(update={"parts": {t: p[1] for t, p in parts.items()}})
        task_rows = main[main["task"] == task] if task is not None else main.iloc[0:0]
        if kind == "ranked":
            breakdowns["acc_at_k"][setting] = acc_at_k(task_rows)
        elif kind == "label":
            breakdowns["by_gold"][setting] = by_gold(task_rows)
        template = templates.get(template_key(setting))
        provenance["template_hashes"][setting] = {
            "template_id": template.template_id,
            "template_hash": template.template_hash,
        }
        provenance["data"][setting] = info.model_dump(mode="json")
    evaluate.place({"settings": settings, "breakdowns": breakdowns}, scopes(ctx.scores, ctx.config))
    cfg = ctx.config.score
    if any(setting_kind(s) == "ranked" for s in settings):
        idioms = load_idiom_list(cfg.valid_idiom.four_character_only)
        provenance["idiom_list"] = dict(
            idioms.provenance(), description=idioms.describe(), stand_in_for=PAPER_DICTIONARY
        )
    provenance["release"] = (
        "available"
        if any(t in ctx.items for t in ("connotation", "appropriateness", "open_cloze"))
        else "not available"
    )
    provenance["scoring"] = {
        "accept_unformatted": cfg.accept_unformatted,
        "valid_idiom_four_character_only": cfg.valid_idiom.four_character_only,
    }
    provenance["notes"] = list(ctx.scoring_meta.get("notes", []))
    return {"settings": settings, "breakdowns": breakdowns, "provenance": provenance}
