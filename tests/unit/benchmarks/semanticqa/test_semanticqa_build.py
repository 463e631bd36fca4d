"""SemanticQA build on small hand-written release files (tests/fixtures/semanticqa)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError

from idiombench.benchmarks.base import write_build
from idiombench.benchmarks.semanticqa import BENCHMARK
from idiombench.benchmarks.semanticqa.adapters import ADAPTERS
from idiombench.benchmarks.semanticqa.build import build
from idiombench.benchmarks.semanticqa.config import EXTENSION_TASKS, TASKS, LCCTaxonomy, SemanticQABuild
from idiombench.benchmarks.semanticqa.taxonomy import prompt_text, read_taxonomy
from idiombench.benchmarks.semanticqa.templates import PLACEHOLDER
from idiombench.core.errors import DataError
from idiombench.core.items import read_items

FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "semanticqa"
TAXONOMY = LCCTaxonomy(
    labels="taxonomy/LF_3.txt",
    prompt_by_shots={"0-shot": "taxonomy/LF_3_0-shots.txt", "3-shot": "taxonomy/LF_3_3-shots.txt"},
)
CONFIG = SemanticQABuild(extensions=True, lcc_taxonomy=TAXONOMY)


def records(task: str, root: Path = FIXTURE) -> list[dict]:
    lines = (root / "instances" / f"{task}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture()
def release(tmp_path: Path) -> Path:
    """A writable copy of the fixture release, for the bad-input tests."""
    return Path(shutil.copytree(FIXTURE, tmp_path / "raw"))


def rewrite(release: Path, task: str, rows: list[dict | str]) -> Path:
    path = release / "instances" / f"{task}.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def result():
    return build(FIXTURE, CONFIG)


def item(result, task: str, item_id: str):
    return next(i for i in result.tasks[task] if i.item_id == item_id)


def test_one_task_per_instance_file_and_nothing_dropped(result):
    assert list(result.tasks) == [*TASKS, *EXTENSION_TASKS]
    for task, items in result.tasks.items():
        assert len(items) == len(records(task)), task
    stats = result.stats.to_json({t: len(v) for t, v in result.tasks.items()})
    assert stats["rows_read"] == stats["rows_kept"] and stats["rows_read_total"] == 33
    assert stats["dropped"] == {} and stats["merged"] == {}


def test_extensions_are_off_by_default():
    assert SemanticQABuild().selected_tasks() == list(TASKS)
    only = build(FIXTURE, SemanticQABuild(tasks=["idiom_extraction", "vmwe_extraction_VID"], lcc_taxonomy=TAXONOMY))
    assert list(only.tasks) == ["idiom_extraction", "vmwe_extraction_VID"]
    assert "collocation_taxonomy" not in only.stats.details  # no collocation task, no taxonomy read


def test_config_rejects_unknown_and_repeated_tasks():
    with pytest.raises(ValidationError, match="literal_error|Input should be"):
        SemanticQABuild(tasks=["idiom_detection", "vmwe_extraction_oracle"])  # extensions go through the flag
    with pytest.raises(ValidationError, match="tasks listed more than once: idiom_detection"):
        SemanticQABuild(tasks=["idiom_detection", "idiom_detection"])
    with pytest.raises(ValidationError, match="keys must look like 0-shot, 3-shot: got 'three'"):
        LCCTaxonomy(prompt_by_shots={"three": "taxonomy/x.txt"})
    assert LCCTaxonomy().files_by_shots() == {
        0: "taxonomy/SEM_REL_CATEGORY_8_0-shots.txt",
        3: "taxonomy/SEM_REL_CATEGORY_8_3-shots.txt",
        5: "taxonomy/SEM_REL_CATEGORY_8_5-shots.txt",
    }


def test_multiple_choice_items(result):
    ied = item(result, "idiom_detection", "12")
    assert ied.input.startswith("Break a Leg Studios opened downtown.\nA: good luck")
    assert ied.choices == ("good luck", "fracture a limb", "Proper Noun", "Meta Usage")
    assert ied.answer == "C" and ied.references == ()
    assert ied.meta["answer_text"] == "Proper Noun" and ied.meta["code"] == "IED"
    ncc = item(result, "noun_compound_compositionality", "2")
    assert ncc.answer == "B" and ncc.meta["answer_text"] == "Non-compositional"
    assert ncc.fields["noun compound"] == "couch potato"  # the template's spelling of noun_compound
    assert ncc.fields["example"] == f"\nNoun compound: couch potato\nContext: {ncc.input}\nOutput: B\n"


def test_label_and_extraction_items(result):
    lcc = item(result, "collocation_categorization", "L0003")
    assert (lcc.input, lcc.answer, lcc.references, lcc.choices) == ("doctors give advice for free .", "Oper1", (), ())
    assert lcc.meta["label_id"] == "2" and lcc.meta["label_in_taxonomy"] is True
    assert lcc.meta["taxonomy_positions"] == {
        "taxonomy/LF_3.txt": 2,
        "taxonomy/LF_3_0-shots.txt": 2,
        "taxonomy/LF_3_3-shots.txt": 2,
    }  # LF_4.txt lacks Oper1
    iee = item(result, "idiom_extraction", "L0002")
    assert (iee.input, iee.answer, iee.references) == (
        "He kicked the bucket last year .",
        "kicked the bucket",
        ("kicked the bucket",),
    )
    lce = item(result, "collocation_extraction", "L0001")
    assert lce.answer == "heavy rain" and lce.fields["relation"] == "intense degree"
    assert lce.fields["label_examples"] == ["heavy rain", "strong tea"] and lce.fields["example"] == "heavy rain ; "
    vpc = item(result, "vmwe_extraction_VPC", "31")
    assert (vpc.answer, vpc.references) == ("gave up", ("gave up",))
    assert (vpc.meta["vmwe_type"], vpc.meta["vmwe_subtype"], vpc.meta["code"]) == ("VPC", "VPC.semi", "VPE")


def test_interpretation_items(result):
    iei = item(result, "idiom_paraphrase", "9")
    assert iei.input == "We hit the sack early ." and iei.fields["context"] == iei.input  # context_idiomatic
    assert iei.answer is None and iei.references == ("go to bed",)
    lci = item(result, "collocation_interpretation", "L0001")
    assert lci.references == ("intense rainfall", "a downpour")  # trailing empty paraphrase removed
    assert lci.fields["paraphrases"] == ["intense rainfall", "a downpour", ""]  # fields stay as released
    nci = item(result, "noun_compound_interpretation", "L0001")
    assert nci.input == "baby oil" and nci.references == ("oil for babies", "oil used on babies", "oil for babies")
    assert nci.meta["repeated_references"] == 1 and nci.meta["n_references"] == 3


def test_fields_hold_every_released_field(result):
    for task, items in result.tasks.items():
        for record, built in zip(records(task), items, strict=False):
            assert {k: built.fields[k] for k in record} == record, task
            assert built.meta["source_line"] >= 1 and built.language == "en" and built.benchmark == "semanticqa"


def test_every_fixture_template_placeholder_is_a_field(result):
    for task, items in result.tasks.items():
        stem = ADAPTERS[task].prompt_stem
        for setting in ("zeroshot", "fewshot"):
            names = PLACEHOLDER.findall((FIXTURE / "prompts" / f"{stem}_{setting}.txt").read_text(encoding="utf-8"))
            assert names, (task, setting)
            for name in names:
                key = "taxonomy_3shot" if (name, setting) == ("taxonomy", "fewshot") else name
                assert all(isinstance(i.fields[key], str) for i in items), (task, name)
        templates = result.stats.details["tasks"][task]["templates"]
        assert templates["zeroshot"]["file"] == f"prompts/{stem}_zeroshot.txt"


def test_item_ids_come_from_ids_else_line_numbers(result):
    tasks = result.stats.details["tasks"]
    assert tasks["idiom_detection"]["item_id_source"] == "id"
    assert tasks["idiom_extraction"]["item_id_source"] == "line (the file has no id field)"
    assert [i.item_id for i in result.tasks["idiom_extraction"]] == ["L0001", "L0002"]


def test_release_quirks_are_flagged(result):
    flagged = result.stats.to_json({})["flagged"]
    assert {k: v["count"] for k, v in flagged.items()} == {
        "duplicate_question": 1,  # two LCE records share one context
        "duplicate_record": 1,  # LVC 10 and 11 differ only in id
        "empty_reference_removed": 1,  # LCI trailing ""
        "gold_not_verbatim_in_context": 6,  # gave advice; made decision x2; took walk x3
        "repeated_references": 1,
        "vmwe_label_misspelled": 1,
    }
    assert flagged["duplicate_question"]["examples"][0] == {
        "task": "collocation_extraction",
        "line": 2,
        "first_line": 1,
        "same_gold": False,
    }
    assert flagged["vmwe_label_misspelled"]["examples"][0]["normalised"] == "LVC.full"
    assert item(result, "vmwe_extraction_LVC", "11").meta["duplicate_of_line"] == 1


def test_taxonomy_report(result):
    report = result.stats.details["collocation_taxonomy"]
    assert report["data_label_set"] == ["Magn", "AntiMagn", "Oper1"]
    assert report["label_ids"] == {"Magn": "0", "AntiMagn": "1", "Oper1": "2"}
    assert report["lcc_label_counts"] == {"AntiMagn": 1, "Magn": 1, "Oper1": 1}
    assert report["not_found_in_labels_file"] == []
    assert report["files"]["taxonomy/LF_4.txt"]["data_labels_missing"] == ["Oper1"]
    assert report["files"]["taxonomy/LF_4.txt"]["labels_without_data"] == ["Real1", "Bon"]


def test_vmwe_report(result):
    report = result.stats.details["vmwe"]
    assert report["oracle_definitions"]["LVC"] == ["LVC definition text."]
    assert report["main_total"] == 6
    oracle = report["vmwe_extraction_oracle"]
    assert oracle["records_in_main_sets"] == 3 and oracle["not_in_main_sets"] == [["We set up camp .", "set up"]]
    assert ["They made a decision quickly .", "made decision"] in oracle["main_not_in_this_set"]


def test_taxonomy_prompt_text_follows_the_authors_loader():
    zero = prompt_text(FIXTURE / "taxonomy" / "LF_3.txt", 0)
    assert zero == "Label\tMeaning\nMagn\tintense degree\nAntiMagn \tweak degree\nOper1\tperform an action\n"
    few = prompt_text(FIXTURE / "taxonomy" / "LF_3_3-shots.txt", 3)
    assert few.startswith("ID\tLabel\tExamples\tMeaning\n0\tMagn\theavy rain\tintense degree\n")
    assert read_taxonomy(FIXTURE / "taxonomy" / "LF_3.txt").labels == ["Magn", "AntiMagn", "Oper1"]  # cells stripped


def test_write_build_is_byte_identical_across_runs(tmp_path: Path):
    first = write_build(build(FIXTURE, CONFIG), tmp_path / "a")
    write_build(build(FIXTURE, CONFIG), tmp_path / "b")
    for name in [f"{t}.parquet" for t in first["tasks"]] + ["build_stats.json"]:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    back = read_items(tmp_path / "a" / "idiom_detection.parquet")
    assert back == build(FIXTURE, CONFIG).tasks["idiom_detection"]


def test_benchmark_object(tmp_path: Path):
    assert BENCHMARK.name == "semanticqa"
    specs = BENCHMARK.file_specs(None)
    assert len(specs) == 173
    assert {s.file for s in specs} >= {f"instances/{t}.jsonl" for t in [*TASKS, *EXTENSION_TASKS]}


# ---- bad input -------------------------------------------------------------------------------


def test_a_line_that_is_not_json_names_file_and_line(release: Path):
    rows = records("idiom_extraction")
    path = rewrite(release, "idiom_extraction", [rows[0], '{"context": "broken', rows[1]])
    with pytest.raises(DataError) as error:
        build(release, CONFIG)
    assert str(error.value).startswith(f"{path}, row 2: invalid JSON")
    assert "expected one JSON object per line" in str(error.value)


def test_a_record_without_its_gold_is_flagged_and_kept(release: Path):
    rows = records("idiom_extraction")
    del rows[1]["idiom"]
    rewrite(release, "idiom_extraction", rows + [{"context": "Nothing here .", "idiom": "  "}])
    result = build(release, CONFIG)
    items = result.tasks["idiom_extraction"]
    assert len(items) == 3
    assert (items[1].answer, items[1].references, items[1].meta["no_gold"]) == (None, (), True)
    assert items[1].fields["example"] is None  # cannot serve as an exemplar
    flagged = result.stats.to_json({})["flagged"]
    assert flagged["missing_gold"]["examples"] == [{"task": "idiom_extraction", "line": 2, "field": "idiom"}]
    assert flagged["empty_gold"]["examples"] == [{"task": "idiom_extraction", "line": 3, "field": "idiom"}]
    assert result.stats.details["tasks"]["idiom_extraction"]["gold"]["no_gold"] == 2


def test_an_empty_reference_list_is_no_gold(release: Path):
    rows = records("noun_compound_interpretation")
    rows[0]["references"] = ["", " "]
    rewrite(release, "noun_compound_interpretation", rows)
    result = build(release, CONFIG)
    first = result.tasks["noun_compound_interpretation"][0]
    assert first.references == () and first.meta["no_gold"]
    assert result.stats.to_json({})["flagged"]["empty_gold"]["count"] == 1


def test_a_record_without_a_prompt_field_is_an_error(release: Path):
    rows = records("noun_compound_compositionality")
    del rows[1]["context"]
    path = rewrite(release, "noun_compound_compositionality", rows)
    with pytest.raises(DataError, match=r"row 2: missing field\(s\) context"):
        build(release, CONFIG)
    rows = records("noun_compound_compositionality")
    rows[0]["D"] = 4
    rewrite(release, "noun_compound_compositionality", rows)
    with pytest.raises(DataError) as error:
        build(release, CONFIG)
    assert str(error.value) == f"{path}, row 1: field 'D' is a int (expected a string)"


def test_a_gold_of_the_wrong_type_is_an_error(release: Path):
    rows = records("idiom_paraphrase")
    rows[0]["paraphrase"] = 3
    rewrite(release, "idiom_paraphrase", rows)
    with pytest.raises(DataError, match="row 1: gold field 'paraphrase' is a int"):
        build(release, CONFIG)


def test_duplicate_ids_fall_back_to_line_numbers(release: Path):
    rows = records("vmwe_extraction_VPC")
    rows[1]["id"] = rows[0]["id"]
    rewrite(release, "vmwe_extraction_VPC", rows)
    result = build(release, CONFIG)
    assert [i.item_id for i in result.tasks["vmwe_extraction_VPC"]] == ["L0001", "L0002"]
    assert result.stats.details["tasks"]["vmwe_extraction_VPC"]["item_id_source"].startswith("line (duplicate ids")
    assert result.stats.to_json({})["flagged"]["duplicate_id"]["examples"] == [
        {"task": "vmwe_extraction_VPC", "line": 2, "id": "30", "first_line": 1}
    ]


def test_records_without_an_id_make_the_file_use_line_numbers(release: Path):
    rows = records("idiom_paraphrase")
    del rows[0]["id"]
    rewrite(release, "idiom_paraphrase", rows)
    result = build(release, CONFIG)
    assert [i.item_id for i in result.tasks["idiom_paraphrase"]] == ["L0001", "L0002"]
    assert [i.meta["source_id"] for i in result.tasks["idiom_paraphrase"]] == [None, "9"]
    assert result.stats.details["tasks"]["idiom_paraphrase"]["item_id_source"].startswith("line (some records lack")
    assert result.stats.to_json({})["flagged"]["missing_id"]["examples"] == [
        {"task": "idiom_paraphrase", "line": 1, "id": None}
    ]


def test_invalid_option_letter_and_options_not_in_context(release: Path):
    rows = records("idiom_detection")
    rows[0]["target"] = "E"
    rows[1]["B"] = "a broken limb"  # no longer the option appended to the context
    rewrite(release, "idiom_detection", rows)
    result = build(release, CONFIG)
    first = result.tasks["idiom_detection"][0]
    assert first.answer is None and first.meta["no_gold"]
    assert first.meta["gold_problem"] == "target 'E' is not one of A-D"
    flagged = result.stats.to_json({})["flagged"]
    assert flagged["answer_not_an_option_letter"]["count"] == 1
    assert flagged["options_not_in_context"]["examples"] == [{"task": "idiom_detection", "line": 2, "id": "12"}]


def test_collocation_labels_are_validated_against_the_taxonomy(release: Path):
    rows = records("collocation_categorization")
    rows[0]["label"] = "Son"
    rows[1]["label_id"] = "7"
    rewrite(release, "collocation_categorization", rows)
    result = build(release, CONFIG)
    flagged = result.stats.to_json({})["flagged"]
    assert flagged["label_not_in_taxonomy"]["examples"][0] == {
        "task": "collocation_categorization",
        "line": 1,
        "label": "Son",
        "taxonomy": "taxonomy/LF_3.txt",
    }
    assert flagged["label_id_mismatch"]["examples"][0]["taxonomy_id"] == "1"
    assert result.tasks["collocation_categorization"][0].answer == "Son"  # still the gold, flagged
    assert result.stats.details["collocation_taxonomy"]["not_found_in_labels_file"] == ["Son"]


def test_a_template_placeholder_no_field_fills_is_an_error(release: Path):
    template = release / "prompts" / "idiom_extraction_zeroshot.txt"
    template.write_text("Context: {{context}} Hint: {{hint}}\n", encoding="utf-8")
    with pytest.raises(DataError) as error:
        build(release, CONFIG)
    assert str(error.value).startswith(f"{template}: placeholder {{{{hint}}}} cannot be filled: item L0001 (line 1)")


def test_lce_oracle_template_unfilled_for_unknown_label_is_flagged(release: Path):
    rows = records("collocation_extraction")
    rows[2]["label"] = "Bon"
    rewrite(release, "collocation_extraction", rows)
    result = build(release, CONFIG)
    flagged = result.stats.to_json({})["flagged"]
    assert flagged["template_placeholder_unfilled"]["count"] == 2  # zero- and few-shot oracle templates
    extra = result.stats.details["tasks"]["collocation_extraction"]["templates"]
    assert extra["collocation_extraction_w_oracle_zeroshot"]["items_unfilled"] == {"relation": 1}


def test_bad_taxonomy_files_name_file_and_row(release: Path):
    path = release / "taxonomy" / "LF_3.txt"
    path.write_text("ID\tLabel\tExamples\tSemantic Gloss\n0\tMagn\tintense degree\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"LF_3.txt, row 2: 3 tab-separated cells"):
        build(release, CONFIG)
    with pytest.raises(DataError, match="taxonomy file not found"):
        build(release, SemanticQABuild(lcc_taxonomy=LCCTaxonomy(labels="taxonomy/missing.txt")))
