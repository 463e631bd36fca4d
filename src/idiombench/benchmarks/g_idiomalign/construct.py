"""G-IdiomAlign's own construction pipeline (paper section 3.1 and appendix C), rebuilt from the
released glosses and compared with the release.

Per unordered language pair (a release file `<A>_<B>.json`; A, the language named first, is
the fixed canonical direction whose similarity scores are reported):
1. candidate pools: the distinct (idiom, gloss) entries of each language. The released files
   hold only the aligned pairs, so with `pool: pair` (default) a language's candidates are the
   entries appearing in that pair file; `pool: language` takes the language's entries from
   every released pair file. The paper retrieved from every single-sense idiom harvested from
   Wiktionary, so recovery here is optimistic (each idiom competes with fewer candidates).
   Note that MNN survives shrinking the pool: a pair that was mutual rank-1 in the paper's
   pool stays so in any sub-pool holding both idioms, so with the paper's encoder the MNN
   step would recover every released pair. Entries with an empty gloss cannot be embedded
   and are left out (counted);
2. embed every gloss with the scoring role `construct.role` (default `embedder_en`: the
   glosses are English; the paper used OpenAI text-embedding-3-large, which is not called
   here) as unit vectors; similarity = cosine = dot product;
3. top-k retrieval both ways (A -> B and B -> A, k = 10) from the similarity matrix computed
   in row batches (`batch_size` rows of A times all of B per matrix product); ties are broken
   by the lower index in the sorted pool, so results are deterministic;
4. mutual nearest neighbours: (x, y) with y the rank-1 candidate of x and x the rank-1
   candidate of y;
5. distribution-aware filter (appendix C): the pair's MNN scores s are cut into `bins` (10)
   equal-width bins over [min s, max s] (edges e_j = min + j (max - min) / bins; a bin is
   closed on the left, the last bin also on the right); the modal bin b is the first
   maximiser of the counts (lowest bin among ties, as numpy's argmax); pairs in bin b or
   higher are kept, i.e. s >= e_b (the cutoff). A pair whose MNN scores are all equal has
   one bin holding every score: all are kept and the cutoff is that score. No MNN pair: no
   cutoff, nothing kept. The release already passed this filter once; filtering the rebuilt
   MNN set again drops its lower bins anew, so even the paper's own encoder would not recover
   every released pair after this step (mnn_recall isolates the encoder's agreement).

Outputs (a directory, written whole or not at all):
- alignments.parquet: the rebuilt alignment set (kept MNN pairs) with score, bin and whether
  the release holds the pair;
- mnn_candidates.parquet: every MNN pair with its bin and whether the filter kept it;
- released_status.parquet: per released pair, the rank of each side among the other's top-k
  (null beyond k), whether it is an MNN pair and whether it was rebuilt;
- construction.json: params, the role and its status, the pool note, and per pair: pool sizes,
  released rows / distinct pairs (and how many share an idiom entry with another released pair:
  MNN is one-to-one, so at most one of those can be rebuilt), top-k and MNN recall, MNN count,
  modal bin, cutoff, rebuilt count, overlap, precision and recall against the release.
Timings are returned (and logged by the caller), not written into the outputs, so reruns
write the same bytes.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ...core import paths
from ...core.errors import IdiombenchError
from ...core.io import staged_directory, write_json, write_parquet
from ...core.items import Item, read_items
from .config import GIdiomAlignConstruct

BENCHMARK = "g-idiomalign"
PAIRS_TASK = "aligned_pairs"
POOL_NOTES = {
    "pair": "The released files contain only the aligned pairs, so each language's candidate pool is the set of "
    "(idiom, gloss) entries appearing in that pair file, not every single-sense idiom the paper harvested from "
    "Wiktionary: each idiom competes with far fewer candidates, so recovery of the release is optimistic.",
    "language": "Each language's candidate pool is its (idiom, gloss) entries in all released pair files: larger "
    "than one pair file's, still smaller than the paper's Wiktionary harvest, so recovery remains optimistic.",
}

Entry = tuple[str, str]  # (idiom, gloss)


# --------------------------------------------------------------------------- neighbour search


@dataclass(frozen=True)
class Neighbours:
    """Top-k candidates, best first: ab_index[i] are indices into B for A's entry i, ba_index[j]
    indices into A for B's entry j; the scores are the cosine similarities (A-by-B matrix)."""

    ab_index: np.ndarray
    ab_score: np.ndarray
    ba_index: np.ndarray
    ba_score: np.ndarray


