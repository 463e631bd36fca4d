"""Task 1, Multiple-Choice Idiom Equivalence: `<group>/mcq_data_mcq_data_<Source>_<Target>.json`.

`original_positions[i]` is the pre-shuffle slot of the option now at position i+1
(slot 1 = reference, 2 = LT, 3 = LC, 4 = CA). The reading is verified on every item
against `correct_position`/`correct_option`; it disagrees only where the target idiom's
text fills two options and `correct_position` points at the other copy (`duplicate_option`).
Any other disagreement is a DataError. Row numbers are 0-based JSON array indices.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...core.errors import DataError
from ...core.items import Item
from ...data.readers import require_keys
from ..base import BuildStats
from .config import GIdiomAlignBuild
from .languages import canonical_name, direction, direction_id, language_code
from .pairs import BENCHMARK, json_records, string_field
from .text import repair_mojibake

TASK = "mcq"
FILE_PREFIX = "mcq_data_mcq_data_"
MCQ_FIELDS = (
    "instruction",
    "source_idiom",
    "source_language",
    "target_language",
    "target_idiom",
    "options_detail",
    "correct_option",
    "correct_position",
    "original_positions",
)
# Present in every released item, always empty; reported if ever not.
UNUSED_FIELDS = ("input", "output")
LETTERS = ("A", "B", "C", "D")
SLOT_TYPES = {1: "reference", 2: "LT", 3: "LC", 4: "CA"}
# Target group (release folder) -> the target languages it may hold; None: any other language.
GROUP_TARGETS: dict[str, set[str] | None] = {"Zh-target": {"Chinese"}, "En-target": {"English"}, "Other targets": None}


@dataclass(frozen=True)
class DecodedOptions:
    option_types: dict[str, str]  # letter -> reference / LT / LC / CA
    reference_letter: str
    target_letters: list[str]  # letters whose released text equals the released target idiom
    duplicate_option: bool  # correct_option is a copy of the target text at a distractor slot


def mcq_languages(path: Path) -> tuple[str, str]:
    stem = path.stem
    parts = stem.removeprefix(FILE_PREFIX).split("_")
    if not stem.startswith(FILE_PREFIX) or len(parts) != 2:
        raise DataError(
            path, f"file name {path.name!r} is not an MCQ file name", expected=f"{FILE_PREFIX}<Source>_<Target>.json"
        )
    return canonical_name(parts[0], path), canonical_name(parts[1], path)


def check_group(path: Path, group: str, target_language: str) -> None:
    if group not in GROUP_TARGETS:
        raise DataError(path, f"unknown target group folder {group!r}", expected=" / ".join(GROUP_TARGETS))
    allowed = GROUP_TARGETS[group]
    high_resource = set().union(*(t for t in GROUP_TARGETS.values() if t))
    if (allowed is not None and target_language not in allowed) or (
        allowed is None and target_language in high_resource
    ):
        raise DataError(path, f"target language {target_language} does not belong in folder {group!r}")


def decode_options(path: Path, row: int, record: dict[str, object]) -> DecodedOptions:
    """Option types from `original_positions`, checked against `correct_position`/`correct_option`."""
    options = record["options_detail"]
    if (
        not isinstance(options, dict)
        or tuple(options) != LETTERS
        or not all(isinstance(t, str) for t in options.values())
    ):
        raise DataError(
            path,
            f"options_detail is {options!r}",
            row=row,
            expected="an object with string options A, B, C, D in order",
        )
    positions = record["original_positions"]
    if not isinstance(positions, list) or sorted(p for p in positions if isinstance(p, int)) != [1, 2, 3, 4]:
        raise DataError(path, f"original_positions is {positions!r}", row=row, expected="a permutation of [1, 2, 3, 4]")
    correct_option, correct_position = record["correct_option"], record["correct_position"]
    if correct_option not in LETTERS or not isinstance(correct_position, int) or not 1 <= correct_position <= 4:
        raise DataError(
            path,
            f"correct_option {correct_option!r}, correct_position {correct_position!r}",
            row=row,
            expected="a letter A-D and a position 1-4",
        )
    if LETTERS[correct_position - 1] != correct_option:
        raise DataError(
            path,
            f"correct_option {correct_option} but correct_position {correct_position}",
            row=row,
            expected=f"correct_option {LETTERS[correct_position - 1]} for position {correct_position}",
        )
    option_types = {letter: SLOT_TYPES[slot] for letter, slot in zip(LETTERS, positions, strict=False)}
    reference_letter = LETTERS[positions.index(1)]
    target = record["target_idiom"]
    if options[reference_letter] != target:
        raise DataError(
            path,
            f"the reference slot (original position 1) is option {reference_letter} = {options[reference_letter]!r}",
            row=row,
            expected=f"the target idiom {target!r} there",
        )
    target_letters = [letter for letter in LETTERS if options[letter] == target]
    duplicate_option = correct_option != reference_letter
    if duplicate_option and options[correct_option] != target:
        raise DataError(
            path,
            f"correct_position {correct_position} ({correct_option} = {options[correct_option]!r}, "
            f"a {option_types[correct_option]} slot) disagrees with original_positions {positions}",
            row=row,
            expected=f"correct_position {positions.index(1) + 1} ({reference_letter}, the reference slot), "
            "or an option whose text equals the target idiom",
        )
    return DecodedOptions(option_types, reference_letter, target_letters, duplicate_option)


def check_instruction(path: Path, row: int, record: dict[str, Any]) -> None:
    """The released instruction is the prompt: it must show this item's source idiom and options."""
    instruction = record["instruction"]
    expected = [f"- Source Idiom: {record['source_idiom']}\n"]
    expected += [f"\n{letter}. {text}\n" for letter, text in record["options_detail"].items()]
    for segment in expected:
        if segment not in instruction:
            raise DataError(
                path,
                f"instruction does not contain {segment.strip()!r}",
                row=row,
                expected="the item's source idiom and options A-D",
            )


