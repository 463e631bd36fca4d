"""Declarative benchmarks (benchmarks/declared/): the declaration's schema (every problem one line
naming the file and the key), its local data checked by its sha256 at acquire, and the build,
render and score a declaration makes, on files written here. The example of examples/ runs end
to end through the CLI in tests/integration/test_declared_benchmark.py."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from declared_scoring import score_outputs
from idiombench.benchmarks.declared import declared_benchmark
from idiombench.benchmarks.declared.library import SHAPES
from idiombench.benchmarks.declared.schema import read_declaration
from idiombench.core.errors import ChecksumError, ConfigError, DataError
from idiombench.data.acquire import acquire

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "idiom-mcq" / "benchmarks" / "idiom-mcq.yaml"

LABEL_DATA = [
    {"idiom": "画蛇添足", "label": "贬义"},
    {"idiom": "锦上添花", "label": "positive"},
    {"idiom": "对牛弹琴", "label": "negative"},
]


def label_declaration(sha256: str, **changes: str) -> str:
    text = f"""shape: label
language: zh
data:
  - file: idioms.jsonl
    sha256: {sha256}
fields: {{input: idiom, gold: label}}
labels: {{positive: [褒义], negative: [贬义]}}
template:
  - system: Answer with one word.
  - user: "Is the idiom {{input}} {{labels}}?"
