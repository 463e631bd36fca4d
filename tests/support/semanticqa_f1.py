"""SemanticQA's LCC F1s of a list of gold labels and predictions, computed by the benchmark's
specs (benchmarks/semanticqa/specs.py: statistics.formulas.F1 over the scored rows), the one
formula the metrics JSON and the intervals use: what the tests compare with scikit-learn, the
estimands and the authors' released scorer."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from idiombench.benchmarks.semanticqa.specs import f1_specs
from idiombench.metrics import evaluate


def label_rows(gold: Sequence[str], predicted: Sequence[str | None]) -> pd.DataFrame:
    """Main-pass LCC score rows: each prediction read in the requested format (None: unreadable)."""
    if len(gold) != len(predicted):
        raise ValueError("gold and predicted differ in length")
    return pd.DataFrame(
        {
            "pass": ["main"] * len(gold),
            "gold": list(gold),
            "parsed": pd.Series(list(predicted), dtype=object),
            "ok": [True] * len(gold),
            "flags": [[] for _ in gold],
            "correct": [float(p == g) for g, p in zip(gold, predicted, strict=True)],
        }
    )


def f1_scores(gold: Sequence[str], predicted: Sequence[str | None]) -> dict[str, float | None]:
    """{"macro-F1", "micro-F1", "weighted-F1"} in percent; None each without a row."""
    rows = label_rows(gold, predicted)
    return {spec.key: evaluate.value_of(spec, rows) for spec in f1_specs(True)}
