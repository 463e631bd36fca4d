"""G-IdiomAlign build on small hand-written fixtures (tests/fixtures/g_idiomalign)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from idiombench.benchmarks.base import BuildResult, write_build
from idiombench.benchmarks.g_idiomalign.build import build
from idiombench.benchmarks.g_idiomalign.config import GIdiomAlignBuild
from idiombench.benchmarks.g_idiomalign.languages import canonical_name, language_code
from idiombench.benchmarks.g_idiomalign.text import repair_mojibake
from idiombench.core.errors import DataError
from idiombench.core.items import Item

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "g_idiomalign"
ZH_MCQ = "Multiple-Choice_Idiom_Equivalence/Zh-target/mcq_data_mcq_data_English_Chinese.json"
FR_MCQ = "Multiple-Choice_Idiom_Equivalence/Other targets/mcq_data_mcq_data_English_French.json"
ZH_EN = "Gloss_pivoted_Original/Chinese_English.json"


@pytest.fixture
def raw(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURES, tmp_path / "raw")
    return tmp_path / "raw"


def files_in(raw: Path) -> list[str]:
    return sorted(p.relative_to(raw).as_posix() for p in raw.rglob("*.json"))


def run(raw: Path, **cfg: Any) -> BuildResult:
    return build(raw, GIdiomAlignBuild(**cfg), files_in(raw))


def edit(raw: Path, rel: str, change: Callable[[list[dict[str, Any]]], None]) -> None:
    path = raw / rel
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def by_id(result: BuildResult, task: str) -> dict[str, Item]:
    return {item.item_id: item for item in result.tasks[task]}


def test_tasks_counts_and_rows(raw: Path) -> None:
    result = run(raw)
    counts = {task: len(items) for task, items in result.tasks.items()}
    assert counts == {
        "aligned_pairs": 5,
        "gloss_generation": 10,
        "mcq": 3,
        "additional_pairs": 1,
        "gloss_generation_additional": 2,
    }
    assert dict(result.stats.rows_read) == {
        "Gloss_pivoted_Original": 5,
        "Multiple-Choice_Idiom_Equivalence": 3,
        "Additional_language pairs": 1,
    }
    assert result.stats.rows_kept == result.stats.rows_read
    details = result.stats.details
    assert details["aligned_pairs"]["per_pair"] == {"Chinese_English": 3, "English_French": 2}
    assert details["gloss_generation"]["per_direction"] == {"en->fr": 2, "en->zh": 3, "fr->en": 2, "zh->en": 3}
    assert details["mcq"]["per_direction"] == {"en->fr": 1, "en->zh": 2}
    assert details["mcq"]["per_group"] == {"Other targets": 1, "Zh-target": 2}


def test_aligned_pair_item(raw: Path) -> None:
    item = by_id(run(raw), "aligned_pairs")["pairs/Chinese_English/00000"]
    assert (item.language, item.input, item.references, item.answer) == ("en", "画蛇添足", ("gild the lily",), None)
    assert item.fields == {
        "source_idiom": "画蛇添足",
        "target_idiom": "gild the lily",
        "source_meaning": "to ruin by adding something superfluous",
        "target_meaning": "To add needless ornament.",  # released with two trailing spaces
        "source_language": "Chinese",
        "target_language": "English",
    }
    assert item.meta["pair"] == "Chinese_English"
    assert (item.meta["source_lang"], item.meta["target_lang"], item.meta["row"]) == ("zh", "en", 0)
    assert item.meta["whitespace_stripped"] == ["target_meaning"]


def test_whitespace_and_repeated_idioms_are_reported(raw: Path) -> None:
    stats = run(raw).stats
    stripped = [(e["file"], e["row"], e["field"]) for e in stats.flagged["whitespace_stripped"]]
    assert stripped == [("Chinese_English.json", 0, "target_meaning"), ("Chinese_English.json", 2, "source_meaning")]
    assert stats.flagged["repeated_target_idiom"] == [
        {
            "group": "Gloss_pivoted_Original",
            "file": "Chinese_English.json",
            "idiom": "preach to the choir",
            "rows": [1, 2],
        }
    ]
    assert "repeated_source_idiom" not in stats.flagged
    assert stats.details["aligned_pairs"]["repeated_idioms_per_pair"] == {
        "Chinese_English": {"rows_with_repeated_source_idiom": 0, "rows_with_repeated_target_idiom": 2}
    }


def test_generation_items_in_both_directions(raw: Path) -> None:
    gen = by_id(run(raw), "gloss_generation")
    forward, backward = gen["gen/zh-en/00000"], gen["gen/en-zh/00000"]
    assert (forward.input, forward.references, forward.language) == ("画蛇添足", ("gild the lily",), "en")
    assert forward.fields == {
        "source_idiom": "画蛇添足",
        "source_language": "Chinese",
        "target_language": "English",
        "gloss": "to ruin by adding something superfluous",
    }
    assert forward.meta["direction"] == "zh->en" and forward.meta["reversed"] is False
    assert (backward.input, backward.references, backward.language) == ("gild the lily", ("画蛇添足",), "zh")
    assert backward.fields["gloss"] == "To add needless ornament."  # the English idiom's own gloss
    assert backward.meta["direction"] == "en->zh" and backward.meta["reversed"] is True
    assert backward.meta["pair"] == "Chinese_English"
    # "preach to the choir" is aligned to two Chinese idioms: each item names the other gold.
    assert gen["gen/en-zh/00001"].meta["other_references"] == ["对牛鼓簧"]
    assert gen["gen/en-zh/00002"].meta["other_references"] == ["对牛弹琴"]
    assert gen["gen/zh-en/00001"].meta["other_references"] == []


def test_mcq_option_types_are_decoded(raw: Path) -> None:
    item = by_id(run(raw), "mcq")["mcq/en-zh/00000"]
    assert item.choices == ("恰到好处", "给百合镀金", "金玉满堂", "画蛇添足")
    assert item.answer == "D" and item.references == ("画蛇添足",)
    assert item.meta["option_types"] == {"A": "CA", "B": "LT", "C": "LC", "D": "reference"}
    assert item.meta["reference_letter"] == "D" and item.meta["target_letters"] == ["D"]
    assert item.meta["duplicate_option"] is False
    assert (item.meta["group"], item.meta["direction"], item.meta["source_lang"], item.meta["target_lang"]) == (
        "Zh-target",
        "en->zh",
        "en",
        "zh",
    )
    assert item.fields["instruction"] == json.loads((raw / ZH_MCQ).read_text(encoding="utf-8"))[0]["instruction"]
    assert (item.meta["pair"], item.meta["pair_row"]) == ("Chinese_English", 0)


def test_duplicate_option_is_flagged(raw: Path) -> None:
    result = run(raw)
    item = by_id(result, "mcq")["mcq/en-zh/00001"]
    assert item.answer == "A"  # as released: the copy of the target text at the LT slot
    assert item.meta["duplicate_option"] is True
    assert item.meta["reference_letter"] == "B"
    assert item.meta["target_letters"] == ["A", "B"]
    assert item.meta["option_types"]["A"] == "LT"
    flagged = result.stats.flagged["duplicate_option"]
    assert [(e["file"], e["row"], e["target_letters"]) for e in flagged] == [
        ("mcq_data_mcq_data_English_Chinese.json", 1, ["A", "B"])
    ]
    assert result.stats.details["mcq"]["option_decoding"] == {"agrees_with_correct_position": 2, "duplicate_option": 1}


def test_positions_that_disagree_are_an_error(raw: Path) -> None:
    def point_at_lt_slot(data: list[dict[str, Any]]) -> None:
        data[0]["correct_option"], data[0]["correct_position"] = "B", 2

    edit(raw, ZH_MCQ, point_at_lt_slot)
    with pytest.raises(DataError) as error:
        run(raw)
    message = str(error.value)
    assert "mcq_data_mcq_data_English_Chinese.json, row 0:" in message
    assert "correct_position 2 (B = '给百合镀金', a LT slot) disagrees with original_positions [4, 2, 3, 1]" in message
    assert "expected correct_position 4 (D, the reference slot)" in message


def test_correct_option_and_position_must_agree(raw: Path) -> None:
    edit(raw, ZH_MCQ, lambda data: data[0].update(correct_option="C"))
    with pytest.raises(DataError, match=r"row 0: correct_option C but correct_position 4 \(expected correct_option D"):
        run(raw)


def test_reference_slot_must_hold_the_target(raw: Path) -> None:
    edit(raw, ZH_MCQ, lambda data: data[0]["options_detail"].update(D="画龙点睛"))
    with pytest.raises(DataError, match=r"row 0: the reference slot \(original position 1\) is option D = '画龙点睛'"):
        run(raw)


def test_original_positions_must_be_a_permutation(raw: Path) -> None:
    edit(raw, ZH_MCQ, lambda data: data[1].update(original_positions=[1, 1, 3, 4]))
    with pytest.raises(DataError, match=r"row 1: original_positions is \[1, 1, 3, 4\] \(expected a permutation"):
        run(raw)


def test_instruction_must_show_the_options(raw: Path) -> None:
    edit(raw, ZH_MCQ, lambda data: data[0]["options_detail"].update(A="恰如其分"))
    with pytest.raises(DataError, match=r"row 0: instruction does not contain 'A. 恰如其分'"):
        run(raw)


def test_mcq_language_fields_must_match_the_file_name(raw: Path) -> None:
    edit(raw, ZH_MCQ, lambda data: data[1].update(source_language="German"))
    with pytest.raises(
        DataError, match=r"row 1: source_language is 'German' \(expected English, as the file name says\)"
    ):
        run(raw)


def test_missing_key_names_file_and_row(raw: Path) -> None:
    edit(raw, ZH_EN, lambda data: data[1].pop("target_meaning"))
    with pytest.raises(DataError) as error:
        run(raw)
    assert str(error.value).endswith(
        "Chinese_English.json, row 1: missing field(s) target_meaning "
        "(expected fields source_idiom, target_idiom, source_meaning, target_meaning)"
    )


def test_missing_mcq_key_names_file_and_row(raw: Path) -> None:
    edit(raw, FR_MCQ, lambda data: data[0].pop("original_positions"))
    with pytest.raises(
        DataError, match=r"mcq_data_mcq_data_English_French.json, row 0: missing field\(s\) original_positions"
    ):
        run(raw)


def test_non_string_value_is_an_error(raw: Path) -> None:
    edit(raw, ZH_EN, lambda data: data[2].update(source_idiom=None))
    with pytest.raises(DataError, match=r"Chinese_English.json, row 2: field source_idiom is a NoneType"):
        run(raw)


def test_unknown_language_name_is_an_error(raw: Path) -> None:
    additional = raw / "Additional_language pairs"
    (additional / "Korean_Spain.json").rename(additional / "Korean_Klingon.json")
    with pytest.raises(
        DataError, match=r"Korean_Klingon.json: unknown language name 'Klingon' \(expected one of Chinese"
    ):
        run(raw)


def test_missing_declared_file_is_an_error(raw: Path) -> None:
    files = files_in(raw)
    (raw / ZH_EN).unlink()
    with pytest.raises(DataError, match="Chinese_English.json: declared file is missing"):
        build(raw, GIdiomAlignBuild(), files)


def test_target_group_folder_must_fit_the_target_language(raw: Path) -> None:
    moved = raw / "Multiple-Choice_Idiom_Equivalence/En-target/mcq_data_mcq_data_English_French.json"
    moved.parent.mkdir()
    (raw / FR_MCQ).rename(moved)
    with pytest.raises(DataError, match="target language French does not belong in folder 'En-target'"):
        run(raw)


def test_empty_idiom_dropped_and_empty_gloss_flagged(raw: Path) -> None:
    def blank(data: list[dict[str, Any]]) -> None:
        data[0]["target_idiom"] = " "
        data[1]["source_meaning"] = ""

    edit(raw, "Gloss_pivoted_Original/English_French.json", blank)
    result = run(raw)
    assert result.stats.dropped["empty_idiom"] == [
        {"group": "Gloss_pivoted_Original", "file": "English_French.json", "row": 0, "fields": ["target_idiom"]}
    ]
    assert result.stats.flagged["empty_gloss"][0]["row"] == 1
    gen = by_id(result, "gloss_generation")
    assert "gen/en-fr/00000" not in gen and "gen/fr-en/00000" not in gen
    assert gen["gen/en-fr/00001"].meta["no_gloss_available"] is True
    assert gen["gen/fr-en/00001"].meta["no_gloss_available"] is False
    # The MCQ item of the dropped pair is kept, and reported as not joined to an aligned pair.
    assert [e["file"] for e in result.stats.flagged["mcq_not_in_aligned_pairs"]] == [
        "mcq_data_mcq_data_English_French.json"
    ]


def test_french_mojibake_repaired_by_default(raw: Path) -> None:
    result = run(raw)
    pair = by_id(result, "aligned_pairs")["pairs/English_French/00000"]
    assert pair.references == ("coûter les yeux de la tête",)
    assert pair.meta["mojibake_repaired"] == ["target_idiom"]
    item = by_id(result, "mcq")["mcq/en-fr/00000"]
    assert item.choices == (
        "coûter un bras et une jambe",
        "coûter les yeux de la tête",
        "bras dessus bras dessous",
        "pour une bouchée de pain",
    )
    assert "\nB. coûter les yeux de la tête\n" in item.fields["instruction"]
    assert "Ã" not in item.fields["instruction"]
    assert item.meta["mojibake_repaired"] == ["instruction", "target_idiom", "option_A", "option_B"]
    assert (item.meta["pair"], item.meta["pair_row"]) == ("English_French", 0)
    assert result.stats.details["text"]["mojibake_repaired"] == {
        "Gloss_pivoted_Original/target_idiom": 1,
        "Other targets/instruction": 1,
        "Other targets/option_A": 1,
        "Other targets/option_B": 1,
        "Other targets/target_idiom": 1,
    }


def test_mojibake_kept_when_repair_is_off(raw: Path) -> None:
    result = run(raw, repair_mojibake=False)
    released = json.loads((raw / FR_MCQ).read_text(encoding="utf-8"))[0]
    item = by_id(result, "mcq")["mcq/en-fr/00000"]
    assert item.fields["instruction"] == released["instruction"]
    assert item.choices == tuple(released["options_detail"].values())
    assert by_id(result, "aligned_pairs")["pairs/English_French/00000"].references == ("coÃ»ter les yeux de la tÃªte",)
    assert "mojibake_repaired" not in result.stats.flagged


def test_repair_mojibake_only_touches_utf8_read_as_latin1() -> None:
    assert repair_mojibake("Ã\xa0 contre-courant") == "à contre-courant"
    assert repair_mojibake("Å\x93uf") == "œuf"
    for text in ("bouchée", "źdźbło", "Straße°", "画蛇添足", "ฟางเส้นสุดท้าย", "Ã"):
        assert repair_mojibake(text) == text


def test_additional_pairs_stay_in_their_own_tasks(raw: Path) -> None:
    result = run(raw)
    [pair] = result.tasks["additional_pairs"]
    assert pair.item_id == "pairs/Korean_Spain/00000"
    assert (pair.language, pair.meta["source_lang"], pair.meta["target_lang"]) == ("es", "ko", "es")
    assert pair.fields["target_language"] == "Spanish"  # the file says "Spain"
    assert {i.item_id for i in result.tasks["gloss_generation_additional"]} == {"gen/ko-es/00000", "gen/es-ko/00000"}
    main = {i.meta["pair"] for task in ("aligned_pairs", "gloss_generation") for i in result.tasks[task]}
    assert "Korean_Spain" not in main
    assert result.stats.details["gloss_generation_additional"]["directions"] == 2


def test_language_codes() -> None:
    assert language_code("Spain", "x.json") == "es" and canonical_name("Spain", "x.json") == "Spanish"
    assert [language_code(n, "x.json") for n in ("Chinese", "Japanese", "Polish", "Arabic", "Thai", "Vietnamese")] == [
        "zh",
        "ja",
        "pl",
        "ar",
        "th",
        "vi",
    ]
    with pytest.raises(DataError, match=r"x.json, row 3: unknown language name 'Latin'"):
        language_code("Latin", "x.json", row=3)


def test_build_is_byte_identical_when_rerun(raw: Path, tmp_path: Path) -> None:
    outputs = []
    for name in ("first", "second"):
        write_build(run(raw), tmp_path / name)
        outputs.append({p.name: p.read_bytes() for p in sorted((tmp_path / name).iterdir())})
    assert outputs[0] == outputs[1]
    assert set(outputs[0]) == {
        "additional_pairs.parquet",
        "aligned_pairs.parquet",
        "build_stats.json",
        "gloss_generation.parquet",
        "gloss_generation_additional.parquet",
        "mcq.parquet",
        "idiombench-output.json",
    }


def test_a_pair_released_in_both_orders_is_an_error(raw: Path) -> None:
    shutil.copy(raw / ZH_EN, raw / "Gloss_pivoted_Original/English_Chinese.json")
    with pytest.raises(
        DataError,
        match=r"English_Chinese.json: the language pair is also released as "
        r"Gloss_pivoted_Original/Chinese_English.json",
    ):
        run(raw)


def test_a_direction_released_twice_is_an_error(raw: Path) -> None:
    edit(raw, ZH_MCQ, lambda data: [record.update(source_language="Spanish") for record in data])
    folder = (raw / ZH_MCQ).parent
    shutil.copy(raw / ZH_MCQ, folder / "mcq_data_mcq_data_Spain_Chinese.json")
    (raw / ZH_MCQ).rename(folder / "mcq_data_mcq_data_Spanish_Chinese.json")
    with pytest.raises(
        DataError, match=r"Spanish_Chinese.json: the direction is also released as .*Spain_Chinese.json"
    ):
        run(raw)
