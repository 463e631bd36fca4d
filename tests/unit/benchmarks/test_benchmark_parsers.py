"""Each benchmark's parse.py on its own output formats, and format_reference_answer round trips."""

from __future__ import annotations

import json

import pytest

from idiombench.benchmarks.chengyu_bench.answers import format_reference_answer as chengyu_answer
from idiombench.benchmarks.chengyu_bench.parse import parse_output as chengyu_parse
from idiombench.benchmarks.g_idiomalign.answers import format_reference_answer as gia_answer
from idiombench.benchmarks.g_idiomalign.parse import parse_output as gia_parse
from idiombench.benchmarks.orderprobe.parse import parse_explanation
from idiombench.benchmarks.semanticqa.answers import format_reference_answer as sqa_answer
from idiombench.benchmarks.semanticqa.parse import normalise_answer, taxonomy_labels
from idiombench.benchmarks.semanticqa.parse import parse_output as sqa_parse
from idiombench.core.generation_types import ItemContext


def ctx(benchmark: str, task: str, setting: str, **kw) -> ItemContext:
    return ItemContext(benchmark=benchmark, task=task, setting=setting, item_id="x", input=kw.pop("input", "in"), **kw)


# --------------------------------------------------------------------------- OrderProbe


@pytest.mark.parametrize(
    ("raw", "value", "ok", "flags"),
    [
        ("不耻下问，指不以向地位低的人请教为耻。", "不耻下问，指不以向地位低的人请教为耻。", True, set()),
        ("判断含义：不耻下问，形容谦虚好学。", "不耻下问，形容谦虚好学。", True, {"echoed_label"}),
        ("判断含义：[不耻下问，形容谦虚好学]", "不耻下问，形容谦虚好学", True, {"echoed_label", "bracketed"}),
        ("判斷含義：形容行為放縱。", "形容行為放縱。", True, {"echoed_label"}),
        ("意味：物事を完成させる最後の仕上げ。", "物事を完成させる最後の仕上げ。", True, {"echoed_label"}),
        ("의미: 전체 상황을 살펴보는 것.", "전체 상황을 살펴보는 것.", True, {"echoed_label"}),
        (
            "成语：不耻下问\n判断含义：形容谦虚好学。",
            "不耻下问\n形容谦虚好学。",
            False,
            {"echoed_label", "multiple_lines"},
        ),
        ("第一行\n第二行", "第一行\n第二行", False, {"multiple_lines"}),
        ("判断含义：", None, False, {"label_only"}),
        ("判断含义：[解释]", "解释", True, {"bracketed"}),
        ("", None, False, {"empty"}),
        ("<think>想一想</think>形容谦虚好学。", "形容谦虚好学。", True, {"think_block"}),
        ("<think>想了很久还没", None, False, {"unclosed_think"}),
    ],
)
def test_orderprobe_zero_shot(raw: str, value: str | None, ok: bool, flags: set[str]):
    parsed = parse_explanation(raw, "zero_shot")
    assert (parsed.value, parsed.ok) == (value, ok), parsed
    assert flags <= set(parsed.flags), parsed


@pytest.mark.parametrize(
    ("raw", "value", "ok", "flags"),
    [
        ("Thinking Process: 调整语序为不耻下问。\nFinal Meaning: 形容谦虚好学。", "形容谦虚好学。", True, set()),
        ("Thinking Process：…\nFinal Meaning：形容谦虚好学。", "形容谦虚好学。", True, set()),
        ("**Thinking Process:** …\n**Final Meaning:** 形容谦虚好学。", "形容谦虚好学。", True, set()),
        ("thinking process: …\nfinal meaning: 形容谦虚好学。", "形容谦虚好学。", True, set()),
        ("Thinking Process: …\n\nFinal Meaning: 形容谦虚好学。\n", "形容谦虚好学。", True, set()),
        ("Final Meaning: 形容谦虚好学。", "形容谦虚好学。", False, {"no_thinking_process_line", "not_two_lines"}),
        ("Thinking Process: a\nb\nFinal Meaning: 形容谦虚好学。", "形容谦虚好学。", False, {"not_two_lines"}),
        ("Final Meaning: 形容谦虚好学。\nThinking Process: …", "形容谦虚好学。", False, set()),
        (
            "Thinking Process: …\nFinal Meaning:\n形容谦虚好学。",
            "形容谦虚好学。",
            False,
            {"final_meaning_on_next_line", "not_two_lines"},
        ),
        ("Thinking Process: …\nFinal Meaning:", None, False, {"empty_final_meaning"}),
        (
            "Thinking Process: …\nFinal Meaning: 一\nFinal Meaning: 二",
            "二",
            False,
            {"several_final_meaning_lines", "not_two_lines"},
        ),
        ("Thinking Process: 调整为不耻下问。", "调整为不耻下问。", False, {"no_final_meaning_line"}),
        ("形容谦虚好学。", "形容谦虚好学。", False, {"no_final_meaning_line", "no_thinking_process_line"}),
        ("判断含义：形容谦虚好学。", "形容谦虚好学。", False, {"no_final_meaning_line", "echoed_label"}),
        ("Thinking Process: …\nFinal Meaning: [形容谦虚好学]", "形容谦虚好学", True, {"bracketed"}),
        ("", None, False, {"empty"}),
        ("<think>long</think>\nThinking Process: …\nFinal Meaning: 好。", "好。", True, {"think_block"}),
        ("<think>Thinking Process: …\nFinal Meaning: 未完成", None, False, {"unclosed_think"}),
    ],
)
@pytest.mark.parametrize("setting", ["cot", "three_shot"])
def test_orderprobe_two_line_settings(setting: str, raw: str, value: str | None, ok: bool, flags: set[str]):
    parsed = parse_explanation(raw, setting)
    assert (parsed.value, parsed.ok) == (value, ok), parsed
    assert flags <= set(parsed.flags), parsed