SCORE_DECIMALS = 12  # of a candidate's cosine in mnn_candidates.parquet


def _order_desc(scores: np.ndarray, axis: int) -> np.ndarray:
    """Indices sorting `scores` descending along `axis`; equal scores keep the lower index first."""
    return np.argsort(-scores, axis=axis, kind="stable")


def top_k_neighbours(a: np.ndarray, b: np.ndarray, k: int, batch_size: int = 1024) -> Neighbours:
    """Top-k both ways from S = a @ b.T, computed `batch_size` rows of `a` at a time. The
    column-wise (B -> A) top-k is merged batch by batch, so S is never held whole and both
    directions read the very same matrix entries."""
    n, m = len(a), len(b)
    k_ab, k_ba = min(k, m), min(k, n)
    ab_index = np.zeros((n, k_ab), dtype=np.int64)
    ab_score = np.zeros((n, k_ab), dtype=np.float64)
    ba_index = np.zeros((0, m), dtype=np.int64)  # (candidates so far, m), best first per column
    ba_score = np.zeros((0, m), dtype=np.float64)
    for start in range(0, n, batch_size):
        sims = a[start : start + batch_size] @ b.T  # (rows, m)
        rows = _order_desc(sims, axis=1)[:, :k_ab]
        ab_index[start : start + len(sims)] = rows
        ab_score[start : start + len(sims)] = np.take_along_axis(sims, rows, axis=1)
        cols = _order_desc(sims, axis=0)[:k_ba]  # (<= k, m), row indices within the batch
        merged_index = np.vstack([ba_index, cols + start])
        merged_score = np.vstack([ba_score, np.take_along_axis(sims, cols, axis=0)])
        # per column: higher score first, then lower row index (earlier batches hold lower rows)
        order = np.lexsort((merged_index, -merged_score), axis=0)[:k_ba]
        ba_index = np.take_along_axis(merged_index, order, axis=0)
        ba_score = np.take_along_axis(merged_score, order, axis=0)
    return Neighbours(ab_index, ab_score, ba_index.T.copy(), ba_score.T.copy())


