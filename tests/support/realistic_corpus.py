"""Realistic texts for the equality tests of the fast scoring paths: the OrderProbe release's
references and ~700-character outputs made of its glosses (bench/orderprobe_corpus.py, the
corpus the speed and byte-identity benchmarks score), and the ChID passages of the mirror."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

from helpers import bench_module
from idiombench.core.items import read_items


def corpus_module() -> ModuleType:
    return bench_module("orderprobe_corpus")


def references(processed: Path) -> dict[str, list[tuple[str, str]]]:
    """language -> distinct (expression, reference) of the built release."""
    out: dict[str, set[tuple[str, str]]] = {}
    for item in read_items(processed / "restore.parquet"):
        if item.meta["is_canonical"]:
            out.setdefault(item.language, set()).update((item.answer, r) for r in item.references)
    return {language: sorted(pairs) for language, pairs in out.items()}


def outputs(processed: Path, per_language: int, settings: tuple[str, ...] = ("zero_shot", "cot")) -> list[dict]:
    """Generation rows (text, item_id, ...) of `per_language` expressions per language, every input."""
    rows = corpus_module().generation_rows(processed, per_language, 0, list(settings), 700)
    return [row for setting in settings for row in rows[setting]]


def chid_passages(mirror: Path) -> list[str]:
    """Every passage of the mirror's ChID files (real Chinese text with digits, Latin and punctuation)."""
    texts = []
    for path in sorted((mirror / "chid").glob("*.json")):
        if path.name == "MANIFEST.json":
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                texts.append(json.loads(line)["content"])
    return texts