def test_orderprobe_unknown_setting_is_flagged_not_raised():
    parsed = parse_explanation("x", "nine_shot")
    assert parsed.value is None and "unknown_setting:nine_shot" in parsed.flags


# --------------------------------------------------------------------------- G-IdiomAlign

MCQ = dict(choices=("bone dry", "Adam's ale", "wet element", "a fish out of water"), answer="B")


@pytest.mark.parametrize(
    ("raw", "value", "ok"),
    [
        ('{"Answer": "B"}', "B", True),
        ('{\n"Answer": "B"}', "B", True),
        ("B", "B", True),
        ("Adam's ale", "B", False),
        ("C or B", None, False),
        ("", None, False),
    ],
)
def test_g_idiomalign_mcq(raw: str, value: str | None, ok: bool):
    parsed = gia_parse(ctx("g-idiomalign", "mcq", "mcq", **MCQ), raw)
    assert (parsed.value, parsed.ok) == (value, ok), parsed


@pytest.mark.parametrize(
    ("raw", "value", "ok", "flags"),
    [
        ("Adam's ale", "Adam's ale", True, set()),
        ('"Adam\'s ale"', "Adam's ale", True, {"quoted"}),
        ("Idiom: Adam's ale", "Adam's ale", True, {"label"}),
        ("English idiom: Adam's ale", "Adam's ale", True, {"label"}),
        ("Adam's ale\n(It means water.)", "Adam's ale", False, {"multiple_lines"}),
        ("Answer:\nAdam's ale", "Adam's ale", False, {"label", "multiple_lines"}),
        ("'n Appel und 'n Ei", "'n Appel und 'n Ei", True, set()),
        ("Ça alors !", "Ça alors !", True, set()),
        ("**雪上加霜**", "雪上加霜", True, {"markdown"}),
        ("<think>hmm</think>雪上加霜", "雪上加霜", True, {"think_block"}),
        ("<think>hmm", None, False, {"unclosed_think"}),
        ('""', None, False, set()),
        ("", None, False, {"empty"}),
    ],
)
@pytest.mark.parametrize("setting", ["no_gloss", "with_gloss"])
def test_g_idiomalign_generation(setting: str, raw: str, value: str | None, ok: bool, flags: set[str]):
    item = ctx("g-idiomalign", "gloss_generation", setting, fields={"target_language": "English"})
    parsed = gia_parse(item, raw)
    assert (parsed.value, parsed.ok) == (value, ok), parsed
    assert flags <= set(parsed.flags), parsed


def test_g_idiomalign_reference_answers():
    item = ctx("g-idiomalign", "mcq", "mcq", **MCQ)
    assert gia_answer(item, "B", "oracle") == '{"Answer": "B"}'
    assert json.loads(gia_answer(item, "wet element", "random")) == {"Answer": "C"}
    assert gia_answer(item, "nasses Element", "echo") == "nasses Element"
    gen = ctx("g-idiomalign", "gloss_generation", "with_gloss", references=("Adam's ale",))
    assert gia_answer(gen, "Adam's ale", "oracle") == "Adam's ale"


# --------------------------------------------------------------------------- SemanticQA

