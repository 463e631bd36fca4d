"""OrderProbe's rows as items in MLflow (`Benchmark.item_view`): one trace per generation row
(main pass and each consistency sample), its Recovery and S_Acc terms as assessments."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..contexts import ItemMetric, ItemView
from .neural import CE_ROLE, NLI_ROLE, bert_role, sts_role


def _sts(row: Mapping[str, Any]) -> str:
    return sts_role(row["language"])


def _bert(row: Mapping[str, Any]) -> str:
    return bert_role(row["language"])


ITEM_VIEW = ItemView(
    metrics=(
        ItemMetric("recovered"),
        ItemMetric("recovered_strict"),
        ItemMetric("s_acc"),
        ItemMetric("ce", CE_ROLE),
        ItemMetric("bert", _bert),
        ItemMetric("sts", _sts),
        ItemMetric("lex"),
        ItemMetric("f_beta"),
        ItemMetric("f_beta_halved"),
        ItemMetric("s_logic", NLI_ROLE),
        ItemMetric("s_info"),
    ),
    tags=("pattern", "category", "expression", "expression_id", "is_canonical", "is_identity"),
    answer=("explanation",),
    parse_ok="format_ok",
    flags=("parse_flags", "score_flags"),
    strata=("language", "pattern"),
)
