"""Chengyu-Bench build: ChID lines, the release adapter through a custom mapping, the sample."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from idiombench.benchmarks.base import write_build
from idiombench.benchmarks.chengyu_bench import build as cb
from idiombench.benchmarks.chengyu_bench.config import ChengyuBenchBuild, ChengyuBenchConfig
from idiombench.benchmarks.registry import get_benchmark
from idiombench.core.errors import ConfigError, DataError
from idiombench.core.items import read_items
from idiombench.pipeline.config import load_params

ROOT = Path(__file__).resolve().parents[4]
FIXTURES = ROOT / "tests" / "fixtures" / "chengyu_bench"
RAW = FIXTURES / "raw"
PREFIX = "benchmarks.chengyu-bench.build.release"

# A custom mapping for the fake release under fixtures/release: three formats, other field names.
CUSTOM_RELEASE: dict[str, Any] = {
    "connotation": {
        "file": "polarity/idioms.jsonl",
        "format": "jsonl",
        "id_field": "uid",
        "idiom_field": "chengyu",
        "label_field": "polarity",
        "labels": {"positive": ["褒义", "positive"], "negative": ["贬义", "0"]},
    },
    "appropriateness": {
        "file": "usage.csv",
        "format": "csv",
        "id_field": "id",
        "passage_field": "text",
        "idiom_field": "chengyu",
        "label_field": "verdict",
        "labels": {"correct": ["对"], "wrong": ["错"]},
    },
    "open_cloze": {
        "file": "cloze.json",
        "format": "json",
        "id_field": None,
        "passage_field": "context",
        "answer_field": "golds",
        "placeholder": "[空]",
    },
}


def config(**build: Any) -> ChengyuBenchBuild:
    return ChengyuBenchBuild.model_validate(build)


def raw_copy(tmp_path: Path, test_public: Path | None = None) -> Path:
    raw = tmp_path / "raw"
    shutil.copytree(RAW, raw)
    if test_public is not None:
        shutil.copy(test_public, raw / "chid" / "test_public.json")
    return raw


def release_config(tmp_path: Path, **changes: Any) -> ChengyuBenchBuild:
    release = json.loads(json.dumps(CUSTOM_RELEASE))
    for task, fields in changes.items():
        release[task] = None if fields is None else {**release[task], **fields}
    return config(release_dir=str(FIXTURES / "release"), release=release)


# ---------------------------------------------------------------- ChID


def test_chid_items_answers_and_flags() -> None:
    result = cb.build(RAW, config())
    items = result.tasks["chid"]
    assert [i.item_id for i in items] == ["00010", "00011", "00012", "00013", "00014"]
    first = items[0]
    assert first.answer == "一丝不苟" == first.choices[first.meta["answer_index"]]
    assert first.references == ("一丝不苟",)
    assert first.input == first.fields["paragraph"] and "#idiom#" in first.input
    assert first.meta["blanks"] == 1 and first.meta["passage_id"] == 10 and first.meta["source_line"] == 1
    several = items[3]
    assert several.meta["blanks"] == 2 and several.answer == "画蛇添足"
    flagged = result.stats.flagged
    assert [e["id"] for e in flagged["chid_several_blanks"]] == [13]
    assert [e["id"] for e in flagged["chid_other_hash_marks"]] == [12]
    assert [e["id"] for e in flagged["chid_not_seven_candidates"]] == [14]
    assert [e["id"] for e in flagged["chid_candidate_not_four_cjk"]] == [14]
    assert result.stats.rows_read["chid/test_public.json"] == 5
    assert result.stats.rows_kept["chid/test_public.json"] == 5
    assert "chid/train_few_all.json" not in result.stats.rows_read
    details = result.stats.details["chid"]
    assert details["test_public"]["blanks_per_passage"] == {"1": 4, "2": 1}
    assert details["train_few_all"] == {**details["train_few_all"], "rows": 2, "built": False, "task": None}
    assert any("not built" in note and "train_few_all (2 rows)" in note for note in result.stats.notes)


def test_chid_other_splits_become_tasks_when_configured() -> None:
    result = cb.build(RAW, config(chid={"splits": ["test_public", "train_few_all", "dev_few_all"]}))
    assert len(result.tasks["chid_train_few"]) == 2 and len(result.tasks["chid_dev_few"]) == 1
    assert result.tasks["chid_dev_few"][0].answer == "画蛇添足"
    assert not any("not built" in note for note in result.stats.notes)


@pytest.mark.parametrize(
    ("fixture", "row", "words"),
    [
        ("answer_out_of_range.json", 2, ["answer index 7", "an integer from 0 to 6"]),
        ("no_blank.json", 1, ["no #idiom# blank"]),
        ("repeated_id.json", 2, ["id 10 repeats line 1"]),
        ("missing_candidates.json", 1, ["missing field(s) candidates"]),
    ],
)
def test_malformed_chid_line_names_file_and_line(tmp_path: Path, fixture: str, row: int, words: list[str]) -> None:
    raw = raw_copy(tmp_path, FIXTURES / "bad" / fixture)
    with pytest.raises(DataError) as error:
        cb.build(raw, config())
    message = str(error.value)
    assert f"{raw / 'chid' / 'test_public.json'}, row {row}:" in message
    for word in words:
        assert word in message


def test_non_utf8_chid_file(tmp_path: Path) -> None:
    raw = raw_copy(tmp_path)
    path = raw / "chid" / "dev_few_all.json"
    path.write_bytes(path.read_bytes() + "他说：#idiom#\n".encode("gbk"))
    with pytest.raises(DataError, match=r"dev_few_all\.json, row 2: invalid UTF-8 byte"):
        cb.build(raw, config())


def test_invalid_json_line(tmp_path: Path) -> None:
    raw = raw_copy(tmp_path)
    path = raw / "chid" / "test_public.json"
    path.write_text(path.read_text(encoding="utf-8") + '{"id": 99, "candidates": [\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"test_public\.json, row 6: invalid JSON"):
        cb.build(raw, config())


# ---------------------------------------------------------------- without the release


def test_missing_release_builds_chid_and_sample_and_says_not_available() -> None:
    result = cb.build(RAW, config())
    assert set(result.tasks) == {"chid", "connotation_sample", "appropriateness_sample"}
    note = result.stats.notes[0]
    assert note.startswith("NOT AVAILABLE: the official Chengyu-Bench release")
    assert "benchmarks.chengyu-bench.build.release_dir is null" in note
    assert "connotation_sample and appropriateness_sample" in note and "Open Cloze does not run at all" in note
    assert result.stats.details["release"] == {"release_dir": None, "available": False}
    assert get_benchmark("chengyu-bench").acquire_notes(ChengyuBenchConfig()) == [note]


def test_release_dir_that_does_not_exist_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-checkout"
    with pytest.raises(ConfigError) as info:
        cb.build(RAW, config(release_dir=str(missing)))
    assert f"release_dir is {str(missing)!r}, which is not a directory" in str(info.value)


def test_missing_release_without_samples() -> None:
    result = cb.build(RAW, config(samples=False))
    assert set(result.tasks) == {"chid"}
    assert "Evaluative Connotation, Appropriateness and Open Cloze do not run at all" in result.stats.notes[0]


# ---------------------------------------------------------------- the release adapter


def test_fake_release_with_custom_mapping(tmp_path: Path) -> None:
    cfg = release_config(tmp_path)
    result = cb.build(RAW, cfg)
    assert set(result.tasks) >= {"connotation", "appropriateness", "open_cloze"}
    assert not any(note.startswith("NOT AVAILABLE") for note in result.stats.notes)

    connotation = result.tasks["connotation"]
    assert [(i.input, i.answer, i.meta["source_id"]) for i in connotation] == [
        ("雪中送炭", "positive", "c1"),
        ("落井下石", "negative", "c2"),
        ("助纣为虐", "negative", "c3"),
        ("雪中送炭", "positive", "c4"),
        ("三思而后行", "positive", "c5"),
    ]
    assert [i.meta["idiom_is_four_cjk"] for i in connotation] == [True, True, True, True, False]
    assert result.stats.flagged["idiom_not_four_cjk_characters"] == [
        {"file": "release/polarity/idioms.jsonl", "row": 5, "idiom": "三思而后行"}
    ]
    assert connotation[0].fields == {"idiom": "雪中送炭"} and connotation[0].meta["sample"] is False
    assert result.stats.flagged["repeated_idiom"] == [
        {"file": "release/polarity/idioms.jsonl", "row": 4, "idiom": "雪中送炭", "first_row": 1}
    ]

    appropriateness = result.tasks["appropriateness"]
    assert [(i.answer, i.meta["idiom"], i.meta["source_row"]) for i in appropriateness] == [
        ("correct", "首当其冲", 2),
        ("wrong", "首当其冲", 3),
        ("wrong", "罄竹难书", 4),
    ]
    # The unmarked passage got its mark around the named idiom, and that is recorded.
    assert appropriateness[1].input == "在这次志愿活动中，班长##首当其冲##，第一个报了名。"
    assert appropriateness[1].fields["sentence"] == appropriateness[1].input
    assert [e["row"] for e in result.stats.flagged["appropriateness_mark_added"]] == [3]

    cloze = result.tasks["open_cloze"]
    assert [(i.answer, i.references) for i in cloze] == [
        ("好景不长", ("好景不长", "天有不测风云")),
        ("守株待兔", ("守株待兔",)),
    ]
    assert cloze[0].fields == {"paragraph": cloze[0].input, "placeholder": "[空]"}
    assert cloze[0].meta["blanks"] == 1

    files = result.stats.details["release"]["files"]
    assert files["appropriateness"]["rows"] == 3 and len(files["connotation"]["sha256"]) == 64
    assert result.stats.rows_read["release/cloze.json"] == result.stats.rows_kept["release/cloze.json"] == 2
    acquire_notes = get_benchmark("chengyu-bench").acquire_notes(ChengyuBenchConfig(build=cfg))
    assert len(acquire_notes) == 1 and "read at build time from" in acquire_notes[0]
    write_build(result, tmp_path / "out")  # the items are writable as they are
    assert len(read_items(tmp_path / "out" / "open_cloze.parquet")) == 2


def test_release_task_switched_off(tmp_path: Path) -> None:
    result = cb.build(RAW, release_config(tmp_path, open_cloze=None))
    assert "open_cloze" not in result.tasks and "connotation" in result.tasks
    assert f"Release task open_cloze not read: {PREFIX}.open_cloze is null." in result.stats.notes


@pytest.mark.parametrize(
    ("task", "change", "words"),
    [
        (
            "appropriateness",
            {"label_field": "judgement"},
            ["usage.csv, row 2:", "missing field 'judgement'", f"{PREFIX}.appropriateness.label_field"],
        ),
        (
            "connotation",
            {"idiom_field": "idiom"},
            [
                "idioms.jsonl, row 1:",
                "missing field 'idiom'",
                "fields present: chengyu, polarity, uid",
                f"{PREFIX}.connotation.idiom_field",
            ],
        ),
        (
            "open_cloze",
            {"answer_field": "answer"},
            ["cloze.json, row 1:", "missing field 'answer'", f"{PREFIX}.open_cloze.answer_field"],
        ),
        (
            "connotation",
            {"labels": {"positive": ["褒义"], "negative": ["贬义"]}},
            ["idioms.jsonl, row 3:", "unknown label 0", f"{PREFIX}.connotation.labels"],
        ),
        (
            "open_cloze",
            {"placeholder": "##idiom##"},
            ["cloze.json, row 1:", "no placeholder '##idiom##'", f"{PREFIX}.open_cloze.placeholder"],
        ),
        ("appropriateness", {"idiom_field": None}, ["usage.csv, row 3:", "no ##…## mark", "exactly one idiom marked"]),
        ("open_cloze", {"file": "data/open_cloze.json"}, ["open_cloze.json: no such file"]),
        ("connotation", {"format": "json"}, ["idioms.jsonl, row 2:", "invalid JSON"]),
    ],
)
def test_release_mismatch_is_a_data_error(tmp_path: Path, task: str, change: dict[str, Any], words: list[str]) -> None:
    with pytest.raises(DataError) as error:
        cb.build(RAW, release_config(tmp_path, **{task: change}))
    for word in words:
        assert word in str(error.value)


@pytest.mark.parametrize(
    ("name", "text", "pattern"),
    [
        (
            "usage.csv",
            "id,text,chengyu,verdict\nu1,他的功绩真是##罄竹难书##。,首当其冲,错\n",
            r"usage\.csv, row 2: the idiom field says '首当其冲' but the passage marks '罄竹难书'",
        ),
        (
            "usage.csv",
            "id,text,chengyu,verdict\nu1,##首当其冲##的是##罄竹难书##。,首当其冲,错\n",
            r"usage\.csv, row 2: the passage has 2 ##…## marks .*expected exactly one idiom marked",
        ),
        (
            "usage.csv",
            "id,text,chengyu,verdict\nu1,他的功绩真是##罄竹难书##。,罄竹难书\n",
            r"usage\.csv, row 2: 3 cell\(s\) \(expected 4 cells: id, text, chengyu, verdict\)",
        ),
        (
            "cloze.json",
            '[{"context": "[空]", "golds": "守株待兔"}, "守株待兔"]\n',
            r"cloze\.json, row 2: array element is a str \(expected a JSON object\)",
        ),
        ("cloze.json", '{"items": []}\n', r"cloze\.json: top level is a JSON dict"),
        ("cloze.json", '[{"context": "[空]", "golds": []}]\n', r"cloze\.json, row 1: field 'golds' is \[\]"),
    ],
)
def test_release_record_problems(tmp_path: Path, name: str, text: str, pattern: str) -> None:
    release = tmp_path / "release"
    shutil.copytree(FIXTURES / "release", release)
    (release / name).write_text(text, encoding="utf-8")
    cfg = config(release_dir=str(release), release=CUSTOM_RELEASE)
    with pytest.raises(DataError, match=pattern):
        cb.build(RAW, cfg)


# ---------------------------------------------------------------- the project's sample

SAMPLE = Path(cb.sample_dir())
FOUR_CJK = re.compile(r"[\u4e00-\u9fff]{4}")


def sample_records(name: str) -> list[dict[str, Any]]:
    lines = (SAMPLE / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_connotation_sample_is_valid_and_balanced() -> None:
    records = sample_records("connotation.jsonl")
    assert 36 <= len(records) <= 50
    assert all(set(r) == {"idiom", "label", "note", "source"} for r in records)
    assert all(FOUR_CJK.fullmatch(r["idiom"]) for r in records)
    assert len({r["idiom"] for r in records}) == len(records)
    labels = [r["label"] for r in records]
    assert set(labels) == {"positive", "negative"} and labels.count("positive") == labels.count("negative")
    assert all(r["note"].strip() and "not the official" in r["source"] for r in records)


def test_appropriateness_sample_is_valid_and_balanced() -> None:
    records = sample_records("appropriateness.jsonl")
    assert 36 <= len(records) <= 50
    assert all(set(r) == {"sentence", "idiom", "label", "note", "source"} for r in records)
    for record in records:
        marks = re.findall(r"##(.*?)##", record["sentence"])
        assert marks == [record["idiom"]], record
        assert FOUR_CJK.fullmatch(record["idiom"]), record
        assert record["sentence"].count("#") == 4, record
        # Chinese punctuation, not ASCII commas and stops, in the sentences.
        assert not re.search(r"[,.!?;:]", record["sentence"]), record
        assert "not the official" in record["source"]
    labels = [r["label"] for r in records]
    assert set(labels) == {"correct", "wrong"} and labels.count("correct") == labels.count("wrong")
    wrong = [r for r in records if r["label"] == "wrong"]
    assert all(r["note"].startswith("misuse: ") and r["idiom"] in r["note"] for r in wrong)
    assert len({r["sentence"] for r in records}) == len(records)


def test_sample_tasks_are_labelled_as_sample() -> None:
    result = cb.build(RAW, config())
    for task in ("connotation_sample", "appropriateness_sample"):
        items = result.tasks[task]
        assert len(items) == 40
        assert all(item.meta["sample"] is True and item.meta["note"] for item in items)
    assert result.stats.details["sample"] == {
        "appropriateness_sample": {"correct": 20, "wrong": 20},
        "connotation_sample": {"negative": 20, "positive": 20},
    }
    assert any(
        note.startswith("connotation_sample and appropriateness_sample are a small SAMPLE")
        for note in result.stats.notes
    )
    assert result.stats.rows_read["sample/appropriateness.jsonl"] == 40


# ---------------------------------------------------------------- params and CLI


def test_params_yaml_leaves_the_release_layout_to_the_code() -> None:
    """Where each task lives in the release is a fact about the release (an ASSUMED layout, in
    config.py), not a knob: params.yaml does not restate it, and the validated section differs
    from the code's defaults only where the embedded default is deliberately small."""
    section = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))["benchmarks"]["chengyu-bench"]
    assert "release" not in section["build"]
    config = load_params(ROOT / "params.yaml").benchmark("chengyu-bench").model_dump(by_alias=True)
    defaults = ChengyuBenchConfig().model_dump(by_alias=True)
    # render.sample is small in the embedded default (class default: every item), and so is
    # generate's max_new_tokens (a CPU profile); the option-order pass is listed, off
    assert config["render"]["sample"] is not None
    assert config["generate"]["main"]["max_new_tokens"] <= defaults["generate"]["main"]["max_new_tokens"]
    config["render"]["sample"] = None
    config["generate"]["main"]["max_new_tokens"] = defaults["generate"]["main"]["max_new_tokens"]
    # the option-order pass is listed (so that the paper overlay only switches it on) but off
    assert config["generate"]["extra"]["option_order"]["settings"] == []
    assert config["generate"]["extra"]["option_order"]["rotate_options"] is True
    config["generate"]["extra"] = defaults["generate"]["extra"]
    assert config == defaults