parser: word
metrics: [macro_f1, accuracy, format_ok]
"""
    for old, new in changes.items():
        assert old in text, old
        text = text.replace(old, new)
    return text


def write_project(root: Path, **changes: str) -> Path:
    """A project with benchmarks/conn.yaml and data/conn/idioms.jsonl; returns the declaration."""
    data = root / "data" / "conn" / "idioms.jsonl"
    data.parent.mkdir(parents=True)
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in LABEL_DATA), encoding="utf-8")
    path = root / "benchmarks" / "conn.yaml"
    path.parent.mkdir()
    path.write_text(label_declaration(hashlib.sha256(data.read_bytes()).hexdigest(), **changes), encoding="utf-8")
    return path


def problem(tmp_path: Path, **changes: str) -> str:
    path = write_project(tmp_path, **changes)
    with pytest.raises(ConfigError) as caught:
        read_declaration(path, SHAPES)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{path}: "), message
    return message


def test_the_example_is_a_valid_declaration_of_at_most_40_lines():
    decl = read_declaration(EXAMPLE, SHAPES)
    assert decl.shape == "multiple_choice" and decl.headline_metric == "accuracy"
    assert len(EXAMPLE.read_text(encoding="utf-8").splitlines()) <= 40
    data = EXAMPLE.parents[1] / "data" / "idiom-mcq" / decl.data[0].file
    assert hashlib.sha256(data.read_bytes()).hexdigest() == decl.data[0].sha256


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"parser: word": "parser: word\ncolour: red"}, "colour: unknown key"),
        ({"[macro_f1, accuracy, format_ok]": "[macro_f1, bleu]"}, "metrics.1: unknown metric 'bleu' for shape label"),
        ({"parser: word": "parser: letter"}, "parser: 'letter' does not read a label answer"),
        ({"parser: word": "parser: word\nheadline: recall"}, "headline: 'recall' is not one of metrics"),
        ({"labels: {positive: [褒义], negative: [贬义]}\n": ""}, "labels: missing or fewer than two"),
        ({"shape: label": "shape: essay"}, "shape: "),
        ({"    sha256: ": "    sha256: 12"}, "data.0.sha256: "),
        ({"  - file: idioms.jsonl": "  - file: ../idioms.jsonl"}, "data.0.file: "),
        ({"parser: word": "parser: word\nsettings: {two_shot: {shots: 2}}"}, "settings.two_shot.exemplars: no data"),
        ({"  - user: ": "  - assistant: "}, "template: no `user` message"),
    ],
)
def test_a_bad_declaration_is_one_line_naming_the_file_and_the_key(tmp_path, changes, expected):
    assert expected in problem(tmp_path, **changes)


def test_a_declaration_is_read_within_the_yaml_limits(tmp_path):
    path = tmp_path / "bomb.yaml"
    lines = ['a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for parent, child in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{child}: &{child} [" + ", ".join([f"*{parent}"] * 10) + "]")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"^{path}: .*nodes"):
        read_declaration(path, SHAPES)


def bench_at(root: Path, monkeypatch: pytest.MonkeyPatch, **changes: str) -> Any:
    monkeypatch.chdir(root)
    path = write_project(root, **changes).relative_to(root)
    return declared_benchmark("conn", path, read_declaration(path, SHAPES))


def test_acquire_reads_the_local_file_and_checks_its_declared_sha256(tmp_path, monkeypatch):
    bench = bench_at(tmp_path, monkeypatch)
    config = bench.config_model()
    report = acquire("conn", bench.file_specs(config), Path("data/raw/conn"), [], download=False)
    assert [f.source for f in report.files] == ["local"]
    assert (tmp_path / "data/raw/conn/idioms.jsonl").read_bytes() == (tmp_path / "data/conn/idioms.jsonl").read_bytes()
    with (tmp_path / "data/conn/idioms.jsonl").open("a", encoding="utf-8") as handle:  # the data changes
        handle.write(json.dumps({"idiom": "一石二鸟", "label": "positive"}, ensure_ascii=False) + "\n")
    with pytest.raises(ChecksumError, match="idioms.jsonl"):
        acquire("conn", bench.file_specs(config), Path("data/raw/conn"), [], download=False)  # a copy there: read again
    (tmp_path / "data/conn/idioms.jsonl").unlink()
    with pytest.raises(DataError, match=r"data/conn/idioms.jsonl: no such file .*data.0 in benchmarks/conn.yaml"):
        bench.file_specs(config)


def test_build_render_and_score_a_label_declaration(tmp_path, monkeypatch):
    bench = bench_at(tmp_path, monkeypatch)
    config = bench.config_model()
    raw = tmp_path / "data/conn"
    result = bench.build(raw, config)
    items = result.tasks["test"]
    assert [(i.item_id, i.answer) for i in items] == [
        ("00001", "negative"),
        ("00002", "positive"),
        ("00003", "negative"),
    ]
    output = bench.render(result.tasks, config, raw)
    prompts = output.prompts["zero_shot"]
    prompt = prompts[0]
    assert [m.role for m in prompt.messages] == ["system", "user"]
    assert prompt.messages[1].content == "Is the idiom 画蛇添足 positive, negative?"
    texts = {"00001": "Negative", "00002": "<positive>", "00003": "I cannot say"}
    table = score_outputs(bench, config, {"test": {i.item_id: i for i in items}}, prompts, lambda p: texts[p.item_id])
    assert table["prediction"].tolist()[:2] == ["negative", "positive"] and pd.isna(table["prediction"][2])
    assert table["correct"].tolist() == [True, True, False]
    assert table["ok"].tolist() == [True, False, False]  # the tag is read, not the requested format
    body = bench.aggregate(type("Ctx", (), {"scores": {"zero_shot": table}, "config": config})())
    metrics = body["settings"]["zero_shot"]["metrics"]
    assert metrics["accuracy"] == pytest.approx(200 / 3) and metrics["format_ok"] == pytest.approx(100 / 3)
    assert [s.key for s in bench.metrics if s.headline] == ["macro_f1"]  # the first listed, when none is named


def test_the_recipe_shows_the_example_the_tests_run_and_names_every_key():
    """docs/ARCHITECTURE.md, "Add a benchmark": the example verbatim, and every key of the schema."""
    from idiombench.benchmarks.declared.schema import DataFile, Declaration, Fields, Setting

    docs = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = docs[docs.index("### Add a benchmark") : docs.index("#### A package")]
    assert f"```yaml\n{EXAMPLE.read_text(encoding='utf-8')}```" in section
    for model in (Declaration, DataFile, Fields, Setting):
        for key in model.model_fields:
            assert f"`{key}`" in section, (model.__name__, key)
    for metric in SHAPES:
        assert f"`{metric}`" in section, metric


CLOZE_DATA = [
    {
        "passage": "他的画已经很好了，再加几笔反而是__。",
        "candidates": ["画蛇添足", "锦上添花", "对牛弹琴"],
        "gold": "画蛇添足",
    },
    {"passage": "对不懂音乐的人讲乐理，简直是__。", "candidates": ["画蛇添足", "锦上添花", "对牛弹琴"], "gold": 2},
    {"passage": "新书获奖，对他来说是__。", "candidates": ["画蛇添足", "「锦上添花」", "对牛弹琴"], "gold": "锦上添花"},
    {"passage": "例句：__。", "candidates": ["一石二鸟", "守株待兔"], "gold": "守株待兔", "split": "train"},
]


def declared_at(
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    file: str,
    records: list[dict[str, Any]],
    declaration: str,
    changes: dict[str, str],
) -> Any:
    """The benchmark `name` declared by `declaration` (`{sha256}`: its data file's, filled in) with
    `changes` made to its text, over `records` in data/<name>/<file> (split `test` unless a record
    says otherwise); the working directory is `root`."""
    monkeypatch.chdir(root)
    data = root / "data" / name / file
    data.parent.mkdir(parents=True)
    lines = [json.dumps({"split": "test"} | r, ensure_ascii=False) + "\n" for r in records]
    data.write_text("".join(lines), encoding="utf-8")
    text = declaration.replace("{sha256}", hashlib.sha256(data.read_bytes()).hexdigest())
    for old, new in changes.items():
        assert old in text, old
        text = text.replace(old, new)
    path = Path(f"benchmarks/{name}.yaml")
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    return declared_benchmark(name, path, read_declaration(path, SHAPES))


CLOZE_DECLARATION = """shape: cloze
language: zh
data:
  - file: passages.jsonl
    sha256: {sha256}
fields: {input: passage, options: candidates, gold: gold, split: split}
template:
  - user: "{input}\\n候选成语：{options}\\n请用<answer><成语></answer>作答。"
settings: {zero_shot: {}, one_shot: {shots: 1}}
metrics: [accuracy, parse_failure_rate]
"""


def cloze_at(root: Path, monkeypatch: pytest.MonkeyPatch, records: list[dict[str, Any]], **changes: str) -> Any:
    """A cloze declaration over `records`."""
    return declared_at(root, monkeypatch, "chid", "passages.jsonl", records, CLOZE_DECLARATION, changes)


def test_a_cloze_declaration_builds_renders_and_scores_as_chids_candidates(tmp_path, monkeypatch):
    """A cloze with candidates: the gold given as text (normalised) or index is the candidate as
    listed; the candidates fill {options}; an exemplar answers in the parser's block; the
    parser and the score read a cloze answer as Chengyu-Bench's ChID candidates setting does."""
    from idiombench.benchmarks.declared.answers import format_reference_answer
    from idiombench.core.generation_types import item_context

    bench = cloze_at(tmp_path, monkeypatch, CLOZE_DATA)
    config = bench.config_model()
    result = bench.build(tmp_path / "data/chid", config)
    items = result.tasks["test"]
    assert [i.answer for i in items] == ["画蛇添足", "对牛弹琴", "「锦上添花」"]
    assert items[0].choices == ("画蛇添足", "锦上添花", "对牛弹琴")
    output = bench.render(result.tasks, config, tmp_path / "data/chid")
    first = output.prompts["zero_shot"][0].messages[0].content
    asked = "他的画已经很好了，再加几笔反而是__。"
    assert first == f"{asked}\n候选成语：画蛇添足, 锦上添花, 对牛弹琴\n请用<answer><成语></answer>作答。"
    shot = output.prompts["one_shot"][0].messages
    assert [m.role for m in shot] == ["user", "assistant", "user"]
    assert (
        shot[0].content.startswith("例句：__。\n候选成语：一石二鸟, 守株待兔")
        and shot[1].content == "<answer><守株待兔></answer>"
    )
    oracle = format_reference_answer(item_context(items[0], "zero_shot"), items[0].answer, "oracle")
    texts = {
        "00001": oracle,  # the requested format: counted
        "00002": "<answer><3></answer>",  # a candidate's number: read, not the requested format
        "00003": "<answer><锦上添花，画蛇添足></answer>",  # two idioms: a hedge answers nothing
    }
    prompts = output.prompts["zero_shot"]

    def scored(accept: bool) -> pd.DataFrame:
        section = config.model_copy(update={"score": config.score.model_copy(update={"accept_unformatted": accept})})
        return score_outputs(
            bench, section, {"test": {i.item_id: i for i in items}}, prompts, lambda p: texts[p.item_id]
        )

    strict, lenient = scored(False), scored(True)
    assert strict["correct"].tolist() == [True, False, False] and strict["ok"].tolist() == [True, False, False]
    assert strict["prediction"][0] == "画蛇添足" and pd.isna(strict["prediction"][1])
    assert "candidate_number" in strict["flags"][1] and "several_idioms" in strict["flags"][2]
    assert lenient["correct"].tolist() == [True, True, False]  # the number names the gold candidate
    assert pd.isna(lenient["prediction"][2]) and not lenient["parse_failed"][2]  # a hedge, not a parse failure


@pytest.mark.parametrize(
    ("changes", "records", "expected"),
    [
        (
            {"[accuracy, parse_failure_rate]": "[accuracy, macro_f1]"},
            CLOZE_DATA,
            "metrics.1: unknown metric 'macro_f1'",
        ),
        ({"options: candidates, ": ""}, CLOZE_DATA, "fields.options: missing (a cloze record lists its candidates"),
        ({}, [CLOZE_DATA[0] | {"gold": "守株待兔"}], "row 1: gold '守株待兔' is none of the 3 candidates"),
        ({}, [CLOZE_DATA[0] | {"candidates": ["画蛇添足"]}], "row 1: 1 candidates"),
    ],
)
def test_a_bad_cloze_is_one_line_naming_the_key_or_the_row(tmp_path, monkeypatch, changes, records, expected):
    with pytest.raises((ConfigError, DataError)) as caught:
        bench = cloze_at(tmp_path, monkeypatch, records, **changes)
        bench.build(tmp_path / "data/chid", bench.config_model())
    assert expected in str(caught.value) and "\n" not in str(caught.value), str(caught.value)


GLOSSES = [
    {"idiom": "kick the bucket", "gloss": ["to die", "to pass away"]},
    {"idiom": "spill the beans", "gloss": "to reveal a secret"},
    {"idiom": "break the ice", "gloss": "to ease the first tension between strangers"},
    {"idiom": "bite the bullet", "gloss": "to face something unpleasant bravely", "split": "train"},
]


GENERATION_DECLARATION = """shape: generation
data:
  - file: glosses.jsonl
    sha256: {sha256}
fields: {input: idiom, gold: gloss, split: split}
template:
  - user: "What does the idiom '{input}' mean? Answer in a few words."
settings: {zero_shot: {}, one_shot: {shots: 1}}
metrics: [rouge_l, exact_match, bertscore, format_ok, parse_failure_rate]
"""


def generation_at(root: Path, monkeypatch: pytest.MonkeyPatch, records: list[dict[str, Any]], **changes: str) -> Any:
    """A free-generation declaration over `records`."""
    return declared_at(root, monkeypatch, "gloss", "glosses.jsonl", records, GENERATION_DECLARATION, changes)


def test_a_generation_declaration_scores_outputs_against_their_references(tmp_path, monkeypatch):
    """Free generation: the gold is a reference or a list of them; an output is scored against its
    best reference by exact match (normalised), ROUGE-L (scoring.lexical) and BERTScore (the
    scorer registry's bertscore_en role, the embedded default's model); an output with nothing to
    read is wrong and scores 0, never left out; without the role, BERTScore is not computed and
    the stage says so."""
    from idiombench.pipeline.config import load_params
    from idiombench.scoring import Scorers
    from idiombench.scoring.lexical import rouge_l

    bench = generation_at(tmp_path, monkeypatch, GLOSSES)
    config = bench.config_model()
    built = bench.build(tmp_path / "data/gloss", config)
    items = built.tasks["test"]
    assert [i.references for i in items] == [
        ("to die", "to pass away"),
        ("to reveal a secret",),
        ("to ease the first tension between strangers",),
    ]
    assert [i.answer for i in items] == ["to die", "to reveal a secret", "to ease the first tension between strangers"]
    output = bench.render(built.tasks, config, tmp_path / "data/gloss")
    shot = output.prompts["one_shot"][0].messages
    assert [m.role for m in shot] == ["user", "assistant", "user"]
    assert shot[1].content == "to face something unpleasant bravely"  # the exemplar answers with its reference
    texts = {
        "00001": "To pass away.",  # the second reference, in other case and punctuation: exact
        "00002": "<think>beans?</think>to tell a secret",  # a paraphrase, the think block removed
        "00003": "",  # nothing to read: wrong, 0 on every score
    }
    by_id = {"test": {i.item_id: i for i in items}}
    scorers = Scorers(load_params(ROOT / "params.yaml").scoring)
    notes: list[str] = []
    table = score_outputs(bench, config, by_id, output.prompts["zero_shot"], lambda p: texts[p.item_id], scorers, notes)
    assert table["correct"].tolist() == [True, False, False]
    assert table["parse_failed"].tolist() == [False, False, True] and table["ok"].tolist() == [True, True, False]
    assert table["prediction"][1] == "to tell a secret"
    expected_rouge = rouge_l("to tell a secret", "to reveal a secret", "en").fmeasure
    assert table["rouge_l"].tolist() == pytest.approx([1.0, expected_rouge, 0.0]) and 0 < expected_rouge < 1
    pairs = [("To pass away.", "to die"), ("To pass away.", "to pass away"), ("to tell a secret", "to reveal a secret")]
    direct = scorers.bertscore("bertscore_en", pairs).f1
    assert table["bertscore_f1"].tolist() == pytest.approx([max(direct[0], direct[1]), direct[2], 0.0])
    assert table["bertscore_f1"][0] > table["bertscore_f1"][1] > 0
    assert notes == [f"BERTScore: {scorers.info('bertscore_en').footnote}"]  # the default's stand-in model

    specs = {spec.key: spec for spec in bench.metrics}
    assert [s.key for s in bench.metrics if s.headline] == ["rouge_l"]
    assert not specs["rouge_l"].binary and not specs["bertscore"].binary and specs["exact_match"].binary
    assert [m.column for m in bench.item_view.metrics] == ["correct", "rouge_l", "bertscore_f1"]

    unscored: list[str] = []
    table = score_outputs(bench, config, by_id, output.prompts["zero_shot"], lambda p: texts[p.item_id], None, unscored)
    assert table["bertscore_f1"].isna().all() and unscored == [
        "BERTScore not computed: scoring role bertscore_en unavailable"
    ]


@pytest.mark.parametrize(
    ("changes", "records", "expected"),
    [
        ({"rouge_l, exact_match": "accuracy"}, GLOSSES, "metrics.0: unknown metric 'accuracy' for shape generation"),
        (
            {"parse_failure_rate]": "parse_failure_rate]\nparser: word"},
            GLOSSES,
            "parser: 'word' does not read a generation",
        ),
        ({}, [GLOSSES[0] | {"gloss": []}], "row 1: no reference"),
        ({}, [GLOSSES[0] | {"gloss": ["to die", 3]}], "row 1: field 'gloss' is ['to die', 3]"),
    ],
)
def test_a_bad_generation_is_one_line_naming_the_key_or_the_row(tmp_path, monkeypatch, changes, records, expected):
    with pytest.raises((ConfigError, DataError)) as caught:
        bench = generation_at(tmp_path, monkeypatch, records, **changes)
        bench.build(tmp_path / "data/gloss", bench.config_model())
    assert expected in str(caught.value) and "\n" not in str(caught.value), str(caught.value)
