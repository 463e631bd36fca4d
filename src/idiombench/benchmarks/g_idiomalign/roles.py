"""The neural scorers G-IdiomAlign needs: the construction pipeline's English embedder and
Task 2's multilingual cosine (docs/METRICS.md)."""

from __future__ import annotations

from ...scoring.provenance import PaperRole

SCORER_ROLES: tuple[PaperRole, ...] = (
    PaperRole(
        "embedder_en",
        "embedder",
        "text-embedding-3-large",
        True,
        "G-IdiomAlign construction: English gloss embeddings",
        "an OpenAI API model, which this project does not call",
    ),
    PaperRole(
        "embedder_multilingual",
        "embedder",
        "Qwen/Qwen3-Embedding-8B",
        True,
        "G-IdiomAlign Task 2: cosine to the gold idiom (Acc@t)",
        "absolute similarities depend on the encoder (paper, appendix E)",
    ),
)