def test_cli_build_prints_not_available(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from idiombench.cli import app

    raw = raw_copy(tmp_path)
    (raw / "ACQUIRED.json").write_text("{}\n", encoding="utf-8")
    out = tmp_path / "processed"
    result = CliRunner().invoke(
        app, ["build", "chengyu-bench", "--params", str(ROOT / "params.yaml"), "--raw", str(raw), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())  # rich wraps long lines
    assert "items: appropriateness_sample 40, chid 5, connotation_sample 40" in output
    assert "build chengyu-bench: NOT AVAILABLE: the official Chengyu-Bench release" in output
    stats = json.loads((out / "build_stats.json").read_text(encoding="utf-8"))
    assert stats["tasks"] == {"appropriateness_sample": 40, "chid": 5, "connotation_sample": 40}


def test_cli_build_reports_bad_line_as_one_error(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from idiombench.cli import app

    raw = raw_copy(tmp_path, FIXTURES / "bad" / "answer_out_of_range.json")
    (raw / "ACQUIRED.json").write_text("{}\n", encoding="utf-8")
    result = CliRunner().invoke(
        app,
        [
            "build",
            "chengyu-bench",
            "--params",
            str(ROOT / "params.yaml"),
            "--raw",
            str(raw),
            "--out",
            str(tmp_path / "processed"),
        ],
    )
    assert result.exit_code == 2
    output = " ".join(result.output.split())
    assert "test_public.json, row 2: answer index 7" in output
