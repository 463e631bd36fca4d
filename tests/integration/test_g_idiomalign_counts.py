"""G-IdiomAlign built from the mirror: the counts of the paper and of docs/METRICS.md §2.1."""

from __future__ import annotations

import json
import statistics
from collections import Counter
from pathlib import Path

import pytest

from idiombench.core.items import Item, read_items

pytestmark = pytest.mark.mirror
ADDED_LANGUAGES = {"ar", "ko", "th", "vi"}
# Paper table 2: aligned pairs per unordered language pair.
PAPER_TABLE_2 = {
    "de-en": 520,
    "de-es": 456,
    "de-fi": 353,
    "de-fr": 238,
    "de-ja": 229,
    "de-pl": 447,
    "de-pt": 280,
    "de-zh": 509,
    "en-es": 1114,
    "en-fi": 693,
    "en-fr": 376,
    "en-ja": 336,
    "en-pl": 1182,
    "en-pt": 534,
    "en-zh": 1782,
    "es-fi": 569,
    "es-fr": 336,
    "es-ja": 306,
    "es-pl": 888,
    "es-pt": 429,
    "es-zh": 1028,
    "fi-fr": 267,
    "fi-ja": 251,
    "fi-pl": 589,
    "fi-pt": 333,
    "fi-zh": 655,
    "fr-ja": 186,
    "fr-pl": 329,
    "fr-pt": 209,
    "fr-zh": 343,
    "ja-pl": 345,
    "ja-pt": 206,
    "ja-zh": 416,
    "pl-pt": 432,
    "pl-zh": 1156,
    "pt-zh": 463,
}


@pytest.fixture(scope="module")
def out(built) -> Path:
    return built("g-idiomalign")


@pytest.fixture(scope="module")
def stats(out: Path) -> dict:
    return json.loads((out / "build_stats.json").read_text(encoding="utf-8"))


def items(out: Path, task: str) -> list[Item]:
    return read_items(out / f"{task}.parquet")


def test_aligned_pairs(out: Path, stats: dict) -> None:
    pairs = items(out, "aligned_pairs")
    assert len(pairs) == 18_785
    per_pair = Counter(i.meta["pair"] for i in pairs)
    assert len(per_pair) == 36
    # Paper §3.2 / table 2: sizes 186 to 1,782, median 422 (the 36 sizes' median is 422.5).
    assert (min(per_pair.values()), max(per_pair.values())) == (186, 1782)
    assert statistics.median(per_pair.values()) == 422.5
    by_codes = Counter("-".join(sorted((i.meta["source_lang"], i.meta["target_lang"]))) for i in pairs)
    assert by_codes == PAPER_TABLE_2
    assert not {i.meta["source_lang"] for i in pairs} & ADDED_LANGUAGES
    assert stats["rows_read"]["Gloss_pivoted_Original"] == stats["rows_kept"]["Gloss_pivoted_Original"] == 18_785
    assert stats["dropped"] == {}


def test_mcq_counts_and_groups(out: Path, stats: dict) -> None:
    mcq = items(out, "mcq")
    assert len(mcq) == 18_999
    directions = {(i.meta["group"], i.meta["direction"]) for i in mcq}
    assert len(directions) == 30
    assert Counter(group for group, _ in directions) == {"Zh-target": 8, "En-target": 8, "Other targets": 14}
    assert all(i.meta["pair"] is not None for i in mcq)
    assert stats["details"]["mcq"]["joined_to_aligned_pairs"] == 18_999


def test_mcq_option_decoding(out: Path, stats: dict) -> None:
    mcq = items(out, "mcq")
    duplicates = [i for i in mcq if i.meta["duplicate_option"]]
    assert len(duplicates) == 48
    assert stats["flagged"]["duplicate_option"]["count"] == 48
    for item in mcq:
        types = item.meta["option_types"]
        assert sorted(types.values()) == ["CA", "LC", "LT", "reference"], item.item_id
        reference = item.meta["reference_letter"]
        assert types[reference] == "reference"
        assert item.choices["ABCD".index(reference)] == item.references[0], item.item_id
        assert item.answer in item.meta["target_letters"], item.item_id
        if item.meta["duplicate_option"]:
            # The released answer is the other copy of the target text, at a distractor slot.
            assert item.answer != reference and types[item.answer] != "reference"
            assert len(item.meta["target_letters"]) >= 2
        else:
            assert item.answer == reference, item.item_id
    several = [i for i in mcq if len(i.meta["target_letters"]) > 1]
    # 115 as released, plus mcq/fi-fr/00122 whose LT option equals the target once the French mojibake is repaired
    assert len(several) == stats["details"]["mcq"]["target_text_in_several_options"] == 116
    assert stats["flagged"]["repeated_distractor_text"]["count"] == 1


def test_gloss_generation(out: Path) -> None:
    gen = items(out, "gloss_generation")
    assert len(gen) == 37_570
    per_direction = Counter(i.meta["direction"] for i in gen)
    assert len(per_direction) == 72
    per_pair = Counter(i.meta["pair"] for i in items(out, "aligned_pairs"))
    for item in gen:
        assert item.fields["gloss"] and item.fields["source_idiom"] == item.input
    # Each direction holds every pair of its file once.
    by_direction_pair = Counter((i.meta["direction"], i.meta["pair"]) for i in gen)
    assert all(n == per_pair[pair] for (_, pair), n in by_direction_pair.items())
    assert sum(1 for d in per_direction if d.startswith("zh->")) == 8


def test_additional_pairs_are_their_own_tasks(out: Path, stats: dict) -> None:
    additional = items(out, "additional_pairs")
    assert len(additional) == 1_014
    assert len({i.meta["pair"] for i in additional}) == 42
    for item in additional:
        assert {item.meta["source_lang"], item.meta["target_lang"]} & ADDED_LANGUAGES, item.item_id
    gen = items(out, "gloss_generation_additional")
    assert len(gen) == 2_028
    assert len({i.meta["direction"] for i in gen}) == 84
    main_langs = {i.language for task in ("aligned_pairs", "gloss_generation", "mcq") for i in items(out, task)}
    assert not main_langs & ADDED_LANGUAGES
    assert stats["rows_read"]["Additional_language pairs"] == 1_014
    assert stats["tasks"] == {
        "additional_pairs": 1_014,
        "aligned_pairs": 18_785,
        "gloss_generation": 37_570,
        "gloss_generation_additional": 2_028,
        "mcq": 18_999,
    }


def test_french_text_is_repaired(out: Path, stats: dict) -> None:
    french = [i for i in items(out, "aligned_pairs") if "fr" in (i.meta["source_lang"], i.meta["target_lang"])]
    texts = [i.fields["source_idiom"] + i.fields["target_idiom"] for i in french]
    assert not any("Ã" in t for t in texts)
    assert any("à" in t or "é" in t for t in texts)
    assert stats["details"]["text"]["mojibake_repaired"]["Gloss_pivoted_Original/target_idiom"] == 345
    for item in items(out, "mcq"):
        assert "Ã" not in item.fields["instruction"], item.item_id
