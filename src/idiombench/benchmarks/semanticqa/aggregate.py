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
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal, TypedDict

import pandas as pd

from ...core.items import Item
from ...metrics import MAIN_PASS, evaluate
from ...scoring import option_order
from ...scoring.roles import role_records
from . import released
from .config import SemanticQAConfig
from .results import (
    ExtractionMatch,
    LccLabels,
    MeteorStatus,
    RenderSample,
    ScalingEntry,
    SemanticQABreakdowns,
    SemanticQAProvenance,
    SubtypeAccuracy,
    coverage,
    selection,
    task_items,
)
from .score import BERTSCORE_ROLE, sequential_setting
from .specs import ACC, ACC_S, RELEASED_CODE_MATCH, STRICT_MATCH, scopes, setting_order

if TYPE_CHECKING:
    from ..contexts import AggregateContext


class Setting(TypedDict):
    """A setting of the body as the aggregate builds it (evaluate.place fills its metrics)."""

    metrics: dict[str, dict[str, float | None]]  # task -> metric -> value
    counts: dict[str, object]  # task -> its counts; other_passes_not_aggregated


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


def breakdowns_for(
    setting: str, frame: pd.DataFrame, items: Mapping[str, Mapping[str, Item]], out: SemanticQABreakdowns
) -> None:
    """The breakdowns of an atomic setting's main-pass rows: ACC_s under each extraction match rule,
    ACC_s per VMWE subtype, LCC accuracy per gold label and its confusion counts (the values are
    the specs' on the subset)."""
    extraction = frame[frame["correct_released_code"].notna()]
    for task, group in sorted(extraction.groupby("task")):
        out.extraction_released_code.setdefault(setting, {})[str(task)] = ExtractionMatch(
            ACC_s=evaluate.value_of(RELEASED_CODE_MATCH, group),
            ACC_s_strict=evaluate.value_of(STRICT_MATCH, group),
        )
    vmwe = frame[frame["task"].str.startswith("vmwe_extraction") & frame["correct"].notna()]
    for task, group in sorted(vmwe.groupby("task")):
        subtype = group["item_id"].map(lambda i, t=task: str(items[t][i].meta.get("vmwe_subtype")))
        out.vmwe_subtypes.setdefault(setting, {})[str(task)] = {
            str(name): SubtypeAccuracy(ACC_s=evaluate.value_of(ACC_S, part), n=int(len(part)))
            for name, part in sorted(group.groupby(subtype))
        }
    lcc = frame[(frame["task"] == "collocation_categorization") & frame["correct"].notna()]
    if not lcc.empty:
        confusion: dict[str, dict[str, int]] = defaultdict(dict)
        for gold, pred in zip(lcc["gold"], lcc["parsed"], strict=True):
            # a missing value is None or, in a pandas string column, NaN (a failed generation, an item without a record)
            key = pred if isinstance(pred, str) else "(unread)"
            confusion[gold][key] = confusion[gold].get(key, 0) + 1
        out.lcc_labels[setting] = LccLabels(
            accuracy_by_gold={str(g): evaluate.value_of(ACC, part) for g, part in sorted(lcc.groupby("gold"))},
            confusion={g: dict(sorted(row.items())) for g, row in sorted(confusion.items())},
        )


def scaling_breakdown(settings: Mapping[str, Setting], config: SemanticQAConfig) -> dict[str, dict[str, ScalingEntry]]:
    """Figure 6 / table 13: LCC accuracy per number of classes, mean and std over combinations."""
    pattern = re.compile(config.score.lcc_scaling.setting_pattern)
    runs: dict[str, dict[int, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for setting, body in settings.items():
        match = pattern.fullmatch(setting)
        lcc = body["metrics"].get("collocation_categorization") if match else None
        acc = lcc.get("ACC") if lcc is not None else None
        if match and acc is not None:
            runs[match["shots"]][int(match["classes"])][match["combination"]] = acc
    out: dict[str, dict[str, ScalingEntry]] = {}
    for shots in sorted(runs, key=setting_order):
        out[shots] = {}
        for classes, by_combination in sorted(runs[shots].items()):
            values = list(by_combination.values())
            mean = sum(values) / len(values)
            std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
            out[shots][str(classes)] = ScalingEntry(mean=mean, std=std, runs=dict(sorted(by_combination.items())))
    return out


def meteor_status(scores: Mapping[str, pd.DataFrame], notes: list[str]) -> MeteorStatus:
    from ...scoring.meteor import ALPHA, BETA, GAMMA

    computed = any(f["meteor"].notna().any() for f in scores.values())
    reason = next((n for n in notes if n.startswith("METEOR not computed")), None)
    return MeteorStatus(
        status="computed" if computed else ("not_computed" if reason else "no interpretation rows"),
        reason=reason,
        implementation=f"nltk meteor_score (alpha {ALPHA}, beta {BETA}, gamma {GAMMA}), WordNet 3.0 from "
        "Debian wordnet-base; max over references",
    )


def aggregate(ctx: AggregateContext[SemanticQAConfig]) -> dict[str, object]:
    config: SemanticQAConfig = ctx.config
    settings: dict[str, Setting] = {}
    breakdowns = SemanticQABreakdowns()
    template_hashes: dict[str, dict[str, str]] = {}
    kinds: dict[str, Literal["atomic", "sequential"]] = {}
    for setting in sorted(ctx.scores, key=setting_order):
        frame = ctx.scores[setting]
        main = frame[frame["pass"] == MAIN_PASS]
        sequential = sequential_setting(setting, config.score)
        kinds[setting] = "sequential" if sequential else "atomic"
        counts: dict[str, object] = {}
        for task, group in sorted(main.groupby("task")):
            task_count: dict[str, object] = {**task_counts(group, len(ctx.items.get(task, {})))}
            if sequential:
                task_count["extraction_failures"] = int((~group["extraction_correct"].fillna(False)).sum())
            rotated = option_order.pass_rows(frame[frame["task"] == task])
            if rotated is not None:
                task_count["option_order"] = option_order.counts(rotated)
            counts[str(task)] = task_count
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
        breakdowns.lcc_scaling = scaling_breakdown(settings, config)
    notes = [str(note) for note in ctx.scoring_meta.get("notes", [])]
    roles, _ = role_records(ctx.scoring_meta, getattr(ctx.params, "scoring", None), [BERTSCORE_ROLE])
    sample = config.render.sample
    drawn = selection(sample.model_dump(mode="json") if sample is not None else None)
    provenance = SemanticQAProvenance(
        roles=roles,
        bertscore_computed=any(f["bertscore_f1"].notna().any() for f in ctx.scores.values()),
        meteor=meteor_status(ctx.scores, notes),
        template_hashes=template_hashes,
        exemplar_seed=config.render.exemplar_seed,
        lce_exemplars=config.render.lce_exemplars,
        render_sample=RenderSample(**sample.model_dump()) if sample is not None else None,
        score_options=config.score.model_dump(mode="json"),
        setting_kinds=kinds,
        scoring_notes=notes,
        coverage={setting: coverage(task_items(entry["counts"]), drawn) for setting, entry in settings.items()},
    )
    return {
        "settings": settings,
        "breakdowns": breakdowns.model_dump(mode="json"),
        "provenance": provenance.model_dump(mode="json"),
    }
