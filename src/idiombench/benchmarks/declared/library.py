"""The named metrics a declaration lists (`metrics: [accuracy, macro_f1, format_ok]`): each name is
one `metrics.MetricSpec` built on `statistics.formulas` over the columns the declared score stage
writes (score.py), defined here once. Values are percent stored to 6 decimals; the resampling unit
and the headline mark come from the declaration.

| name | shapes | statistic |
|---|---|---|
| accuracy | multiple_choice, label, cloze | share of rows whose answer is the gold one (`correct`) |
| macro_f1 | multiple_choice, label | F1 over the gold and predicted labels (option letters), macro-averaged |
| exact_match | generation | share of rows whose output is a reference (core.parsing.normalise_text; `correct`) |
| rouge_l | generation | mean ROUGE-L F1 against the best reference (scoring.lexical, the benchmark's language) |
| bertscore | generation | mean BERTScore F1 against the best reference (the scorer role `bertscore_<language>`) |
| format_ok | all | share of outputs that followed the requested format (`ok`) |
| parse_failure_rate | all | share of outputs from which nothing could be read (`parse_failed`; lower is better) |

An output with nothing to read scores 0 on exact_match, rouge_l and bertscore (it is wrong, not
left out); bertscore's column is empty when its role has no model in the profile (the score
stage says so).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...metrics import ITEM, PERCENT, MetricSpec, Resampling
from ...statistics.formulas import F1, Mean, Ratio

if TYPE_CHECKING:
    import pandas as pd

PERCENT6 = PERCENT.rounded(6)
CHOICE = frozenset({"multiple_choice", "label"})  # a closed set of answers, each a class of its own
ANSWERED = CHOICE | {"cloze"}  # one answer, right or wrong
GENERATION = frozenset({"generation"})  # a free text, scored against references
ALL = ANSWERED | GENERATION
CLUSTER = "cluster"  # the score column holding each row's resampling unit (a declared field's value)


def flag(column: str) -> Callable[[pd.DataFrame], pd.Series]:
    """A boolean column counted as 1/0."""
    return lambda rows: rows[column].astype(bool).astype(float)


def predictions(rows: pd.DataFrame) -> Sequence[str | None]:
    return [None if p is None or p != p else str(p) for p in rows["prediction"]]


@dataclass(frozen=True)
class Entry:
    """A named metric: the shapes it applies to, and its spec given the resampling unit and the
    headline mark."""

    shapes: frozenset[str]
    make: Callable[[Resampling, bool], MetricSpec]


def _ratio(key: str, label: str, column: str, *, better: bool = True, paper: bool = True) -> Callable[..., MetricSpec]:
    def make(resampling: Resampling, headline: bool) -> MetricSpec:
        return MetricSpec(
            key,
            label,
            Ratio(flag(column)),
            PERCENT6,
            higher_is_better=better,
            resampling=resampling,
            headline=headline,
            paper=paper,
        )

    return make


def _mean(key: str, label: str, column: str) -> Callable[..., MetricSpec]:
    """A graded score in [0, 1] per row, averaged (a percent)."""

    def make(resampling: Resampling, headline: bool) -> MetricSpec:
        return MetricSpec(key, label, Mean(column), PERCENT6, resampling=resampling, headline=headline, binary=False)

    return make


def _macro_f1(resampling: Resampling, headline: bool) -> MetricSpec:
    return MetricSpec(
        "macro_f1",
        "Macro-F1",
        F1("gold", predictions, "macro"),
        PERCENT6,
        resampling=resampling,
        headline=headline,
        binary=False,
    )


LIBRARY: dict[str, Entry] = {
    "accuracy": Entry(ANSWERED, _ratio("accuracy", "Accuracy", "correct")),
    "macro_f1": Entry(CHOICE, _macro_f1),
    "exact_match": Entry(GENERATION, _ratio("exact_match", "Exact match", "correct")),
    "rouge_l": Entry(GENERATION, _mean("rouge_l", "ROUGE-L", "rouge_l")),
    "bertscore": Entry(GENERATION, _mean("bertscore", "BERTScore", "bertscore_f1")),
    "format_ok": Entry(ALL, _ratio("format_ok", "Format followed", "ok", paper=False)),
    "parse_failure_rate": Entry(
        ALL, _ratio("parse_failure_rate", "Parse failures", "parse_failed", better=False, paper=False)
    ),
}
SHAPES: dict[str, frozenset[str]] = {name: entry.shapes for name, entry in LIBRARY.items()}


def resampling(unit: str) -> Resampling:
    """`item`, or the field whose value each row's cluster is (rows without one: their item)."""
    return ITEM if unit == "item" else Resampling(unit, CLUSTER, fallback=ITEM)


def specs(names: Sequence[str], headline: str, unit: str) -> tuple[MetricSpec, ...]:
    """The specs of the named metrics, in the declared order, `headline` marked."""
    cluster = resampling(unit)
    return tuple(LIBRARY[name].make(cluster, name == headline) for name in names)
