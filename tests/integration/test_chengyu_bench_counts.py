"""Chengyu-Bench built from the mirror: ChID's 2,002 passages and the project's sample."""

from __future__ import annotations

import json
from collections import Counter

from idiombench.core.items import read_items


def test_chid_counts_and_answers(built) -> None:
    out = built("chengyu-bench")
    items = read_items(out / "chid.parquet")
    assert len(items) == 2002
    assert len({item.item_id for item in items}) == 2002
    for item in items:
        assert len(item.choices) == 7
        assert item.answer in item.choices
        assert item.choices[item.meta["answer_index"]] == item.answer
        assert item.meta["blanks"] == 1 and item.input.count("#idiom#") == 1
        assert item.task == "chid" and item.language == "zh-CN"
    # FewCLUE balanced the gold position: each of the 7 slots holds the answer 286 times.
    assert Counter(item.meta["answer_index"] for item in items) == {k: 286 for k in range(7)}


def test_build_stats_and_tasks(built) -> None:
    out = built("chengyu-bench")
    stats = json.loads((out / "build_stats.json").read_text(encoding="utf-8"))
    assert stats["tasks"] == {"appropriateness_sample": 40, "chid": 2002, "connotation_sample": 40}
    assert stats["rows_read"]["chid/test_public.json"] == stats["rows_kept"]["chid/test_public.json"] == 2002
    assert stats["dropped"] == {}
    # Web hashtags (#话题#) in 11 passages, besides the #idiom# blank.
    assert set(stats["flagged"]) == {"chid_other_hash_marks"}
    assert stats["flagged"]["chid_other_hash_marks"]["count"] == 11
    assert {s: v["rows"] for s, v in stats["details"]["chid"].items()} == {
        "test_public": 2002,
        "train_few_all": 202,
        "dev_few_all": 202,
    }
    # No release checkout in the default params: the build says so, and makes no release tasks.
    assert stats["notes"][0].startswith("NOT AVAILABLE")
    assert not {"connotation", "appropriateness", "open_cloze"} & set(stats["tasks"])
