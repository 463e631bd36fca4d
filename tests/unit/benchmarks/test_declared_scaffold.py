"""`idiombench new-benchmark NAME FILE.jsonl` (benchmarks/declared/scaffold.py): from a JSON-lines
file, a declaration that works as written (built, rendered, and scored 100 by the oracle), for
each shape; a refusal leaves nothing behind and never replaces a declaration."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from declared_scoring import score_outputs
from idiombench.benchmarks.declared import declared_benchmark
from idiombench.benchmarks.declared.answers import format_reference_answer
from idiombench.benchmarks.declared.library import SHAPES
from idiombench.benchmarks.declared.scaffold import scaffold
from idiombench.benchmarks.declared.schema import read_declaration
from idiombench.core.errors import ConfigError, DataError
from idiombench.core.generation_types import item_context

ROOT = Path(__file__).resolve().parents[3]
QUESTIONS = ROOT / "examples" / "idiom-mcq" / "data" / "idiom-mcq" / "questions.jsonl"


def write_jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def oracle_accuracy(name: str, declaration: Path) -> dict[str, float]:
    """Build, render and score the declaration with the oracle's answers: accuracy per setting."""
    bench = declared_benchmark(name, declaration, read_declaration(declaration, SHAPES))
    config = bench.config_model()
    built = bench.build(Path("data") / name, config)
    output = bench.render(built.tasks, config, Path("data") / name)
    items = {task: {i.item_id: i for i in found} for task, found in built.tasks.items()}
    accuracy = {}
    for setting, prompts in output.prompts.items():

        def oracle(prompt: Any, setting: str = setting) -> str:
            item = items[prompt.task][prompt.item_id]
            return format_reference_answer(item_context(item, setting), item.answer or "", "oracle")

        table = score_outputs(bench, config, items, prompts, oracle)
        assert table["ok"].all(), table[~table["ok"]]
        accuracy[setting] = float(table["correct"].mean())
    return accuracy


def test_the_examples_questions_make_a_multiple_choice_declaration_that_works(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    made = scaffold("my-mcq", QUESTIONS)
    assert made.guess.shape == "multiple_choice" and made.guess.language == "en"
    assert made.guess.fields == {"id": "id", "input": "idiom", "gold": "answer", "options": "options", "split": "split"}
    assert made.data.read_bytes() == QUESTIONS.read_bytes() and made.items == {"test": 24, "train": 6}
    text = made.declaration.read_text(encoding="utf-8")
    assert "  three_shot: {shots: 3, exemplars: train}\n" in text and len(text.splitlines()) <= 40
    assert oracle_accuracy("my-mcq", made.declaration) == {"zero_shot": 1.0, "three_shot": 1.0}


def test_labels_and_a_cloze_are_recognised(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    labels = write_jsonl(
        tmp_path / "conn.jsonl",
        [
            {"idiom": i, "label": lab}
            for i, lab in [("画蛇添足", "negative"), ("锦上添花", "positive"), ("对牛弹琴", "negative")]
        ],
    )
    made = scaffold("conn", labels)
    assert (made.guess.shape, made.guess.labels, made.guess.language) == ("label", ["negative", "positive"], "zh")
    assert made.guess.fields == {"input": "idiom", "gold": "label"}
    assert oracle_accuracy("conn", made.declaration) == {"zero_shot": 1.0}
    passages = write_jsonl(
        tmp_path / "chid.jsonl",
        [
            {
                "id": n,
                "content": f"第{n}句：#idiom#。",
                "candidates": ["画蛇添足", "锦上添花", "对牛弹琴"],
                "answer": n % 3,
            }
            for n in range(6)
        ],
    )
    made = scaffold("chid", passages)
    assert made.guess.shape == "cloze" and made.guess.fields["options"] == "candidates"
    assert oracle_accuracy("chid", made.declaration) == {"zero_shot": 1.0}


def test_free_texts_make_a_generation_declaration(tmp_path, monkeypatch):
    """Golds that are free texts (or lists of references) and no options: the generation shape,
    scored by ROUGE-L (its headline), exact match and BERTScore; the oracle's answer is the first
    reference, so it matches exactly."""
    monkeypatch.chdir(tmp_path)
    records = [{"idiom": f"idiom {n}", "answer": f"meaning number {n}", "split": "test"} for n in range(12)]
    records += [{"idiom": "kick the bucket", "answer": ["to die", "to pass away"], "split": "train"}] * 3
    made = scaffold("gloss", write_jsonl(tmp_path / "gloss.jsonl", records))
    assert made.guess.shape == "generation" and made.guess.labels is None
    assert made.guess.fields == {"input": "idiom", "gold": "answer", "split": "split"}
    text = made.declaration.read_text(encoding="utf-8")
    assert "metrics: [rouge_l, exact_match, bertscore, format_ok, parse_failure_rate]\nheadline: rouge_l\n" in text
    assert oracle_accuracy("gloss", made.declaration) == {"zero_shot": 1.0, "three_shot": 1.0}


def test_a_refusal_leaves_nothing_and_never_replaces_a_declaration(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    free = write_jsonl(tmp_path / "free.jsonl", [{"idiom": f"idiom {n}", "answer": f"meaning {n}"} for n in range(30)])
    with pytest.raises(DataError, match=r"free.jsonl: gold field 'answer' holds 30 distinct values.*generation"):
        scaffold("free", free, shape="label")  # free texts are no label set
    assert not (tmp_path / "benchmarks").exists() and not (tmp_path / "data").exists()
    with pytest.raises(ConfigError, match="not a valid name"):
        scaffold("../up", QUESTIONS)
    with pytest.raises(ConfigError, match="'orderprobe' is taken"):
        scaffold("orderprobe", QUESTIONS, taken=frozenset({"orderprobe"}))
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"idiom": "x", "label": "<a>"}, {"idiom": "y", "label": "b"}])
    with pytest.raises(ConfigError, match=r"benchmarks/bad.yaml: invalid declaration: labels: "):
        scaffold("bad", bad)  # refused where the declaration is read: what was written goes again
    assert not (tmp_path / "benchmarks").exists() and not (tmp_path / "data").exists()
    made = scaffold("mcq", QUESTIONS)
    before = made.declaration.read_bytes()
    with pytest.raises(ConfigError, match=r"benchmarks/mcq.yaml: already exists"):
        scaffold("mcq", QUESTIONS)
    assert made.declaration.read_bytes() == before


