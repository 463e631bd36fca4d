"""SemanticQA aggregates: the metrics JSON of one model (a DVC metrics file) and the
paper's cells for `evaluate-predictions`.

Per setting and task, in PERCENT as the paper prints them (table 3 / 4 / 12):
  IED, NCC: ACC; LCC: ACC plus macro-, micro- and weighted-F1 (f1_scores);
  IEE, LCE, NCE, VPE, LVE, VIE: ACC_s; IEI, LCI, NCI: METEOR, ROUGE-L, BERTScore.
Sequential settings (sequential.py): Ext, Cond, Overall (the second step's accuracy, or
METEOR for interpretation, with Cond/Overall ROUGE-L and BERTScore beside it).
Every mean is over the rows that have a gold; failed generations and unreadable outputs
are in the denominator (wrong) and counted in `counts`. None: not computed (never 0).
With the option-order pass, IED and NCC also carry `option_order.<metric>` (CircularEval and
position bias, scoring/option_order.py) and `counts.<task>.option_order`.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

import pandas as pd

from ...core.errors import IdiombenchError
from ...scoring import option_order
from . import released
from .adapters import ADAPTERS
from .config import SemanticQAConfig
from .score import BERTSCORE_ROLE, sequential_setting

if TYPE_CHECKING:
    from ..contexts import AggregateContext

PRIMARY = {"mcq": "ACC", "label": "ACC", "extraction": "ACC_s", "interpretation": "METEOR"}
INTERPRETATION_COLUMNS = {"METEOR": "meteor", "ROUGE-L": "rouge_l", "BERTScore": "bertscore_f1"}
MAIN_PASS = "main"
SHOTS = re.compile(r"^(\d+)-shot$")


def setting_order(setting: str) -> tuple[int, int, str]:
    """0-shot, 3-shot, 5-shot first (by k), then the rest by name."""
    match = SHOTS.match(setting)
    return (0, int(match.group(1)), setting) if match else (1, 0, setting)


def percent(values: pd.Series) -> float | None:
    """Mean x 100 of the non-null values; None when there are none (not computed / nothing scored)."""
    values = values.dropna()
    return float(values.mean() * 100.0) if len(values) else None


# --------------------------------------------------------------------------- F1 (LCC)


def f1_scores(gold: list[str], predicted: list[str | None]) -> dict[str, float | None]:
    """Macro, micro and weighted F1 in percent, as scikit-learn's f1_score(labels=L,
    zero_division=0) with L = the gold labels plus the recognised predicted labels: an
    unreadable or unknown prediction (None) is a miss for its gold class, not a class."""
    if len(gold) != len(predicted):
        raise ValueError("gold and predicted differ in length")
    if not gold:
        return {"macro-F1": None, "micro-F1": None, "weighted-F1": None}
    labels = sorted(set(gold) | {p for p in predicted if p is not None})
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    fn: Counter[str] = Counter()
    for g, p in zip(gold, predicted, strict=True):
        if p == g:
            tp[g] += 1
            continue
        fn[g] += 1
        if p is not None:
            fp[p] += 1

    def f1(t: int, f_pos: int, f_neg: int) -> float:
        precision = t / (t + f_pos) if t + f_pos else 0.0
        recall = t / (t + f_neg) if t + f_neg else 0.0
        return 2 * precision * recall / (precision + recall) if precision + recall else 0.0

    per_label = {label: f1(tp[label], fp[label], fn[label]) for label in labels}
    support = Counter(gold)
    micro = f1(sum(tp.values()), sum(fp.values()), sum(fn.values()))
    return {
        "macro-F1": 100.0 * sum(per_label.values()) / len(labels),
        "micro-F1": 100.0 * micro,
        "weighted-F1": 100.0 * sum(per_label[label] * support[label] for label in labels) / len(gold),
    }


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


def recognised_label(parsed: Any, ok: bool, flags: Any, count_format_deviations: bool) -> str | None:
    """The predicted taxonomy label an F1 counts: what ACC compared, unless it is no label at all."""
    if not isinstance(parsed, str) or "unknown_label" in list(flags):
        return None
    return parsed if ok or count_format_deviations else None


def atomic_metrics(frame: pd.DataFrame, kind: str, count_format_deviations: bool = True) -> dict[str, float | None]:
    if kind in ("mcq", "label", "extraction"):
        out: dict[str, float | None] = {PRIMARY[kind]: percent(frame["correct"])}
        if kind == "label":
            scored = frame[frame["correct"].notna()]
            predicted = [
                recognised_label(p, ok, f, count_format_deviations)
                for p, ok, f in zip(scored["parsed"], scored["ok"], scored["flags"], strict=True)
            ]
            out.update(f1_scores([str(g) for g in scored["gold"]], predicted))
        return out
    scored = frame[~frame["flags"].apply(lambda f: "no_gold" in list(f))]
    return {name: percent(scored[column]) for name, column in INTERPRETATION_COLUMNS.items()}


def sequential_metrics(frame: pd.DataFrame) -> dict[str, float | None]:
    composed = frame[frame["composition"].notna()]
    if composed.empty:
        return {"Ext": None, "Cond": None, "Overall": None}
    extracted = composed["extraction_correct"].fillna(False).astype(bool)
    out: dict[str, float | None] = {"Ext": percent(extracted.astype(float))}
    judgement = composed["correct"].notna().any()
    columns = {"": "correct"} if judgement else {"": "meteor", " ROUGE-L": "rouge_l", " BERTScore": "bertscore_f1"}
    for suffix, column in columns.items():
        values = composed[column]
        if values.isna().all():
            out[f"Cond{suffix}"] = out[f"Overall{suffix}"] = None
            continue
        out[f"Cond{suffix}"] = percent(values[extracted])
        out[f"Overall{suffix}"] = percent(values.where(extracted, 0.0))
    return out


def breakdowns_for(setting: str, frame: pd.DataFrame, items: dict[str, dict[str, Any]], out: dict[str, Any]) -> None:
    extraction = frame[frame["correct_released_code"].notna()]
    for task, group in sorted(extraction.groupby("task")):
        out.setdefault("extraction_released_code", {}).setdefault(setting, {})[task] = {
            "ACC_s": percent(group["correct_released_code"]),
            "ACC_s_strict": percent(group["correct_strict"]),
        }
    vmwe = frame[frame["task"].str.startswith("vmwe_extraction") & frame["correct"].notna()]
    for task, group in sorted(vmwe.groupby("task")):
        subtype = group["item_id"].map(lambda i, t=task: str(items[t][i].meta.get("vmwe_subtype")))
        out.setdefault("vmwe_subtypes", {}).setdefault(setting, {})[task] = {
            name: {"ACC_s": percent(part["correct"]), "n": int(len(part))}
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
            "accuracy_by_gold": {g: percent(part["correct"]) for g, part in sorted(lcc.groupby("gold"))},
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
        metrics: dict[str, Any] = {}
        counts: dict[str, Any] = {}
        for task, group in sorted(main.groupby("task")):
            counts[task] = task_counts(group, len(ctx.items.get(task, {})))
            if sequential:
                metrics[task] = sequential_metrics(group)
                counts[task]["extraction_failures"] = int((~group["extraction_correct"].fillna(False)).sum())
            else:
                metrics[task] = atomic_metrics(group, ADAPTERS[task].kind, config.score.count_format_deviations)
        for task, group in sorted(frame.groupby("task")):
            rotated = option_order.pass_rows(group)
            if rotated is not None and task in metrics:
                order_metrics, counts[task]["option_order"] = option_order.summarise(rotated)
                metrics[task].update({option_order.PREFIX + name: value for name, value in order_metrics.items()})
        other = frame[frame["pass"] != MAIN_PASS]
        if len(other):
            counts["other_passes_not_aggregated"] = int(len(other))
        settings[setting] = {"metrics": metrics, "counts": counts}
        if not sequential:
            breakdowns_for(setting, main, ctx.items, breakdowns)
        hashes = (
            main.dropna(subset=["template_id"])
            .groupby("template_id")["template_hash"]
            .agg(lambda s: ",".join(sorted(set(s))))
        )
        template_hashes[setting] = dict(sorted(hashes.items())) if len(hashes) else {}
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


# --------------------------------------------------------------------------- evaluate-predictions


def prediction_metrics(body: dict[str, Any], task: str | None, setting: str) -> dict[str, float | None]:
    """The paper's cells for one task and setting, in percent ({"ACC": 83.2}; extraction
    {"ACC_s": ...}; interpretation {"METEOR", "ROUGE-L", "BERTScore"}; LCC also its F1s;
    sequential settings {"Ext", "Cond", "Overall", ...}). task None: every task of the
    setting, keys "<task>/<metric>". A metric that could not be computed is None."""
    settings = body.get("settings", {})
    if setting not in settings:
        raise IdiombenchError(
            f"semanticqa: no scores for setting {setting!r} "
            f"(scored: {', '.join(sorted(settings, key=setting_order)) or 'none'})"
        )
    metrics = settings[setting]["metrics"]
    if task is None:
        return {f"{t}/{name}": value for t in sorted(metrics) for name, value in metrics[t].items()}
    if task not in metrics:
        raise IdiombenchError(
            f"semanticqa/{setting}: no scores for task {task!r} (scored: {', '.join(sorted(metrics)) or 'none'})"
        )
    return dict(metrics[task])