def mutual_nearest(neighbours: Neighbours) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(i, j, score) of the mutual rank-1 pairs, sorted by i."""
    if neighbours.ab_index.shape[1] == 0 or neighbours.ba_index.shape[1] == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0)
    best_b = neighbours.ab_index[:, 0]
    best_a = neighbours.ba_index[:, 0]
    i = np.flatnonzero(best_a[best_b] == np.arange(len(best_b)))
    return i, best_b[i], neighbours.ab_score[i, 0]


# --------------------------------------------------------------------------- modal-bin filter


@dataclass(frozen=True)
class Binning:
    edges: np.ndarray  # bins + 1 edges
    counts: np.ndarray  # per bin
    bin_of: np.ndarray  # bin index of each score
    modal_bin: int | None
    cutoff: float | None  # lower edge of the modal bin
    keep: np.ndarray  # bool per score

    def as_dict(self) -> dict[str, object]:
        return {
            "edges": [round(float(e), SCORE_DECIMALS) for e in self.edges],
            "counts": [int(c) for c in self.counts],
            "modal_bin": self.modal_bin,
            "cutoff": None if self.cutoff is None else round(float(self.cutoff), SCORE_DECIMALS),
        }


def modal_bin_cutoff(scores: Sequence[float] | np.ndarray, bins: int = 10) -> Binning:
    """Appendix C's filter on one pair's MNN scores (see the module docstring for edge cases)."""
    values = np.asarray(scores, dtype=np.float64)
    if bins < 1:
        raise ValueError(f"bins must be >= 1, got {bins}")
    if values.size == 0:
        return Binning(
            np.zeros(0),
            np.zeros(bins, dtype=np.int64),
            np.zeros(0, dtype=np.int64),
            None,
            None,
            np.zeros(0, dtype=bool),
        )
    if not np.all(np.isfinite(values)):
        raise ValueError("similarity scores must be finite")
    low, high = float(values.min()), float(values.max())
    edges = low + np.arange(bins + 1, dtype=np.float64) * ((high - low) / bins)
    edges[-1] = high
    if high == low:  # every score equal: one bin holds them all
        bin_of = np.zeros(values.size, dtype=np.int64)
    else:
        # inner edges e_1..e_{bins-1}: a score equal to e_j falls into bin j; the maximum into the last bin
        bin_of = np.searchsorted(edges[1:-1], values, side="right").astype(np.int64)
    counts = np.bincount(bin_of, minlength=bins).astype(np.int64)
    modal = int(np.argmax(counts))  # first maximiser on ties
    keep = bin_of >= modal
    return Binning(edges, counts, bin_of, modal, float(edges[modal]), keep)


# --------------------------------------------------------------------------- pools and pairs


@dataclass(frozen=True)
class PairFile:
    name: str  # release file stem, e.g. Chinese_English
    source_language: str
    target_language: str
    released: list[tuple[Entry, Entry]]  # one per released row (duplicates included)


def pair_files(items: Sequence[Item]) -> dict[str, PairFile]:
    rows: dict[str, list[Item]] = {}
    for item in items:
        rows.setdefault(item.meta["pair"], []).append(item)
    out = {}
    for name, group in sorted(rows.items()):
        group.sort(key=lambda item: item.meta["row"])
        first = group[0].fields
        out[name] = PairFile(
            name=name,
            source_language=first["source_language"],
            target_language=first["target_language"],
            released=[
                (
                    (i.fields["source_idiom"], i.fields["source_meaning"]),
                    (i.fields["target_idiom"], i.fields["target_meaning"]),
                )
                for i in group
            ],
        )
    return out


def load_pair_items(source: Path | str | Sequence[Item]) -> list[Item]:
    if isinstance(source, (str, Path)):
        path = Path(source)
        if path.is_dir():
            path = path / f"{PAIRS_TASK}.parquet"
        if not path.is_file():
            raise IdiombenchError(f"{path} is missing: run `idiombench build {BENCHMARK}` first")
        return read_items(path)
    return list(source)


def pool_of(entries: set[Entry]) -> tuple[list[Entry], int]:
    """The entries with a gloss, sorted; and how many were left out for an empty gloss."""
    usable = sorted(e for e in entries if e[1].strip())
    return usable, len(entries) - len(usable)


def language_entries(files: dict[str, PairFile]) -> dict[str, set[Entry]]:
    """Every language's entries over all pair files (pool: language)."""
    out: dict[str, set[Entry]] = {}
    for pair in files.values():
        for x, y in pair.released:
            out.setdefault(pair.source_language, set()).add(x)
            out.setdefault(pair.target_language, set()).add(y)
    return out


def pools(pair: PairFile, mode: str, by_language: dict[str, set[Entry]]) -> tuple[set[Entry], set[Entry]]:
    if mode == "language":
        return by_language[pair.source_language], by_language[pair.target_language]
    return {x for x, _ in pair.released}, {y for _, y in pair.released}


def ratio(numerator: int, denominator: int) -> float | None:
    return None if denominator == 0 else numerator / denominator


EntryPair = tuple[Entry, Entry]  # (source entry, target entry)


def _gloss_matrix(pool: list[Entry], vectors: dict[str, np.ndarray], dim: int) -> np.ndarray:
    """The pool's gloss vectors, one row per entry (0 rows of width `dim` for an empty pool)."""
    return np.array([vectors[gloss] for _, gloss in pool]) if pool else np.zeros((0, dim))


