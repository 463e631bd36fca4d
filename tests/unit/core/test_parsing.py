"""Shared parsing helpers, table-driven: well-formed and malformed outputs alike."""

from __future__ import annotations

import random

import pytest

from idiombench.core.parsing import (
    normalise_text,
    parse_letter,
    parse_ranked_list,
    parse_tag_label,
    strip_leading_label,
    strip_think,
    unwrap,
)

# --------------------------------------------------------------------------- think blocks


@pytest.mark.parametrize(
    ("raw", "text", "flags"),
    [
        ("B", "B", set()),
        ("<think>the answer is A</think>B", "B", {"think_block"}),
        ("<think>a</think> <think>b</think>\nfinal", "final", {"think_block"}),
        ("<THINK>x</THINK>ok", "ok", {"think_block"}),
        ("<thinking>x</thinking>ok", "ok", {"think_block"}),
        ("<think>still thinking when the tokens ran out", "", {"unclosed_think"}),
        ("prefix <think>unclosed", "prefix", {"unclosed_think"}),
        ("reasoning opened by the template</think>\nB", "B", {"think_close_without_open"}),
        ("a</think>b</think>c", "c", {"think_close_without_open"}),
        ("<think>x</think>y<think>z", "y", {"think_block", "unclosed_think"}),
        ("", "", set()),
    ],
)
def test_strip_think(raw: str, text: str, flags: set[str]):
    assert strip_think(raw) == (text, flags)


def test_strip_think_on_non_text():
    assert strip_think(None) == ("", {"not_text"})  # type: ignore[arg-type]


# --------------------------------------------------------------------------- option letters

LETTER_CASES = [
    # (raw, value, ok, flags that must be present)
    ('{"Answer": "B"}', "B", True, {"json_answer"}),
    ('{\n"Answer": "C"}', "C", True, {"json_answer"}),
    ('```json\n{"Answer": "D"}\n```', "D", True, {"json_answer"}),
    ('{"answer": "b"}', "B", True, {"json_answer"}),
    ('{"Answer": "B. Adam\'s ale"}', "B", True, {"json_answer"}),
    ('{"Answer": "(C)"}', "C", True, {"json_answer"}),
    ('{"Answer": "(A, B, C, or D)"}', None, False, {"multiple_letters"}),  # the format echoed
    ('{"Answer": "B"} {"Answer": "C"}', None, False, {"multiple_letters"}),
    ('{"Answer": "B"} {"Answer": "B"}', "B", True, {"repeated_answer"}),
    ("{'Answer': 'B'}", "B", True, {"invalid_json", "answer_label"}),
    ('{"Answer": "B"', "B", True, {"invalid_json"}),
    ("Answer: B", "B", True, {"answer_label"}),
    ("answer：C", "C", True, {"answer_label"}),
    ("The answer is D because it fits.", "D", True, {"answer_label"}),
    ("Option C is the idiom.", "C", True, {"answer_label"}),
    ("答案：A", "A", True, {"answer_label"}),
    ("Output: B", "B", True, {"answer_label"}),
    ("B", "B", True, {"bare_letter"}),
    ("  b  ", None, False, {"no_letter"}),
    ("(B)", "B", True, {"bare_letter"}),
    ("[D]", "D", True, {"bare_letter"}),
    ("**C**", "C", True, {"bare_letter", "markdown"}),
    ('"A"', "A", True, {"bare_letter", "quoted"}),
    ("B.", "B", True, {"bare_letter"}),
    ("B. Adam's ale", "B", True, {"letter_with_text"}),
    ("B: Partly compositional", "B", True, {"letter_with_text"}),
    ("C) wet element", "C", True, {"letter_with_text"}),
    ("D because the meaning matches", "D", True, {"letter_with_text"}),
    ("A. a fish out of water", "A", True, {"letter_with_text"}),
    ("A cat sat on the mat.", None, False, {"no_letter"}),
    ("I would pick B here.", "B", False, {"letter_in_text"}),
    ("Either B or C.", None, False, {"multiple_letters"}),
    ("E", None, False, {"letter_out_of_range"}),
    ("Answer: E", None, False, {"no_letter"}),
    ("", None, False, {"empty"}),
    ("   \n  ", None, False, {"empty"}),
    ("<think>A or B?</think>", None, False, {"empty", "think_block"}),
    ("<think>A or B? I think", None, False, {"unclosed_think"}),
    ("<think>maybe A</think>\nB", "B", True, {"bare_letter", "think_block"}),
    ("no idea", None, False, {"no_letter"}),
    ("The correct option is the one about water.", None, False, {"no_letter"}),
]


