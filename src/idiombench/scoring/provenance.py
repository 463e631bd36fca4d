"""What the papers say about a scorer role: read-only facts that live in code, next to
the benchmark that needs the role (its package's `roles.py`). params.yaml only says which
model fills a role; editing it can never make a substitute pass for the paper's model."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
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


@cache
def paper_roles() -> dict[str, PaperRole]:
    """Every role declared by a registered benchmark (`Benchmark.scorer_roles`), by name."""
    from ..benchmarks import NAMES, get_benchmark  # benchmark packages import this module

    roles: dict[str, PaperRole] = {}
    for benchmark in NAMES:
        for role in get_benchmark(benchmark).scorer_roles:
            if role.name in roles:
                raise RuntimeError(f"scorer role {role.name!r} is declared twice (second by {benchmark})")
            roles[role.name] = role
    return roles


def paper_role(name: str) -> PaperRole:
    roles = paper_roles()
    if name not in roles:
        raise KeyError(f"unknown scoring role {name!r} (declared by the benchmarks: {', '.join(roles)})")
    return roles[name]
