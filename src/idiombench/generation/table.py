"""The generations table: results/generations/<model>/<benchmark>/<setting>.parquet.

One row per request (prompt x pass x sample), sorted by (prompt_id, pass, sample_index).
Everything in it is a function of the inputs, so an interrupted-and-resumed run writes
the same bytes as an uninterrupted one: wall-clock latencies are NOT columns (they are
in the cache shards per request and in the run summary under results/logs/).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TypedDict

import pyarrow as pa

from ..core.io import read_parquet, write_parquet

GENERATION_SCHEMA = pa.schema(
    [
        pa.field("prompt_id", pa.string(), nullable=False),
        pa.field("benchmark", pa.string(), nullable=False),
        pa.field("task", pa.string(), nullable=False),
        pa.field("setting", pa.string(), nullable=False),
        pa.field("item_id", pa.string(), nullable=False),
        pa.field("prompt_hash", pa.string(), nullable=False),
        pa.field("pass", pa.string(), nullable=False),  # "main" or an extra pass (e.g. "consistency")
        pa.field("sample_index", pa.int32(), nullable=False),
        pa.field("rotation", pa.int32(), nullable=False),  # the prompt's option rotation (0: as released)
        pa.field("text", pa.string(), nullable=False),  # raw model output ("" when failed)
        pa.field("prompt_tokens", pa.int64(), nullable=True),
        pa.field("completion_tokens", pa.int64(), nullable=True),
        pa.field("finish_reason", pa.string(), nullable=False),  # stop | length | error | backend's word
        pa.field("error", pa.string(), nullable=True),  # set when no text could be produced
        pa.field("request_key", pa.string(), nullable=False),  # the cache key (content address)
    ]
)

# One row of the table, as the generate stage builds it and read_generations gives it back
# (functional syntax: `pass` is a keyword).
GenerationRow = TypedDict(
    "GenerationRow",
    {
        "prompt_id": str,
        "benchmark": str,
        "task": str,
        "setting": str,
        "item_id": str,
        "prompt_hash": str,
        "pass": str,
        "sample_index": int,
        "rotation": int,
        "text": str,
        "prompt_tokens": int | None,
        "completion_tokens": int | None,
        "finish_reason": str,
        "error": str | None,
        "request_key": str,
    },
)

SORT_KEY = ("prompt_id", "pass", "sample_index")


def write_generations(path: str | Path, rows: Sequence[GenerationRow]) -> None:
    ordered = sorted(rows, key=lambda r: (r["prompt_id"], r["pass"], r["sample_index"]))  # SORT_KEY
    write_parquet(path, pa.Table.from_pylist(ordered, schema=GENERATION_SCHEMA))


def read_generations(path: str | Path) -> list[GenerationRow]:
    table = read_parquet(path, GENERATION_SCHEMA, what="generations table")
    rows: list[GenerationRow] = table.to_pylist()
    return rows
