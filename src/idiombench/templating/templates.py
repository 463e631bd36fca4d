"""Chat prompt templates kept as data files inside the benchmark packages.

A template file is YAML (`src/idiombench/benchmarks/<pkg>/prompts/<name>.yaml`):

    id: orderprobe/zero_shot             # prefix of every template id in the file
    source: where the text comes from (paper table, appendix ...)
    layout: how the source's layout was turned into plain text (free text)
    templates:
      zh-CN:                             # entry key: a language, a condition ...
        - system: "..."                  # messages in order, one {role: content} each
        - user: "... {idiom} ..."

Placeholders are `{name}` (lower-case letters, digits and `_`), the syntax of the
papers' own templates; any other brace is literal text. Rendering is one pass, so a
value that itself contains `{name}` is never expanded again. Every placeholder of an
entry must be given a value: a missing one is an error, never an empty string.

Each entry has a template id (`<file id>/<key>`) and a hash: the sha256 of the entry's
messages as canonical JSON, so any edit of the text changes the hash recorded with
every prompt rendered from it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..core.errors import DataError
from ..core.generation_types import Message
from ..core.yamlfile import load_yaml_text, read_yaml_text

PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")
ROLES = ("system", "user", "assistant")


@dataclass(frozen=True)
class FieldSpan:
    """Where a placeholder's value sits in a rendered prompt: message index, [start, end) in its content."""

    message: int
    start: int
    end: int


@dataclass(frozen=True)
class ChatTemplate:
    template_id: str
    messages: tuple[Message, ...]  # contents hold {placeholders}

    @property
    def template_hash(self) -> str:
        blob = json.dumps(
            [{"role": m.role, "content": m.content} for m in self.messages],
            ensure_ascii=False,
            sort_keys=True,
            separators=(",", ":"),
        )
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    @property
    def placeholders(self) -> tuple[str, ...]:
        """Placeholder names in order of first appearance."""
        names = [name for m in self.messages for name in PLACEHOLDER.findall(m.content)]
        return tuple(dict.fromkeys(names))

    def render(self, values: Mapping[str, str]) -> tuple[Message, ...]:
        missing = [name for name in self.placeholders if name not in values]
        if missing:
            raise KeyError(f"template {self.template_id}: no value for {', '.join(missing)}")
        for name in self.placeholders:
            if not isinstance(values[name], str):
                raise TypeError(f"template {self.template_id}: value of {name} is {type(values[name]).__name__}")

        def fill(match: re.Match[str]) -> str:
            return values[match.group(1)]

        return tuple(Message(m.role, PLACEHOLDER.sub(fill, m.content)) for m in self.messages)

    def render_spans(self, values: Mapping[str, str]) -> tuple[tuple[Message, ...], dict[str, list[FieldSpan]]]:
        """`render`, plus where each placeholder's value landed: name -> one FieldSpan per
        occurrence (message index and character offsets in that message's content). The
        offsets come from the template's own pieces, not from searching the rendered text."""
        messages = self.render(values)
        spans: dict[str, list[FieldSpan]] = {}
        for index, message in enumerate(self.messages):
            shift = 0  # rendered offset minus template offset, so far in this message
            for match in PLACEHOLDER.finditer(message.content):
                value = values[match.group(1)]
                start = match.start() + shift
                spans.setdefault(match.group(1), []).append(FieldSpan(index, start, start + len(value)))
                shift += len(value) - (match.end() - match.start())
        return messages, spans

    def with_joined_system(self) -> ChatTemplate:
        """The same template with consecutive leading system messages joined by a newline
        into one (for chat templates that accept a single system message)."""
        systems = [m for m in self.messages if m.role == "system"]
        if len(systems) < 2:
            return self
        first_other = next((i for i, m in enumerate(self.messages) if m.role != "system"), len(self.messages))
        if first_other != len(systems):
            raise ValueError(f"template {self.template_id}: system messages are not all at the start")
        joined = Message("system", "\n".join(m.content for m in systems))
        return ChatTemplate(f"{self.template_id}+joined_system", (joined, *self.messages[first_other:]))


@dataclass(frozen=True)
class TemplateFile:
    path: str  # for messages: the package-relative location
    file_id: str
    source: str
    layout: str
    entries: dict[str, ChatTemplate]

    def get(self, key: str) -> ChatTemplate:
        if key not in self.entries:
            raise DataError(self.path, f"no template entry {key!r}", expected=f"one of {sorted(self.entries)}")
        return self.entries[key]


def parse_template_file(text: str, path: str) -> TemplateFile:
    raw = load_yaml_text(text, path)  # within the YAML limits (core/yamlfile.py); a YamlError names the file
    if not isinstance(raw, dict):
        raise DataError(path, "not a mapping", expected="keys id, source, layout, templates")
    unknown = sorted(set(raw) - {"id", "source", "layout", "templates"})
    if unknown:
        raise DataError(path, f"unknown keys {unknown}", expected="keys id, source, layout, templates")
    for key in ("id", "source", "layout"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise DataError(path, f"key {key!r} missing or not text", expected="a non-empty string")
    entries_raw = raw.get("templates")
    if not isinstance(entries_raw, dict) or not entries_raw:
        raise DataError(path, "key 'templates' missing or empty", expected="a mapping of entry -> message list")
    entries: dict[str, ChatTemplate] = {}
    for key, messages_raw in entries_raw.items():
        entries[str(key)] = ChatTemplate(f"{raw['id']}/{key}", _messages(path, str(key), messages_raw))
    return TemplateFile(path, raw["id"], raw["source"], raw["layout"], entries)


def _messages(path: str, key: str, raw: object) -> tuple[Message, ...]:
    expected = "a list of one-key mappings {system|user|assistant: text}"
    if not isinstance(raw, list) or not raw:
        raise DataError(path, f"templates.{key} is not a message list", expected=expected)
    messages = []
    for index, entry in enumerate(raw):
        if not (isinstance(entry, dict) and len(entry) == 1):
            raise DataError(path, f"templates.{key}[{index}] is not a one-key mapping", expected=expected)
        ((role, content),) = entry.items()
        if role not in ROLES or not isinstance(content, str) or not content.strip():
            raise DataError(path, f"templates.{key}[{index}]: bad role {role!r} or empty content", expected=expected)
        messages.append(Message(role, content))
    return tuple(messages)


def load_package_templates(package: str, name: str) -> TemplateFile:
    """<package>/prompts/<name>.yaml, read from the installed package (package data)."""
    resource = resources.files(package).joinpath("prompts", f"{name}.yaml")
    location = f"{package.replace('.', '/')}/prompts/{name}.yaml"
    if not resource.is_file():
        raise DataError(location, "template file not found", expected="a package data file")
    return parse_template_file(resource.read_text(encoding="utf-8"), location)


def load_template_path(path: Path) -> TemplateFile:
    return parse_template_file(read_yaml_text(path, expected="a prompt template file"), str(path))
