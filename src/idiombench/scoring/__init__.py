"""Shared scorers: neural roles behind one registry (`Scorers`) and lexical metrics with
per-language tokenisers. Benchmarks' metrics call these; they never load models themselves."""

from .config import ScoringConfig
from .registry import BertScores, NLIScores, PairScores, Scorers
from .roles import MARKS, RoleInfo, derive_status, role_info

__all__ = [
    "MARKS",
    "BertScores",
    "NLIScores",
    "PairScores",
    "RoleInfo",
    "Scorers",
    "ScoringConfig",
    "derive_status",
    "role_info",
]
