"""`aggregate` hook: the paper's numbers from the per-answer scores. All values are
percentages as the paper prints them (MeanSim = 100 x mean cosine), each the value of its
metric spec (specs.py); this module keeps the counts, the breakdowns and the provenance.

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

from collections.abc import Mapping
from typing import TYPE_CHECKING, TypedDict

import numpy as np
import pandas as pd
from pydantic import JsonValue

from ...core import paths
from ...core.io import read_parquet
from ...core.items import Item
from ...metrics import MAIN_PASS, evaluate
from ...metrics.body import SampleCoverage
from ...scoring import option_order
from ...scoring.roles import role_records
from .config import GIdiomAlignScore
from .results import (
    ADDITIONAL_SUFFIX,
    GENERATION_CONDITIONS,
    GIdiomAlignProvenance,
    McqDirection,
    body_setting,
    setting_coverage,
    task_coverage,
)
from .score import MCQ_SETTING
from .specs import (
    by_key,
    generation_parts,
    mcq_outcomes,
    scopes,
    threshold_name,
)
from .task1 import GROUPS
from .task2 import tokenizer_available

if TYPE_CHECKING:
    from ..contexts import AggregateContext
    from .config import GIdiomAlignConfig

DELTA_PREFIX = "delta."
SURFACE = ("BLEU", "chrF")
Counts = dict[str, object]  # a setting's counts (results.GIdiomAlignSetting.counts)
Breakdown = dict[str, dict[str, JsonValue]]  # direction -> its entry (results.McqDirection / GenerationDirection)


class Setting(TypedDict):
    """A setting of the body as the aggregate builds it (evaluate.place fills its metrics)."""

    metrics: dict[str, float | None]
    counts: Counts


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


def mcq_counts(frame: pd.DataFrame, cfg: GIdiomAlignScore) -> tuple[Counts, Breakdown]:
    """The mcq setting's counts and its per-direction breakdown (its metrics are the specs')."""
    rows = main_pass(frame)
    outcomes = mcq_outcomes(cfg)
    accuracy = by_key(cfg)["accuracy.micro.overall"]  # one direction's accuracy: its mean of `correct`
    per_direction: Breakdown = {}
    for direction, part in rows.groupby("direction", sort=True):
        per_direction[str(direction)] = McqDirection(
            group=str(part["group"].iloc[0]),
            answers=int(len(part)),
            accuracy=evaluate.value_of(accuracy, part),
            outcomes={o: int((part["outcome"] == o).sum()) for o in outcomes},
        ).model_dump(mode="json")
    counts: Counts = {
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
        counts["option_order"] = option_order.counts(rotated)
    return counts, per_direction


# --------------------------------------------------------------------------- Task 2


def generation_counts(frame: pd.DataFrame, cfg: GIdiomAlignScore) -> tuple[Counts, Breakdown]:
    """A Task 2 setting's counts and its per-direction breakdown: each direction's MeanSim,
    Acc@t and EM (the micro specs on its answers: its mean) and BLEU / chrF (the surface specs
    on its answers: its sentence mean or corpus score)."""
    rows = main_pass(frame)
    specs = by_key(cfg)
    per_direction: Breakdown = {}
    for direction, part in rows.groupby("direction", sort=True):
        entry: dict[str, JsonValue] = {"answers": int(len(part)), "invalid": int(part["invalid"].sum())}
        for name in ("MeanSim", *(threshold_name(t) for t in cfg.thresholds), "EM"):
            entry[name] = evaluate.value_of(specs[f"{name}.micro"], part)
        for name in SURFACE:
            entry[name] = evaluate.value_of(specs[name], part)
        per_direction[str(direction)] = entry
    counts: Counts = {
        **answer_counts(rows),
        **failure_counts(rows),
        "other_pass_rows": int(len(frame) - len(rows)),
    }
    return counts, per_direction


def add_deltas(settings: dict[str, Setting], suffix: str = "") -> None:
    """With-gloss minus No-gloss, metric by metric (macro values), into the with_gloss setting:
    a difference of two settings' stored values, not a metric of one scope (no spec, no interval)."""
    without, with_ = settings.get(f"no_gloss{suffix}"), settings.get(f"with_gloss{suffix}")
    if without is None or with_ is None:
        return
    for name, value in list(with_["metrics"].items()):
        if name.startswith(DELTA_PREFIX) or name.endswith(".micro"):
            continue
        base = without["metrics"].get(name)
        with_["metrics"][f"{DELTA_PREFIX}{name}"] = None if value is None or base is None else round(value - base, 10)


# --------------------------------------------------------------------------- provenance