TAXONOMY = "Label\tMeaning\nMagn\tintense\nBon \tpositive\nOper1\tperform\n"
TAXONOMY_3 = "ID\tLabel\tExamples\tMeaning\n0\tMagn\theavy rain\tintense\n4 \tBon \tfresh bread \tpositive\n"


def test_semanticqa_taxonomy_labels():
    assert taxonomy_labels({"taxonomy": TAXONOMY, "taxonomy_3shot": TAXONOMY_3, "context": "x"}) == [
        "Magn",
        "Bon",
        "Oper1",
    ]


@pytest.mark.parametrize(
    ("task", "raw", "value", "ok"),
    [
        ("idiom_detection", "D", "D", True),
        ("idiom_detection", "Output: D", "D", True),
        ("idiom_detection", "D: Meta Usage", "D", True),
        ("idiom_detection", "Meta Usage", "D", False),
        ("idiom_detection", "A or D", None, False),
        ("noun_compound_compositionality", "B: Partly compositional", "B", True),
        ("collocation_categorization", "Magn", "Magn", True),
        ("collocation_categorization", "magn.", "Magn", True),
        ("collocation_categorization", "Output (Label only): Bon", "Bon", True),
        ("collocation_categorization", '"Oper1"', "Oper1", True),
        ("collocation_categorization", "The label is Magn", "Magn", False),
        ("collocation_categorization", "Magn or Bon", None, False),
        ("collocation_categorization", "Bon **Explanation:** fresh bread is good", "Bon", True),
        ("collocation_categorization", "Oper1, because it performs", "Oper1", True),
        ("collocation_categorization", "Bon / Magn", None, False),
        ("collocation_categorization", "AntiMagn", "AntiMagn", False),
        ("idiom_extraction", "blame game", "blame game", True),
        ("idiom_extraction", 'Output: "Blame Game."', "Blame Game", True),
        ("idiom_extraction", "Extracted Idiom: blame game\nbecause ...", "blame game", False),
        ("collocation_extraction", "stunning loss ;", "stunning loss", True),
        ("vmwe_extraction_VPC", "Verbal Multiword Expression (VMWE): set off", "set off", True),
        ("noun_compound_extraction", "", None, False),
        (
            "idiom_paraphrase",
            "to give something a trial before it is actually launched.",
            "to give something a trial before it is actually launched.",
            True,
        ),
        ("idiom_paraphrase", "Output: “to be very happy (elated)”", "to be very happy (elated)", True),
        (
            "noun_compound_interpretation",
            "Short interpretation: software for\napplications",
            "software for applications",
            True,
        ),
        ("noun_compound_interpretation", "<think>x</think>", None, False),
    ],
)
def test_semanticqa_parse(task: str, raw: str, value: str | None, ok: bool):
    choices = ("criticism game", "exchanged accusations", "Proper Noun", "Meta Usage")
    item = ctx(
        "semanticqa",
        task,
        "0-shot",
        choices=choices
        if task in ("idiom_detection",)
        else ("Compositional", "Partly compositional", "None of the above", "Non-compositional")
        if task == "noun_compound_compositionality"
        else (),
        fields={"taxonomy": TAXONOMY},
    )
    parsed = sqa_parse(item, raw)
    assert (parsed.value, parsed.ok) == (value, ok), parsed


def test_semanticqa_normalise_answer():
    assert normalise_answer('Answer: "Spill the Beans."') == "spill the beans"
    assert normalise_answer("<think>x</think> Output:  blame   game ") == "blame game"
    assert normalise_answer("blame game") == normalise_answer("Blame Game!")


def test_semanticqa_reference_answers():
    item = ctx("semanticqa", "idiom_detection", "3-shot", choices=("a", "b", "c", "d"))
    assert sqa_answer(item, "D", "oracle") == "D"
    assert sqa_answer(item, "c", "random") == "C"
    assert sqa_answer(ctx("semanticqa", "idiom_extraction", "0-shot"), "blame game", "oracle") == "blame game"


def test_semanticqa_unknown_task_is_flagged():
    parsed = sqa_parse(ctx("semanticqa", "nope", "0-shot"), "x")
    assert parsed.value is None and "unknown_task:nope" in parsed.flags


# --------------------------------------------------------------------------- Chengyu-Bench

CANDIDATES = ("严阵以待", "改朝换代", "不共戴天", "天南海北", "物归原主", "波谲云诡", "高视阔步")


