"""oracle, echo, random and majority: answers, label spaces, seeding, the answer-format hook."""

from __future__ import annotations

from collections import Counter

import pytest

from idiombench.benchmarks.registry import backend_hooks
from idiombench.core.generation_types import ItemContext, Message, Request, Sampling
from idiombench.generation.backends import make_backend
from idiombench.generation.backends.reference import ReferenceBackend, label_space
from idiombench.generation.cache import request_key
from idiombench.generation.config import ReferenceModel

# A benchmark without a package: no answer-format hook, no declared classification tasks.
PLAIN = "plainbench"
HOOKS = backend_hooks()  # the registered benchmarks' hooks, as the generate stage passes them


def ctx(
    item_id: str,
    answer,
    *,
    benchmark=PLAIN,
    task="mcq",
    setting="zero_shot",
    choices=(),
    references=(),
    input_text="源成语",
):
    return ItemContext(benchmark, task, setting, item_id, input_text, answer, tuple(references), tuple(choices))


def req(item: ItemContext, sample_index: int = 0) -> Request:
    messages = (Message("user", f"{item.item_id} {item.input}"),)
    key = request_key({"backend": "test"}, messages, Sampling(), 0, sample_index)
    return Request(
        key, f"{item.benchmark}/{item.task}/{item.setting}/{item.item_id}", messages, Sampling(), 0, sample_index, item
    )


LETTER_ITEMS = [ctx(f"q{i}", "BBACB"[i % 5], choices=("w", "x", "y", "z")) for i in range(10)]
TEXT_ITEMS = [
    ctx(f"c{i}", f"opt{i % 3}", task="chid", choices=(f"opt{(i + 1) % 3}", f"opt{i % 3}", f"opt{(i + 2) % 3}"))
    for i in range(9)
]
LABEL_ITEMS = [ctx(f"l{i}", ["褒义", "贬义", "贬义", "中性"][i % 4], task="evaluative") for i in range(12)]


def backend(kind: str, items, seed: int = 0) -> ReferenceBackend:
    b = make_backend(kind, ReferenceModel(backend=kind), seed=seed, benchmarks=HOOKS)
    b.prepare([req(i) for i in items])
    return b


def test_label_spaces():
    letters = label_space(LETTER_ITEMS)
    assert letters.kind == "option_letter" and letters.majority == 1  # B
    texts = label_space(TEXT_ITEMS)
    assert texts.kind == "option_text" and texts.majority == 1  # gold always second
    labels = label_space(LABEL_ITEMS)
    assert labels.kind == "label" and labels.labels == ("中性", "褒义", "贬义") and labels.majority == "贬义"
    free = [ctx(f"f{i}", f"answer {i}", references=(f"answer {i}",)) for i in range(8)]
    assert "items have reference texts" in label_space(free)
    free = [ctx(f"f{i}", f"answer {i}") for i in range(8)]
    assert "look free-form (8 distinct in 8 items)" in label_space(free)
    assert "no item has a gold answer" in label_space([ctx("n", None)])
    assert "declared by the benchmark" in label_space(LABEL_ITEMS, declared=False)


def test_majority_answers_the_most_frequent_gold():
    assert [c.text for c in backend("majority", LETTER_ITEMS).generate([req(i) for i in LETTER_ITEMS])] == ["B"] * 10
    out = backend("majority", TEXT_ITEMS).generate([req(i) for i in TEXT_ITEMS])
    assert [c.text for c in out] == [i.choices[1] for i in TEXT_ITEMS]
    assert {c.text for c in backend("majority", LABEL_ITEMS).generate([req(i) for i in LABEL_ITEMS])} == {"贬义"}


def test_random_is_seeded_per_request_and_covers_the_labels():
    items = [ctx(f"q{i}", "A", choices=("w", "x", "y", "z")) for i in range(200)]
    b = backend("random", items)
    answers = [c.text for c in b.generate([req(i) for i in items])]
    assert set(answers) == {"A", "B", "C", "D"} and min(Counter(answers).values()) > 25
    # same answers in another order, in other batches, in another process (seeded by the request key)
    assert [c.text for c in backend("random", items).generate([req(i) for i in reversed(items)])] == answers[::-1]
    assert [c.text for c in backend("random", items, seed=1).generate([req(i) for i in items])] != answers
    samples = [b.generate([req(items[0], s)])[0].text for s in range(20)]
    assert len(set(samples)) > 1  # sampled passes get different draws
    labels = backend("random", LABEL_ITEMS).generate([req(i) for i in LABEL_ITEMS])
    assert {c.text for c in labels} <= {"褒义", "贬义", "中性"}


