"""The neural terms of OrderProbe's S_Acc and S_Logic, batched over every row of every setting.

Each term's (explanation, reference) pairs are collected first, then each scorer role is
called once with all of them (the registry scores each distinct pair or text once):
- CE: role `cross_encoder`, pairs (reference, explanation), every language;
- STS: `sts_zh` (zh-CN, zh-TW) / `sts_multilingual` (ja, ko), cosine of the two embeddings;
- BERT: `bertscore_zh` / `bertscore_ja` / `bertscore_ko`, BERTScore F1 of the explanation;
- NLI: role `nli`, (premise, hypothesis) = (explanation, reference) and, in the
  bidirectional mode, (reference, explanation), in one call.

Roles that embed with the same model, revision, prefix mode, dtype and length (the default
profile's cross-encoder substitute and both STS roles all run multilingual-e5-small) are
computed by ONE cosine call over the union of their pairs, so no text is embedded twice;
the cross-encoder's substitute value is that cosine clipped to [0, 1], as
`Scorers.cross_encoder` defines it for an embedder. A role that is not computed in the
profile is never called: its term is None (reported as not computed).
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...core.errors import IdiombenchError

Pair = tuple[str, str]

CE_ROLE = "cross_encoder"
NLI_ROLE = "nli"
STS_ROLES = {"zh-CN": "sts_zh", "zh-TW": "sts_zh", "ja": "sts_multilingual", "ko": "sts_multilingual"}
BERT_ROLES = {"zh-CN": "bertscore_zh", "zh-TW": "bertscore_zh", "ja": "bertscore_ja", "ko": "bertscore_ko"}
# Every role OrderProbe's metrics use, in a stable order.
ROLES = (CE_ROLE, "sts_zh", "sts_multilingual", "bertscore_zh", "bertscore_ja", "bertscore_ko", NLI_ROLE)


def sts_role(language: str) -> str:
    if language not in STS_ROLES:
        raise IdiombenchError(
            f"orderprobe: no STS scorer role for language {language!r} (known: {', '.join(STS_ROLES)})"
        )
    return STS_ROLES[language]


def bert_role(language: str) -> str:
    if language not in BERT_ROLES:
        raise IdiombenchError(
            f"orderprobe: no BERTScore role for language {language!r} (known: {', '.join(BERT_ROLES)})"
        )
    return BERT_ROLES[language]


def roles_for_language(language: str) -> tuple[str, ...]:
    """The S_Acc roles a row of this language depends on."""
    return (CE_ROLE, sts_role(language), bert_role(language))


@dataclass
class Requests:
    """Pairs per role, in the order they were added; `add` returns the pair's position."""

    pairs: dict[str, list[Pair]] = field(default_factory=lambda: defaultdict(list))

    def add(self, role: str, pair: Pair) -> int:
        self.pairs[role].append(pair)
        return len(self.pairs[role]) - 1


@dataclass
class CallRecord:
    role: str
    pairs: int
    distinct_pairs: int
    computed_by: str  # the role whose call computed it (itself, or the leader of a shared-embedding group)
    computed: int = 0  # distinct pairs computed by this call (the others were computed by an earlier chunk)


@dataclass
class Results:
    """Per role, one value per requested pair (NLI: an (n, 2) array of entailment, contradiction)."""

    values: dict[str, np.ndarray] = field(default_factory=dict)
    calls: list[CallRecord] = field(default_factory=list)

    def get(self, role: str, position: int) -> Any:
        return self.values[role][position]


def embedding_signature(config: Any, role: str) -> tuple[Any, ...] | None:
    """What makes two embedder roles give the same vectors (None for other kinds)."""
    entry = config.role(role)
    if getattr(entry, "kind", None) != "embedder":
        return None
    return (entry.model, entry.revision, entry.prefix_mode, entry.dtype, entry.max_length)