def _mnn_candidates(
    pair: PairFile,
    pools: tuple[list[Entry], list[Entry]],
    mnn: tuple[np.ndarray, np.ndarray, np.ndarray],
    binning: Binning,
) -> list[dict[str, object]]:
    """One row per mutual nearest neighbour pair (mnn: source index, target index, score)."""
    released_set = set(pair.released)
    candidates = []
    # Scores (and bin edges) are stored to SCORE_DECIMALS places: BLAS kernels differ across
    # CPUs in the last bits (a dvc.lock written on another machine differed in one score by 2e-17).
    for i, j, score, bin_, kept in zip(*mnn, binning.bin_of, binning.keep, strict=False):
        x, y = pools[0][i], pools[1][j]
        candidates.append(
            {
                "pair": pair.name,
                "source_language": pair.source_language,
                "target_language": pair.target_language,
                "source_idiom": x[0],
                "source_meaning": x[1],
                "target_idiom": y[0],
                "target_meaning": y[1],
                "score": round(float(score), SCORE_DECIMALS),
                "bin": int(bin_),
                "kept": bool(kept),
                "released": (x, y) in released_set,
            }
        )
    return candidates


def _entry_pairs(candidates: list[dict[str, Any]]) -> set[EntryPair]:
    return {((c["source_idiom"], c["source_meaning"]), (c["target_idiom"], c["target_meaning"])) for c in candidates}


def _rank(top_k: np.ndarray, index: int) -> int | None:
    """1-based rank of `index` among one entry's top-k candidates; None when not among them."""
    hits = np.flatnonzero(top_k == index)
    return int(hits[0]) + 1 if hits.size else None


def _released_status(
    pair: PairFile,
    pools: tuple[list[Entry], list[Entry]],
    neighbours: Neighbours,
    mnn_pairs: set[EntryPair],
    rebuilt_pairs: set[EntryPair],
) -> list[dict[str, object]]:
    """What became of each released row: embeddable, its ranks in both top-k lists, MNN, rebuilt."""
    index_a = {e: i for i, e in enumerate(pools[0])}
    index_b = {e: j for j, e in enumerate(pools[1])}
    status = []
    for row, (x, y) in enumerate(pair.released):
        i, j = index_a.get(x), index_b.get(y)
        rank_ab = rank_ba = None
        if i is not None and j is not None:
            rank_ab = _rank(neighbours.ab_index[i], j)
            rank_ba = _rank(neighbours.ba_index[j], i)
        status.append(
            {
                "pair": pair.name,
                "row": row,
                "source_idiom": x[0],
                "target_idiom": y[0],
                "embeddable": i is not None and j is not None,
                "rank_target_among_source_top_k": rank_ab,
                "rank_source_among_target_top_k": rank_ba,
                "mnn": (x, y) in mnn_pairs,
                "rebuilt": (x, y) in rebuilt_pairs,
            }
        )
    return status


def _released_coverage(pair: PairFile, status: list[dict[str, object]]) -> dict[str, object]:
    """The released pairs, how many share an entry, and how many the top-k search finds."""
    released_set = set(pair.released)
    # MNN is one-to-one: of released pairs that share an entry, at most one can be rebuilt
    source_uses = Counter(x for x, _ in released_set)
    target_uses = Counter(y for _, y in released_set)
    sharing = sum(1 for x, y in released_set if source_uses[x] > 1 or target_uses[y] > 1)
    in_top_k = sum(1 for s in status if s["rank_target_among_source_top_k"] is not None)
    return {
        "released_rows": len(pair.released),
        "released_pairs": len(released_set),
        "released_sharing_an_entry": sharing,
        "released_in_top_k": in_top_k,
        "top_k_recall": ratio(in_top_k, len(pair.released)),
    }


