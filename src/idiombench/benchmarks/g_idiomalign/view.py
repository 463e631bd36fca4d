"""G-IdiomAlign's rows as items in MLflow (`Benchmark.item_view`): Task 1 (MCQ) with the
distractor type a wrong answer chose, Task 2 (generation) with its similarity, EM, BLEU, chrF."""

from __future__ import annotations

from ..contexts import ItemMetric, ItemView

ITEM_VIEW = ItemView(
    metrics=(
        ItemMetric("correct"),
        ItemMetric("invalid"),
        ItemMetric("similarity", "embedder_multilingual"),
        ItemMetric("exact_match"),
        ItemMetric("bleu"),
        ItemMetric("chrf"),
    ),
    tags=(
        "direction",
        "source_lang",
        "target_lang",
        "pair",
        "group",
        "chosen_type",
        "outcome",
        "duplicate_option",
        "additional",
    ),
    answer=("prediction_clean", "parsed"),
    parse_ok="ok",
    flags=("flags",),
    strata=("task", "direction"),
)