class PairCache:
    """Values of pairs a role computed in earlier chunks (score.score_chunks), so a pair that
    recurs (the reference systems' outputs repeat across settings) is scored once; the least
    recently used go beyond `size` pairs, which bounds the texts it keeps alive."""

    def __init__(self, size: int = 100_000) -> None:
        self.size = size
        self.values: OrderedDict[tuple[str, Pair], object] = OrderedDict()

    def compute(self, key: str, pairs: list[Pair], score: Any) -> tuple[list[Any], int]:
        """The value of every pair (`score(distinct missing pairs)` computes the others, in
        order); and how many distinct pairs were computed now."""
        missing = [pair for pair in dict.fromkeys(pairs) if (key, pair) not in self.values]
        fresh = dict(zip(missing, score(missing), strict=False)) if missing else {}
        out = []
        for pair in pairs:
            if pair in fresh:
                value = fresh[pair]
            else:
                value = self.values[(key, pair)]
                self.values.move_to_end((key, pair))
            out.append(value)
        for pair, value in fresh.items():
            self.values[(key, pair)] = value
        while len(self.values) > self.size:
            self.values.popitem(last=False)
        return out, len(missing)


def run_requests(scorers: Any, requests: Requests, cache: PairCache | None = None) -> Results:
    """One scorer call per role (per shared-embedding group), with every pair of every row not in
    `cache` (given; a fresh one otherwise)."""
    cache = cache if cache is not None else PairCache()
    results = Results()
    cosine_roles: list[str] = []
    for role in sorted(requests.pairs):
        pairs = requests.pairs[role]
        if not pairs:
            continue
        info = scorers.info(role)
        if not info.computed:
            raise IdiombenchError(f"orderprobe: role {role} is not computed in this profile but pairs were requested")
        if info.kind == "embedder":
            cosine_roles.append(role)
            continue
        if info.kind == "cross_encoder":

            def score(batch: list[Pair], role: str = role) -> np.ndarray:
                return np.asarray(scorers.cross_encoder(batch, role=role).values, dtype=np.float64)
        elif info.kind == "bertscore":

            def score(batch: list[Pair], role: str = role) -> np.ndarray:
                return np.asarray(scorers.bertscore(role, batch).f1, dtype=np.float64)
        elif info.kind == "nli":

            def score(batch: list[Pair], role: str = role) -> np.ndarray:
                nli = scorers.nli(role, batch)
                return np.stack([np.asarray(nli.entailment), np.asarray(nli.contradiction)], axis=1)
        else:  # pragma: no cover - the scoring config admits only these kinds
            raise IdiombenchError(f"orderprobe: role {role} has unknown kind {info.kind!r}")
        values, computed = cache.compute(role, pairs, score)
        results.values[role] = np.asarray(values, dtype=np.float64)
        results.calls.append(CallRecord(role, len(pairs), len(set(pairs)), role, computed))
    _run_cosines(scorers, requests, cosine_roles, results, cache)
    return results


def _run_cosines(scorers: Any, requests: Requests, roles: Sequence[str], results: Results, cache: PairCache) -> None:
    groups: dict[tuple[object, ...], list[str]] = defaultdict(list)
    for role in roles:
        groups[embedding_signature(scorers.config, role)].append(role)  # type: ignore[index]
    for members in groups.values():
        leader = sorted(members)[0]
        union = [pair for role in members for pair in requests.pairs[role]]

        def score(batch: list[Pair], leader: str = leader) -> np.ndarray:
            return np.asarray(scorers.cosine(leader, batch).values, dtype=np.float64)

        values, computed = cache.compute(f"cosine:{leader}", union, score)
        start = 0
        for role in members:
            n = len(requests.pairs[role])
            chunk = np.asarray(values[start : start + n], dtype=np.float64)
            start += n
            # A cross-encoder role configured with an embedder: the cosine clipped to [0, 1]
            # (Scorers.cross_encoder's definition for that case).
            results.values[role] = np.clip(chunk, 0.0, 1.0) if role == CE_ROLE else chunk
            results.calls.append(
                CallRecord(role, n, len(set(requests.pairs[role])), leader, computed if role == leader else 0)
            )
