"""OrderProbe build on small hand-written release files."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import pytest

from idiombench.benchmarks.base import write_build
from idiombench.benchmarks.orderprobe.build import build, permutation_patterns, permute
from idiombench.benchmarks.orderprobe.config import OrderProbeBuild
from idiombench.core.errors import DataError
from idiombench.core.items import read_items
from orderprobe_fixtures import SACC_FIXTURE

HEADER = "原始词语," + ",".join("".join(p) for p in itertools.permutations("ABCD")) + "\r\n"


def perm_row(expression: str) -> str:
    cells = ["".join(p) for p in itertools.permutations(expression)][1:]
    return expression + "," + ",".join(cells) + "\r\n"


def write_release(
    root: Path,
    *,
    zh_rows: list[str],
    ja_rows: list[str],
    zh_perm: list[str] | None = None,
    zh_struct: list[str] | None = None,
    ja_struct: list[str] | None = None,
) -> Path:
    data = root / "data"
    (data / "Structure" / "Simplified Chinese").mkdir(parents=True)
    (data / "Structure" / "Japanese").mkdir(parents=True)
    bom = "\ufeff"
    (data / "Simplified Chinese.csv").write_text(
        bom + "".join(r + "\r\n" for r in zh_rows), encoding="utf-8", newline=""
    )
    (data / "Japanese.csv").write_text(bom + "".join(r + "\r\n" for r in ja_rows), encoding="utf-8", newline="")
    zh_exprs = [r.split(",")[0].strip() for r in zh_rows]
    ja_exprs = [r.split(",")[0].strip() for r in ja_rows]
    if zh_perm is None:
        zh_perm = [perm_row(e) for e in dict.fromkeys(zh_exprs) if len(e) == 4]
    (data / "Full permutation in Simplified Chinese.csv").write_text(
        bom + HEADER + "".join(zh_perm), encoding="utf-8", newline=""
    )
    ja_perm = [perm_row(e) for e in dict.fromkeys(ja_exprs) if len(e) == 4]
    (data / "Full permutation in Japanese.csv").write_text(
        bom + HEADER + "".join(ja_perm), encoding="utf-8", newline=""
    )
    zh_struct = zh_struct if zh_struct is not None else [f"{e},Modifier-Head" for e in zh_exprs]
    ja_struct = ja_struct if ja_struct is not None else [f"{e},Parallel (Coordinate)" for e in ja_exprs]
    (data / "Structure" / "Simplified Chinese" / "Simplified Chinese.csv").write_text(
        bom + "".join(r + "\r\n" for r in zh_struct), encoding="utf-8", newline=""
    )
    (data / "Structure" / "Japanese" / "Japanese.csv").write_text(
        bom + "".join(r + "\r\n" for r in ja_struct), encoding="utf-8", newline=""
    )
    # the released S_Acc scripts (word lists): the hand-written stand-ins
    shutil.copytree(SACC_FIXTURE / "Sacc", root / "Sacc")
    return root


ZH_ROWS = [
    "画蛇添足,比喻做了多余的事||反而不恰当",
    "一丘之貉 ,比喻同是一类，没有什么差别",  # trailing space: stripped
    "无可估量 难以估计,",  # not four characters: dropped
    "井井有条,形容条理分明||zdic解释",  # placeholder reference removed
    "画蛇添足,比喻多此一举",  # repeated expression
]
JA_ROWS = ["一期一会", "試行錯誤"]  # the Japanese release has no references
CONFIG = OrderProbeBuild(languages=["zh-CN", "ja"])


def test_permutation_patterns_follow_itertools_without_identity():
    patterns = permutation_patterns()
    assert len(patterns) == 23 and patterns[0] == "ABDC" and patterns[-1] == "DCBA"
    assert "ABCD" not in patterns
    assert permute("画蛇添足", "BADC") == "蛇画足添"


def test_build_counts_items_and_quirks(tmp_path: Path):
    result = build(write_release(tmp_path, zh_rows=ZH_ROWS, ja_rows=JA_ROWS), CONFIG)
    items = result.tasks["restore"]
    stats = result.stats.to_json({"restore": len(items)})
    assert stats["rows_read"] == {"ja": 2, "zh-CN": 5}
    assert stats["rows_kept"] == {"ja": 2, "zh-CN": 4}
    assert stats["dropped"]["not_four_characters"]["count"] == 1
    assert stats["dropped"]["not_four_characters"]["examples"][0]["expression"] == "无可估量 难以估计"
    assert stats["flagged"]["duplicate_expression"]["count"] == 1
    assert stats["flagged"]["placeholder_reference_removed"]["count"] == 1
    assert stats["flagged"]["expression_whitespace_stripped"]["count"] == 1
    assert stats["flagged"]["no_references"]["count"] == 2  # both Japanese rows
    assert len(items) == 6 * 24
    perturbed = [i for i in items if not i.meta["is_canonical"]]
    assert len(perturbed) == 6 * 23
    # 井井有条 and 一期一会 repeat a character: swapping the two gives back the canonical form
    identity = [i for i in items if i.meta["is_identity"]]
    assert {i.meta["expression"] for i in identity} == {"井井有条", "一期一会"}
    assert len(identity) == 2
    assert all(i.input == i.answer for i in identity)
    jing = [i for i in items if i.meta["expression"] == "井井有条"]
    assert jing[0].references == ("形容条理分明",)


def test_items_carry_pattern_category_and_references(tmp_path: Path):
    items = build(write_release(tmp_path, zh_rows=ZH_ROWS, ja_rows=JA_ROWS), CONFIG).tasks["restore"]
    by_id = {i.item_id: i for i in items}
    canonical = by_id["zh-CN/0001/ABCD"]
    assert canonical.input == "画蛇添足" and canonical.meta["is_canonical"] and not canonical.meta["is_identity"]
    assert canonical.references == ("比喻做了多余的事", "反而不恰当")
    assert canonical.meta["category"] == "Modifier-Head"
    swapped = by_id["zh-CN/0001/DCBA"]
    assert swapped.input == "足添蛇画" and swapped.answer == "画蛇添足"
    assert swapped.fields == {"idiom": "足添蛇画"}
    duplicate = by_id["zh-CN/0005/ABCD"]
    assert duplicate.meta["duplicate_of_row"] == 1 and duplicate.references == ("比喻多此一举",)
    assert by_id["ja/0001/ABCD"].references == () and by_id["ja/0001/ABCD"].meta["no_references"]


def test_dedupe_merges_repeated_expressions(tmp_path: Path):
    cfg = OrderProbeBuild(languages=["zh-CN", "ja"], dedupe=True)
    result = build(write_release(tmp_path, zh_rows=ZH_ROWS, ja_rows=JA_ROWS), cfg)
    items = result.tasks["restore"]
    assert len(items) == 5 * 24
    merged = next(i for i in items if i.item_id == "zh-CN/0001/ABCD")
    assert merged.references == ("比喻做了多余的事", "反而不恰当", "比喻多此一举")
    assert merged.meta["merged_rows"] == [5]
    assert result.stats.to_json({})["merged"]["duplicate_expression"]["count"] == 1


def test_missing_category_is_flagged_not_dropped(tmp_path: Path):
    root = write_release(
        tmp_path, zh_rows=ZH_ROWS, ja_rows=JA_ROWS, zh_struct=["画蛇添足,Modifier-Head", "画蛇添足,Verb-Object"]
    )
    result = build(root, CONFIG)
    stats = result.stats.to_json({})
    assert stats["flagged"]["no_syntactic_category"]["count"] == 2  # 一丘之貉, 井井有条
    assert stats["flagged"]["category_conflict_first_kept"]["count"] == 1
    assert stats["details"]["languages"]["zh-CN"]["category_join"] == {"joined": 2, "expressions": 4, "rate": 0.5}
    assert len(result.tasks["restore"]) == 6 * 24


def test_permutation_file_disagreement_is_an_error(tmp_path: Path):
    wrong = "画蛇添足," + ",".join(["画蛇添足"] * 23) + "\r\n"
    root = write_release(tmp_path, zh_rows=ZH_ROWS, ja_rows=JA_ROWS, zh_perm=[wrong])
    with pytest.raises(DataError) as info:
        build(root, CONFIG)
    message = str(info.value)
    assert "Full permutation in Simplified Chinese.csv, row 2" in message
    assert "do not match the regenerated ones" in message


def test_unknown_category_and_missing_column_are_errors(tmp_path: Path):
    root = write_release(tmp_path / "a", zh_rows=ZH_ROWS, ja_rows=JA_ROWS, zh_struct=["画蛇添足,Idiomatic"])
    with pytest.raises(DataError, match=r"Simplified Chinese.csv, row 1: unknown syntactic category 'Idiomatic'"):
        build(root, CONFIG)
    root = write_release(tmp_path / "b", zh_rows=["画蛇添足"], ja_rows=JA_ROWS)
    with pytest.raises(
        DataError, match=r"Simplified Chinese.csv, row 1: 1 column\(s\).*expected expression, references"
    ):
        build(root, CONFIG)


def test_write_build_is_deterministic_and_readable(tmp_path: Path):
    root = write_release(tmp_path / "release", zh_rows=ZH_ROWS, ja_rows=JA_ROWS)
    write_build(build(root, CONFIG), tmp_path / "out1")
    write_build(build(root, CONFIG), tmp_path / "out2")
    for name in ("restore.parquet", "build_stats.json", "released_lexicon.json"):
        assert (tmp_path / "out1" / name).read_bytes() == (tmp_path / "out2" / name).read_bytes()
    items = read_items(tmp_path / "out1" / "restore.parquet")
    assert len(items) == 6 * 24 and items[0].item_id == "zh-CN/0001/ABCD"
    stats = json.loads((tmp_path / "out1" / "build_stats.json").read_text(encoding="utf-8"))
    assert stats["tasks"] == {"restore": 144}
    assert not any(p.name.startswith(".") for p in tmp_path.iterdir())  # no staging dir left


def test_build_writes_the_released_word_lists_of_its_languages(tmp_path: Path):
    """The lists come from the acquired Sacc scripts (here the stand-ins), for the built languages only."""
    from idiombench.benchmarks.orderprobe import lexicon

    root = write_release(tmp_path / "release", zh_rows=ZH_ROWS, ja_rows=JA_ROWS)
    write_build(build(root, CONFIG), tmp_path / "out")
    loaded = lexicon.load(tmp_path / "out")
    assert sorted(loaded) == ["ja", "zh-CN"]
    assert loaded["zh-CN"].positive == {"优秀", "出色", "喜欢"}
    assert loaded["ja"].overrides == {"一期一会": (True, False)}
    stats = json.loads((tmp_path / "out" / "build_stats.json").read_text(encoding="utf-8"))
    assert stats["details"]["released_word_lists"]["zh-CN"] == {
        "file": "Sacc/sacc_chinese.py",
        "stopwords": 5,
        "negations": 2,
        "positive": 3,
        "negative": 3,
        "idiom_overrides": 2,
    }


def test_build_without_the_acquired_scripts_names_the_missing_file(tmp_path: Path):
    root = write_release(tmp_path / "release", zh_rows=ZH_ROWS, ja_rows=JA_ROWS)
    (root / "Sacc" / "sacc_japanese.py").unlink()
    with pytest.raises(DataError, match=r"sacc_japanese\.py: missing"):
        build(root, CONFIG)
