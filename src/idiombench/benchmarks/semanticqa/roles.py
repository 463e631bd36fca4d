"""The neural scorer SemanticQA's interpretation metrics need (docs/METRICS.md)."""

from __future__ import annotations

from ...scoring.provenance import PaperRole

SCORER_ROLES: tuple[PaperRole, ...] = (
    PaperRole(
        "bertscore_en",
        "bertscore",
        "roberta-large",
        False,
        "SemanticQA interpretation tasks: BERTScore",
        "the paper names BERTScore only; roberta-large (layer 17) is bert-score's default for English",
    ),
)
