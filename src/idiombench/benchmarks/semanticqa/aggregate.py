"""SemanticQA aggregates: the metrics JSON of one model (a DVC metrics file).

Per setting and task, in PERCENT as the paper prints them (table 3 / 4 / 12): the values of
the specs (specs.py: ACC, the LCC F1s, ACC_s, METEOR / ROUGE-L / BERTScore; in sequential
settings Ext, Cond and Overall), placed by metrics.evaluate.place; this module keeps the
counts, the breakdowns and the provenance. Every mean is over the rows that have a gold;
failed generations and unreadable outputs are in the denominator (wrong) and counted in
`counts`. None: not computed (never 0). With the option-order pass, IED and NCC also carry
`option_order.<metric>` (CircularEval and position bias: specs of scoring/option_order.py) and
`counts.<task>.option_order`.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from typing import TYPE_CHECKING, Any

import pandas as pd

from ...metrics import MAIN_PASS, evaluate
from ...scoring import option_order
from . import released
from .config import SemanticQAConfig
from .score import BERTSCORE_ROLE, sequential_setting
from .specs import ACC, ACC_S, RELEASED_CODE_MATCH, STRICT_MATCH, scopes, setting_order

if TYPE_CHECKING:
    from ..contexts import AggregateContext


# --------------------------------------------------------------------------- per task


def task_counts(frame: pd.DataFrame, items_in_task: int) -> dict[str, int]:
    failed = frame["generation_error"].notna()
    no_gold = frame["flags"].apply(lambda f: "no_gold" in list(f))
    empty = frame["flags"].apply(lambda f: released.EMPTY_FLAG in list(f))
    unread = frame["parsed"].isna() & ~failed & ~no_gold & ~empty
    counts = {
        "rows": int(len(frame)),
        "scored": int((~no_gold).sum()),
        "no_gold": int(no_gold.sum()),
        "generation_failures": int(failed.sum()),
        "parse_failures": int(unread.sum()),
        "format_deviations": int((frame["parsed"].notna() & ~frame["ok"]).sum()),
        "items": int(frame["item_id"].nunique()),
        "items_in_task": int(items_in_task),
    }
    if empty.any():  # compatibility released: empty responses not scored, as the authors' main.py
        counts["released_empty_responses"] = int(empty.sum())
    return counts


def breakdowns_for(setting: str, frame: pd.DataFrame, items: dict[str, dict[str, Any]], out: dict[str, Any]) -> None:
    """The breakdowns of an atomic setting's main-pass rows: ACC_s under each extraction match rule,
    ACC_s per VMWE subtype, LCC accuracy per gold label and its confusion counts (the values are
    the specs' on the subset)."""
    extraction = frame[frame["correct_released_code"].notna()]
    for task, group in sorted(extraction.groupby("task")):
        out.setdefault("extraction_released_code", {}).setdefault(setting, {})[task] = {
            "ACC_s": evaluate.value_of(RELEASED_CODE_MATCH, group),
            "ACC_s_strict": evaluate.value_of(STRICT_MATCH, group),
        }
    vmwe = frame[frame["task"].str.startswith("vmwe_extraction") & frame["correct"].notna()]
    for task, group in sorted(vmwe.groupby("task")):
        subtype = group["item_id"].map(lambda i, t=task: str(items[t][i].meta.get("vmwe_subtype")))
        out.setdefault("vmwe_subtypes", {}).setdefault(setting, {})[task] = {
            name: {"ACC_s": evaluate.value_of(ACC_S, part), "n": int(len(part))}
            for name, part in sorted(group.groupby(subtype))
        }
    lcc = frame[(frame["task"] == "collocation_categorization") & frame["correct"].notna()]
    if not lcc.empty:
        confusion: dict[str, dict[str, int]] = defaultdict(dict)
        for gold, pred in zip(lcc["gold"], lcc["parsed"], strict=True):
            # a missing value is None or, in a pandas string column, NaN (a failed generation, an item without a record)
            key = pred if isinstance(pred, str) else "(unread)"
            confusion[gold][key] = confusion[gold].get(key, 0) + 1
        out.setdefault("lcc_labels", {})[setting] = {
            "accuracy_by_gold": {g: evaluate.value_of(ACC, part) for g, part in sorted(lcc.groupby("gold"))},
            "confusion": {g: dict(sorted(row.items())) for g, row in sorted(confusion.items())},
        }


def scaling_breakdown(settings: dict[str, Any], config: SemanticQAConfig) -> dict[str, Any]:
    """Figure 6 / table 13: LCC accuracy per number of classes, mean and std over combinations."""
    pattern = re.compile(config.score.lcc_scaling.setting_pattern)
    runs: dict[str, dict[int, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for setting, body in settings.items():
        match = pattern.fullmatch(setting)
        acc = body["metrics"].get("collocation_categorization", {}).get("ACC") if match else None
        if match and acc is not None:
            runs[match["shots"]][int(match["classes"])][match["combination"]] = acc
    out: dict[str, Any] = {}
    for shots in sorted(runs, key=setting_order):
        out[shots] = {}
        for classes, by_combination in sorted(runs[shots].items()):
            values = list(by_combination.values())
            mean = sum(values) / len(values)
            std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
            out[shots][str(classes)] = {"mean": mean, "std": std, "runs": dict(sorted(by_combination.items()))}
    return out


def role_status(params: Any, scoring_meta: dict[str, Any]) -> dict[str, Any]:
    """The bertscore_en role as the score stage recorded it, else as params configure it."""
    recorded = scoring_meta.get("roles", {}).get(BERTSCORE_ROLE)
    if isinstance(recorded, dict) and "status" in recorded and "mark" in recorded:
        return {BERTSCORE_ROLE: recorded}
    scoring = getattr(params, "scoring", None)
    if scoring is None:
        return {}
    from ...scoring.roles import role_info

    return {
        BERTSCORE_ROLE: role_info(
            BERTSCORE_ROLE, scoring.role(BERTSCORE_ROLE), scoring.paper_role(BERTSCORE_ROLE)
        ).as_dict()
    }


def meteor_status(scores: dict[str, pd.DataFrame], notes: list[str]) -> dict[str, Any]:
    from ...scoring.meteor import ALPHA, BETA, GAMMA

    computed = any(f["meteor"].notna().any() for f in scores.values())
    reason = next((n for n in notes if n.startswith("METEOR not computed")), None)
    return {
        "status": "computed" if computed else ("not_computed" if reason else "no interpretation rows"),
        "reason": reason,
        "implementation": f"nltk meteor_score (alpha {ALPHA}, beta {BETA}, gamma {GAMMA}), WordNet 3.0 from "
        "Debian wordnet-base; max over references",
    }


def aggregate(ctx: AggregateContext[SemanticQAConfig]) -> dict[str, Any]:
    config: SemanticQAConfig = ctx.config
    settings: dict[str, Any] = {}
    breakdowns: dict[str, Any] = {}
    template_hashes: dict[str, dict[str, str]] = {}
    kinds: dict[str, str] = {}
    for setting in sorted(ctx.scores, key=setting_order):
        frame = ctx.scores[setting]
        main = frame[frame["pass"] == MAIN_PASS]
        sequential = sequential_setting(setting, config.score)
        kinds[setting] = "sequential" if sequential else "atomic"
        counts: dict[str, Any] = {}
        for task, group in sorted(main.groupby("task")):
            counts[task] = task_counts(group, len(ctx.items.get(task, {})))
            if sequential:
                counts[task]["extraction_failures"] = int((~group["extraction_correct"].fillna(False)).sum())
            rotated = option_order.pass_rows(frame[frame["task"] == task])
            if rotated is not None:
                counts[task]["option_order"] = option_order.counts(rotated)
        other = frame[frame["pass"] != MAIN_PASS]
        if len(other):
            counts["other_passes_not_aggregated"] = int(len(other))
        settings[setting] = {"metrics": {}, "counts": counts}
        if not sequential:
            breakdowns_for(setting, main, ctx.items, breakdowns)
        hashes = (
            main.dropna(subset=["template_id"])
            .groupby("template_id")["template_hash"]
            .agg(lambda s: ",".join(sorted(set(s))))
        )
        template_hashes[setting] = dict(sorted(hashes.items())) if len(hashes) else {}
    evaluate.place({"settings": settings}, scopes(ctx.scores, config))
    if config.score.lcc_scaling.enabled:
        breakdowns["lcc_scaling"] = scaling_breakdown(settings, config)
    notes = list(ctx.scoring_meta.get("notes", []))
    provenance = {
        "roles": role_status(ctx.params, ctx.scoring_meta),
        "bertscore_computed": any(f["bertscore_f1"].notna().any() for f in ctx.scores.values()),
        "meteor": meteor_status(ctx.scores, notes),
        "template_hashes": template_hashes,
        "exemplar_seed": config.render.exemplar_seed,
        "lce_exemplars": config.render.lce_exemplars,
        "render_sample": config.render.sample.model_dump(mode="json") if config.render.sample else None,
        "score_options": config.score.model_dump(mode="json"),
        "setting_kinds": kinds,
        "scoring_notes": notes,
    }
    return {"settings": settings, "breakdowns": breakdowns, "provenance": provenance}
