"""Seeded, platform-stable sampling: the draws every benchmark's render makes."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Protocol, Self, TypeVar


class SortableKey(Protocol):
    """What a drawn key is: hashable (a set of keys) and ordered (the draw starts from the sorted set)."""

    def __hash__(self) -> int: ...

    def __lt__(self, other: Self, /) -> bool: ...


K = TypeVar("K", bound=SortableKey)
S = TypeVar("S", bound=Hashable)
T = TypeVar("T")


def derived_seed(*parts: object) -> int:
    """A 64-bit seed from the parts' text: stable across runs, Python versions and platforms."""
    text = "\x1f".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def seeded_subset(keys: Iterable[K], n: int | None, *seed_parts: object) -> list[K]:
    """n of the keys drawn without replacement (all when n is None or n >= len), returned in
    sorted order. The draw depends only on the set of keys and the seed parts."""
    ordered = sorted(set(keys))
    if n is None or n >= len(ordered):
        return ordered
    chosen = random.Random(derived_seed(*seed_parts)).sample(ordered, n)
    return sorted(chosen)


def seeded_order(keys: Sequence[T], *seed_parts: object) -> list[T]:
    """The keys in a seeded random order (a permutation of the given sequence)."""
    order = list(keys)
    random.Random(derived_seed(*seed_parts)).shuffle(order)
    return order


def stratified_subset(strata: Mapping[S, Iterable[K]], n: int, *seed_parts: object) -> list[K]:
    """n keys drawn across strata in proportion to their sizes (largest remainders; every
    stratum gets one when n allows), each stratum's share by `seeded_subset`; sorted."""
    groups = {stratum: sorted(set(keys)) for stratum, keys in strata.items()}
    total = sum(len(keys) for keys in groups.values())
    if n >= total:
        return sorted(key for keys in groups.values() for key in keys)
    order = seeded_order(sorted(groups, key=repr), *seed_parts, "strata")  # ties go to a seeded stratum, not the first
    floor = 1 if n >= len(order) else 0
    share = {s: max(floor, min(len(groups[s]), n * len(groups[s]) // total)) for s in order}
    remainders = sorted(order, key=lambda s: -(n * len(groups[s]) % total))  # stable: seeded order among ties
    while sum(share.values()) < n:  # hand out the rest by largest remainder, where room is left
        for stratum in remainders:
            if sum(share.values()) < n and share[stratum] < len(groups[stratum]):
                share[stratum] += 1
    while sum(share.values()) > n:  # the floor of 1 overshot: take back from the largest shares
        largest = max(order, key=lambda s: share[s])
        share[largest] -= 1
    chosen: list[K] = []
    for stratum in order:
        chosen += seeded_subset(groups[stratum], share[stratum], *seed_parts, repr(stratum))
    return sorted(chosen)