def test_random_reports_and_skips_tasks_that_are_not_classification():
    free = [ctx(f"f{i}", f"answer {i}", task="translate", references=(f"answer {i}",)) for i in range(5)]
    b = backend("random", free + LETTER_ITEMS)
    assert b.unsupported(PLAIN, "mcq", "zero_shot", "main") is None
    reason = b.unsupported(PLAIN, "translate", "zero_shot", "main")
    assert reason == "random: not a classification task: items have reference texts"
    assert any(f"{PLAIN}/translate: skipped" in line for line in b.report())


def test_declared_classification_tasks_decide():
    """The benchmark's CLASSIFICATION_TASKS overrides the heuristics, both ways."""
    labels = [
        ctx(f"s{i}", ["AntiBon", "Oper1"][i], benchmark="semanticqa", task="collocation_categorization")
        for i in range(2)
    ]
    assert "free-form" in label_space(labels)  # two labels in two items look free-form ...
    b = backend("majority", labels)  # ... but SemanticQA declares the task classification
    assert b.unsupported("semanticqa", "collocation_categorization", "0-shot", "main") is None
    assert b.generate([req(labels[0])])[0].text == "AntiBon"
    extraction = [ctx(f"e{i}", "x", benchmark="semanticqa", task="idiom_extraction") for i in range(6)]
    assert "declared by the benchmark" in backend("random", extraction).unsupported(
        "semanticqa", "idiom_extraction", "0-shot", "main"
    )


def test_oracle_and_echo_without_a_benchmark_hook_return_the_plain_answer():
    item = ctx("q1", "C", choices=("w", "x", "y", "z"), input_text="a source idiom")
    oracle, echo = backend("oracle", [item]), backend("echo", [item])
    assert oracle.generate([req(item)])[0].text == "C"
    assert echo.generate([req(item)])[0].text == "a source idiom"
    gloss_only = ctx("g", None, references=("the meaning",))
    assert backend("oracle", [gloss_only]).generate([req(gloss_only)])[0].text == "the meaning"
    nothing = ctx("n", None)
    failed = backend("oracle", [nothing]).generate([req(nothing)])[0]
    assert failed.failed and failed.error == "oracle: no answer for this item"


@pytest.mark.parametrize(
    ("setting", "kind", "expected"),
    [
        ("zero_shot", "oracle", "画蛇添足：比喻做了多余的事"),
        ("cot", "oracle", "Thinking Process: 蛇画添足 → 画蛇添足\nFinal Meaning: 比喻做了多余的事"),
        ("three_shot", "oracle", "Thinking Process: 蛇画添足 → 画蛇添足\nFinal Meaning: 比喻做了多余的事"),
        ("zero_shot", "echo", "蛇画添足"),
        ("cot", "echo", "Thinking Process: 蛇画添足\nFinal Meaning: 蛇画添足"),
    ],
)
def test_orderprobe_answer_format(setting, kind, expected):
    item = ctx(
        "zh-CN/0001/BACD",
        "画蛇添足",
        benchmark="orderprobe",
        task="restore",
        setting=setting,
        references=("比喻做了多余的事", "another gloss"),
        input_text="蛇画添足",
    )
    assert backend(kind, [item]).generate([req(item)])[0].text == expected


def test_orderprobe_oracle_without_glosses_explains_with_the_expression():
    item = ctx("ja/0001/BACD", "一石二鳥", benchmark="orderprobe", task="restore", setting="cot", input_text="石一二鳥")
    text = backend("oracle", [item]).generate([req(item)])[0].text
    assert text == "Thinking Process: 石一二鳥 → 一石二鳥\nFinal Meaning: 一石二鳥"


def test_identity_names_the_system_and_changes_with_the_seed_for_random():
    assert make_backend("o", ReferenceModel(backend="oracle"), benchmarks=HOOKS).identity()["backend"] == "oracle"
    r0 = make_backend("r", ReferenceModel(backend="random"), seed=0, benchmarks=HOOKS).identity()
    r1 = make_backend("r", ReferenceModel(backend="random"), seed=1, benchmarks=HOOKS).identity()
    assert r0 != r1 and r0["answer_format"] == r1["answer_format"]


