"""Reading model outputs: the pieces every benchmark's parse.py shares.

Every parser takes raw text and returns a ParseResult; none raises on malformed output.
Every parser reads the output through `clean_output`, which normalises it first
(`normalise_output`: zero-width and direction marks removed, NFKC), so a full-width
`Ａｎｓｗｅｒ：Ｂ` or a `B` behind a right-to-left mark reads as plain text in every benchmark.
Parsers whose value is free text scored against references as written (an explanation, an
idiom, a phrase) skip NFKC (`keep_forms`): the references are not normalised either.
Parsing time is linear in the text's length: no regex here backtracks over a run twice
(possessive `*+` where two optional parts could share a run; tags paired in one pass), and
no loop copies the text once per step (bench/parse_scaling.py measures it on adversarial
texts; tests/unit/test_parsing_linear.py runs those texts at 1 MB).
- value: what was read (a letter, a label, an idiom list, an explanation), or None;
- ok:    the output followed the requested format (a lenient reading can still give a
         value with ok False: the scorer decides what to count);
- raw:   the text exactly as the model wrote it;
- flags: names of what was odd (`unclosed_think`, `multiple_letters`, ...), sorted.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

LETTERS = ("A", "B", "C", "D")


class ParseJson(TypedDict):
    value: object  # the parser's value (a tuple as a list)
    ok: bool
    raw: str
    flags: list[str]


@dataclass(frozen=True)
class ParseResult:
    value: Any  # the parser's value, its shape the benchmark's (loosely typed for their scorers)
    ok: bool
    raw: str
    flags: tuple[str, ...] = ()

    def to_json(self) -> ParseJson:
        value = list(self.value) if isinstance(self.value, tuple) else self.value
        return {"value": value, "ok": self.ok, "raw": self.raw, "flags": list(self.flags)}


def result(value: object, ok: bool, raw: str, flags: Sequence[str] | set[str]) -> ParseResult:
    return ParseResult(value, ok and value is not None, raw, tuple(sorted(set(flags))))


# --------------------------------------------------------------------------- think blocks

# Zero-width characters (space, non-joiner, joiner, word joiner, BOM) and bidirectional
# controls (marks, embeddings, overrides, isolates): invisible, and never part of an answer.
INVISIBLE = dict.fromkeys(
    map(ord, "\u200b\u200c\u200d\u2060\ufeff\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
)


def normalise_output(text: str, keep_forms: bool = False) -> tuple[str, set[str]]:
    """A model output as every parser reads it: zero-width and direction marks removed (flag
    `invisible_characters`), then NFKC (full-width forms and compatibility characters to their
    plain form: `Ａｎｓｗｅｒ：Ｂ` is `Answer:B`). keep_forms: no NFKC, for the parsers whose value is
    free text scored against references as written (an explanation, an idiom, a paraphrase: a
    copy of a reference holding `，` or `…` must score as that reference). Control characters
    and NUL are kept: they are text to the parsers."""
    visible = text.translate(INVISIBLE)
    flags = {"invisible_characters"} if len(visible) != len(text) else set()
    return (visible if keep_forms else unicodedata.normalize("NFKC", visible)), flags


THINK_TAG = re.compile(r"<(/?)think(?:ing)?>", re.IGNORECASE)


def strip_think(text: str) -> tuple[str, set[str]]:
    """Remove reasoning blocks. A closed <think>…</think> is removed (`think_block`; from an
    opening tag to the first closing tag after it); an unclosed <think> removes everything
    after it (`unclosed_think`: the answer was never written); a lone </think> (the chat
    template opened the block in the prompt) keeps only what follows its last occurrence
    outside any block (`think_close_without_open`). One pass over the tags."""
    flags: set[str] = set()
    if not isinstance(text, str):
        return "", {"not_text"}
    kept: list[str] = []
    kept_length = 0
    position = 0  # start of the text not yet kept or dropped
    in_block = False
    after_lone_close = None  # the length of the kept text up to the last lone </think>
    for tag in THINK_TAG.finditer(text):
        closing = tag.group(1) == "/"
        if in_block:
            if closing:
                flags.add("think_block")
                in_block, position = False, tag.end()
            continue
        end = tag.end() if closing else tag.start()
        kept.append(text[position:end])
        kept_length += end - position
        position = end
        if closing:
            after_lone_close = kept_length
        else:
            in_block = True
    if in_block:
        flags.add("unclosed_think")
    else:
        kept.append(text[position:])
    stripped = "".join(kept)
    if after_lone_close is not None:
        flags.add("think_close_without_open")
        stripped = stripped[after_lone_close:]
    return stripped.strip(), flags


def clean_output(raw: str, keep_forms: bool = False) -> tuple[str, set[str]]:
    """The output normalised (`normalise_output`, keep_forms as there), think blocks removed,
    outer whitespace stripped; flags `empty` when nothing is left. Every parser starts here."""
    if not isinstance(raw, str):
        return "", {"not_text", "empty"}
    normal, flags = normalise_output(raw, keep_forms)
    text, think_flags = strip_think(normal)
    flags |= think_flags
    if not text:
        flags.add("empty")
    return text, flags


def nonempty_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


# --------------------------------------------------------------------------- quotes, labels

QUOTE_PAIRS = {
    '"': '"',
    "'": "'",
    "“": "”",
    "‘": "’",
    "«": "»",
    "「": "」",
    "『": "』",
    "《": "》",
    "`": "`",
    "＂": "＂",
}
EMPHASIS = ("**", "__", "*", "_")  # markdown markers, the longer first


def unwrap(text: str) -> tuple[str, set[str]]:
    """Strip matching quote pairs and markdown emphasis (`**x**`, `__x__`, `*x*`, `_x_`, with
    text inside) around the whole text, repeatedly; the bounds move inward, nothing is copied
    until the end."""
    flags: set[str] = set()
    start, end = 0, len(text)

    def trim() -> None:
        nonlocal start, end
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1

    trim()
    while end - start >= 2:
        marker = next(
            (
                m
                for m in EMPHASIS
                if end - start > 2 * len(m) and text.startswith(m, start) and text.endswith(m, start, end)
            ),
            None,
        )
        if marker is not None:
            start, end = start + len(marker), end - len(marker)
            flags.add("markdown")
        elif QUOTE_PAIRS.get(text[start]) == text[end - 1]:
            start, end = start + 1, end - 1
            flags.add("quoted")
        else:
            break
        trim()
    return text[start:end], flags


def label_pattern(labels: Sequence[str]) -> re.Pattern[str]:
    """`Label:` at the start (ASCII or full-width colon, any case, optional markdown); runs of
    whitespace matched possessively (nothing after them can be whitespace)."""
    return re.compile(
        r"\s*+(?:\*\*|__)?(?:"
        + "|".join(re.escape(label) for label in labels)
        + r")(?:\*\*|__)?\s*+[:：]\s*+(?:\*\*|__)?",
        re.IGNORECASE,
    )


def strip_leading_label(text: str, labels: Sequence[str]) -> tuple[str, bool]:
    """Remove one leading `Label:` (ASCII or full-width colon, any case, optional markdown)."""
    found = label_pattern(labels).match(text)
    return (text[found.end() :].strip(), True) if found else (text, False)


def strip_leading_labels(text: str, labels: Sequence[str]) -> tuple[str, bool]:
    """Remove every leading `Label:` in a row (`含义：含义：x`), in one pass."""
    pattern, position = label_pattern(labels), 0
    while found := pattern.match(text, position):
        if found.end() == position:
            break
        position = found.end()
    return (text[position:].strip(), True) if position else (text, False)


# --------------------------------------------------------------------------- option letters

# Possessive runs (`*+`): what follows a whitespace run is never whitespace, so giving back
# part of the run can never help a match; without it `\s*[:：]?\s*` is quadratic in the run.
JSON_ANSWER = re.compile(r"""["']?(?i:answer)["']?\s*+[:：]\s*+["']?\(?\s*+([A-Za-z])\s*+\)?(?=[\s"'.,:)}\]]|$)""")
LABELLED_LETTER = re.compile(
    r"(?i:answer|option|choice|output|答案|选项|選項)(?:\s++(?i:is))?\s*+[:：]?\s*+[\"'(\[*]*+\s*+([A-Z])(?![A-Za-z0-9])"
)
LEADING_LETTER = re.compile(r"^[\"'(\[*]*([A-Z])[\])*\"']*(?:\s*[.:：)、,，\-]|\s*$|(?<=[B-Z])\s)(.*)$", re.DOTALL)
# "B or C", "B/C", "B, C": a second letter right after the first
ALTERNATIVE_LETTER = re.compile(
    r"^(?:(?i:or|and|/|,|&|或)\s*[\"'(\[*]*([A-Z])(?![A-Za-z0-9])"  # "or C", ", C"
    r"|[\"'(\[*]*([A-Z])\s*(?:[,/、&]|(?i:or|and)\b)"  # "B, C, or D"
    r"|[\"'(\[*]*([A-Z])[\])*\"'.]*$)"  # "C" alone
)
ARTICLE_A = re.compile(r"\s+(?!(?:or|and|nor)\b)[a-z]")
STANDALONE_LETTER = re.compile(r"(?<![A-Za-z0-9'’])([A-Z])(?![A-Za-z0-9'’])")


NOT_JSON = object()


def json_value(text: str) -> object:
    """`text` read as JSON, or NOT_JSON: invalid JSON, and also what Python's reader raises on
    beyond JSON's syntax (a number of over 4,300 digits, nesting deeper than the stack)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        return NOT_JSON


def _json_answers(text: str) -> list[str]:
    """Values of an "Answer" key in the JSON objects of the text (fenced or not)."""
    values = []
    for match in re.finditer(r"\{[^{}]*\}", text):
        obj = json_value(match.group(0))
        if isinstance(obj, dict):
            values += [v for k, v in obj.items() if str(k).strip().lower() == "answer" and isinstance(v, str)]
    return values


def _leading_letter(text: str, valid: list[str]) -> tuple[str | None, str, bool]:
    """(letter leading the text or None, the rest, whether a second letter follows: "B or C")."""
    leading = LEADING_LETTER.match(text)
    if not leading:
        return None, text, False
    rest = leading.group(2).strip()
    alternative = ALTERNATIVE_LETTER.match(rest)
    second = alternative and next((g for g in alternative.groups() if g), None)
    return leading.group(1), rest, bool(second and second in valid and second != leading.group(1))


def _one_letter(found: list[str], valid: list[str]) -> tuple[str | None, set[str]]:
    """The single distinct valid letter of `found`, or None with the reason."""
    upper = [f.upper() for f in found]
    distinct = list(dict.fromkeys(u for u in upper if u in valid))
    if not distinct:
        return None, {"letter_out_of_range"} if upper else set()
    if len(distinct) > 1:
        return None, {"multiple_letters"}
    return distinct[0], {"repeated_answer"} if len(upper) > 1 else set()


def parse_letter(raw: str, letters: Sequence[str] = LETTERS, choices: Sequence[str] = ()) -> ParseResult:
    """An option letter, read in this order:
    1. `{"Answer": "B"}` (valid JSON, fenced or not; the value may be "B. text" or "(B)");
    2. `"Answer": "B"` in broken JSON (`invalid_json`), `Answer: B`, `The answer is B`,
       `Option B`, `答案：B` (`answer_label`);
    3. a bare letter `B`, `(B)`, `**B**` (`bare_letter`) or a letter leading text,
       `B. Adam's ale` (`letter_with_text`);
    4. the exact text of one option (`option_text`; ok False);
    5. one standalone capital letter inside text, the article "A word" excepted
       (`letter_in_text`; ok False).
    Different letters at the first step that finds any: None, `multiple_letters`."""
    text, flags = clean_output(raw)
    valid = [letter.upper() for letter in letters]
    if not text:
        return result(None, False, raw, flags)
    json_values = _json_answers(text)
    if json_values:
        found = []
        ambiguous = False
        for value in json_values:
            inner, _ = unwrap(value)
            letter, _, two = _leading_letter(inner, valid)
            found.append(letter or inner)
            ambiguous |= two
        if ambiguous:
            return result(None, False, raw, flags | {"json_answer", "multiple_letters"})
        letter, why = _one_letter(found, valid)
        return result(letter, True, raw, flags | why | ({"json_answer"} if letter else {"json_answer_not_a_letter"}))
    for pattern, how in ((JSON_ANSWER, "answer_label"), (LABELLED_LETTER, "answer_label")):
        found = [m.group(1) for m in pattern.finditer(text)]
        if found:
            letter, why = _one_letter(found, valid)
            extra = {"invalid_json"} if "{" in text else set()
            if letter is not None or "multiple_letters" in why:
                return result(letter, True, raw, flags | why | extra | {how})
    unwrapped, wrap_flags = unwrap(text)
    flags |= wrap_flags
    letter, rest, two = _leading_letter(unwrapped, valid)
    if letter in valid:
        if two:
            return result(None, False, raw, flags | {"multiple_letters", "letter_with_text"})
        return result(letter, True, raw, flags | {"letter_with_text" if rest else "bare_letter"})
    if letter is not None and not rest:
        return result(None, False, raw, flags | {"letter_out_of_range"})
    if choices:
        normal = normalise_text(unwrapped)
        matches = [valid[i] for i, choice in enumerate(choices[: len(valid)]) if normalise_text(choice) == normal]
        if len(matches) == 1:
            return result(matches[0], False, raw, flags | {"option_text"})
    found = [
        m.group(1)
        for m in STANDALONE_LETTER.finditer(unwrapped)
        if m.group(1) in valid and not (m.group(1) == "A" and ARTICLE_A.match(unwrapped, m.end()))
    ]
    letter, why = _one_letter(found, valid)
    if letter is not None or why:
        return result(letter, False, raw, flags | why | {"letter_in_text"})
    return result(None, False, raw, flags | {"no_letter"})


# --------------------------------------------------------------------------- tag labels


def parse_tag_label(raw: str, labels: Sequence[str], fallback_words: dict[str, str] | None = None) -> ParseResult:
    """One of `<label>` tags (`<positive>` / `<negative>`). An echo of the format
    (`<positive> or <negative>`) is ignored (`echoed_format`). Several different tags:
    None, `multiple_labels`. No tag: a bare label word or a fallback word (e.g. 褒义)
    gives the value with ok False (`label_without_tags`)."""
    text, flags = clean_output(raw)
    if not text:
        return result(None, False, raw, flags)
    alternation = "|".join(re.escape(label) for label in labels)
    echo = re.compile(r"<(?:" + alternation + r")>\s*(?:or|/|或|或者)\s*<(?:" + alternation + r")>", re.IGNORECASE)
    text, echoes = echo.subn(" ", text)
    if echoes:
        flags.add("echoed_format")
    tags = [m.group(1).lower() for m in re.finditer(r"<\s*(" + alternation + r")\s*>", text, re.IGNORECASE)]
    distinct = list(dict.fromkeys(tags))
    if len(distinct) == 1:
        if len(tags) > 1:
            flags.add("repeated_label")
        rest = re.sub(r"<\s*(?:" + alternation + r")\s*>", "", text, flags=re.IGNORECASE).strip()
        if rest:
            flags.add("text_around_label")
        return result(distinct[0], True, raw, flags)
    if len(distinct) > 1:
        return result(None, False, raw, flags | {"multiple_labels"})
    words = {label.lower(): label.lower() for label in labels}
    words.update({k: v.lower() for k, v in (fallback_words or {}).items()})
    found = {
        words[key]
        for key in words
        if re.search(r"(?<![A-Za-z])" + re.escape(key) + r"(?![A-Za-z])", text, re.IGNORECASE)
    }
    if len(found) == 1:
        return result(found.pop(), False, raw, flags | {"label_without_tags"})
    if len(found) > 1:
        return result(None, False, raw, flags | {"multiple_labels", "label_without_tags"})
    return result(None, False, raw, flags | {"no_label"})


# --------------------------------------------------------------------------- ranked lists

ANSWER_TAG = re.compile(r"<(/?)answer>", re.IGNORECASE)


def answer_blocks(text: str) -> tuple[list[str], int | None]:
    """(the closed `<answer>…</answer>` blocks, each from an opening tag to the first closing
    tag after it; the end of the last opening tag no closing tag follows, or None). One pass."""
    blocks: list[str] = []
    opened: int | None = None
    last_open: int | None = None
    for tag in ANSWER_TAG.finditer(text):
        if tag.group(1) != "/":
            last_open = tag.end()
            if opened is None:
                opened = tag.end()
        elif opened is not None:
            blocks.append(text[opened : tag.start()])
            opened = None
    return blocks, (last_open if opened is not None else None)


LIST_SEPARATORS = re.compile(r"[,，、;；\n]+")
NUMBERING = re.compile(r"^\s*(?:\d+\s*[.)、:：]|[（(]\d+[)）])\s*")
PLACEHOLDER_NAMES = re.compile(r"^idiom\s*\d*$", re.IGNORECASE)


def parse_ranked_list(raw: str, expected: int = 5, keep_duplicates: bool = False) -> ParseResult:
    """Idioms from the last `<answer><i1, i2, …></answer>` block, best first. Inner angle
    brackets are optional (`no_inner_brackets`), each item may carry its own (`<i1>, <i2>`);
    separators: commas (ASCII or full-width), 、, semicolons, newlines. Flags:
    `no_answer_block`, `unclosed_answer_block` (read to the end), `fewer_items` /
    `more_items` distinct items than expected, `duplicate_items` (repeats are dropped, or
    kept in place with keep_duplicates, for scorers that rank by written position),
    `echoed_format` (the format's own `idiom1, idiom2` placeholders)."""
    text, flags = clean_output(raw)
    blocks, unclosed = answer_blocks(text)
    if blocks:
        content = blocks[-1]
        if len(blocks) > 1:
            flags.add("several_answer_blocks")
    else:
        if unclosed is None:
            return result(None, False, raw, flags | {"no_answer_block"})
        content = text[unclosed:]
        flags.add("unclosed_answer_block")
    content = content.strip()
    if content.startswith("<") and content.endswith(">"):
        content = content[1:-1]
    elif not re.match(r"^<[^<>]*>(\s*[,，、;；]\s*<[^<>]*>)*$", content):
        flags.add("no_inner_brackets")
    items = []
    for piece in LIST_SEPARATORS.split(content):
        piece = NUMBERING.sub("", piece.strip()).strip()
        piece = piece.strip("<>").strip()
        piece, _ = unwrap(piece)
        piece = piece.strip().rstrip("。.")
        if piece:
            items.append(piece)
    if not items:
        return result(None, False, raw, flags | {"empty_answer_block"})
    if all(PLACEHOLDER_NAMES.match(i) for i in items):
        return result(None, False, raw, flags | {"echoed_format"})
    distinct = list(dict.fromkeys(items))
    if len(distinct) < len(items):
        flags.add("duplicate_items")
        if not keep_duplicates:
            items = distinct
    if len(distinct) < expected:
        flags.add("fewer_items")
    elif len(distinct) > expected:
        flags.add("more_items")
    ok = "unclosed_answer_block" not in flags
    return result(tuple(items), ok, raw, flags)


# --------------------------------------------------------------------------- candidates

# Stripped from both ends of an idiom before comparing: `#`, quotes, brackets, punctuation.
IDIOM_EDGE_CHARACTERS = "#\"'“”‘’«»「」『』《》〈〉【】()[]<>`*.,;:!?。，、；：！？…·-—~"


def normalise_idiom(text: str) -> str:
    """For comparing idioms (a prediction, a gold idiom, a candidate, a dictionary word): NFKC,
    every whitespace character removed, `IDIOM_EDGE_CHARACTERS` stripped from both ends. No
    traditional/simplified conversion."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(text.split())
    return text.strip(IDIOM_EDGE_CHARACTERS)


def _candidate_in_text(raw: str, candidates: tuple[str, ...], flags: set[str]) -> ParseResult:
    """No answer block: the one candidate the (think-stripped) text names, if exactly one."""
    text, _ = clean_output(raw)
    text = normalise_idiom(text)
    named = [c for c in dict.fromkeys(candidates) if normalise_idiom(c) and normalise_idiom(c) in text]
    if len(named) == 1:
        return result((named[0],), False, raw, flags | {"candidate_in_text"})
    return result(None, False, raw, flags | ({"several_candidates_in_text"} if named else set()))


def parse_candidate_choice(raw: str, candidates: tuple[str, ...]) -> ParseResult:
    """One of `candidates` (a cloze with candidates): the last `<answer><idiom></answer>` block
    with one idiom (value: a one-element tuple); an idiom that is not a candidate is flagged
    `not_a_candidate` (ok False), several idioms `several_idioms`. Read leniently (ok False): a
    candidate's number 1-n in the block (`candidate_number`), and, without any answer block, the
    one candidate the text names (`candidate_in_text`; two or more named: None)."""
    parsed = parse_ranked_list(raw, expected=1)
    if not candidates:
        return parsed
    flags = set(parsed.flags)
    if parsed.value is None:
        if "no_answer_block" in flags:
            return _candidate_in_text(raw, candidates, flags)
        return parsed
    number = re.fullmatch(r"\d{1,2}", parsed.value[0]) if len(parsed.value) == 1 else None
    if number and 1 <= int(number.group(0)) <= len(candidates):
        return result((candidates[int(number.group(0)) - 1],), False, raw, flags | {"candidate_number"})
    if len(parsed.value) > 1:
        flags.add("several_idioms")
    if normalise_idiom(parsed.value[0]) not in {normalise_idiom(c) for c in candidates}:
        flags.add("not_a_candidate")
    ok = parsed.ok and "not_a_candidate" not in flags and len(parsed.value) == 1
    return result(parsed.value, ok, raw, flags - {"fewer_items", "more_items"})


# --------------------------------------------------------------------------- text answers


def normalise_text(text: str) -> str:
    """For comparing short answers: NFKC, lower case, whitespace collapsed, surrounding
    quotes and punctuation removed."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = " ".join(text.split())
    return text.strip(" \t\"'“”‘’«»「」『』`.,;:!?。，；：！？")


def parse_free_text(raw: str) -> ParseResult:
    """A free-text answer (a declared generation benchmark): the output normalised, think blocks
    removed, stripped; nothing (flag `empty`) when nothing is left."""
    text, flags = clean_output(raw)
    return result(text or None, bool(text), raw, flags)


# --------------------------------------------------------------------------- label words

ANSWER_LABELS = ("answer", "label", "final answer", "答案", "回答")


def parse_label_word(raw: str, labels: Sequence[str], synonyms: dict[str, str] | None = None) -> ParseResult:
    """A label written as a word (`positive`, `Answer: positive`, `**Positive**`), compared after
    `normalise_text`: the whole answer one label or a synonym (value: the label in lower case,
    as `parse_tag_label` gives it). Otherwise `parse_tag_label`'s reading (a `<label>` tag, or one
    label word inside text), with ok False: not the requested format (`label_in_text`)."""
    text, flags = clean_output(raw)
    if not text:
        return result(None, False, raw, flags)
    words = {normalise_text(label): label.lower() for label in labels}
    words.update({normalise_text(k): v.lower() for k, v in (synonyms or {}).items()})
    bare, wrap_flags = unwrap(text)
    bare, labelled = strip_leading_labels(bare, ANSWER_LABELS)
    bare, more_flags = unwrap(bare)
    found = words.get(normalise_text(bare))
    if found is not None:
        extra = wrap_flags | more_flags | ({"answer_label"} if labelled else set())
        return result(found, True, raw, flags | extra)
    fallback = parse_tag_label(raw, labels, synonyms)
    return result(fallback.value, False, raw, set(fallback.flags) | {"label_in_text"})
