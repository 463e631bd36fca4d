"""Seeded, platform-stable sampling: the draws every benchmark's render makes."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Hashable, Iterable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def derived_seed(*parts: object) -> int:
    """A 64-bit seed from the parts' text: stable across runs, Python versions and platforms."""
    text = "\x1f".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def seeded_subset(keys: Iterable[K], n: int | None, *seed_parts: object) -> list[K]:
    """n of the keys drawn without replacement (all when n is None or n >= len), returned in
    sorted order. The draw depends only on the set of keys and the seed parts."""
    ordered = sorted(set(keys))  # type: ignore[type-var]
    if n is None or n >= len(ordered):
        return ordered
    chosen = random.Random(derived_seed(*seed_parts)).sample(ordered, n)
    return sorted(chosen)  # type: ignore[type-var]


def seeded_order(keys: Sequence[K], *seed_parts: object) -> list[K]:
    """The keys in a seeded random order (a permutation of the given sequence)."""
    order = list(keys)
    random.Random(derived_seed(*seed_parts)).shuffle(order)
    return order