def _mnn_coverage(
    pair: PairFile, candidates: list[dict[str, object]], mnn_pairs: set[EntryPair], neighbours: Neighbours
) -> dict[str, object]:
    """How many MNN pairs there are, how many are released, and how often rank 1 is a tie."""
    released_set = set(pair.released)
    return {
        "mnn": len(candidates),
        "mnn_released": len(mnn_pairs & released_set),
        "mnn_recall": ratio(len(mnn_pairs & released_set), len(released_set)),
        "rank1_ties": int(np.sum(neighbours.ab_score[:, 0] == neighbours.ab_score[:, 1]))
        if neighbours.ab_score.shape[1] > 1
        else 0,
    }


def _rebuild_scores(pair: PairFile, binning: Binning, rebuilt: int, rebuilt_pairs: set[EntryPair]) -> dict[str, object]:
    """The modal-bin filter and the rebuilt pairs' precision and recall against the release."""
    released_set = set(pair.released)
    overlap = len(rebuilt_pairs & released_set)
    binned = binning.as_dict()  # scores rounded to SCORE_DECIMALS
    return {
        "binning": binned,
        "modal_bin": binning.modal_bin,
        "cutoff": binned["cutoff"],
        "rebuilt": rebuilt,
        "overlap": overlap,
        "precision": ratio(overlap, rebuilt),
        "recall": ratio(overlap, len(released_set)),
    }


def rebuild_pair(
    pair: PairFile, entries: tuple[set[Entry], set[Entry]], vectors: dict[str, np.ndarray], cfg: GIdiomAlignConstruct
) -> dict[str, Any]:
    pool_a, no_gloss_a = pool_of(entries[0])
    pool_b, no_gloss_b = pool_of(entries[1])
    dim = len(next(iter(vectors.values()))) if vectors else 0
    a, b = _gloss_matrix(pool_a, vectors, dim), _gloss_matrix(pool_b, vectors, dim)
    started = time.perf_counter()
    neighbours = top_k_neighbours(a, b, cfg.k, cfg.batch_size)
    mnn = mutual_nearest(neighbours)
    search_s = time.perf_counter() - started
    binning = modal_bin_cutoff(mnn[2], cfg.bins)

    candidates = _mnn_candidates(pair, (pool_a, pool_b), mnn, binning)
    rebuilt = [c for c in candidates if c["kept"]]
    mnn_pairs, rebuilt_pairs = _entry_pairs(candidates), _entry_pairs(rebuilt)
    status = _released_status(pair, (pool_a, pool_b), neighbours, mnn_pairs, rebuilt_pairs)
    summary = {
        "pair": pair.name,
        "source_language": pair.source_language,
        "target_language": pair.target_language,
        "pool_source": len(pool_a),
        "pool_target": len(pool_b),
        "left_out_empty_gloss": {"source": no_gloss_a, "target": no_gloss_b},
        **_released_coverage(pair, status),
        **_mnn_coverage(pair, candidates, mnn_pairs, neighbours),
        **_rebuild_scores(pair, binning, len(rebuilt), rebuilt_pairs),
    }
    return {"summary": summary, "candidates": candidates, "status": status, "search_s": search_s}


