"""SemanticQA built from the mirror: the paper's counts, the gold mapping, template coverage
and the release quirks of docs/METRICS.md §3.1."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from idiombench.benchmarks.semanticqa.adapters import ADAPTERS
from idiombench.benchmarks.semanticqa.build import build
from idiombench.benchmarks.semanticqa.config import TASKS, SemanticQABuild
from idiombench.core.items import read_items

pytestmark = pytest.mark.mirror

COUNTS = {
    "idiom_detection": 273,
    "idiom_extraction": 447,
    "idiom_paraphrase": 818,
    "collocation_categorization": 305,
    "collocation_extraction": 305,
    "collocation_interpretation": 305,
    "noun_compound_compositionality": 241,
    "noun_compound_extraction": 720,
    "noun_compound_interpretation": 110,
    "vmwe_extraction_LVC": 180,
    "vmwe_extraction_VID": 105,
    "vmwe_extraction_VPC": 190,
}


@pytest.fixture(scope="module")
def semanticqa(built):
    out: Path = built("semanticqa")
    items = {task: read_items(out / f"{task}.parquet") for task in TASKS}
    return items, json.loads((out / "build_stats.json").read_text(encoding="utf-8")), out


def released(mirror: Path, task: str) -> list[dict]:
    text = (mirror / "semanticqa" / "instances" / f"{task}.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_the_twelve_test_sets_have_the_paper_counts(semanticqa):
    items, stats, out = semanticqa
    assert {task: len(v) for task, v in items.items()} == COUNTS
    assert stats["tasks"] == COUNTS
    assert sum(COUNTS[t] for t in COUNTS if t.startswith("vmwe")) == 475
    assert stats["rows_read_total"] == stats["rows_kept_total"] == 3999
    assert stats["dropped"] == {} and stats["merged"] == {}
    assert sorted(p.stem for p in out.glob("*.parquet")) == sorted(COUNTS)  # extensions off by default


def test_item_ids(semanticqa):
    items, stats, _ = semanticqa
    by_id = {
        "idiom_detection",
        "idiom_paraphrase",
        "noun_compound_compositionality",
        "vmwe_extraction_LVC",
        "vmwe_extraction_VID",
        "vmwe_extraction_VPC",
    }
    for task in TASKS:
        source = stats["details"]["tasks"][task]["item_id_source"]
        assert source == ("id" if task in by_id else "line (the file has no id field)"), task
    assert items["idiom_detection"][0].item_id == "184" and items["idiom_extraction"][0].item_id == "L0001"


def test_gold_mapping_matches_the_released_records(semanticqa, mirror):
    items, _, _ = semanticqa
    for task in TASKS:
        adapter = ADAPTERS[task]
        for record, item in zip(released(mirror, task), items[task], strict=True):
            assert {k: item.fields[k] for k in record} == record
            assert item.input == record[adapter.input_field]
            gold = record[adapter.gold_field]
            if adapter.kind == "mcq":
                assert item.choices == (record["A"], record["B"], record["C"], record["D"])
                assert item.answer == gold and item.meta["answer_text"] == record[gold]
            elif adapter.kind == "label":
                assert item.answer == gold and item.references == ()
            elif adapter.kind == "extraction":
                assert item.answer == gold and item.references == (gold,)
            else:
                assert item.answer is None
                assert item.references == tuple(g for g in ([gold] if isinstance(gold, str) else gold) if g.strip())
            assert not item.meta["no_gold"]
    iei = items["idiom_paraphrase"][0]
    assert iei.fields["context"] == iei.fields["context_idiomatic"] == iei.input
    assert len(items["collocation_interpretation"][0].references) == 5
    assert max(len(i.references) for i in items["noun_compound_interpretation"]) == 167


def test_every_placeholder_of_the_released_templates_is_a_field(semanticqa, mirror):
    items, stats, _ = semanticqa
    found: dict[str, set[str]] = {}
    for task in TASKS:
        stem = ADAPTERS[task].prompt_stem
        for setting in ("zeroshot", "fewshot"):
            text = (mirror / "semanticqa" / "prompts" / f"{stem}_{setting}.txt").read_text(encoding="utf-8")
            names = re.findall(r"\{\{([^{}]+)\}\}", text)
            assert names, (task, setting)
            found.setdefault(task, set()).update(names)
            for name in names:
                keys = ["taxonomy_3shot", "taxonomy_5shot"] if (name, setting) == ("taxonomy", "fewshot") else [name]
                for item in items[task]:
                    for key in keys:
                        assert isinstance(item.fields.get(key), str), (task, setting, name, item.item_id)
            assert stats["details"]["tasks"][task]["templates"][setting]["placeholders"] == list(dict.fromkeys(names))
    assert found["noun_compound_interpretation"] == {"noun compound", "example"}
    assert found["collocation_categorization"] == {"taxonomy", "context", "collocation", "example"}
    assert found["idiom_paraphrase"] == {"idiom", "context", "example"}


def test_release_quirks_are_reported(semanticqa):
    _, stats, _ = semanticqa
    flagged = {reason: v["count"] for reason, v in stats["flagged"].items()}
    assert flagged == {
        "duplicate_question": 2,  # LCE: one context, two collocations; LVC: make change (label typo)
        "duplicate_record": 6,  # VMWE records identical apart from id: LVC 2, VID 3, VPC 1
        "empty_reference_removed": 9,  # LCI paraphrase lists ending in ""
        "gold_not_verbatim_in_context": 204,  # LCE 1, NCE 18, LVC 143, VID 21, VPC 21
        "repeated_references": 22,  # NCI reference lists with repeats
        "vmwe_label_misspelled": 3,  # LVC.fulll, LVC.fullD, LVC.causeD
    }
    misspelled = {e["label"]: e["normalised"] for e in stats["flagged"]["vmwe_label_misspelled"]["examples"]}
    assert misspelled == {"LVC.fulll": "LVC.full", "LVC.fullD": "LVC.full", "LVC.causeD": "LVC.cause"}
    assert any("242" in note and "241" in note for note in stats["notes"])


def test_collocation_labels_map_onto_the_taxonomy(semanticqa):
    items, stats, _ = semanticqa
    report = stats["details"]["collocation_taxonomy"]
    eight = ["Magn", "AntiMagn", "Ver", "AntiVer", "Bon", "AntiBon", "Son", "Oper1"]
    assert report["data_label_set"] == eight
    assert report["label_ids"] == {label: str(n) for n, label in enumerate(eight)}
    assert report["lcc_label_counts"] == {
        "AntiBon": 39,
        "AntiMagn": 39,
        "AntiVer": 40,
        "Bon": 39,
        "Magn": 39,
        "Oper1": 37,
        "Son": 33,
        "Ver": 39,
    }
    assert report["not_found_in_labels_file"] == []
    files = report["files"]
    assert files["taxonomy/SEM_REL_CATEGORY.txt"]["data_labels_missing"] == ["Bon", "AntiBon"]
    assert files["taxonomy/SEM_REL_CATEGORY_16.txt"]["data_labels_missing"] == ["Son"]
    assert files["taxonomy/SEM_REL_CATEGORY_ALL.txt"]["data_labels_missing"] == []
    assert report["scaling"]["lcc_labels_outside_16_class_file"] == ["Son"]
    assert len(report["scaling"]["sixteen_class_labels_without_lcc_items"]) == 9
    lcc = items["collocation_categorization"]
    assert all(
        i.meta["label_in_taxonomy"]
        and i.meta["taxonomy_positions"]["taxonomy/SEM_REL_CATEGORY_8.txt"] == int(i.meta["label_id"])
        for i in lcc
    )
    assert lcc[0].fields["taxonomy"].startswith("Label\tMeaning\nMagn\t")
    assert lcc[0].fields["taxonomy_5shot"].startswith("ID\tLabel\tExamples\tMeaning\n0\tMagn\theavy rain,")


def test_extension_sets_build_as_their_own_tasks(semanticqa, default_params):
    _, _, out = semanticqa
    raw = out.parent.parent / "raw" / "semanticqa"
    cfg = default_params.benchmark("semanticqa").build.model_copy(update={"extensions": True})
    assert isinstance(cfg, SemanticQABuild)
    result = build(raw, cfg)
    assert len(result.tasks["vmwe_extraction_oracle"]) == 474
    assert len(result.tasks["vmwe_extraction_wo-vmwe-definition"]) == 473
    oracle = result.tasks["vmwe_extraction_oracle"]
    assert all(i.fields["vmwe-definition"] == i.fields["oracle"] for i in oracle)
    report = result.stats.details["vmwe"]
    # both are the 475 main records (same sentence and span) less one VID / two LVC sentences
    assert report["vmwe_extraction_oracle"]["records_in_main_sets"] == 474
    assert report["vmwe_extraction_oracle"]["main_not_in_this_set"] == [
        ["I left a voicemail for Sharon Butcher, as well, just to make sure it is handled.", "make sure"]
    ]
    assert report["vmwe_extraction_wo-vmwe-definition"]["records_in_main_sets"] == 473
    assert len(report["vmwe_extraction_wo-vmwe-definition"]["main_not_in_this_set"]) == 2
    labels = {label for i in oracle for label in [i.meta["vmwe_label"]]}
    assert labels == {"LVC.full", "LVC.cause", "VID", "VPC.full", "VPC.semi"}  # no misspellings here
    assert sorted(report["oracle_definitions"]) == ["LVC", "VID", "VPC"]
    assert all(len(texts) == 1 for texts in report["oracle_definitions"].values())
