"""Every YAML file the project reads, read within limits (params, overlays, prompt templates,
dvc.yaml and dvc.lock; later benchmark declarations).

These files come from users and colleagues, and PyYAML alone builds whatever a file describes:
an alias of an alias of a list ("billion laughs") expands into 10^9 nodes wherever the value is
walked (a copy, a JSON dump, pydantic), a 100 MB file is read whole, and ten thousand nested
`[` exhaust the composer's recursion. So a file is read in two passes:

1. its size is checked before it is read (`YamlLimits.bytes`);
2. its event stream (libyaml's parser: no tree, constant memory) is walked once, counting the
   nodes the document stands for with every alias expanded (an alias counts its anchor's whole
   subtree again) and the depth of nesting, aliases expanded too; the walk stops at the first
   limit passed, so a billion-laughs file is refused after `nodes` events, in milliseconds;
3. only then is it loaded (PyYAML's safe loader: no tags that build objects).

A refusal is one line naming the file, the limit and this module's documentation
(docs/troubleshooting.md#a-yaml-file-is-refused), raised as `YamlError` (a `DataError`: the
CLI prints it and exits 2, the Snakefile's parse stops with it). A syntax error is reported in
PyYAML's words with its line and column.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .errors import DataError

# libyaml's parser and loader where PyYAML was built with it (the locked wheels are): about 30
# times faster than the pure-Python ones, which are the fallback.
_FAST_LOADER: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
DOCS = "docs/troubleshooting.md#a-yaml-file-is-refused"


@dataclass(frozen=True)
class YamlLimits:
    """What one YAML document may be: its size in bytes (UTF-8), the number of nodes it stands
    for (scalars, sequences and mappings, every alias expanded) and how deep its collections nest."""

    bytes: int
    nodes: int
    depth: int


# Files people write: params.yaml is about 25 KB, 1,500 nodes and 6 levels deep, a prompt
# template under 10 KB. The limits leave room for 40 times that and stay fast: a 1 MiB file is
# read in about a second.
USER_FILE = YamlLimits(bytes=1 << 20, nodes=200_000, depth=64)
# Files the tools write (dvc.lock, dvc.yaml), which grow with the grid: about 140 KB for the
# embedded default, some MB at the papers' scale.
TOOL_FILE = YamlLimits(bytes=64 << 20, nodes=5_000_000, depth=64)


class YamlError(DataError):
    """A YAML file that is refused (a limit) or cannot be read as YAML: one line naming it."""


def _problem(exc: yaml.YAMLError) -> str:
    """The parser's complaint and where, on one line."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or " ".join(str(exc).split())
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}" if mark is not None else problem


def _where(event: object) -> str:
    mark = getattr(event, "start_mark", None)
    return f" at line {mark.line + 1}" if mark is not None else ""


def _refused(source: str, what: str, limit: str) -> YamlError:
    return YamlError(source, f"refused: {what} (the limit for this YAML file is {limit}; see {DOCS})")


@dataclass
class _Open:
    """A collection being walked: where its subtree starts (node count and depth)."""

    anchor: str | None
    first_node: int
    depth: int
    deepest: int


