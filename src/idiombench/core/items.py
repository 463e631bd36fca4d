"""The one normalised item schema shared by every benchmark.

An item is one unit a model is asked about. Core columns are typed; what differs
between benchmarks lives in two JSON objects: `fields` (inputs the prompt
templates may use) and `meta` (metadata for breakdowns and flags such as a
syntactic category, a permutation pattern or `duplicate_option`).
"""

from __future__ import annotations

import json
import string
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from .errors import DataError
from .io import read_parquet, write_parquet

ITEM_SCHEMA = pa.schema(
    [
        pa.field("item_id", pa.string(), nullable=False),
        pa.field("benchmark", pa.string(), nullable=False),
        pa.field("task", pa.string(), nullable=False),
        pa.field("language", pa.string(), nullable=False),
        pa.field("input", pa.string(), nullable=False),
        pa.field("choices", pa.list_(pa.string()), nullable=False),
        pa.field("answer", pa.string(), nullable=True),
        pa.field("references", pa.list_(pa.string()), nullable=False),
        pa.field("fields", pa.string(), nullable=False),
        pa.field("meta", pa.string(), nullable=False),
    ]
)


# ---------------------------------------------------------------- option rotations (CircularEval)
# Rotation r of a choice item shows at position i the option released at position (i + r) mod n;
# rotation 0 is the item as released. The option-order pass renders every rotation.

OPTION_LETTERS = tuple(string.ascii_uppercase)
T = TypeVar("T")


def rotate(options: Sequence[T], rotation: int) -> tuple[T, ...]:
    """The options in the order rotation `rotation` shows them."""
    shift = rotation % len(options) if options else 0
    return tuple(options[shift:]) + tuple(options[:shift])


def released_position(shown: int, rotation: int, n: int) -> int:
    """The released position of the option shown at `shown`."""
    return (shown + rotation) % n


def shown_position(released: int, rotation: int, n: int) -> int:
    """Where rotation `rotation` shows the option released at `released`."""
    return (released - rotation) % n


def rotated_answer(answer: str | None, n: int, rotation: int) -> str | None:
    """A gold option letter as rotation `rotation` shows it; any other gold (an option's text, a
    label) is the same under every rotation."""
    if answer is None or rotation % max(n, 1) == 0 or answer not in OPTION_LETTERS[:n]:
        return answer
    return OPTION_LETTERS[shown_position(OPTION_LETTERS.index(answer), rotation, n)]


class ItemRow(TypedDict):
    """One row of an items table (ITEM_SCHEMA): `fields` and `meta` as JSON text."""

    item_id: str
    benchmark: str
    task: str
    language: str
    input: str
    choices: list[str]
    answer: str | None
    references: list[str]
    fields: str
    meta: str


@dataclass(frozen=True)
class Item:
    """One benchmark item.

    item_id: unique within (benchmark, task) and stable across builds.
    language: the language the model answers in (BCP-47-like: zh-CN, en, ja ...).
    input: the main text shown to the model (scrambled idiom, source idiom, passage).
    choices: option texts for multiple choice, in presentation order (else empty).
    answer: the gold label (option letter, class label, canonical form) or None.
    references: gold texts for generation metrics (may be empty; then flagged in meta).
    """

    item_id: str
    benchmark: str
    task: str
    language: str
    input: str
    choices: tuple[str, ...] = ()
    answer: str | None = None
    references: tuple[str, ...] = ()
    # JSON objects each benchmark reads by its own keys (loosely typed until the benchmark
    # packages read them through their own models)
    fields: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    def to_row(self) -> ItemRow:
        return {
            "item_id": self.item_id,
            "benchmark": self.benchmark,
            "task": self.task,
            "language": self.language,
            "input": self.input,
            "choices": list(self.choices),
            "answer": self.answer,
            "references": list(self.references),
            "fields": json.dumps(self.fields, ensure_ascii=False, sort_keys=True),
            "meta": json.dumps(self.meta, ensure_ascii=False, sort_keys=True),
        }


def items_to_table(items: list[Item]) -> pa.Table:
    seen: set[str] = set()
    for item in items:
        if item.item_id in seen:
            raise ValueError(f"duplicate item_id {item.item_id!r} in {item.benchmark}/{item.task}")
        seen.add(item.item_id)
    return pa.Table.from_pylist([item.to_row() for item in items], schema=ITEM_SCHEMA)


def write_items(path: str | Path, items: list[Item]) -> None:
    write_parquet(path, items_to_table(items))


def read_items(path: str | Path, only: Collection[str] | None = None) -> list[Item]:
    """The items of a table (only those with an id in `only`, given: the others are not decoded)."""
    table = read_parquet(path, ITEM_SCHEMA, what="items table")
    numbers: list[int] = list(range(table.num_rows))
    if only is not None:
        chosen = pc.indices_nonzero(pc.is_in(table["item_id"], value_set=pa.array(sorted(only), pa.string())))
        table, numbers = table.take(chosen), chosen.to_pylist()
    items, seen = [], set()
    for row_number, row in zip(numbers, table.to_pylist(), strict=True):
        if row["item_id"] in seen:
            raise DataError(
                path, f"item_id {row['item_id']!r} repeated", row=row_number, expected="item ids unique within a task"
            )
        seen.add(row["item_id"])
        items.append(
            Item(
                item_id=row["item_id"],
                benchmark=row["benchmark"],
                task=row["task"],
                language=row["language"],
                input=row["input"],
                choices=tuple(row["choices"]),
                answer=row["answer"],
                references=tuple(row["references"]),
                fields=_json_object(path, row_number, "fields", row["fields"]),
                meta=_json_object(path, row_number, "meta", row["meta"]),
            )
        )
    return items


def _json_object(path: str | Path, row: int, column: str, text: str) -> dict[str, object]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        raise DataError(path, f"column {column} is not a JSON object", row=row, expected="a JSON object")
    return value
