"""Reading G-IdiomAlign outputs.

- mcq (Task 1): the option letter, from `{"Answer": "B"}` (the released output format), a
  bare letter, `Answer: B`, `B. text` ... (idiombench.core.parsing.parse_letter); an answer
  written as an option's text maps to its letter (flag `option_text`, ok False). No letter:
  value None, counted as invalid by the scorer (docs/METRICS.md#22-task-1-multiple-choice).
- no_gloss / with_gloss (Task 2): one target-language idiom. Think blocks are removed, a
  leading label (`Idiom:`, `Answer:`, `Output:`, `<language> idiom:`) is dropped, the first
  non-empty line is the idiom (`multiple_lines` when more follow) and matching quotes or
  markdown around it are removed. Trailing punctuation is kept: some gold idioms end with
  `!`, `?`, `.` or `…`.
"""

from __future__ import annotations

from ...core.generation_types import ItemContext
from ...core.parsing import (
    LETTERS,
    ParseResult,
    clean_output,
    nonempty_lines,
    parse_letter,
    result,
    strip_leading_label,
    unwrap,
)

GENERATION_SETTINGS = ("no_gloss", "with_gloss")
IDIOM_LABELS = ("idiom", "target idiom", "answer", "output", "equivalent idiom", "equivalent", "translation")


def parse_idiom(raw: str, target_language: str | None = None) -> ParseResult:
    text, flags = clean_output(raw, keep_forms=True)  # free text: BLEU/chrF/cosine against the gold as written
    if not text:
        return result(None, False, raw, flags)
    lines = nonempty_lines(text)
    if len(lines) > 1:
        flags.add("multiple_lines")
    line = lines[0]
    labels = (*IDIOM_LABELS, *((f"{target_language} idiom", target_language) if target_language else ()))
    line, labelled = strip_leading_label(line, labels)
    if labelled:
        flags.add("label")
        if not line and len(lines) > 1:
            line = lines[1]
    line, wrap_flags = unwrap(line)
    flags |= wrap_flags
    if not line:
        return result(None, False, raw, flags | {"empty"})
    return result(line, len(lines) == 1, raw, flags)


def parse_output(item: ItemContext, raw: str) -> ParseResult:
    if item.setting == "mcq":
        return parse_letter(raw, LETTERS[: len(item.choices) or 4], item.choices)
    if item.setting in GENERATION_SETTINGS:
        return parse_idiom(raw, item.fields.get("target_language"))
    return result(None, False, raw if isinstance(raw, str) else "", {f"unknown_setting:{item.setting}"})
