"""A declared benchmark's build: its acquired files' records -> items, one task per split.

Per record (every problem a DataError naming the file, the record and the declaration key):
- item_id: the `fields.id` value (an integer written with at least 5 digits, 00042, so ids
  sort in order), else the record's line (the file's stem before it where a split has several
  files); unique within its split;
- input: the `fields.input` value, as text;
- choices (multiple_choice, cloze): the `fields.options` list of texts (options; a cloze's
  candidates), in the released order;
- answer: multiple_choice: the gold option's letter (the gold may be its letter, its 0-based
  index or its text); label: the label (a synonym of `labels` is read as its label,
  case-insensitively); cloze: the gold candidate as the candidates list writes it (the gold
  may be its 0-based index or its text, compared after `core.parsing.normalise_idiom`);
  generation: the first reference;
- references (generation): the `fields.gold` text, or its list of texts (every reference
  an output is scored against);
- fields: the record's fields (what a template may name), the options' list included;
- meta: where the record came from, the split, its resampling cluster, and the shape and
  parser (the reference systems write their answer in the parser's format: answers.py).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from ...core.errors import DataError
from ...core.items import OPTION_LETTERS, Item
from ...core.parsing import normalise_idiom
from ...core.schema import name_problem
from ...data.readers import read_csv_rows, read_json_file, read_jsonl, read_utf8
from ..base import BuildResult, BuildStats
from .schema import DataFile, Declaration

MAX_OPTIONS = len(OPTION_LETTERS)
MAX_CANDIDATES = 99  # a cloze's candidates: the parser reads a candidate's number of one or two digits


def file_format(entry: DataFile, path: Path) -> str:
    """The format of a data file: declared, else from its suffix (.json: an array, else JSON lines)."""
    if entry.format is not None:
        return entry.format
    suffix = Path(entry.file).suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix == ".json":
        return "json" if read_utf8(path).lstrip().startswith("[") else "jsonl"
    return "jsonl"


def read_records(path: Path, fmt: str) -> list[tuple[int, dict[str, object]]]:
    """(line or position, record) pairs in file order; a record that is not an object is an error."""
    if fmt == "jsonl":
        return read_jsonl(path)
    if fmt == "csv":
        rows = read_csv_rows(path, min_columns=1, header=True)
        header = rows[0][1]
        return [(line, dict(zip(header, cells, strict=False))) for line, cells in rows[1:]]
    data = read_json_file(path)
    if not isinstance(data, list):
        raise DataError(path, f"a JSON {type(data).__name__}", expected="a JSON array of records (or format: jsonl)")
    out = []
    for position, record in enumerate(data, start=1):
        if not isinstance(record, dict):
            raise DataError(path, f"record {position} is a {type(record).__name__}", row=position, expected="an object")
        out.append((position, record))
    return out


class Records:
    """Reading one file's records, every problem naming the file, the record and the key."""

    def __init__(self, path: Path, decl: Declaration, where: str) -> None:
        self.path, self.decl, self.where = path, decl, where

    def value(self, row: int, record: dict[str, object], key: str) -> object:
        field = getattr(self.decl.fields, key)
        if field not in record or record[field] is None:
            raise DataError(
                self.path, f"no field {field!r}", row=row, expected=f"the field named by fields.{key} in {self.where}"
            )
        return record[field]

    def text(self, row: int, record: dict[str, object], key: str) -> str:
        value = self.value(row, record, key)
        if isinstance(value, bool) or not isinstance(value, (str, int, float)) or not str(value).strip():
            raise DataError(
                self.path,
                f"field {getattr(self.decl.fields, key)!r} is {value!r}",
                row=row,
                expected=f"a non-empty text (fields.{key} in {self.where})",
            )
        return str(value)

    def texts(self, row: int, record: dict[str, object], key: str) -> list[str]:
        value = self.value(row, record, key)
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise DataError(
                self.path,
                f"field {getattr(self.decl.fields, key)!r} is {value!r}",
                row=row,
                expected=f"a list of non-empty texts (fields.{key} in {self.where})",
            )
        return value

    def options(self, row: int, record: dict[str, object], noun: str, most: int) -> list[str]:
        """The `fields.options` list (a multiple-choice item's options, a cloze's candidates):
        2 to `most` texts."""
        listed = self.texts(row, record, "options")
        if not 2 <= len(listed) <= most:
            raise DataError(
                self.path,
                f"{len(listed)} {noun}",
                row=row,
                expected=f"2 to {most} {noun} (fields.options in {self.where})",
            )
        return listed

    def item_id(self, row: int, record: dict[str, object], prefix: str) -> str:
        if self.decl.fields.id is None:
            return f"{prefix}{row:05d}"
        value = self.value(row, record, "id")
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return f"{value:05d}"
        if isinstance(value, str) and value.strip() and not any(c.isspace() or c == "/" for c in value):
            return value
        raise DataError(
            self.path,
            f"id {value!r}",
            row=row,
            expected=f"a non-negative integer or a text without spaces or '/' (fields.id in {self.where})",
        )

    def split(self, row: int, record: dict[str, object], default: str) -> str:
        if self.decl.fields.split is None:
            return default
        value = self.text(row, record, "split")
        problem = name_problem(value)
        if problem:
            raise DataError(
                self.path, f"split {problem}", row=row, expected=f"a split name (fields.split in {self.where})"
            )
        return value