def sample_coverage(
    setting: str, frame: pd.DataFrame, items: Mapping[str, Mapping[str, Item]]
) -> dict[str, SampleCoverage]:
    """How much of the built tasks a score table's answers cover (a rendered sample covers
    less), per setting of the body (the additional pairs their own: results.body_setting)."""
    found: dict[str, dict[str, SampleCoverage]] = {}
    for task, part in frame.groupby("task", sort=True):
        available = dict(items.get(str(task), {}))
        if setting == "with_gloss":
            available = {
                i: item
                for i, item in available.items()
                if str(item.fields.get("gloss") or "").strip() and not item.meta.get("no_gloss_available")
            }
        directions = {item.meta.get("direction") for item in available.values()}
        found.setdefault(body_setting(setting, str(task)), {})[str(task)] = task_coverage(
            int(part["item_id"].nunique()), len(available), int(part["direction"].nunique()), len(directions)
        )
    return {name: setting_coverage(tasks) for name, tasks in found.items()}


def template_hashes(benchmark: str, settings: list[str]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for setting in settings:
        path = paths.prompts_file(benchmark, setting)
        if path.exists():
            table = read_parquet(path).select(["template_id", "template_hash"]).to_pylist()
            out[setting] = dict(sorted({row["template_id"]: row["template_hash"] for row in table}.items()))
    return out


def without_similarity(scores: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The score tables with no Task 2 similarity: where the similarity role is not computed,
    MeanSim and Acc@t are None whatever the score tables hold."""
    return {
        setting: frame.assign(similarity=np.nan) if setting in GENERATION_CONDITIONS else frame
        for setting, frame in scores.items()
    }


def setting_bodies(
    scores: dict[str, pd.DataFrame], config: GIdiomAlignConfig, similarity_computed: bool = True
) -> tuple[dict[str, Setting], dict[str, dict[str, Breakdown]]]:
    """(settings, breakdowns) of the metrics body: each setting's metrics (the specs' values in
    its scope), counts and per-direction breakdown; with_gloss's With - No-gloss deltas."""
    cfg = config.score
    if not similarity_computed:
        scores = without_similarity(scores)
    settings: dict[str, Setting] = {}
    breakdowns: dict[str, dict[str, Breakdown]] = {}
    for setting, frame in sorted(scores.items()):
        if setting == MCQ_SETTING:
            counts, per_direction = mcq_counts(frame, cfg)
            settings[setting], breakdowns[setting] = {"metrics": {}, "counts": counts}, {"per_direction": per_direction}
        elif setting in GENERATION_CONDITIONS:
            for suffix, _, part in generation_parts(frame):
                counts, per_direction = generation_counts(part, cfg)
                settings[setting + suffix] = {"metrics": {}, "counts": counts}
                breakdowns[setting + suffix] = {"per_direction": per_direction}
    evaluate.place({"settings": settings}, scopes(scores, config))
    add_deltas(settings)
    add_deltas(settings, ADDITIONAL_SUFFIX)
    return dict(sorted(settings.items())), breakdowns


def aggregate(ctx: AggregateContext[GIdiomAlignConfig]) -> dict[str, object]:
    cfg: GIdiomAlignScore = ctx.config.score
    roles, _ = role_records(ctx.scoring_meta, getattr(ctx.params, "scoring", None), [cfg.similarity_role])
    role = roles.get(cfg.similarity_role)
    similarity_computed = role is not None and role.status != "not_computed"
    settings, breakdowns = setting_bodies(ctx.scores, ctx.config, similarity_computed)
    coverage: dict[str, SampleCoverage] = {}
    tokenizers: dict[str, str] = {}
    fallbacks: dict[str, str] = {}
    for setting, frame in sorted(ctx.scores.items()):
        if len(frame):
            coverage.update(sample_coverage(setting, frame, ctx.items))
        if setting in GENERATION_CONDITIONS:
            for lang, tokenize in frame[["target_lang", "bleu_tokenize"]].drop_duplicates().itertuples(index=False):
                tokenizers[lang] = tokenize
                configured = cfg.bleu_tokenize.get(lang, cfg.bleu_tokenize_default)
                if tokenize != configured:
                    fallbacks[lang] = (
                        f"configured {configured!r} cannot run here ({tokenizer_available(configured)}); "
                        f"used {tokenize!r}"
                    )
    provenance = GIdiomAlignProvenance(
        roles=roles,
        score=cfg.model_dump(mode="json"),
        bleu_tokenizers_used=dict(sorted(tokenizers.items())),
        bleu_tokenizer_fallbacks=dict(sorted(fallbacks.items())),
        coverage=dict(sorted(coverage.items())),
        template_hashes=template_hashes(ctx.benchmark, sorted(ctx.scores)),
        notes=[str(note) for note in ctx.scoring_meta.get("notes", [])],
    )
    return {"settings": settings, "breakdowns": breakdowns, "provenance": provenance.model_dump(mode="json")}