def test_under_option_rotations_the_oracle_follows_the_gold_and_majority_keeps_its_position():
    """The option-order pass (docs/METRICS.md#7-option-order-robustness): rotated prompts carry
    the rotated item. The label space comes from the items as released, so majority is a
    fixed-position picker."""
    from idiombench.core.generation_types import item_context
    from idiombench.core.items import Item

    items = [
        Item(f"q{i}", PLAIN, "mcq", "en", "src", choices=("w", "x", "y", "z"), answer="BBACB"[i % 5]) for i in range(10)
    ]
    shown = [item_context(item, "zero_shot", r) for item in items for r in range(4)]
    majority = backend("majority", shown)
    assert majority.spaces[(PLAIN, "mcq")].majority == 1  # B, as without rotations
    assert {c.text for c in majority.generate([req(s) for s in shown])} == {"B"}
    oracle = backend("oracle", shown)
    answers = [c.text for c in oracle.generate([req(s) for s in shown])]
    assert all(
        s.choices["ABCD".index(a)] == item.choices["ABCD".index(item.answer)]
        for s, a, item in zip(shown, answers, [i for i in items for _ in range(4)], strict=False)
    )


def test_the_data_a_system_answers_from_is_part_of_each_items_key():
    """item_identity: what the stage adds to a request's key besides the prompt (the stage side:
    test_a_changed_gold_or_input_misses_exactly_its_items)."""
    from dataclasses import replace

    item = LETTER_ITEMS[0]
    for kind in ("oracle", "echo", "random", "majority"):
        b = backend(kind, LETTER_ITEMS)
        same = b.item_identity(replace(item))
        assert same == b.item_identity(item) and same != b.item_identity(replace(item, answer="C")), kind
        assert b.item_identity(replace(item, input="other")) != same, kind
    # random and majority answer from the task's label space, which every item's gold decides:
    # another item's gold moving the majority changes this item's key.
    moved = [replace(i, answer="A") if i.item_id in ("q0", "q1", "q3", "q5") else i for i in LETTER_ITEMS]
    assert backend("majority", moved).spaces[(PLAIN, "mcq")].majority == 0
    assert moved[2] == LETTER_ITEMS[2]
    for kind in ("random", "majority"):
        assert backend(kind, moved).item_identity(moved[2]) != backend(kind, LETTER_ITEMS).item_identity(moved[2])


@pytest.mark.parametrize("kind, field", [("oracle", "answer"), ("echo", "input")])
def test_a_changed_gold_or_input_misses_exactly_its_items(tmp_path, monkeypatch, kind, field):
    """The prompts stay as rendered; the items' data changes under them (a corrected gold label):
    the old answers of exactly those items are not served again."""
    from dataclasses import replace

    from gen_project import orderprobe_items, write_project
    from idiombench.core.items import write_items
    from idiombench.generation.table import read_generations
    from idiombench.pipeline.config import load_params
    from idiombench.stages.generate import run_generate

    project = write_project(tmp_path / "project", {kind: {"backend": kind}}, consistency_n=1)
    monkeypatch.chdir(project)

    def generate() -> dict:
        return run_generate(load_params(project / "params.yaml"), kind, echo=lambda line: None).summary["total"]

    first = generate()
    assert generate()["cached"] == first["requests"]
    items = orderprobe_items()
    changed = items[0]
    items[0] = replace(changed, **{field: "井底之蛙"})
    write_items(project / "data" / "processed" / "orderprobe" / "restore.parquet", items)
    again = generate()
    per_item = first["requests"] // len(items)  # 2 settings x (main + 1 consistency sample)
    assert (again["generated"], again["cached"]) == (per_item, first["requests"] - per_item)
    rows = read_generations(project / "results" / "generations" / kind / "orderprobe" / "zero_shot.parquet")
    answer = {"oracle": "井底之蛙：比喻做了多余的事", "echo": "井底之蛙"}[kind]  # the new data, not the cached answer
    assert [r["text"] for r in rows if r["item_id"] == changed.item_id and r["pass"] == "main"] == [answer]
