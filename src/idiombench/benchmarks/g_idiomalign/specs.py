"""G-IdiomAlign's metrics (paper tables 3, 4, 12, 14 and 16), each declared once, and where they
are evaluated.

Every value is a percent of the main-pass rows, stored rounded to 10 decimals, except BLEU and
chrF (sacrebleu's 0-100 points, stored as computed). Resampled over the source IDIOM (the score
tables' `idiom`, `<language>:<idiom>`): an idiom asked in several directions is drawn with all
of its items (docs/METRICS.md#6-intervals-and-significance).

- Task 1 (`mcq`, scope kind "mcq"): per target group and overall, `accuracy.micro.<g>` (mean of
  `correct`, as pandas' Series.mean adds it) and `accuracy.macro.<g>` (mean over the group's
  directions of each direction's accuracy, as pandas' groupby mean adds them), the same without
  the duplicate-option items (`accuracy_without_duplicate_option.*`), and the outcome shares
  `outcome.<g>.<type>`; with the option-order pass, its metrics (scoring/option_order.py).
- Task 2 (`no_gloss` / `with_gloss`, kind "generation"): `MeanSim` (100 x cosine), `Acc@<t>`
  (cosine >= t, for every configured threshold), `EM`, macro over directions, and their
  `.micro` means over answers; `BLEU` / `chrF` per direction (sentence means, or sacrebleu's
  corpus score of the direction: `score.surface_aggregation`) then the mean over directions.
  A corpus score has no per-answer form: no interval.

The With-gloss - No-gloss `delta.*` values are differences of two settings' stored values
(aggregate.add_deltas), not a metric of one scope: they are no spec and have no interval.

Scopes: `mcq` (its whole score table), and per Task 2 condition the main pairs (`no_gloss`,
task gloss_generation) and the additional pairs (`no_gloss_additional`, task
gloss_generation_additional: the `additional` rows of the same score table, reported in their
own tables, never mixed into the main numbers). The additional pairs' scopes are marked
`breakdown`: not the setting's paper cells (evaluate-predictions reads them with `--task
gloss_generation_additional`), item outcomes (serving noise, disagreement) or summary headline;
their values, intervals and parent-run headline metrics are theirs as for any scope.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ...metrics import PERCENT, POINTS, MetricSpec, Resampling, Rows, Scope, Unit
from ...scoring import option_order
from ...statistics.formulas import Column, Custom, Features, MacroMean, Mean, Statistic, Summation
from .results import ADDITIONAL_SUFFIX, GENERATION_CONDITIONS
from .score import MCQ_SETTING
from .task1 import CORRECT, DISTRACTOR_TYPES, GROUPS, INVALID, TARGET_COPY
from .task2 import corpus_bleu, corpus_chrf

if TYPE_CHECKING:
    from .config import GIdiomAlignConfig, GIdiomAlignScore

OVERALL = "overall"
TASKS = {False: "gloss_generation", True: "gloss_generation_additional"}
MCQ, GENERATION = "mcq", "generation"  # the scope kinds
PERCENT10 = PERCENT.rounded(10)
IDIOM = Resampling("idiom", "idiom")
CORPUS_REASON = (
    "BLEU and chrF are sacrebleu corpus scores per direction (score.surface_aggregation: corpus), "
    "which have no per-answer form to resample"
)
NOT_COMPUTED_REASON = "not computed in corpus mode (score.surface_aggregation: corpus)"


def threshold_name(t: float) -> str:
    return f"Acc@{t:.2f}"


def mcq_outcomes(cfg: GIdiomAlignScore) -> tuple[str, ...]:
    """The outcome types of table 12 (target_copy only where the duplicate rule is off)."""
    return (CORRECT, *DISTRACTOR_TYPES, INVALID) + (() if cfg.duplicate_option_target_correct else (TARGET_COPY,))


# --------------------------------------------------------------------------- columns and row conditions


def _in_group(group: str) -> Callable[[pd.DataFrame], pd.Series]:
    return lambda rows: rows["group"] == group


def _without_duplicates(group: str) -> Callable[[pd.DataFrame], pd.Series]:
    def keep(rows: pd.DataFrame) -> pd.Series:
        clean = ~rows["duplicate_option"].astype(bool)
        return clean if group == OVERALL else clean & (rows["group"] == group)

    return keep


def _is_outcome(outcome: str) -> Callable[[pd.DataFrame], pd.Series]:
    return lambda rows: (rows["outcome"] == outcome).astype(float)


def _at_least(t: float) -> Callable[[pd.DataFrame], pd.Series]:
    """1 where the cosine is >= t, 0 below, NaN where it was not computed."""

    def hit(rows: pd.DataFrame) -> pd.Series:
        sims = rows["similarity"].astype(float)
        return pd.Series(np.where(sims.isna(), np.nan, (sims >= t).astype(float)), index=rows.index)

    return hit


def _nothing(rows: pd.DataFrame) -> pd.Series:
    return pd.Series(False, index=rows.index)


# --------------------------------------------------------------------------- the statistics


def macro(column: Column, summation: Summation = Summation.GROUPBY) -> MacroMean:
    """Mean over directions of each direction's mean (pandas' groupby mean: GROUPBY; a mean per
    direction as Series.mean adds it: NUMPY)."""
    return MacroMean(column, "direction", summation=summation)


def micro(column: Column) -> Mean:
    """Mean over answers, as pandas' Series.mean adds it."""
    return Mean(column, summation=Summation.NUMPY)