def test_the_command_prints_what_it_wrote_and_refuses_in_one_line(tmp_path, monkeypatch):
    from idiombench.cli import app

    monkeypatch.chdir(tmp_path)
    source = shutil.copy(QUESTIONS, tmp_path / "questions.jsonl")
    result = CliRunner().invoke(app, ["new-benchmark", "quiz", str(source), "--gold", "answer"])
    assert result.exit_code == 0, result.output
    assert "new-benchmark: wrote benchmarks/quiz.yaml (multiple_choice; id: id, input: idiom" in result.output
    assert "dvc add data/quiz && idiombench dvc-yaml" in result.output
    again = CliRunner().invoke(app, ["new-benchmark", "quiz", str(source)])
    assert again.exit_code == 2 and again.output.count("\n") == 1 and "already exists" in again.output
    shape = CliRunner().invoke(app, ["new-benchmark", "quiz2", str(source), "--shape", "essay"])
    assert shape.exit_code == 2 and "--shape 'essay': expected one of multiple_choice, label, cloze, generation" in (
        shape.output
    )


def test_a_record_missing_its_options_or_its_gold_is_named_by_its_line(tmp_path, monkeypatch):
    """A field of lists that one record lacks is that record's error, not a sign of the label
    shape; a gold the build refuses is reported in the user's file, not in the copy it removed."""
    monkeypatch.chdir(tmp_path)
    records = [
        {"qid": n, "context": f"第{n}句__。", "candidates": ["画蛇添足", "锦上添花", "对牛弹琴"], "answer": "对牛弹琴"}
        for n in range(12)
    ]
    lacking = write_jsonl(tmp_path / "lacking.jsonl", records[:4] + [{"qid": 4, "context": "x", "answer": "y"}])
    with pytest.raises(DataError, match=r"lacking.jsonl, row 5: no field 'candidates'"):
        scaffold("lacking", lacking)
    with pytest.raises(DataError, match=r"lacking.jsonl, row 1: no field 'choices' \(named by --options\)"):
        scaffold("lacking", write_jsonl(tmp_path / "lacking.jsonl", records[:4]), options="choices")
    wrong = write_jsonl(tmp_path / "wrong.jsonl", records[:6] + [records[6] | {"answer": "揠苗助长"}])
    with pytest.raises(DataError, match=rf"^{tmp_path / 'wrong.jsonl'}, row 7: gold '揠苗助长' is none of the 3"):
        scaffold("wrong", wrong)
    assert not (tmp_path / "benchmarks").exists() and not (tmp_path / "data").exists()
    many = write_jsonl(tmp_path / "many.jsonl", [{"idiom": f"i{n}", "label": f"l{n % 8}"} for n in range(12)])
    with pytest.raises(DataError, match="gold field 'label' holds 8 distinct values"):
        scaffold("many", many, shape="label")  # 8 labels over 12 records: not a label set (free texts)