@pytest.mark.parametrize(
    ("setting", "raw", "value", "ok"),
    [
        ("connotation", "<positive>", "positive", True),
        ("connotation", "<positive> or <negative>", None, False),
        ("connotation", "贬义", "negative", False),
        ("appropriateness", "<wrong>", "wrong", True),
        ("appropriateness", "The usage is incorrect.", "wrong", False),
        ("appropriateness", "<correct> <wrong>", None, False),
        (
            "open_cloze",
            "<answer><一鸣惊人, 画蛇添足, 刻舟求剑, 守株待兔, 亡羊补牢></answer>",
            ("一鸣惊人", "画蛇添足", "刻舟求剑", "守株待兔", "亡羊补牢"),
            True,
        ),
        ("chid_open_cloze", "<answer><改朝换代></answer>", ("改朝换代",), True),
        ("chid_candidates", "<answer><改朝换代></answer>", ("改朝换代",), True),
        ("chid_candidates", "<answer>改朝换代</answer>", ("改朝换代",), True),
        ("chid_candidates", "<answer><一鸣惊人></answer>", ("一鸣惊人",), False),
        ("chid_candidates", "<answer><改朝换代, 严阵以待></answer>", ("改朝换代", "严阵以待"), False),
        # no answer block: the one candidate the text names (lenient, ok False); two named: nothing
        ("chid_candidates", "改朝换代", ("改朝换代",), False),
        ("chid_candidates", "我选择“改朝换代”。", ("改朝换代",), False),
        ("chid_candidates", "改朝换代还是严阵以待？", None, False),
        ("chid_candidates", "<think>严阵以待?</think>改朝换代", ("改朝换代",), False),
        # a candidate's number (1-7) in the block
        ("chid_candidates", "<answer><2></answer>", ("改朝换代",), False),
        ("chid_candidates", "<answer><8></answer>", ("8",), False),
        # open cloze keeps repeats in place (ranks are positions as written)
        ("open_cloze", "<answer><一鸣惊人, 一鸣惊人, 画蛇添足></answer>", ("一鸣惊人", "一鸣惊人", "画蛇添足"), True),
        ("unknown", "x", None, False),
    ],
)
def test_chengyu_parse(setting: str, raw: str, value, ok: bool):
    item = ctx("chengyu-bench", "chid", setting, choices=CANDIDATES)
    parsed = chengyu_parse(item, raw)
    assert (parsed.value, parsed.ok) == (value, ok), parsed


def test_chengyu_flags():
    item = ctx("chengyu-bench", "chid", "chid_candidates", choices=CANDIDATES)
    assert "not_a_candidate" in chengyu_parse(item, "<answer><一鸣惊人></answer>").flags
    assert "several_idioms" in chengyu_parse(item, "<answer><改朝换代, 严阵以待></answer>").flags
    assert "candidate_in_text" in chengyu_parse(item, "答案是改朝换代").flags
    assert "several_candidates_in_text" in chengyu_parse(item, "改朝换代或严阵以待").flags
    assert "candidate_number" in chengyu_parse(item, "<answer><2></answer>").flags
    assert "not_a_candidate" in chengyu_parse(item, "<answer><8></answer>").flags
    cloze = ctx("chengyu-bench", "open_cloze", "open_cloze")
    assert {"duplicate_items", "fewer_items"} <= set(
        chengyu_parse(cloze, "<answer><一鸣惊人, 一鸣惊人></answer>").flags
    )


@pytest.mark.parametrize(
    ("setting", "answer", "kind", "text"),
    [
        ("connotation", "positive", "oracle", "<positive>"),
        ("appropriateness", "wrong", "majority", "<wrong>"),
        ("chid_candidates", "改朝换代", "oracle", "<answer><改朝换代></answer>"),
        ("chid_open_cloze", "改朝换代", "oracle", "<answer><改朝换代></answer>"),
        ("chid_candidates", "改朝换代", "echo", "改朝换代"),
    ],
)
def test_chengyu_reference_answers(setting: str, answer: str, kind: str, text: str):
    item = ctx("chengyu-bench", "chid", setting, choices=CANDIDATES, references=("改朝换代",))
    assert chengyu_answer(item, answer, kind) == text


def test_chengyu_open_cloze_oracle_lists_every_acceptable_idiom_gold_first():
    item = ctx("chengyu-bench", "open_cloze", "open_cloze", answer="好景不长", references=("好景不长", "昙花一现"))
    text = chengyu_answer(item, "好景不长", "oracle")
    assert text == "<answer><好景不长, 昙花一现></answer>"
    assert chengyu_parse(item, text).value == ("好景不长", "昙花一现")
