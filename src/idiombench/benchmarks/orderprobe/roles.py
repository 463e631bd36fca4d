"""The neural scorers OrderProbe's metrics need, and the models the paper names for them
(section 4, metric definitions; docs/METRICS.md)."""

from __future__ import annotations

from ...scoring.provenance import PaperRole

SCORER_ROLES: tuple[PaperRole, ...] = (
    PaperRole(
        "cross_encoder",
        "cross_encoder",
        "BAAI/bge-reranker-base",
        True,
        "OrderProbe S_Acc: cross-encoder relevance term, pairs (reference, explanation)",
    ),
    PaperRole("nli", "nli", "MoritzLaurer/mDeBERTa-v3-base-mnli-xnli", True, "OrderProbe S_Logic"),
    PaperRole("sts_zh", "embedder", "BAAI/bge-small-zh-v1.5", True, "OrderProbe S_Acc: STS term, zh-CN and zh-TW"),
    PaperRole(
        "sts_multilingual",
        "embedder",
        "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2",
        True,
        "OrderProbe S_Acc: STS term, ja and ko",
    ),
    PaperRole(
        "bertscore_zh",
        "bertscore",
        "bert-base-chinese",
        False,
        "OrderProbe S_Acc: BERTScore term, Chinese",
        'the paper says "language-specific settings"; this is bert-score\'s model for lang=zh',
    ),
    PaperRole(
        "bertscore_ja",
        "bertscore",
        "bert-base-multilingual-cased",
        False,
        "OrderProbe S_Acc: BERTScore term, Japanese",
        "bert-score's model for lang=ja",
    ),
    PaperRole(
        "bertscore_ko",
        "bertscore",
        "bert-base-multilingual-cased",
        False,
        "OrderProbe S_Acc: BERTScore term, Korean",
        "bert-score's model for lang=ko",
    ),
)