def _corpus(score: Callable[[list[str], list[str], str], float]) -> Statistic:
    """Mean over directions of each direction's corpus score (one value per direction: no
    per-row form; the spec says so with `no_interval`)."""

    def build(rows: pd.DataFrame) -> Features:
        labels, values = [], []
        for direction, part in rows.groupby("direction", sort=True):
            labels.append(str(direction))
            tokenize = str(part["bleu_tokenize"].iloc[0])
            values.append(score(part["prediction_clean"].tolist(), part["gold_clean"].tolist(), tokenize))
        return Features(np.zeros((len(rows), len(values))), np.array(values, dtype=float), f"corpus:{'|'.join(labels)}")

    def formula(sums: np.ndarray, scale: float) -> np.ndarray:
        if not sums.shape[1]:
            return np.full(len(sums), np.nan)
        return np.asarray(np.add.reduce(sums, axis=1) / sums.shape[1] * scale, dtype=np.float64)

    return Custom(build, formula)


def _chrf(predictions: list[str], golds: list[str], tokenize: str) -> float:
    return corpus_chrf(predictions, golds)


# --------------------------------------------------------------------------- the specs


def mcq_specs(cfg: GIdiomAlignScore) -> tuple[MetricSpec, ...]:
    """Task 1: tables 3 and 12 (their cells are evaluate-predictions' paper cells) and the rest of
    the setting's metrics."""
    kinds = frozenset({MCQ})
    out: list[MetricSpec] = []
    for prefix, name, where, paper in (
        ("accuracy", "", _in_group, True),
        ("accuracy_without_duplicate_option", " without dup.", _without_duplicates, False),
    ):
        for scope in (*GROUPS, OVERALL):
            rows = Rows() if prefix == "accuracy" and scope == OVERALL else Rows(where=where(scope))
            label = "Overall" if scope == OVERALL else scope
            out += [
                MetricSpec(
                    f"{prefix}.macro.{scope}",
                    f"Acc. {label} Macro{name}",
                    macro("correct"),
                    PERCENT10,
                    rows=rows,
                    kinds=kinds,
                    resampling=IDIOM,
                    headline=prefix == "accuracy" and scope == OVERALL,
                    paper=paper,
                ),
                MetricSpec(
                    f"{prefix}.micro.{scope}",
                    f"Acc. {label} Micro{name}",
                    micro("correct"),
                    PERCENT10,
                    rows=rows,
                    kinds=kinds,
                    resampling=IDIOM,
                    paper=paper,
                ),
            ]
    for scope in (*GROUPS, OVERALL):
        for outcome in mcq_outcomes(cfg):
            out.append(
                MetricSpec(
                    f"outcome.{scope}.{outcome}",
                    f"{scope} {outcome}",
                    micro(_is_outcome(outcome)),
                    PERCENT10,
                    higher_is_better=outcome == CORRECT,
                    rows=Rows() if scope == OVERALL else Rows(where=_in_group(scope)),
                    kinds=kinds,
                    resampling=IDIOM,
                    # table 12's cells: the typed outcomes per target group
                    paper=scope != OVERALL and outcome in (CORRECT, *DISTRACTOR_TYPES),
                )
            )
    return (*out, *option_order.specs(kinds))


