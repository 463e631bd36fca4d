"""OrderProbe built from the mirror: the paper's counts and the release quirks of docs/METRICS.md §1.1."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from idiombench.core.items import read_items

pytestmark = pytest.mark.mirror


@pytest.fixture(scope="module")
def orderprobe(built):
    out: Path = built("orderprobe")
    return read_items(out / "restore.parquet"), json.loads((out / "build_stats.json").read_text(encoding="utf-8"))


def test_rows_and_inputs(orderprobe):
    items, stats = orderprobe
    assert stats["rows_read"] == {"ja": 547, "ko": 432, "zh-CN": 1013, "zh-TW": 1554}
    assert stats["rows_read_total"] == 3546
    assert stats["rows_kept_total"] == 3543
    assert len(items) == 3543 * 24 == 85032
    assert sum(1 for i in items if not i.meta["is_canonical"]) == 81489
    assert sum(1 for i in items if i.meta["is_canonical"]) == 3543


def test_release_quirks_are_reported(orderprobe):
    _, stats = orderprobe
    dropped = stats["dropped"]["not_four_characters"]
    assert dropped["count"] == 3
    assert {e["expression"] for e in dropped["examples"]} == {"无可估量 难以估计", "神妙不可思", "순풍에 돛"}
    duplicates = Counter(e["language"] for e in stats["flagged"]["duplicate_expression"]["examples"])
    assert stats["flagged"]["duplicate_expression"]["count"] == 13 + 82 + 15
    assert duplicates  # examples are listed
    assert stats["flagged"]["placeholder_reference_removed"]["count"] >= 1
    assert stats["details"]["identity_inputs"] == 328
    assert stats["details"]["expressions_with_repeated_character"] == 278
    assert stats["flagged"]["no_references"]["count"] >= 546  # the Japanese release has no references


def test_identity_inputs_and_categories(orderprobe):
    items, stats = orderprobe
    identity = [i for i in items if i.meta["is_identity"]]
    assert len(identity) == 328 and all(i.input == i.answer for i in identity)
    for language, detail in stats["details"]["languages"].items():
        join = detail["category_join"]
        assert join["joined"] == join["expressions"], language  # every kept expression has a category
    assert {i.meta["category"] for i in items} == {
        "Parallel (Coordinate)",
        "Modifier-Head",
        "Subject-Predicate",
        "Complementary",
        "Serial Verb",
        "Verb-Object",
    }


def test_permutation_files_agree_with_regenerated_permutations(orderprobe):
    _, stats = orderprobe
    languages = stats["details"]["languages"]
    cells = sum(d["permutation_file"]["cells_checked"] for d in languages.values())
    # The release holds 81,420 permutation cells for four-character canonical forms; the 23 of
    # 无可估量 (whose expression row `无可估量 难以估计` is dropped) are not compared.
    assert cells == 81420 - 23
    for language, detail in languages.items():
        check = detail["permutation_file"]
        # the first expression of each language has no row in its permutation file
        assert check["rows_checked"] == detail["expressions"] - 1, language
        assert len(check["expressions_without_permutation_row"]) == 1, language