def gold_option(records: Records, row: int, gold: object, options: list[str]) -> str:
    """The gold option as a letter: given as its letter, its 0-based index or its text."""
    n = len(options)
    index: int | None = None
    if isinstance(gold, int) and not isinstance(gold, bool):
        index = gold if 0 <= gold < n else None
    elif isinstance(gold, str):
        if gold in options:
            index = options.index(gold)
        elif gold.strip().upper() in OPTION_LETTERS[:n] and len(gold.strip()) == 1:
            index = OPTION_LETTERS.index(gold.strip().upper())
    if index is None:
        raise DataError(
            records.path,
            f"gold {gold!r} is none of the {n} options",
            row=row,
            expected=f"an option's letter (A-{OPTION_LETTERS[n - 1]}), 0-based index or text "
            f"(fields.gold in {records.where})",
        )
    return OPTION_LETTERS[index]


def gold_candidate(records: Records, row: int, gold: object, candidates: list[str]) -> str:
    """The gold candidate as the candidates list writes it: given as its 0-based index or its text."""
    found: str | None = None
    if isinstance(gold, int) and not isinstance(gold, bool):
        found = candidates[gold] if 0 <= gold < len(candidates) else None
    elif isinstance(gold, str):
        wanted = normalise_idiom(gold)
        found = next((c for c in candidates if wanted and normalise_idiom(c) == wanted), None)
    if found is None:
        raise DataError(
            records.path,
            f"gold {gold!r} is none of the {len(candidates)} candidates",
            row=row,
            expected=f"a candidate's 0-based index or text (fields.gold in {records.where})",
        )
    return found


def gold_label(records: Records, row: int, gold: object, decl: Declaration) -> str:
    labels = decl.label_names()
    by_word = {label.lower(): label for label in labels} | {w.lower(): lab for w, lab in decl.synonyms().items()}
    found = (
        by_word.get(str(gold).strip().lower()) if isinstance(gold, (str, int)) and not isinstance(gold, bool) else None
    )
    if found is None:
        raise DataError(
            records.path,
            f"gold {gold!r} is not a label",
            row=row,
            expected=f"one of {', '.join(labels)} or a synonym of one (labels in {records.where})",
        )
    return found


def template_fields(record: dict[str, object]) -> dict[str, object]:
    """The record's fields kept for the templates: JSON values (nested ones as they are)."""
    return {str(key): value for key, value in record.items() if not str(key).startswith("_")}


def make_item(
    name: str,
    decl: Declaration,
    records: Records,
    row: int,
    record: dict[str, object],
    task: str,
    item_id: str,
    file: str,
) -> Item:
    shape = decl.shape
    text = records.text(row, record, "input")
    gold = records.value(row, record, "gold")
    choices: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
    if shape == "multiple_choice":
        options = records.options(row, record, "options", MAX_OPTIONS)
        choices = tuple(options)
        answer = gold_option(records, row, gold, options)
    elif shape == "cloze":
        candidates = records.options(row, record, "candidates", MAX_CANDIDATES)
        choices = tuple(candidates)
        answer = gold_candidate(records, row, gold, candidates)
    elif shape == "generation":
        references = tuple(
            records.texts(row, record, "gold") if isinstance(gold, list) else [records.text(row, record, "gold")]
        )
        if not references:
            raise DataError(
                records.path,
                "no reference",
                row=row,
                expected=f"a reference text or a list of them (fields.gold in {records.where})",
            )
        answer = references[0]
    else:
        answer = gold_label(records, row, gold, decl)
    cluster = None
    if decl.resampling != "item":
        value = record.get(decl.resampling)
        cluster = None if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return Item(
        item_id=item_id,
        benchmark=name,
        task=task,
        language=decl.language,
        input=text,
        choices=choices,
        answer=answer,
        references=references,
        fields=template_fields(record),
        meta={
            "source_file": file,
            "source_row": row,
            "split": task,
            "cluster": cluster,
            "shape": shape,
            "parser": decl.parser_name,
        },
    )


def build(name: str, decl: Declaration, where: str, raw_dir: Path) -> BuildResult:
    """Every record of every declared file, as items of its split's task."""
    stats = BuildStats(name)
    tasks: dict[str, list[Item]] = {}
    first: dict[tuple[str, str], str] = {}
    files_per_split = Counter(entry.split for entry in decl.data)
    for entry in decl.data:
        path = raw_dir / entry.file
        records = Records(path, decl, where)
        fmt = file_format(entry, path)
        prefix = f"{Path(entry.file).stem}:" if decl.fields.split is None and files_per_split[entry.split] > 1 else ""
        for row, record in read_records(path, fmt):
            stats.read(entry.file)
            task = records.split(row, record, entry.split)
            item_id = records.item_id(row, record, prefix)
            if (task, item_id) in first:
                raise DataError(
                    path,
                    f"item id {item_id!r} of split {task!r} repeats {first[(task, item_id)]}",
                    row=row,
                    expected=f"ids unique within a split (fields.id in {where})",
                )
            first[(task, item_id)] = f"{entry.file}, record {row}"
            tasks.setdefault(task, []).append(make_item(name, decl, records, row, record, task, item_id, entry.file))
            stats.kept(task)
    stats.details["declaration"] = {"file": where, "shape": decl.shape, "parser": decl.parser_name}
    stats.details["splits"] = {task: len(items) for task, items in sorted(tasks.items())}
    if decl.shape == "generation":  # free texts: how many, not which
        stats.details["references"] = {
            task: sum(len(i.references) for i in items) for task, items in sorted(tasks.items())
        }
    else:
        stats.details["gold"] = {
            task: dict(sorted(Counter(str(item.answer) for item in items).items()))
            for task, items in sorted(tasks.items())
        }
    return BuildResult(tasks=tasks, stats=stats)