def repaired(value: str, cfg: GIdiomAlignBuild) -> str:
    return repair_mojibake(value) if cfg.repair_mojibake else value


PairRows = dict[tuple[str, str, str, str], tuple[str, int]]


@dataclass(frozen=True)
class _McqFile:
    """One MCQ file: its folder and the translation direction its name gives."""

    path: Path
    group: str
    source_language: str
    target_language: str
    source_code: str
    target_code: str


@dataclass(frozen=True)
class _Repaired:
    """An item's texts after the mojibake repair (when configured)."""

    fixed: dict[str, str]  # instruction, source_idiom, target_idiom
    choices: tuple[str, ...]
    repaired_fields: list[str]  # names of the fields the repair changed (option_<letter> for options)


def _mcq_file(path: Path, group: str) -> _McqFile:
    source_language, target_language = mcq_languages(path)
    check_group(path, group, target_language)
    source_code, target_code = language_code(source_language, path), language_code(target_language, path)
    return _McqFile(path, group, source_language, target_language, source_code, target_code)


def _check_record(file: _McqFile, row: int, record: dict[str, Any]) -> DecodedOptions:
    """The record's fields, languages, options and instruction checked; its options decoded."""
    path = file.path
    require_keys(path, row, record, MCQ_FIELDS)
    for key in ("instruction", "source_idiom", "source_language", "target_language", "target_idiom"):
        string_field(path, row, record, key)
    for key, name in (("source_language", file.source_language), ("target_language", file.target_language)):
        if canonical_name(record[key], path, row) != name:
            raise DataError(path, f"{key} is {record[key]!r}", row=row, expected=f"{name}, as the file name says")
    decoded = decode_options(path, row, record)
    check_instruction(path, row, record)
    return decoded


def _flag_release_quirks(
    stats: BuildStats, example: dict[str, Any], record: dict[str, Any], decoded: DecodedOptions, texts: list[str]
) -> None:
    """Flags for what the release holds as released: unused fields, duplicate and blank options."""
    for key in UNUSED_FIELDS:
        if record.get(key):
            stats.flag("unused_field_nonempty", {**example, "field": key, "value": record[key]})
    if decoded.duplicate_option:
        stats.flag(
            "duplicate_option",
            {
                **example,
                "correct_option": record["correct_option"],
                "reference_letter": decoded.reference_letter,
                "target_letters": decoded.target_letters,
                "target_idiom": record["target_idiom"],
            },
        )
    distractors = [t for t in texts if t != record["target_idiom"]]
    if len(set(distractors)) < len(distractors):
        stats.flag("repeated_distractor_text", {**example, "options": texts})
    if any(t != t.strip() for t in texts):
        stats.flag("option_surrounding_whitespace_kept", {**example, "options": texts})
    if any(not t.strip() for t in [*texts, record["source_idiom"], record["target_idiom"]]):
        stats.flag("empty_field", {**example})