def totals(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    sums = {
        key: sum(s[key] for s in summaries)
        for key in (
            "released_rows",
            "released_pairs",
            "released_sharing_an_entry",
            "released_in_top_k",
            "mnn",
            "mnn_released",
            "rebuilt",
            "overlap",
        )
    }
    return {
        "pairs": len(summaries),
        **sums,
        "top_k_recall": ratio(sums["released_in_top_k"], sums["released_rows"]),
        "mnn_recall": ratio(sums["mnn_released"], sums["released_pairs"]),
        "precision": ratio(sums["overlap"], sums["rebuilt"]),
        "recall": ratio(sums["overlap"], sums["released_pairs"]),
        "macro_precision": _mean([s["precision"] for s in summaries]),
        "macro_recall": _mean([s["recall"] for s in summaries]),
    }


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


CANDIDATE_SCHEMA = pa.schema(
    [
        ("pair", pa.string()),
        ("source_language", pa.string()),
        ("target_language", pa.string()),
        ("source_idiom", pa.string()),
        ("source_meaning", pa.string()),
        ("target_idiom", pa.string()),
        ("target_meaning", pa.string()),
        ("score", pa.float64()),
        ("bin", pa.int64()),
        ("kept", pa.bool_()),
        ("released", pa.bool_()),
    ]
)
STATUS_SCHEMA = pa.schema(
    [
        ("pair", pa.string()),
        ("row", pa.int64()),
        ("source_idiom", pa.string()),
        ("target_idiom", pa.string()),
        ("embeddable", pa.bool_()),
        ("rank_target_among_source_top_k", pa.int64()),
        ("rank_source_among_target_top_k", pa.int64()),
        ("mnn", pa.bool_()),
        ("rebuilt", pa.bool_()),
    ]
)


def run_construction(
    params: Any,
    source: Path | str | Sequence[Item],
    out_dir: Path | str,
    scorers: Any = None,
) -> dict[str, object]:
    """Rebuild the configured language pairs (`benchmarks.g-idiomalign.construct`) from the built
    aligned_pairs items (`source`: data/processed/g-idiomalign, its aligned_pairs.parquet, or the
    items) and write the outputs into `out_dir`. Returns construction.json's body plus timings."""
    cfg: GIdiomAlignConstruct = params.benchmark(BENCHMARK).construction
    if scorers is None:
        from ...scoring import Scorers

        scorers = Scorers(params.scoring)
    info = scorers.info(cfg.role)
    if info.kind != "embedder":
        raise IdiombenchError(
            f"benchmarks.{BENCHMARK}.construct.role {cfg.role!r} has kind {info.kind!r}; it must be an embedder role"
        )
    if not info.computed:
        raise IdiombenchError(
            f"benchmarks.{BENCHMARK}.construct.role {cfg.role!r} has no model in this profile, so the glosses cannot "
            f"be embedded: set scoring.roles.{cfg.role}.model (paper: {info.paper_model})"
        )
    files = pair_files(load_pair_items(source))
    names = list(files) if cfg.pairs is None else cfg.pairs
    unknown = [name for name in names if name not in files]
    if unknown:
        raise IdiombenchError(
            f"benchmarks.{BENCHMARK}.construct.pairs: unknown pair(s) {', '.join(unknown)} "
            f"(built pairs: {', '.join(files)})"
        )
    by_language = language_entries(files)
    entries = {name: pools(files[name], cfg.pool, by_language) for name in names}
    glosses = sorted({gloss for a, b in entries.values() for _, gloss in a | b if gloss.strip()})
    started = time.perf_counter()
    embedded = scorers.embed(cfg.role, glosses)
    embed_s = time.perf_counter() - started
    vectors = dict(zip(glosses, embedded.vectors, strict=False))

    results = [rebuild_pair(files[name], entries[name], vectors, cfg) for name in names]
    summaries = [r["summary"] for r in results]
    body = {
        "benchmark": BENCHMARK,
        "params": cfg.model_dump(mode="json"),
        "role": info.as_dict(),
        "pool": cfg.pool,
        "note": POOL_NOTES[cfg.pool],
        "glosses_embedded": len(glosses),
        "pairs": summaries,
        "totals": totals(summaries),
    }
    with staged_directory(Path(out_dir), paths.CONSTRUCT_OUTPUT) as staging:
        candidates = [c for r in results for c in r["candidates"]]
        write_parquet(staging / "mnn_candidates.parquet", pa.Table.from_pylist(candidates, schema=CANDIDATE_SCHEMA))
        kept = [c for c in candidates if c["kept"]]
        write_parquet(staging / "alignments.parquet", pa.Table.from_pylist(kept, schema=CANDIDATE_SCHEMA))
        write_parquet(
            staging / "released_status.parquet",
            pa.Table.from_pylist([s for r in results for s in r["status"]], schema=STATUS_SCHEMA),
        )
        write_json(staging / paths.CONSTRUCTION, body)
    timings = {"embed_s": embed_s, "search_s": {r["summary"]["pair"]: r["search_s"] for r in results}}
    return {**body, "timings": timings}