@pytest.mark.parametrize(("raw", "value", "ok", "flags"), LETTER_CASES)
def test_parse_letter(raw: str, value: str | None, ok: bool, flags: set[str]):
    parsed = parse_letter(raw)
    assert (parsed.value, parsed.ok) == (value, ok), parsed
    assert flags <= set(parsed.flags), parsed
    assert parsed.raw == raw


def test_parse_letter_maps_an_option_text_to_its_letter():
    choices = ("bone dry", "Adam's ale", "wet element", "a fish out of water")
    parsed = parse_letter("Adam's ale", choices=choices)
    assert (parsed.value, parsed.ok, "option_text" in parsed.flags) == ("B", False, True)
    assert parse_letter('"adam\'s ale."', choices=choices).value == "B"
    assert parse_letter("Adam", choices=choices).value is None


def test_parse_letter_respects_the_letter_set():
    assert parse_letter("E", letters="ABCDE").value == "E"
    assert parse_letter("D", letters="ABC").value is None


# --------------------------------------------------------------------------- tag labels

POLARITY = ("positive", "negative")
CHINESE = {"褒义": "positive", "贬义": "negative"}


@pytest.mark.parametrize(
    ("raw", "value", "ok", "flags"),
    [
        ("<positive>", "positive", True, set()),
        ("<negative>", "negative", True, set()),
        ("<Negative>", "negative", True, set()),
        ("< positive >", "positive", True, set()),
        ("答案：<negative>", "negative", True, {"text_around_label"}),
        ("This idiom praises timely help. <positive>", "positive", True, {"text_around_label"}),
        ("<positive> <positive>", "positive", True, {"repeated_label"}),
        ("<positive> or <negative>", None, False, {"echoed_format", "no_label"}),
        ("Format: <positive> or <negative>\nMine: <negative>", "negative", True, {"echoed_format"}),
        ("<positive><negative>", None, False, {"multiple_labels"}),
        ("positive", "positive", False, {"label_without_tags"}),
        ("It is negative.", "negative", False, {"label_without_tags"}),
        ("这是一个褒义成语", "positive", False, {"label_without_tags"}),
        ("褒义还是贬义？", None, False, {"multiple_labels"}),
        ("neutral", None, False, {"no_label"}),
        ("<neutral>", None, False, {"no_label"}),
        ("", None, False, {"empty"}),
        ("<think><negative>?</think><positive>", "positive", True, {"think_block"}),
        ("<think>unfinished <negative>", None, False, {"unclosed_think", "empty"}),
        ("nonnegative", None, False, {"no_label"}),
    ],
)
def test_parse_tag_label(raw: str, value: str | None, ok: bool, flags: set[str]):
    parsed = parse_tag_label(raw, POLARITY, CHINESE)
    assert (parsed.value, parsed.ok) == (value, ok), parsed
    assert flags <= set(parsed.flags), parsed


# --------------------------------------------------------------------------- ranked lists

FIVE = ("一鸣惊人", "画蛇添足", "刻舟求剑", "守株待兔", "亡羊补牢")