def _repair_texts(record: dict[str, Any], texts: list[str], cfg: GIdiomAlignBuild) -> _Repaired:
    fixed = {key: repaired(record[key], cfg) for key in ("instruction", "source_idiom", "target_idiom")}
    choices = tuple(repaired(t, cfg) for t in texts)
    repaired_fields = [k for k in fixed if fixed[k] != record[k]]
    repaired_fields += [
        f"option_{letter}" for letter, old, new in zip(LETTERS, texts, choices, strict=False) if old != new
    ]
    return _Repaired(fixed, choices, repaired_fields)


def _mcq_item(
    file: _McqFile,
    row: int,
    record: dict[str, Any],
    decoded: DecodedOptions,
    texts: _Repaired,
    target_letters: list[str],
    join: tuple[str, int] | None,
) -> Item:
    fixed, source_code, target_code = texts.fixed, file.source_code, file.target_code
    return Item(
        item_id=f"mcq/{direction_id(source_code, target_code)}/{row:05d}",
        benchmark=BENCHMARK,
        task=TASK,
        language=target_code,
        input=fixed["source_idiom"],
        choices=texts.choices,
        answer=record["correct_option"],
        references=(fixed["target_idiom"],),
        fields={
            "instruction": fixed["instruction"],
            "source_idiom": fixed["source_idiom"],
            "source_language": file.source_language,
            "target_language": file.target_language,
            "target_idiom": fixed["target_idiom"],
        },
        meta={
            "group": file.group,
            "direction": direction(source_code, target_code),
            "source_lang": source_code,
            "target_lang": target_code,
            "file": file.path.name,
            "row": row,
            "option_types": decoded.option_types,
            "reference_letter": decoded.reference_letter,
            "target_letters": target_letters,
            "duplicate_option": decoded.duplicate_option,
            "original_positions": record["original_positions"],
            "correct_position": record["correct_position"],
            "pair": join[0] if join else None,
            "pair_row": join[1] if join else None,
            "mojibake_repaired": texts.repaired_fields,
        },
    )


def _record_item(
    file: _McqFile,
    row: int,
    record: dict[str, Any],
    cfg: GIdiomAlignBuild,
    stats: BuildStats,
    pair_rows: PairRows,
) -> Item:
    decoded = _check_record(file, row, record)
    example = {"group": file.group, "file": file.path.name, "row": row}
    texts = list(record["options_detail"].values())
    _flag_release_quirks(stats, example, record, decoded, texts)
    repair = _repair_texts(record, texts, cfg)
    fixed = repair.fixed
    # after the repair: a released LT option in proper UTF-8 can equal a mojibake target (mcq/fi-fr/00122)
    target_letters = [
        letter for letter, text in zip(LETTERS, repair.choices, strict=False) if text == fixed["target_idiom"]
    ]
    if len(target_letters) > 1:
        stats.flag(
            "target_text_in_several_options",
            {**example, "target_letters": target_letters, "duplicate_option": decoded.duplicate_option},
        )
    if repair.repaired_fields:
        stats.flag(
            "mojibake_repaired", {**example, "fields": repair.repaired_fields, "source_idiom": record["source_idiom"]}
        )
    key = (file.source_code, file.target_code, fixed["source_idiom"].strip(), fixed["target_idiom"].strip())
    join = pair_rows.get(key)
    if join is None:
        stats.flag("mcq_not_in_aligned_pairs", {**example, "source_idiom": fixed["source_idiom"]})
    return _mcq_item(file, row, record, decoded, repair, target_letters, join)


def read_mcq_file(
    path: Path,
    group: str,
    cfg: GIdiomAlignBuild,
    stats: BuildStats,
    pair_rows: PairRows,
) -> list[Item]:
    """Items of one direction. `pair_rows` maps (source code, target code, source idiom,
    target idiom), as normalised in the aligned pairs, to the pair file and row."""
    file = _mcq_file(path, group)
    items: list[Item] = []
    for row, record in enumerate(json_records(path)):
        stats.read("Multiple-Choice_Idiom_Equivalence")
        items.append(_record_item(file, row, record, cfg, stats, pair_rows))
        stats.kept("Multiple-Choice_Idiom_Equivalence")
    return items
