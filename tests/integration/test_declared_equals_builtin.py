"""Chengyu-Bench's ChID with candidates and its connotation task, declared (benchmarks/declared/,
shapes `cloze` and `label`) instead of coded (benchmarks/chengyu_bench/), score every output the
same way: on the REAL ChID test_public passages (2,002, the mirror) and the project's 40
connotation items, the two builds give the same items (ids, passage or idiom, candidates, gold)
and, for a battery of outputs per item (the requested format, a candidate's number, a hedge, an
idiom that is no candidate, a candidate named without the block, an unclosed block, a think
block, spacing, nothing), the same parse (value, ok, flags), prediction, correctness, parse
failure and unformatted flag, with and without `accept_unformatted`, so the same accuracy.

What is not the same: the prompts (the declaration's template is the user's own, the built-in
one the paper's, with its candidate rotations), so a model's outputs, and so its numbers, come
from the same scorer but not from the same prompts."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from idiombench.benchmarks.chengyu_bench.parse import CONNOTATION_WORDS, parse_output
from idiombench.benchmarks.chengyu_bench.score import PromptCheck, score_row
from idiombench.benchmarks.declared import declared_benchmark
from idiombench.benchmarks.declared.library import SHAPES
from idiombench.benchmarks.declared.schema import read_declaration
from idiombench.benchmarks.declared.score import answer_columns, parser_for
from idiombench.core.generation_types import item_context
from idiombench.stages.inputs import load_items

pytestmark = [pytest.mark.mirror]

ROOT = Path(__file__).resolve().parents[2]
BENCH = "chengyu-bench"
SAMPLE = ROOT / "src" / "idiombench" / "benchmarks" / "chengyu_bench" / "sample" / "connotation.jsonl"
COMPARED = ("prediction", "correct", "parse_failed", "unformatted")

CHID = """shape: cloze
language: zh-CN
data:
  - file: test_public.json
    sha256: {sha256}
    format: jsonl
fields: {id: id, input: content, options: candidates, gold: answer}
template:
  - user: "{input}\\n候选成语：{options}"
metrics: [accuracy]
"""
CONNOTATION = """shape: label
language: zh-CN
data:
  - file: connotation.jsonl
    sha256: {sha256}
fields: {input: idiom, gold: label}
labels: {labels}
template:
  - user: "{input}"
parser: tag
metrics: [accuracy]
"""


def declare(root: Path, name: str, text: str, data: Path) -> Any:
    """benchmarks/<name>.yaml over a copy of `data` in data/<name>/ (cwd: root)."""
    folder = root / "data" / name
    folder.mkdir(parents=True)
    shutil.copyfile(data, folder / data.name)
    path = Path("benchmarks") / f"{name}.yaml"
    (root / path).parent.mkdir(exist_ok=True)
    (root / path).write_text(text.replace("{sha256}", hashlib.sha256(data.read_bytes()).hexdigest()), encoding="utf-8")
    bench = declared_benchmark(name, path, read_declaration(path, SHAPES))
    return bench, bench.build(folder, bench.config_model()).tasks["test"]


def chid_outputs(candidates: tuple[str, ...], gold: str, index: int) -> list[str]:
    first, second = candidates[0], candidates[1]
    other = candidates[index % len(candidates)]
    return [
        f"<answer><{gold}></answer>",
        f"<answer>{gold}</answer>",
        f"<answer><{index % 9}></answer>",  # a candidate's number (0 and 8: none)
        f"<answer><{first}，{second}></answer>",
        f"<answer><{first}，{first}></answer>",
        "<answer><一石二鸟></answer>",
        f"我认为应该填{other}。",
        f"{first}还是{second}？",
        f"<answer><{other}>",
        f"<think>{first}</think><answer><{second}></answer>",
        f"<answer>< {' '.join(gold)} ></answer>。",
        f"<answer>「{other}」</answer>",
        "",
    ]


def connotation_outputs(index: int) -> list[str]:
    return ["<positive>", "<negative>", "褒义", "<贬义>", "<positive> or <negative>", "Positive", "", f"{index}"]


def scored_alike(
    bench: Any, parse: Any, check: PromptCheck, setting: str, kind: str, item: Any, theirs: Any, text: str
) -> list[tuple[bool, dict[str, Any], dict[str, object]]]:
    """One output through both: the same parse, then, with and without accept_unformatted, the
    same prediction, correctness, parse failure and unformatted flag. (accept, built-in row,
    declared columns) per reading."""
    ours = parse(item_context(item, setting), text)
    assert ours == parse_output(item_context(theirs, setting), text), text
    readings = []
    for accept in (False, True):
        gen = {"prompt_id": "p", "task": theirs.task, "item_id": item.item_id, "pass": "main"} | {
            "sample_index": 0,
            "rotation": 0,
            "text": text,
            "error": None,
            "prompt_hash": "",
        }
        row = score_row(setting, kind, theirs, gen, accept, None, check)
        mine = answer_columns(bench.declaration, ours, item.answer, accept)
        assert {k: mine[k] for k in COMPARED} == {k: row[k] for k in COMPARED}, (text, accept)
        readings.append((accept, row, mine))
    return readings


def test_chid_declared_as_a_cloze_scores_as_the_builtin(built, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    processed = built(BENCH)
    coded = load_items(BENCH, processed)["chid"]
    monkeypatch.chdir(tmp_path)
    mirror_file = processed.parent.parent / "raw" / BENCH / "chid" / "test_public.json"
    bench, declared = declare(tmp_path, "chid", CHID, mirror_file)
    assert len(declared) == len(coded) == 2_002
    parse = parser_for(bench.declaration)
    check = PromptCheck()
    rows = 0
    correct = {False: [0, 0], True: [0, 0]}  # accept_unformatted -> [built-in, declared] correct counts
    for index, item in enumerate(declared):
        theirs = coded[item.item_id]
        assert (item.input, item.choices, item.answer) == (theirs.input, theirs.choices, theirs.answer)
        for text in chid_outputs(item.choices, item.answer, index):
            for accept, row, mine in scored_alike(bench, parse, check, "chid_candidates", "choice", item, theirs, text):
                correct[accept][0] += bool(row["correct"])
                correct[accept][1] += bool(mine["correct"])
                rows += 1
    assert rows == 2 * 13 * 2_002
    assert correct[False][0] == correct[False][1] and correct[True][0] == correct[True][1]
    assert 0 < correct[False][0] < correct[True][0]  # the lenient readings count only when accepted


def test_connotation_declared_as_labels_scores_as_the_builtin(built, tmp_path: Path, monkeypatch):
    coded = load_items(BENCH, built(BENCH))["connotation_sample"]
    monkeypatch.chdir(tmp_path)
    synonyms: dict[str, list[str]] = {"positive": [], "negative": []}
    for word, label in CONNOTATION_WORDS.items():
        synonyms[label].append(word)
    text = CONNOTATION.replace("{labels}", json.dumps(synonyms, ensure_ascii=False))
    bench, declared = declare(tmp_path, "connotation", text, SAMPLE)
    assert len(declared) == len(coded) == 40
    parse = parser_for(bench.declaration)
    check = PromptCheck()
    for index, item in enumerate(declared):
        theirs = coded[item.item_id]
        assert (item.input, item.answer) == (theirs.input, theirs.answer)
        for output in connotation_outputs(index):
            scored_alike(bench, parse, check, "connotation", "label", item, theirs, output)
