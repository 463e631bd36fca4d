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

from idiombench.benchmarks.contexts import ScoreContext
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
    generations = pd.DataFrame(
        [
            {"prompt_id": p.prompt_id, "task": p.task, "setting": p.setting, "item_id": p.item_id, "pass": "main"}
            | {"sample_index": 0, "text": texts[p.item_id], "error": None}
            for p in prompts
        ]
    )
    ctx = ScoreContext(
        params=None,  # the declared score stage reads only its own section
        benchmark="conn",
        model="m",
        config=config,
        generations={"zero_shot": generations},
        items={"test": {i.item_id: i for i in items}},
        scorers=None,
    )
    table = bench.score(ctx)["zero_shot"]
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
