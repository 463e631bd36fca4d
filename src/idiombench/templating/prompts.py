"""Rendered prompts: the output of `render`, the input of `generate`.

results/prompts/<benchmark>/<setting>.parquet holds one row per (item, setting):
the chat messages, a stable hash of them, the template they came from and the
few-shot exemplars used; and, for the settings an option-order pass runs on, one row per
further rotation of a choice item's options (`rotation` 1..n-1, prompt id `<...>@r<rotation>`;
docs/METRICS.md#7-option-order-robustness).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from ..core.errors import DataError
from ..core.generation_types import Message
from ..core.io import read_parquet, write_parquet

PROMPT_SCHEMA = pa.schema(
    [
        pa.field("prompt_id", pa.string(), nullable=False),  # "<benchmark>/<task>/<setting>/<item_id>"
        pa.field("benchmark", pa.string(), nullable=False),
        pa.field("task", pa.string(), nullable=False),
        pa.field("setting", pa.string(), nullable=False),
        pa.field("item_id", pa.string(), nullable=False),
        pa.field("language", pa.string(), nullable=False),
        pa.field("messages", pa.string(), nullable=False),  # JSON list of {"role", "content"}
        pa.field("prompt_hash", pa.string(), nullable=False),
        pa.field("template_id", pa.string(), nullable=False),
        pa.field("template_hash", pa.string(), nullable=False),
        pa.field("exemplar_ids", pa.list_(pa.string()), nullable=False),
        pa.field("rotation", pa.int32(), nullable=False),  # 0: the options as released (items.rotate)
    ]
)


def messages_json(messages: tuple[Message, ...] | list[Message]) -> str:
    return json.dumps([{"role": m.role, "content": m.content} for m in messages], ensure_ascii=False)


def hash_messages(messages: tuple[Message, ...] | list[Message]) -> str:
    """Stable hash of the exact text sent to a model (roles and contents, in order)."""
    return hashlib.sha256(messages_json(messages).encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Prompt:
    benchmark: str
    task: str
    setting: str
    item_id: str
    language: str
    messages: tuple[Message, ...]
    template_id: str
    template_hash: str
    exemplar_ids: tuple[str, ...] = ()
    rotation: int = 0

    @property
    def prompt_id(self) -> str:
        base = f"{self.benchmark}/{self.task}/{self.setting}/{self.item_id}"
        return f"{base}@r{self.rotation}" if self.rotation else base

    @property
    def prompt_hash(self) -> str:
        return hash_messages(self.messages)

    def to_row(self) -> dict[str, object]:
        return {
            "prompt_id": self.prompt_id,
            "benchmark": self.benchmark,
            "task": self.task,
            "setting": self.setting,
            "item_id": self.item_id,
            "language": self.language,
            "messages": messages_json(self.messages),
            "prompt_hash": self.prompt_hash,
            "template_id": self.template_id,
            "template_hash": self.template_hash,
            "exemplar_ids": list(self.exemplar_ids),
            "rotation": self.rotation,
        }


def write_prompts(path: str | Path, prompts: list[Prompt]) -> None:
    ids = [p.prompt_id for p in prompts]
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate prompt ids in {path}")
    write_parquet(path, pa.Table.from_pylist([p.to_row() for p in prompts], schema=PROMPT_SCHEMA))


def read_prompts(path: str | Path) -> list[Prompt]:
    table = read_parquet(path, PROMPT_SCHEMA, what="prompts table")
    prompts, seen = [], set()
    for number, row in enumerate(table.to_pylist()):
        prompt = Prompt(
            benchmark=row["benchmark"],
            task=row["task"],
            setting=row["setting"],
            item_id=row["item_id"],
            language=row["language"],
            messages=_messages(path, number, row["messages"]),
            template_id=row["template_id"],
            template_hash=row["template_hash"],
            exemplar_ids=tuple(row["exemplar_ids"]),
            rotation=int(row["rotation"]),
        )
        if prompt.prompt_id in seen:
            raise DataError(path, f"prompt {prompt.prompt_id} repeated", row=number, expected="unique prompt ids")
        seen.add(prompt.prompt_id)
        prompts.append(prompt)
    return prompts


def _messages(path: str | Path, row: int, text: str) -> tuple[Message, ...]:
    try:
        return tuple(Message(**m) for m in json.loads(text))
    except (json.JSONDecodeError, TypeError, AttributeError):
        raise DataError(
            path,
            "column messages is not a list of chat messages",
            row=row,
            expected='a JSON list of {"role": ..., "content": ...}',
        ) from None
