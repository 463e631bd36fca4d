"""What the papers say about a scorer role: read-only facts that live in code, next to
the benchmark that needs the role (its package's `roles.py`). params.yaml only says which
model fills a role; editing it can never make a substitute pass for the paper's model.
The registry collects the declared roles (`benchmarks.registry.paper_roles`) and config.py
attaches them to the params' scoring section (`ScoringConfig.paper_role`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

RoleKind = Literal["cross_encoder", "embedder", "nli", "bertscore"]


@dataclass(frozen=True)
class PaperRole:
    """One neural scorer role a benchmark's metrics need, with the paper's model for it."""

    name: str
    kind: RoleKind  # the kind of scorer the paper's model is
    paper_model: str
    paper_model_stated: bool  # False: the paper does not name it; paper_model is the project's reading
    used_for: str  # which metric term needs the role
    paper_note: str | None = None  # where the paper says it, or why the reading is what it is