def check_events(text: str, source: str, limits: YamlLimits) -> None:
    """Walk the event stream of `text` and raise YamlError at the first limit it passes (nodes
    with aliases expanded, nesting depth) or on a syntax error."""
    nodes = 0
    depth = 0
    # anchor -> (nodes of its subtree, its depth: 0 for a scalar), aliases inside expanded
    anchors: dict[str, tuple[int, int]] = {}
    stack: list[_Open] = []

    def reach(level: int) -> None:
        if stack and level > stack[-1].deepest:
            stack[-1].deepest = level

    try:
        for event in yaml.parse(text, Loader=_FAST_LOADER):
            if isinstance(event, yaml.ScalarEvent):
                nodes += 1
                if event.anchor is not None:
                    anchors[event.anchor] = (1, 0)
            elif isinstance(event, yaml.CollectionStartEvent):
                nodes += 1
                depth += 1
                if depth > limits.depth:
                    raise _refused(
                        source,
                        f"collections nested more than {limits.depth} deep{_where(event)}",
                        f"{limits.depth} levels",
                    )
                reach(depth)
                stack.append(_Open(event.anchor, nodes - 1, depth, depth))
            elif isinstance(event, yaml.CollectionEndEvent):
                opened = stack.pop()
                if opened.anchor is not None:
                    anchors[opened.anchor] = (nodes - opened.first_node, opened.deepest - opened.depth + 1)
                depth -= 1
                reach(opened.deepest)
            elif isinstance(event, yaml.AliasEvent):
                if event.anchor not in anchors:
                    raise YamlError(source, f"not valid YAML: found undefined alias {event.anchor!r}{_where(event)}")
                size, below = anchors[event.anchor]
                nodes += size
                if depth + below > limits.depth:
                    raise _refused(
                        source,
                        f"an alias (*{event.anchor}) nests collections more than {limits.depth} deep{_where(event)}",
                        f"{limits.depth} levels",
                    )
                reach(depth + below)
            if nodes > limits.nodes:
                raise _refused(
                    source,
                    f"more than {limits.nodes:,} nodes with its aliases expanded (reached{_where(event)})",
                    f"{limits.nodes:,} nodes",
                )
    except yaml.YAMLError as exc:
        raise YamlError(source, f"not valid YAML: {_problem(_python_error(text) or exc)}") from None


def _python_error(text: str) -> yaml.YAMLError | None:
    """PyYAML's own parser's complaint about `text` (libyaml's wording is terser: "did not find
    expected ','" where PyYAML says what it found), or None when it finds none. The text is
    within the byte limit, and the parser keeps no tree, so this ends in seconds too."""
    if _FAST_LOADER is yaml.SafeLoader:
        return None
    try:
        for _ in yaml.parse(text, Loader=yaml.SafeLoader):
            pass
    except yaml.YAMLError as exc:
        return exc
    return None


def load_yaml_text(text: str, source: str, limits: YamlLimits = USER_FILE) -> object:
    """The one YAML document in `text` (read from `source`, named in every error), within `limits`."""
    size = len(text.encode("utf-8", errors="surrogatepass"))
    if size > limits.bytes:
        raise _refused(source, f"{size:,} bytes long", f"{limits.bytes:,} bytes")
    check_events(text, source, limits)
    try:
        return yaml.load(text, Loader=_FAST_LOADER)  # noqa: S506 - a safe loader (C or Python)
    except yaml.YAMLError as exc:  # e.g. two documents in one file
        raise YamlError(source, f"not valid YAML: {_problem(_python_error(text) or exc)}") from None


def read_yaml_text(
    path: Path, limits: YamlLimits = USER_FILE, *, expected: str = "a YAML file", missing: str = "no such file"
) -> str:
    """A YAML file's text: its size checked before it is read (a 100 MB file is never read whole),
    UTF-8 decoded. Raises YamlError for a missing file, a folder, too many bytes or other bytes
    than UTF-8 text."""
    try:
        if path.is_dir():
            raise YamlError(path, f"is a folder (expected {expected})")
        size = path.stat().st_size
        if size > limits.bytes:
            raise _refused(str(path), f"{size:,} bytes long", f"{limits.bytes:,} bytes")
        with path.open("rb") as handle:
            data = handle.read(limits.bytes + 1)  # a file that grew since stat() is still bounded
    except FileNotFoundError:
        raise YamlError(path, missing) from None
    except IsADirectoryError:
        raise YamlError(path, f"is a folder (expected {expected})") from None
    if len(data) > limits.bytes:
        raise _refused(str(path), f"more than {limits.bytes:,} bytes long", f"{limits.bytes:,} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise YamlError(
            path, f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}; expected {expected})"
        ) from None


def load_yaml_file(
    path: str | Path, limits: YamlLimits = USER_FILE, *, expected: str = "a YAML file", missing: str = "no such file"
) -> object:
    """The one YAML document in the file at `path`, within `limits` (see the module's docstring)."""
    path = Path(path)
    return load_yaml_text(read_yaml_text(path, limits, expected=expected, missing=missing), str(path), limits)