def generation_specs(cfg: GIdiomAlignScore) -> tuple[MetricSpec, ...]:
    """Task 2: tables 4, 14 and 16 (the macro values are evaluate-predictions' paper cells), each
    with its `.micro` mean over answers."""
    kinds = frozenset({GENERATION})
    headline = threshold_name(cfg.headline_thresholds[-1])

    def pair(
        key: str, column: Column, unit: Unit, binary: bool, summation: Summation = Summation.GROUPBY
    ) -> tuple[MetricSpec, MetricSpec]:
        """The macro value over directions (a paper cell) and its micro mean over answers."""
        return (
            MetricSpec(
                key,
                key,
                macro(column, summation),
                unit,
                kinds=kinds,
                resampling=IDIOM,
                binary=binary,
                headline=key in (headline, "EM"),
            ),
            MetricSpec(
                f"{key}.micro",
                f"{key} (micro)",
                micro(column),
                unit,
                kinds=kinds,
                resampling=IDIOM,
                binary=binary,
                paper=False,
            ),
        )

    out: list[MetricSpec] = [*pair("MeanSim", "similarity", PERCENT10, False)]
    for t in cfg.thresholds:
        out += pair(threshold_name(t), _at_least(t), PERCENT10, True)
    out += pair("EM", "exact_match", PERCENT10, True)
    for key, column, corpus in (("BLEU", "bleu", corpus_bleu), ("chrF", "chrf", _chrf)):
        if cfg.surface_aggregation == "sentence":
            # per direction: the mean of its sentence scores as Series.mean adds them
            out += pair(key, column, POINTS, False, Summation.NUMPY)
            continue
        out += [
            MetricSpec(key, key, _corpus(corpus), POINTS, kinds=kinds, resampling=IDIOM, no_interval=CORPUS_REASON),
            MetricSpec(
                f"{key}.micro",
                f"{key} (micro)",
                Mean(column, where=_nothing),
                POINTS,
                kinds=kinds,
                resampling=IDIOM,
                paper=False,
                no_interval=NOT_COMPUTED_REASON,
            ),
        ]
    return tuple(out)


@cache
def _specs(
    thresholds: tuple[float, ...], headline: tuple[float, ...], duplicate_rule: bool, surface: str
) -> tuple[MetricSpec, ...]:
    from .config import GIdiomAlignScore

    cfg = GIdiomAlignScore(
        thresholds=list(thresholds),
        headline_thresholds=list(headline),
        duplicate_option_target_correct=duplicate_rule,
        surface_aggregation=surface,  # type: ignore[arg-type]
    )
    return (*mcq_specs(cfg), *generation_specs(cfg))


def metric_specs(cfg: GIdiomAlignScore) -> tuple[MetricSpec, ...]:
    """Every spec under `cfg` (the same objects for equal options: a spec is declared once)."""
    return _specs(
        tuple(cfg.thresholds),
        tuple(cfg.headline_thresholds),
        cfg.duplicate_option_target_correct,
        cfg.surface_aggregation,
    )


def by_key(cfg: GIdiomAlignScore) -> dict[str, MetricSpec]:
    return {spec.key: spec for spec in metric_specs(cfg)}


def generation_parts(frame: pd.DataFrame) -> list[tuple[str, bool, pd.DataFrame]]:
    """(suffix, additional, rows) of a Task 2 score table's main and additional pairs, those with rows."""
    flags = frame["additional"].astype(bool) if len(frame) else pd.Series([], dtype=bool)
    out = []
    for additional, suffix in ((False, ""), (True, ADDITIONAL_SUFFIX)):
        part = frame[flags == additional]
        if len(part):
            out.append((suffix, additional, part))
    return out


def scopes(scores: Mapping[str, pd.DataFrame], config: GIdiomAlignConfig) -> list[Scope]:
    """`mcq`'s score table (settings.mcq.metrics); per Task 2 condition its main pairs
    (settings.<c>.metrics) and its additional pairs (settings.<c>_additional.metrics), each
    scored where it has rows."""
    specs = metric_specs(config.score)
    out: list[Scope] = []
    for setting, frame in sorted(scores.items()):
        if setting == MCQ_SETTING:
            out.append(Scope(setting, setting, frame, ("settings", setting, "metrics"), MCQ, specs, task=MCQ_SETTING))
        elif setting in GENERATION_CONDITIONS:
            for suffix, additional, part in generation_parts(frame):
                name = setting + suffix
                path = ("settings", name, "metrics")
                # the additional pairs: their own tables (and evaluate-predictions' --task), not the
                # setting's paper cells, item outcomes or summary-page headline
                out.append(Scope(name, setting, part, path, GENERATION, specs, TASKS[additional], additional))
    return out
