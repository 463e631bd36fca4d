"""`aggregate` hook: the paper's numbers from the per-answer scores. All values are
percentages as the paper prints them (MeanSim = 100 x mean cosine).

Task 1 (setting mcq; paper tables 3 and 12, figure 3), per target group (Zh-target,
En-target, Other targets) and overall:
- `accuracy.micro.<group>`: correct answers / answers (instance-weighted);
- `accuracy.macro.<group>`: mean over the group's directions of each direction's accuracy
  (overall: mean over all directions, as the paper's table 3 computes it);
- the same without the duplicate_option items: `accuracy_without_duplicate_option.*`;
- `outcome.<group>.<Correct|LT|LC|CA|invalid>`: micro shares of the outcome types (sum 100);
- with the option-order pass: `option_order.<metric>` (CircularEval and position bias,
  scoring/option_order.py) and its counts under `counts.option_order`.
Task 2 (settings no_gloss / with_gloss; paper tables 4, 14 and 16): `MeanSim`, `Acc@<t>`
(cosine >= t), `EM`, `BLEU`, `chrF`, each macro-averaged over directions (`<name>.micro`:
over answers); with_gloss also carries `delta.<name>` = With-gloss - No-gloss macro values.
The additional language pairs become their own settings `<condition>_additional`, never
mixed into the main numbers.

Only the `main` generation pass enters the paper's numbers; every sample of it weighs the same.
A metric that cannot be computed (no answers, similarity role not computed) is None.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from ...core import paths
from ...core.errors import IdiombenchError
from ...core.io import read_parquet
from ...scoring import option_order
from .config import GIdiomAlignScore
from .score import MCQ_SETTING
from .task1 import CORRECT, DISTRACTOR_TYPES, GROUPS, INVALID, TARGET_COPY
from .task2 import corpus_bleu, corpus_chrf, tokenizer_available

if TYPE_CHECKING:
    from ..contexts import AggregateContext
    from .config import GIdiomAlignConfig

MAIN_PASS = "main"
OVERALL = "overall"
GENERATION_CONDITIONS = ("no_gloss", "with_gloss")
ADDITIONAL_SUFFIX = "_additional"
DELTA_PREFIX = "delta."


def percent(value: float | None) -> float | None:
    return None if value is None or pd.isna(value) else round(100.0 * float(value), 10)


def macro_micro(frame: pd.DataFrame, column: str, by: str = "direction") -> tuple[float | None, float | None]:
    """(mean over groups `by` of each group's mean, mean over rows) of a numeric/bool column;
    NaN values are left out; (None, None) when nothing is left."""
    values = frame[[by, column]].dropna(subset=[column])
    if values.empty:
        return None, None
    series = values[column].astype(float)
    per_group = series.groupby(values[by], sort=True).mean()
    return float(per_group.mean()), float(series.mean())


def threshold_name(t: float) -> str:
    return f"Acc@{t:.2f}"


def main_pass(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["pass"] == MAIN_PASS]


def answer_counts(rows: pd.DataFrame) -> dict[str, int]:
    """The counts every setting's body opens with: answers, items and directions."""
    return {
        "answers": int(len(rows)),
        "items": int(rows["item_id"].nunique()),
        "directions": int(rows["direction"].nunique()),
    }


def failure_counts(rows: pd.DataFrame) -> dict[str, int]:
    """Answers with no option or idiom read, failed requests, and answers read off the format."""
    return {
        "invalid": int(rows["invalid"].sum()),
        "generation_failed": int(rows["generation_failed"].sum()),
        "format_not_followed": int((~rows["ok"].astype(bool) & ~rows["invalid"].astype(bool)).sum()),
    }


# --------------------------------------------------------------------------- Task 1


def mcq_outcomes(cfg: GIdiomAlignScore) -> tuple[str, ...]:
    return (CORRECT, *DISTRACTOR_TYPES, INVALID) + (() if cfg.duplicate_option_target_correct else (TARGET_COPY,))


def aggregate_mcq(frame: pd.DataFrame, cfg: GIdiomAlignScore) -> tuple[dict[str, Any], dict[str, Any]]:
    rows = main_pass(frame)
    metrics: dict[str, float | None] = {}
    outcomes = mcq_outcomes(cfg)
    scopes = [(group, rows[rows["group"] == group]) for group in GROUPS] + [(OVERALL, rows)]
    clean = rows[~rows["duplicate_option"].astype(bool)]
    clean_scopes = [(group, clean[clean["group"] == group]) for group in GROUPS] + [(OVERALL, clean)]
    for prefix, chosen in (("accuracy", scopes), ("accuracy_without_duplicate_option", clean_scopes)):
        for scope, part in chosen:
            macro, micro = macro_micro(part, "correct")
            metrics[f"{prefix}.macro.{scope}"] = percent(macro)
            metrics[f"{prefix}.micro.{scope}"] = percent(micro)
    for scope, part in scopes:
        for outcome in outcomes:
            metrics[f"outcome.{scope}.{outcome}"] = percent((part["outcome"] == outcome).mean()) if len(part) else None
    per_direction = {}
    for direction, part in rows.groupby("direction", sort=True):
        per_direction[direction] = {
            "group": part["group"].iloc[0],
            "answers": int(len(part)),
            "accuracy": percent(part["correct"].mean()),
            "outcomes": {o: int((part["outcome"] == o).sum()) for o in outcomes},
        }
    counts = {
        **answer_counts(rows),
        "correct": int(rows["correct"].sum()),
        **failure_counts(rows),
        "duplicate_option_answers": int(rows["duplicate_option"].sum()),
        "answers_per_group": {g: int((rows["group"] == g).sum()) for g in GROUPS},
        "directions_per_group": {g: int(rows.loc[rows["group"] == g, "direction"].nunique()) for g in GROUPS},
        "other_pass_rows": int(len(frame) - len(rows)),
    }
    rotated = option_order.pass_rows(frame)
    if rotated is not None:
        order_metrics, counts["option_order"] = option_order.summarise(rotated)
        metrics.update({option_order.PREFIX + name: value for name, value in order_metrics.items()})
    return {"metrics": metrics, "counts": counts}, {"per_direction": per_direction}


# --------------------------------------------------------------------------- Task 2


def surface_per_direction(rows: pd.DataFrame, cfg: GIdiomAlignScore) -> pd.DataFrame:
    """BLEU and chrF per direction as configured (sentence means or corpus scores)."""
    out = []
    for direction, part in rows.groupby("direction", sort=True):
        if cfg.surface_aggregation == "corpus":
            tokenize = part["bleu_tokenize"].iloc[0]
            predictions, golds = part["prediction_clean"].tolist(), part["gold_clean"].tolist()
            bleu, chrf = corpus_bleu(predictions, golds, tokenize), corpus_chrf(predictions, golds)
        else:
            bleu, chrf = float(part["bleu"].mean()), float(part["chrf"].mean())
        out.append({"direction": direction, "bleu": bleu, "chrf": chrf})
    return pd.DataFrame(out, columns=["direction", "bleu", "chrf"])


def aggregate_generation(
    frame: pd.DataFrame, cfg: GIdiomAlignScore, similarity_computed: bool
) -> tuple[dict[str, Any], dict[str, Any]]:
    rows = main_pass(frame).copy()
    metrics: dict[str, float | None] = {}
    sims = rows["similarity"].astype(float)
    computed = similarity_computed and not sims.isna().all()
    macro, micro = macro_micro(rows, "similarity") if computed else (None, None)
    metrics["MeanSim"], metrics["MeanSim.micro"] = percent(macro), percent(micro)
    for t in cfg.thresholds:
        name = threshold_name(t)
        if computed:
            rows[name] = (sims >= t).where(sims.notna())
            macro, micro = macro_micro(rows, name)
        else:
            macro = micro = None
        metrics[name], metrics[f"{name}.micro"] = percent(macro), percent(micro)
    macro, micro = macro_micro(rows, "exact_match")
    metrics["EM"], metrics["EM.micro"] = percent(macro), percent(micro)
    surface = surface_per_direction(rows, cfg)
    for name, column in (("BLEU", "bleu"), ("chrF", "chrf")):
        metrics[name] = float(surface[column].mean()) if len(surface) else None
        metrics[f"{name}.micro"] = (
            float(rows[column].mean()) if len(rows) and cfg.surface_aggregation == "sentence" else None
        )
    per_direction: dict[str, Any] = {}
    surface_by = surface.set_index("direction") if len(surface) else None
    for direction, part in rows.groupby("direction", sort=True):
        entry: dict[str, Any] = {"answers": int(len(part)), "invalid": int(part["invalid"].sum())}
        entry["MeanSim"] = percent(part["similarity"].astype(float).mean()) if computed else None
        for t in cfg.thresholds:
            entry[threshold_name(t)] = percent(part[threshold_name(t)].astype(float).mean()) if computed else None
        entry["EM"] = percent(part["exact_match"].mean())
        entry["BLEU"] = float(surface_by.loc[direction, "bleu"]) if surface_by is not None else None
        entry["chrF"] = float(surface_by.loc[direction, "chrf"]) if surface_by is not None else None
        per_direction[direction] = entry
    counts = {
        **answer_counts(rows),
        **failure_counts(rows),
        "other_pass_rows": int(len(frame) - len(main_pass(frame))),
    }
    return {"metrics": metrics, "counts": counts}, {"per_direction": per_direction}


def add_deltas(settings: dict[str, Any], suffix: str = "") -> None:
    """With-gloss minus No-gloss, metric by metric (macro values), into the with_gloss setting."""
    without, with_ = settings.get(f"no_gloss{suffix}"), settings.get(f"with_gloss{suffix}")
    if without is None or with_ is None:
        return
    for name, value in list(with_["metrics"].items()):
        if name.startswith(DELTA_PREFIX) or name.endswith(".micro"):
            continue
        base = without["metrics"].get(name)
        with_["metrics"][f"{DELTA_PREFIX}{name}"] = None if value is None or base is None else round(value - base, 10)


# --------------------------------------------------------------------------- provenance


def sample_coverage(setting: str, frame: pd.DataFrame, items: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """How much of the built task the scored answers cover (a rendered sample covers less)."""
    out = {}
    for task, part in frame.groupby("task", sort=True):
        available = items.get(task, {})
        if setting == "with_gloss":
            available = {
                i: item
                for i, item in available.items()
                if str(item.fields.get("gloss") or "").strip() and not item.meta.get("no_gloss_available")
            }
        directions = {item.meta.get("direction") for item in available.values()}
        scored = int(part["item_id"].nunique())
        out[task] = {
            "items_scored": scored,
            "items_available": len(available),
            "directions_scored": int(part["direction"].nunique()),
            "directions_available": len(directions),
            "complete": scored >= len(available),
        }
    return out


def template_hashes(benchmark: str, settings: list[str]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for setting in settings:
        path = paths.prompts_file(benchmark, setting)
        if path.exists():
            table = read_parquet(path).select(["template_id", "template_hash"]).to_pylist()
            out[setting] = dict(sorted({row["template_id"]: row["template_hash"] for row in table}.items()))
    return out


def role_dict(params: Any, role: str) -> dict[str, Any] | None:
    scoring = getattr(params, "scoring", None)
    if scoring is None:
        return None
    from ...scoring.roles import all_role_infos

    infos = all_role_infos(scoring)
    return infos[role].as_dict() if role in infos else None


def aggregate(ctx: AggregateContext[GIdiomAlignConfig]) -> dict[str, Any]:
    cfg: GIdiomAlignScore = ctx.config.score
    role = role_dict(ctx.params, cfg.similarity_role)
    similarity_computed = bool(role and role["status"] != "not_computed")
    settings: dict[str, Any] = {}
    breakdowns: dict[str, Any] = {}
    coverage: dict[str, Any] = {}
    tokenizers: dict[str, str] = {}
    fallbacks: dict[str, str] = {}
    for setting, frame in sorted(ctx.scores.items()):
        coverage[setting] = sample_coverage(setting, frame, ctx.items) if len(frame) else {}
        if setting == MCQ_SETTING:
            settings[setting], breakdowns[setting] = aggregate_mcq(frame, cfg)
        elif setting in GENERATION_CONDITIONS:
            for additional, suffix in ((False, ""), (True, ADDITIONAL_SUFFIX)):
                part = frame[frame["additional"].astype(bool) == additional]
                if len(part):
                    settings[setting + suffix], breakdowns[setting + suffix] = aggregate_generation(
                        part, cfg, similarity_computed
                    )
            for lang, tokenize in frame[["target_lang", "bleu_tokenize"]].drop_duplicates().itertuples(index=False):
                tokenizers[lang] = tokenize
                configured = cfg.bleu_tokenize.get(lang, cfg.bleu_tokenize_default)
                if tokenize != configured:
                    fallbacks[lang] = (
                        f"configured {configured!r} cannot run here ({tokenizer_available(configured)}); "
                        f"used {tokenize!r}"
                    )
    add_deltas(settings)
    add_deltas(settings, ADDITIONAL_SUFFIX)
    provenance = {
        "roles": {cfg.similarity_role: role} if role else {},
        "score": cfg.model_dump(mode="json"),
        "bleu_tokenizers_used": dict(sorted(tokenizers.items())),
        "bleu_tokenizer_fallbacks": dict(sorted(fallbacks.items())),
        "sample": coverage,
        "template_hashes": template_hashes(ctx.benchmark, sorted(ctx.scores)),
        "notes": list(ctx.scoring_meta.get("notes", [])),
    }
    return {"settings": dict(sorted(settings.items())), "breakdowns": breakdowns, "provenance": provenance}


# --------------------------------------------------------------------------- evaluate-predictions

TABLE3_KEYS = [f"accuracy.{kind}.{scope}" for scope in (*GROUPS, OVERALL) for kind in ("macro", "micro")]
TABLE12_KEYS = [f"outcome.{group}.{o}" for group in GROUPS for o in (CORRECT, *DISTRACTOR_TYPES)]


def prediction_metrics(body: dict[str, Any], task: str | None, setting: str) -> dict[str, float]:
    """The paper's cells for one task / setting, in percent: mcq -> table 3 (accuracy macro /
    micro per target group and overall) and table 12 (outcome shares); no_gloss / with_gloss ->
    tables 4 / 14 (MeanSim, Acc@t) and 16 (EM, BLEU, chrF), with_gloss also the With - No-gloss
    deltas. task gloss_generation_additional reads the additional-pairs settings."""
    key = setting + (ADDITIONAL_SUFFIX if task == "gloss_generation_additional" else "")
    if setting == MCQ_SETTING and task not in (None, "mcq"):
        raise IdiombenchError(f"g-idiomalign setting mcq belongs to task mcq, not {task!r}")
    if setting in GENERATION_CONDITIONS and task not in (None, "gloss_generation", "gloss_generation_additional"):
        raise IdiombenchError(
            f"g-idiomalign setting {setting} belongs to task gloss_generation(_additional), not {task!r}"
        )
    entry = body.get("settings", {}).get(key)
    if entry is None:
        raise IdiombenchError(
            f"g-idiomalign: no aggregated results for setting {key!r} "
            f"(have: {', '.join(body.get('settings', {})) or 'none'})"
        )
    metrics = entry["metrics"]
    if setting == MCQ_SETTING:
        names = TABLE3_KEYS + TABLE12_KEYS
    else:
        names = [n for n in metrics if not n.endswith(".micro")]
    return {name: float(metrics[name]) for name in names if metrics.get(name) is not None}
