"""Sequential task compositions (paper §4.5, tables 5 and 6): one output holds an extracted
phrase and then a judgement (option letter) or an interpretation of it.

The released templates (prompts/sequential_task_*) ask for two labelled lines, e.g.

    Extracted Idiom: <phrase>
    Option: <letter>

and the authors' published results hold the same two parts already parsed, as a JSON
object (`{"extracted_idiom": ..., "option": ...}`); both forms are read here.

The released instances support four compositions, each over the items of one atomic task
(their records are the released records of that task; the authors' result files match them
by content): IE extraction + judgement (idiom_detection items: gold phrase `idiom`, gold
option `target`), NC extraction + judgement (noun_compound_compositionality), IE extraction
+ interpretation (idiom_paraphrase, 263 of the authors' 300 records are released items) and
LC extraction + interpretation (collocation_interpretation). LC extraction + categorization
at 4/8/16 classes (table 6, LC rows) used item sets that are not released.

Scores (consistent with table 5: Overall = Ext x Cond):
  Ext     = share of rows whose extracted phrase equals the gold phrase (normalised);
  Cond    = the second step's score averaged over the correctly extracted rows;
  Overall = the second step's score, 0 where the extraction failed, averaged over all rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ...core.parsing import clean_output, json_value, unwrap

Second = Literal["judgement", "interpretation"]


@dataclass(frozen=True)
class Composition:
    task: str  # the atomic task whose items (and gold) it uses
    name: str
    paper_table: str
    phrase_type: str  # IE / NC / LC, as the paper's tables say
    phrase_field: str  # item.fields key of the gold phrase
    second: Second
    extraction_keys: tuple[str, ...]  # JSON keys (the authors' result files) and line labels (templates)
    second_keys: tuple[str, ...]


COMPOSITIONS: dict[str, Composition] = {
    c.task: c
    for c in (
        Composition(
            "idiom_detection",
            "IE extraction + judgement",
            "6",
            "IE",
            "idiom",
            "judgement",
            ("extracted_idiom", "extracted idiom"),
            ("option", "selected option"),
        ),
        Composition(
            "noun_compound_compositionality",
            "NC extraction + judgement",
            "6",
            "NC",
            "noun_compound",
            "judgement",
            ("extracted_collocation", "extracted_noun_compound", "extracted noun compound"),
            ("category", "selected_option", "selected option", "option"),
        ),
        Composition(
            "idiom_paraphrase",
            "IE extraction + interpretation",
            "5",
            "IE",
            "idiom",
            "interpretation",
            ("extracted_idiom", "extracted idiom"),
            ("paraphrase",),
        ),
        Composition(
            "collocation_interpretation",
            "LC extraction + interpretation",
            "5",
            "LC",
            "collocation",
            "interpretation",
            ("extracted_collocation", "extracted collocation"),
            ("paraphrase",),
        ),
    )
}


@dataclass(frozen=True)
class TwoParts:
    extracted: str | None
    second: str | None
    ok: bool
    flags: tuple[str, ...]


def _key(text: str) -> str:
    return " ".join(text.replace("_", " ").lower().split())


def _from_json(text: str, comp: Composition) -> tuple[str | None, str | None] | None:
    obj = json_value(text)
    if not isinstance(obj, dict):
        return None
    values = {_key(str(k)): v for k, v in obj.items()}

    def pick(keys: tuple[str, ...]) -> str | None:
        for key in keys:
            value = values.get(_key(key))
            if isinstance(value, str) and value.strip():
                return value.strip()
        return None

    return pick(comp.extraction_keys), pick(comp.second_keys)


def _from_lines(text: str, comp: Composition) -> tuple[str | None, str | None]:
    found: dict[str, str] = {}
    labels = {
        _key(k): part
        for part, keys in (("extracted", comp.extraction_keys), ("second", comp.second_keys))
        for k in keys
    }
    for line in text.splitlines():
        labelled = _labelled_line(line)
        if labelled is None:
            continue
        part = labels.get(_key(labelled[0]))
        if part and part not in found and labelled[1]:
            found[part] = labelled[1]
    return found.get("extracted"), found.get("second")


LABEL = re.compile(r"[A-Za-z _]+")
COLON = re.compile(r"[:：]")


def _labelled_line(line: str) -> tuple[str, str] | None:
    """(label, value) of `Label: value` (`**Label:** value`, full-width colon too): the label is
    letters, spaces and underscores before the first colon. Read by position: the regex it
    replaces (a lazy label of letters and spaces, then optional spaces and the colon) was
    quadratic in a run of spaces."""
    colon = COLON.search(line)
    if colon is None:
        return None
    label = line[: colon.start()].strip()
    label = label.removeprefix("**").removesuffix("**").strip()
    if not LABEL.fullmatch(label):
        return None
    value = line[colon.end() :].strip().removeprefix("**").strip()
    return label, value


def parse_two_parts(raw: str, comp: Composition) -> TwoParts:
    """The extracted phrase and the second part (option or paraphrase, still raw) of one output."""
    # a JSON object first (the authors' parsed results; a value may itself hold "</think>")
    parsed = _from_json(raw.strip(), comp) if isinstance(raw, str) else None
    if parsed is not None:
        flags = {"json_object"}
    else:
        text, flags = clean_output(raw, keep_forms=True)  # the phrase and a paraphrase are free text
        if not text:
            return TwoParts(None, None, False, tuple(sorted(flags)))
        parsed = _from_json(text, comp)
        if parsed is not None:
            flags.add("json_object")
        else:
            parsed = _from_lines(text, comp)
    extracted, second = parsed
    if extracted is not None:
        extracted, _ = unwrap(extracted)
    if extracted is None:
        flags.add("no_extraction")
    if second is None:
        flags.add("no_second_part")
    ok = extracted is not None and second is not None
    return TwoParts(extracted or None, second, ok, tuple(sorted(flags)))
