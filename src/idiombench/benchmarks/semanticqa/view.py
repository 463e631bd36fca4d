"""SemanticQA's rows as items in MLflow (`Benchmark.item_view`): accuracy / extraction per
item, METEOR, ROUGE-L and BERTScore on the interpretation tasks."""

from __future__ import annotations

from ..contexts import ItemMetric, ItemView

ITEM_VIEW = ItemView(
    metrics=(
        ItemMetric("correct"),
        ItemMetric("correct_strict"),
        ItemMetric("correct_released_code"),
        ItemMetric("extraction_correct"),
        ItemMetric("meteor"),
        ItemMetric("rouge_l"),
        ItemMetric("bertscore_f1", "bertscore_en"),
    ),
    tags=("code", "kind", "composition"),
    answer=("parsed",),
    parse_ok="ok",
    flags=("flags",),
    strata=("task",),
)