@pytest.mark.parametrize(
    ("raw", "value", "ok", "flags"),
    [
        ("<answer><一鸣惊人, 画蛇添足, 刻舟求剑, 守株待兔, 亡羊补牢></answer>", FIVE, True, set()),
        ("ranking…\n<answer><一鸣惊人，画蛇添足，刻舟求剑，守株待兔，亡羊补牢></answer>", FIVE, True, set()),
        ("<answer><一鸣惊人、画蛇添足、刻舟求剑、守株待兔、亡羊补牢></answer>", FIVE, True, set()),
        ("<answer>一鸣惊人, 画蛇添足, 刻舟求剑, 守株待兔, 亡羊补牢</answer>", FIVE, True, {"no_inner_brackets"}),
        ("<answer><一鸣惊人>, <画蛇添足>, <刻舟求剑>, <守株待兔>, <亡羊补牢></answer>", FIVE, True, set()),
        (
            "<answer>\n1. 一鸣惊人\n2. 画蛇添足\n3. 刻舟求剑\n4. 守株待兔\n5. 亡羊补牢\n</answer>",
            FIVE,
            True,
            {"no_inner_brackets"},
        ),
        ("<answer><“一鸣惊人”, 画蛇添足。, 刻舟求剑, 守株待兔, 亡羊补牢></answer>", FIVE, True, set()),
        ("<answer><一鸣惊人, 画蛇添足></answer>", FIVE[:2], True, {"fewer_items"}),
        (
            "<answer><一鸣惊人, 画蛇添足, 刻舟求剑, 守株待兔, 亡羊补牢, 井底之蛙></answer>",
            (*FIVE, "井底之蛙"),
            True,
            {"more_items"},
        ),
        ("<answer><一鸣惊人, 一鸣惊人, 画蛇添足></answer>", FIVE[:2], True, {"duplicate_items", "fewer_items"}),
        ("<answer><idiom1, idiom2, idiom3, idiom4, idiom5></answer>", None, False, {"echoed_format"}),
        (
            "Format <answer><idiom1, idiom2, idiom3, idiom4, idiom5></answer>\n<answer><一鸣惊人></answer>",
            FIVE[:1],
            True,
            {"several_answer_blocks", "fewer_items"},
        ),
        ("<answer><一鸣惊人, 画蛇添足, 刻舟求剑", FIVE[:3], False, {"unclosed_answer_block"}),
        ("<ANSWER><一鸣惊人></ANSWER>", FIVE[:1], True, set()),
        ("一鸣惊人, 画蛇添足", None, False, {"no_answer_block"}),
        ("<answer></answer>", None, False, {"empty_answer_block"}),
        ("<answer><></answer>", None, False, {"empty_answer_block"}),
        ("", None, False, {"empty", "no_answer_block"}),
        ("<think><answer><错></answer></think>", None, False, {"think_block", "no_answer_block"}),
        ("<think>never closed <answer><一鸣惊人></answer>", None, False, {"unclosed_think"}),
    ],
)
def test_parse_ranked_list(raw: str, value: tuple[str, ...] | None, ok: bool, flags: set[str]):
    parsed = parse_ranked_list(raw, expected=5)
    assert (parsed.value, parsed.ok) == (value, ok), parsed
    assert flags <= set(parsed.flags), parsed


def test_parse_ranked_list_can_keep_duplicates_in_place():
    raw = "<answer><一鸣惊人, 画蛇添足, 一鸣惊人, 刻舟求剑></answer>"
    kept = parse_ranked_list(raw, expected=5, keep_duplicates=True)
    assert kept.value == ("一鸣惊人", "画蛇添足", "一鸣惊人", "刻舟求剑")
    assert {"duplicate_items", "fewer_items"} <= set(kept.flags)  # fewer DISTINCT items than asked
    assert parse_ranked_list(raw, expected=5).value == ("一鸣惊人", "画蛇添足", "刻舟求剑")


# --------------------------------------------------------------------------- small text helpers


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('"blame game"', ("blame game", {"quoted"})),
        ("“blame game”", ("blame game", {"quoted"})),
        ("「一鸣惊人」", ("一鸣惊人", {"quoted"})),
        ("**'x y'**", ("x y", {"markdown", "quoted"})),
        ("'n Appel und 'n Ei", ("'n Appel und 'n Ei", set())),  # a quote at one end only is text
        ('"', ('"', set())),
    ],
)
def test_unwrap(text: str, expected: tuple[str, set[str]]):
    assert unwrap(text) == expected


def test_strip_leading_label():
    assert strip_leading_label("Answer: spill the beans", ("answer",)) == ("spill the beans", True)
    assert strip_leading_label("**Output**： x", ("output",)) == ("x", True)
    assert strip_leading_label("Answers are hard", ("answer",)) == ("Answers are hard", False)


def test_normalise_text():
    assert normalise_text('  "Spill  the Beans."  ') == "spill the beans"
    assert normalise_text("ＡＢＣ") == "abc"


# --------------------------------------------------------------------------- never a crash

JUNK_PIECES = [
    "<think>",
    "</think>",
    "<answer>",
    "</answer>",
    "<",
    ">",
    "{",
    "}",
    '"Answer"',
    ":",
    "：",
    "A",
    "B",
    "E",
    "<positive>",
    "<negative>",
    "<correct>",
    "<wrong>",
    "Final Meaning:",
    "Thinking Process:",
    "\n",
    " ",
    ",",
    "，",
    "、",
    "一鸣惊人",
    "idiom1",
    "\\",
    "'",
    "“",
    "**",
    "[",
    "]",
    "\x00",
    "😀",
    "Answer: ",
    "Option",
]


def test_parsers_never_raise_on_junk():
    rng = random.Random(0)
    for _ in range(3000):
        raw = "".join(rng.choice(JUNK_PIECES) for _ in range(rng.randrange(0, 12)))
        for parsed in (
            parse_letter(raw, choices=("a", "b", "c", "d")),
            parse_tag_label(raw, POLARITY, CHINESE),
            parse_ranked_list(raw),
        ):
            assert parsed.raw == raw
            assert isinstance(parsed.flags, tuple) and list(parsed.flags) == sorted(set(parsed.flags))
            assert not (parsed.ok and parsed.value is None)
