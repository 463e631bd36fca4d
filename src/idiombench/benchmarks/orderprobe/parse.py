"""Reading OrderProbe outputs (docs/METRICS.md#11-items-identity-inputs-and-parsing).

zero_shot asks for one line of explanation; the prompts show the line's label
(判断含义：[解释], 判斷含義：[解釋], 意味：[説明], 의미: [설명]), which models often echo:
the label is removed, and a bracketed explanation `[...]` is unwrapped. cot and
three_shot ask for two lines, `Thinking Process: …` and `Final Meaning: …` (English
labels in every language): the explanation is the Final Meaning line; without one it
falls back to the whole output with echoed labels removed (`no_final_meaning_line`,
ok False). `<think>` blocks are removed first. Recovery is scored on the whole output
(ParseResult.raw), not only on the explanation.

ok means the requested shape: zero_shot one non-empty line; cot / three_shot exactly a
Thinking Process line followed by a Final Meaning line.
"""

from __future__ import annotations

import re

from ...core.generation_types import ItemContext
from ...core.parsing import ParseResult, clean_output, nonempty_lines, result, strip_leading_labels

ONE_LINE_SETTINGS = ("zero_shot",)
TWO_LINE_SETTINGS = ("cot", "three_shot")
# Labels the prompts show and models echo: the zero-shot format lines and the idiom lines.
ECHOED_LABELS = (
    "判断含义",
    "判斷含義",
    "意味",
    "의미",
    "含义",
    "含義",
    "成语",
    "成語",
    "内容",
    "내용",
    "解释",
    "解釋",
)
# "Final Meaning: x", "**Final Meaning:** x", "**Final Meaning**: x", "- final meaning：x"
# `\W*?[:：]`: non-word characters (whitespace among them) up to the first colon; written
# `\W*?\s*[:：]` it matched the same and was quadratic in a run of spaces without a colon.
THINKING = re.compile(r"^\W*thinking\s*+process\W*?[:：]\s*+(?:\*\*|__)?\s*+(.*)$", re.IGNORECASE)
FINAL = re.compile(r"^\W*final\s*+meaning\W*?[:：]\s*+(?:\*\*|__)?\s*+(.*)$", re.IGNORECASE)
BRACKETED = re.compile(r"^[\[【［](.*)[\]】］]$", re.DOTALL)


def remove_echoed_labels(text: str) -> tuple[str, bool]:
    """Leading echoed labels removed from every line; lines that held only a label dropped."""
    echoed = False
    lines = []
    for line in text.splitlines():
        stripped, removed = strip_leading_labels(line, ECHOED_LABELS)
        echoed |= removed
        if stripped.strip():
            lines.append(stripped.strip())
    return "\n".join(lines), echoed


def unbracket(text: str, flags: set[str]) -> str:
    """The text without the brackets around it; flag `bracketed` when it had them."""
    match = BRACKETED.match(text.strip())
    if match is None:
        return text
    flags.add("bracketed")
    return match.group(1).strip()


def parse_one_line(raw: str) -> ParseResult:
    text, flags = clean_output(raw, keep_forms=True)  # free text: compared with the references as written
    if not text:
        return result(None, False, raw, flags)
    lines = nonempty_lines(text)
    if len(lines) > 1:
        flags.add("multiple_lines")
    explanation, echoed = remove_echoed_labels(text)
    if echoed:
        flags.add("echoed_label")
    explanation = unbracket(explanation, flags)
    if not explanation:
        return result(None, False, raw, flags | {"label_only"})
    return result(explanation, len(lines) == 1, raw, flags)


def parse_two_lines(raw: str) -> ParseResult:
    text, flags = clean_output(raw, keep_forms=True)  # free text: compared with the references as written
    if not text:
        return result(None, False, raw, flags)
    lines = nonempty_lines(text)
    thinking = [i for i, line in enumerate(lines) if THINKING.match(line)]
    final = [i for i, line in enumerate(lines) if FINAL.match(line)]
    if not thinking:
        flags.add("no_thinking_process_line")
    if len(final) > 1:
        flags.add("several_final_meaning_lines")
    if final:
        index = final[-1]
        meaning = FINAL.match(lines[index]).group(1).strip()  # type: ignore[union-attr]
        if not meaning and index + 1 < len(lines):
            meaning = lines[index + 1]
            flags.add("final_meaning_on_next_line")
        meaning = unbracket(meaning, flags)
        if not meaning:
            return result(None, False, raw, flags | {"empty_final_meaning"})
        shape_ok = len(lines) == 2 and thinking == [0] and final == [1]
        if not shape_ok and len(lines) != 2:
            flags.add("not_two_lines")
        return result(meaning, shape_ok, raw, flags)
    flags.add("no_final_meaning_line")
    fallback = "\n".join(
        THINKING.match(line).group(1) if THINKING.match(line) else line  # type: ignore[union-attr]
        for line in lines
    )
    fallback, echoed = remove_echoed_labels(fallback)
    if echoed:
        flags.add("echoed_label")
    return result(fallback or None, False, raw, flags)


def parse_explanation(raw: str, setting: str) -> ParseResult:
    """The explanation to score, by prompt setting (zero_shot, cot, three_shot)."""
    if setting in ONE_LINE_SETTINGS:
        return parse_one_line(raw)
    if setting in TWO_LINE_SETTINGS:
        return parse_two_lines(raw)
    return result(None, False, raw if isinstance(raw, str) else "", {f"unknown_setting:{setting}"})


def parse_output(item: ItemContext, raw: str) -> ParseResult:
    return parse_explanation(raw, item.setting)
