"""Reading SemanticQA outputs. The released prompts end with `Output:` (or the like) and ask
for the answer only; how it is read depends on the task's kind (adapters.TaskAdapter.kind):

- mcq (IED, NCC): an option letter (idiombench.core.parsing.parse_letter), also from the
  authors' letter-colon form `B: Partly compositional`; an option's text maps to its letter.
- label (LCC): the relation label, matched case-insensitively against the labels of the
  item's taxonomy text (fields `taxonomy*`) and returned in the taxonomy's spelling; a
  label followed by a comment (`AntiBon **Explanation:** ...`) gives that label
  (`label_with_text`); an unknown label is kept as written (`unknown_label`, ok False).
- extraction (IEE, LCE, NCE, VMWE): the phrase: first non-empty line, leading label and
  surrounding quotes/punctuation removed, case kept (exact match compares
  normalise_answer of both sides).
- interpretation (IEI, LCI, NCI): the paraphrase text, leading label and surrounding
  quotes removed, inner punctuation kept.
Every kind: `<think>` blocks removed first; a leading `Answer:` / `Output:` label dropped.
"""

from __future__ import annotations

import re

from ...core.generation_types import ItemContext
from ...core.parsing import (
    LETTERS,
    ParseResult,
    clean_output,
    nonempty_lines,
    normalise_text,
    parse_letter,
    result,
    strip_leading_label,
    unwrap,
)
from .adapters import ADAPTERS

ANSWER_LABELS = (
    "output (label only)",
    "output (answer only, no analysis!)",
    "output option (option only, no analysis)",
    "output",
    "answer",
    "final answer",
    "label",
    "extracted idiom",
    "idiom",
    "collocation",
    "noun compound",
    "extracted vmwe (phrase only)",
    "verbal multiword expression (vmwe)",
    "vmwe",
    "short interpretation",
    "interpretation",
    "paraphrase",
)
EDGE_PUNCTUATION = " \t.,;:!?。，；：！？"


def normalise_answer(text: str) -> str:
    """Exact-match normal form: think blocks and a leading `Answer:`/`Output:` removed, NFKC,
    lower case, whitespace collapsed, surrounding quotes and punctuation stripped."""
    cleaned, _ = clean_output(text)
    cleaned, _ = strip_leading_label(cleaned, ANSWER_LABELS)
    return normalise_text(cleaned)


def taxonomy_labels(fields: dict[str, object]) -> list[str]:
    """Labels of the taxonomy texts in the item's fields (the `Label` column of each)."""
    labels: list[str] = []
    for key, value in sorted(fields.items()):
        if not (key == "taxonomy" or key.startswith("taxonomy_")) or not isinstance(value, str):
            continue
        rows = [line.split("\t") for line in value.splitlines() if line.strip()]
        if not rows:
            continue
        header = [cell.strip().lower() for cell in rows[0]]
        if "label" not in header:
            continue
        column = header.index("label")
        labels += [row[column].strip() for row in rows[1:] if len(row) > column and row[column].strip()]
    return list(dict.fromkeys(labels))


def _answer_text(raw: str, first_line: bool, keep_forms: bool = False) -> tuple[str, set[str]]:
    text, flags = clean_output(raw, keep_forms)
    if not text:
        return "", flags
    text, labelled = strip_leading_label(text, ANSWER_LABELS)
    if labelled:
        flags.add("answer_label")
    lines = nonempty_lines(text)
    if len(lines) > 1:
        flags.add("multiple_lines")
    if first_line and lines:
        text = lines[0]
        again, labelled = strip_leading_label(text, ANSWER_LABELS)
        if labelled:
            text = again
            flags.add("answer_label")
    elif lines:
        text = " ".join(lines)
    text, wrap_flags = unwrap(text)
    return text.strip(), flags | wrap_flags


def parse_label(raw: str, labels: list[str]) -> ParseResult:
    text, flags = _answer_text(raw, first_line=True)
    text = text.strip(EDGE_PUNCTUATION)
    if not text:
        return result(None, False, raw, flags | {"empty"})
    by_key = {label.lower(): label for label in labels}
    if text.lower() in by_key:
        return result(by_key[text.lower()], True, raw, flags)
    # "AntiBon **Explanation:** ...": the answer first, then a comment (like "B. Adam's ale")
    for label in sorted(labels, key=len, reverse=True):
        leading = re.match(re.escape(label) + r"(?![A-Za-z0-9])", text, re.IGNORECASE)
        if leading:
            rest = text[leading.end() :]
            others = "|".join(re.escape(other) for other in labels if other != label)
            if others and re.match(
                r"\s*(?:or|and|/|,|&)\s*[\"'(\[*]*(?:" + others + r")(?![A-Za-z0-9])", rest, re.IGNORECASE
            ):
                return result(None, False, raw, flags | {"multiple_labels"})  # "Magn or Bon"
            return result(label, True, raw, flags | {"label_with_text"})
    found = [label for label in labels if re.search(r"(?<![A-Za-z0-9])" + re.escape(label) + r"(?![A-Za-z0-9])", text)]
    if len(set(found)) == 1:
        return result(found[0], False, raw, flags | {"label_in_text"})
    if len(set(found)) > 1:
        return result(None, False, raw, flags | {"multiple_labels"})
    return result(text, False, raw, flags | ({"unknown_label"} if labels else set()))


def parse_extraction(raw: str) -> ParseResult:
    text, flags = _answer_text(raw, first_line=True, keep_forms=True)  # free text (exact match normalises both sides)
    stripped = text.strip(EDGE_PUNCTUATION)
    if stripped != text:
        flags.add("edge_punctuation")
    stripped, wrap_flags = unwrap(stripped)
    if not stripped:
        return result(None, False, raw, flags | wrap_flags | {"empty"})
    return result(stripped, "multiple_lines" not in flags, raw, flags | wrap_flags)


def parse_interpretation(raw: str) -> ParseResult:
    text, flags = _answer_text(raw, first_line=False, keep_forms=True)  # free text: METEOR etc. against the references
    if not text:
        return result(None, False, raw, flags | {"empty"})
    return result(text, True, raw, flags)


def parse_output(item: ItemContext, raw: str) -> ParseResult:
    adapter = ADAPTERS.get(item.task)
    if adapter is None:
        return result(None, False, raw if isinstance(raw, str) else "", {f"unknown_task:{item.task}"})
    if adapter.kind == "mcq":
        return parse_letter(raw, LETTERS[: len(item.choices) or 4], item.choices)
    if adapter.kind == "label":
        return parse_label(raw, taxonomy_labels(item.fields))
    if adapter.kind == "extraction":
        return parse_extraction(raw)
    return parse_interpretation(raw)
