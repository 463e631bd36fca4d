"""What the replay backend needs of a predictions reader (`PredictionReader`: this project's
own generations table, or a format a benchmark registers) and what it counts of each source's
lines (`SourceStats`). Apart from replay.py, so that `BenchmarkHooks` (backends/__init__.py)
names the reader type without importing the backend that imports it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypedDict

from ...core.generation_types import Request
from ..config import ReplaySource

EXAMPLES = 10


class LineExample(TypedDict):
    line: int
    items: int  # how many items it names


class SourceSummary(TypedDict):
    """What became of one source's lines (the generate log's backend_summary)."""

    path: str
    format: str
    benchmark: str
    task: str | None
    setting: str
    lines: int
    matched_lines: int
    unmatched_lines: int
    unmatched_examples: list[int]
    ambiguous_lines: int
    ambiguous_examples: list[LineExample]
    unidentified_lines: int
    unidentified_examples: list[int]
    conflicting_lines: int
    conflicting_examples: list[int]
    items_with_conflicting_lines: int
    non_string_predictions: int
    stale_rows: int


@dataclass
class SourceStats:
    """What became of each line (record) of one source: every non-blank line is exactly one of
    matched (it answers one item), unmatched (its identifying fields name no item), ambiguous
    (they name several items: it answers none), unidentified (it has no identifying field),
    conflicting (it names one item that another line answers differently: neither is used)."""

    source: ReplaySource
    lines: int = 0
    blank_lines: set[int] = field(default_factory=set)
    matched_lines: set[int] = field(default_factory=set)
    ambiguous_lines: dict[int, int] = field(default_factory=dict)  # line -> how many items it names
    unidentified_lines: set[int] = field(default_factory=set)
    conflicting_lines: set[int] = field(default_factory=set)
    conflicting_items: set[str] = field(default_factory=set)  # prompt ids of the items whose records disagree
    non_string_predictions: int = 0
    stale_rows: int = 0

    def unmatched(self) -> list[int]:
        """Lines whose identifying fields name no item."""
        named = self.matched_lines | set(self.ambiguous_lines) | self.unidentified_lines | self.conflicting_lines
        return [n for n in range(1, self.lines + 1) if n not in self.blank_lines and n not in named]

    def to_json(self) -> SourceSummary:
        unmatched = self.unmatched()
        return {
            "path": self.source.path,
            "format": self.source.format,
            "benchmark": self.source.benchmark,
            "task": self.source.task,
            "setting": self.source.setting,
            "lines": self.lines - len(self.blank_lines),
            "matched_lines": len(self.matched_lines),
            "unmatched_lines": len(unmatched),
            "unmatched_examples": unmatched[:EXAMPLES],
            "ambiguous_lines": len(self.ambiguous_lines),
            "ambiguous_examples": [{"line": n, "items": k} for n, k in sorted(self.ambiguous_lines.items())[:EXAMPLES]],
            "unidentified_lines": len(self.unidentified_lines),
            "unidentified_examples": sorted(self.unidentified_lines)[:EXAMPLES],
            "conflicting_lines": len(self.conflicting_lines),
            "conflicting_examples": sorted(self.conflicting_lines)[:EXAMPLES],
            "items_with_conflicting_lines": len(self.conflicting_items),
            "non_string_predictions": self.non_string_predictions,
            "stale_rows": self.stale_rows,
        }

    def problems(self) -> list[str]:
        """The lines that answer no item for a reason other than naming none, in words."""
        s = self.to_json()
        out = []
        if s["ambiguous_lines"]:
            first = s["ambiguous_examples"][0]
            out.append(
                f"{s['ambiguous_lines']:,} ambiguous (each names several items: line {first['line']} names "
                f"{first['items']:,}; not used)"
            )
        if s["unidentified_lines"]:
            out.append(
                f"{s['unidentified_lines']:,} without an identifying field (lines "
                f"{', '.join(map(str, s['unidentified_examples']))}{_more(s['unidentified_lines'])}; not used)"
            )
        if s["conflicting_lines"]:
            out.append(
                f"{s['conflicting_lines']:,} giving {s['items_with_conflicting_lines']:,} items different "
                f"predictions (lines {', '.join(map(str, s['conflicting_examples']))}"
                f"{_more(s['conflicting_lines'])}; those items have no prediction)"
            )
        return out


def _more(count: int) -> str:
    return " ..." if count > EXAMPLES else ""


class PredictionReader(Protocol):
    """Reads one predictions file. `candidates` gives every record (line number) whose
    identifying fields fit the request (never only the first), `prediction` a record's text;
    `match_records` decides which record answers which item. `stats` counts the lines."""

    stats: SourceStats

    def __init__(self, source: ReplaySource, path: Path, stats: SourceStats) -> None: ...

    def candidates(self, request: Request) -> list[int]: ...

    def prediction(self, line: int) -> str: ...
