"""Chengyu-Bench's rows as items in MLflow (`Benchmark.item_view`): correctness per item, and
for open cloze the rank of the gold idiom and hits@k."""

from __future__ import annotations

from ..contexts import ItemMetric, ItemView

ITEM_VIEW = ItemView(
    metrics=(
        ItemMetric("correct"),
        ItemMetric("rank"),
        ItemMetric("hit_at_1"),
        ItemMetric("hit_at_3"),
        ItemMetric("hit_at_5"),
        ItemMetric("n_valid"),
        ItemMetric("ambiguous"),
        ItemMetric("not_a_candidate"),
    ),
    tags=("data", "answered", "unformatted"),
    answer=("prediction", "predictions"),
    parse_ok="ok",
    flags=("flags",),
    strata=("task",),
)
