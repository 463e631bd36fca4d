"""SemanticQA's metrics (paper tables 3-6 and the LCC F1 table), each declared once, and where
they are evaluated.

A scope is one (setting, task): its metrics sit at `settings.<setting>.metrics.<task>` of the
metrics body, its kind is the task's kind (adapters.py: mcq, label, extraction,
interpretation) in an atomic setting, and the kind of its composition in a sequential one.
Every value is a percent stored unrounded, the mean of the main-pass rows' column times 100 as
pandas adds it (`float(values.dropna().mean() * 100.0)`: Mean with Summation.NUMPY), or an F1
in percent (statistics.formulas.F1, as scikit-learn's f1_score); resampled over items.

- mcq (IED, NCC) and label (LCC): ACC = mean of `correct` (rows with a gold); LCC also
  macro-, micro- and weighted-F1 over the scored rows (the label universe of a paired test is
  the gold labels and every model's recognised predictions: metrics.evaluate.estimands);
- extraction (IEE, LCE, NCE, VPE, LVE, VIE): ACC_s = mean of `correct`;
- interpretation (IEI, LCI, NCI): METEOR, ROUGE-L, BERTScore = mean of the column over the
  rows with a gold;
- sequential settings (sequential.py; paper tables 5 and 6), over the composed rows: Ext = mean
  of a right extraction; Cond = the second step's score (the judgement's `correct`, or METEOR)
  over the rows whose extraction was right; Overall = the same with 0 where it was wrong; an
  extraction -> interpretation composition also has Cond / Overall ROUGE-L and BERTScore;
- the option-order pass over IED and NCC (scoring/option_order.py).

Headline (MLflow parent run, serving noise, disagreement, summary page): ACC, ACC_s and
ROUGE-L of the atomic settings. The LCC category-scaling breakdown (mean and standard
deviation over class combinations, i.e. over settings) is not a metric of one scope: it stays
breakdown code (aggregate.scaling_breakdown) over the settings' ACC.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ...metrics import MAIN_PASS, PERCENT, MetricSpec, Rows, Scope
from ...scoring import option_order
from ...statistics.formulas import F1, Mean, Summation
from .adapters import ADAPTERS
from .score import sequential_setting
from .sequential import COMPOSITIONS

if TYPE_CHECKING:
    from .config import SemanticQAConfig

SHOTS = re.compile(r"^(\d+)-shot$")
NUMPY = Summation.NUMPY  # pandas' Series.mean: the values stay what the metrics JSON always held

CHOICE = frozenset({"mcq", "label"})
LABEL = frozenset({"label"})
EXTRACTION = frozenset({"extraction"})
INTERPRETATION = frozenset({"interpretation"})
# a sequential setting's scope kinds: what its second step is (see `sequential_kind`)
JUDGEMENT_STEP = "sequential-judgement"
INTERPRETATION_STEP = "sequential-interpretation"
SEQUENTIAL = frozenset({JUDGEMENT_STEP, INTERPRETATION_STEP})
SECOND_STEP = {c.name: c.second for c in COMPOSITIONS.values()}


def setting_order(setting: str) -> tuple[int, int, str]:
    """0-shot, 3-shot, 5-shot first (by k), then the rest by name."""
    match = SHOTS.match(setting)
    return (0, int(match.group(1)), setting) if match else (1, 0, setting)


# --------------------------------------------------------------------------- the rows


def has_gold(rows: pd.DataFrame) -> pd.Series:
    """Rows of an item with a gold (an item without one is counted, not scored)."""
    return ~rows["flags"].apply(lambda f: "no_gold" in list(f))


def scored(rows: pd.DataFrame) -> pd.Series:
    """Rows with a right/wrong outcome (what ACC's mean counts, and an F1 its confusion counts of)."""
    return rows["correct"].notna()


def composed(rows: pd.DataFrame) -> pd.Series:
    """A sequential setting's rows of a composition (a task without one has none)."""
    return rows["composition"].notna()


GOLD = Rows(where=has_gold)
SCORED = Rows(where=scored)
COMPOSED = Rows(where=composed)


def recognised_label(parsed: Any, ok: bool, flags: Any, count_format_deviations: bool) -> str | None:
    """The predicted taxonomy label an F1 counts: what ACC compared, unless it is no label at all."""
    if not isinstance(parsed, str) or "unknown_label" in list(flags):
        return None
    return parsed if ok or count_format_deviations else None


def predicted_labels(count_format_deviations: bool) -> Callable[[pd.DataFrame], list[str | None]]:
    def predicted(rows: pd.DataFrame) -> list[str | None]:
        return [
            recognised_label(p, bool(ok), f, count_format_deviations)
            for p, ok, f in zip(rows["parsed"], rows["ok"], rows["flags"], strict=True)
        ]

    return predicted


def extracted(rows: pd.DataFrame) -> pd.Series:
    """1/0: the extracted phrase is right (a row without one, e.g. an empty response, is wrong)."""
    return rows["extraction_correct"].fillna(False).astype(bool)


def second_step(column: str | None = None) -> Callable[[pd.DataFrame], pd.Series]:
    """The second step's score of each composed row: `column`, or (None) the composition's own,
    the judgement's `correct` or an interpretation's METEOR."""

    def score(rows: pd.DataFrame) -> pd.Series:
        if column is not None:
            return rows[column].astype(float)
        judgement = rows["composition"].map(SECOND_STEP).eq("judgement").to_numpy()
        values = np.where(judgement, rows["correct"].to_numpy(dtype=float), rows["meteor"].to_numpy(dtype=float))
        return pd.Series(values, index=rows.index)

    return score


def overall(column: str | None = None) -> Callable[[pd.DataFrame], pd.Series]:
    """The second step's score with 0 where the extraction was wrong; NaN throughout where the
    score was computed for no row (METEOR without WordNet, BERTScore without its role)."""
    second = second_step(column)

    def score(rows: pd.DataFrame) -> pd.Series:
        values = second(rows)
        return values.where(extracted(rows), 0.0) if values.notna().any() else values

    return score


# --------------------------------------------------------------------------- the specs


def mean(key: str, label: str, column: str, kinds: frozenset[str], rows: Rows, **options: Any) -> MetricSpec:
    """A percent: the mean of `column` over `rows` with a value, as pandas adds it."""
    return MetricSpec(key, label, Mean(column, summation=NUMPY), PERCENT, kinds=kinds, rows=rows, **options)


ACC = mean("ACC", "ACC", "correct", CHOICE, Rows(), headline=True, description="accuracy")
ACC_S = mean("ACC_s", "ACC_s", "correct", EXTRACTION, Rows(), headline=True, description="sequence-level exact match")
METEOR = mean("METEOR", "METEOR", "meteor", INTERPRETATION, GOLD, binary=False)
ROUGE_L = mean("ROUGE-L", "ROUGE-L", "rouge_l", INTERPRETATION, GOLD, binary=False, headline=True)
BERTSCORE = mean("BERTScore", "BERTScore", "bertscore_f1", INTERPRETATION, GOLD, binary=False)
F1_KEYS = {"macro": "macro-F1", "micro": "micro-F1", "weighted": "weighted-F1"}


def f1_specs(count_format_deviations: bool) -> tuple[MetricSpec, ...]:
    """LCC's F1s over the scored rows; a prediction counts as a label as ACC compares it
    (`score.count_format_deviations`)."""
    predicted = predicted_labels(count_format_deviations)
    return tuple(
        MetricSpec(key, key, F1("gold", predicted, average), PERCENT, kinds=LABEL, rows=SCORED)
        for average, key in F1_KEYS.items()
    )


def sequential_specs() -> tuple[MetricSpec, ...]:
    def spec(key: str, label: str, column: Callable[[pd.DataFrame], pd.Series], **options: Any) -> MetricSpec:
        statistic = Mean(column, summation=NUMPY, **options)
        return MetricSpec(key, label, statistic, PERCENT, kinds=SEQUENTIAL, rows=COMPOSED, binary=False)

    interpretation = frozenset({INTERPRETATION_STEP})
    out = [
        MetricSpec("Ext", "Ext.", Mean(extracted, summation=NUMPY), PERCENT, kinds=SEQUENTIAL, rows=COMPOSED),
        spec("Cond", "Cond.", second_step(), where=extracted),
        spec("Overall", "Overall", overall()),
    ]
    for suffix, column in ((" ROUGE-L", "rouge_l"), (" BERTScore", "bertscore_f1")):
        out += [
            MetricSpec(
                f"Cond{suffix}",
                f"Cond.{suffix}",
                Mean(second_step(column), where=extracted, summation=NUMPY),
                PERCENT,
                kinds=interpretation,
                rows=COMPOSED,
                binary=False,
            ),
            MetricSpec(
                f"Overall{suffix}",
                f"Overall{suffix}",
                Mean(overall(column), summation=NUMPY),
                PERCENT,
                kinds=interpretation,
                rows=COMPOSED,
                binary=False,
            ),
        ]
    return tuple(out)


SEQUENTIAL_SPECS = sequential_specs()
OPTION_ORDER = option_order.specs(frozenset({"mcq"}))


def specs_for(count_format_deviations: bool) -> tuple[MetricSpec, ...]:
    """Every spec, in the order the metrics JSON has always listed them per task."""
    f1s = f1_specs(count_format_deviations)
    return (ACC, ACC_S, *f1s, METEOR, ROUGE_L, BERTSCORE, *SEQUENTIAL_SPECS, *OPTION_ORDER)


# the specs under either `score.count_format_deviations` (the F1s' reading of a prediction)
METRICS = {deviations: specs_for(deviations) for deviations in (True, False)}
# the metric of table 3 (and the figure) per task kind
PRIMARY = {"mcq": ACC, "label": ACC, "extraction": ACC_S, "interpretation": METEOR}

# breakdowns (aggregate.breakdowns_for): ACC_s under each extraction match rule, whichever one
# `score.extraction_match` makes `correct`
RELEASED_CODE_MATCH = mean("ACC_s_released_code", "ACC_s (released code)", "correct_released_code", EXTRACTION, Rows())
STRICT_MATCH = mean("ACC_s_strict", "ACC_s (strict)", "correct_strict", EXTRACTION, Rows())


def metric_specs(config: SemanticQAConfig) -> tuple[MetricSpec, ...]:
    return METRICS[config.score.count_format_deviations]


# --------------------------------------------------------------------------- the scopes


def sequential_kind(rows: pd.DataFrame) -> str:
    """A sequential task's kind, as its composed main-pass rows show it: a judgement where any
    row has a right/wrong second step, else an interpretation (also where no row is composed:
    then only Ext, Cond and Overall, none of them computed)."""
    found = rows[composed(rows)] if len(rows) else rows
    if not len(found) or found["correct"].notna().any():
        return JUDGEMENT_STEP
    return INTERPRETATION_STEP


def scopes(scores: Mapping[str, pd.DataFrame], config: SemanticQAConfig) -> list[Scope]:
    """Per setting (0-, 3-, 5-shot first) and task of its main pass: the task's rows of every pass
    (the option-order specs read the rotated pass), under settings.<s>.metrics.<task>."""
    specs: Sequence[MetricSpec] = metric_specs(config)
    out: list[Scope] = []
    for setting in sorted(scores, key=setting_order):
        frame = scores[setting]
        main = frame[frame["pass"] == MAIN_PASS]
        sequential = sequential_setting(setting, config.score)
        for task in sorted(main["task"].unique()):
            kind = sequential_kind(main[main["task"] == task]) if sequential else ADAPTERS[task].kind
            rows = frame[frame["task"] == task]
            path = ("settings", setting, "metrics", task)
            out.append(Scope(f"{setting}/{task}", setting, rows, path, kind, specs, task=task))
    return out
