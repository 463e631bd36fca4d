"""What every benchmark provides, and the shared build driver."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..data.manifest import FileSpec
from ..io import staged_directory, write_json
from ..items import Item, write_items

MAX_EXAMPLES = 10


@dataclass
class BuildStats:
    """Counts in, counts out, and every row dropped, merged or flagged, with the reason."""

    benchmark: str
    rows_read: Counter[str] = field(default_factory=Counter)
    rows_kept: Counter[str] = field(default_factory=Counter)
    dropped: dict[str, list[Any]] = field(default_factory=dict)
    merged: dict[str, list[Any]] = field(default_factory=dict)
    flagged: dict[str, list[Any]] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def read(self, source: str, n: int = 1) -> None:
        self.rows_read[source] += n

    def kept(self, source: str, n: int = 1) -> None:
        self.rows_kept[source] += n

    def drop(self, reason: str, example: Any) -> None:
        self.dropped.setdefault(reason, []).append(example)

    def merge(self, reason: str, example: Any) -> None:
        self.merged.setdefault(reason, []).append(example)

    def flag(self, reason: str, example: Any) -> None:
        self.flagged.setdefault(reason, []).append(example)

    def to_json(self, tasks: dict[str, int]) -> dict[str, Any]:
        def summarise(groups: dict[str, list[Any]]) -> dict[str, Any]:
            return {
                reason: {"count": len(examples), "examples": examples[:MAX_EXAMPLES]}
                for reason, examples in sorted(groups.items())
            }

        return {
            "benchmark": self.benchmark,
            "rows_read": dict(sorted(self.rows_read.items())),
            "rows_read_total": sum(self.rows_read.values()),
            "rows_kept": dict(sorted(self.rows_kept.items())),
            "rows_kept_total": sum(self.rows_kept.values()),
            "dropped": summarise(self.dropped),
            "merged": summarise(self.merged),
            "flagged": summarise(self.flagged),
            "tasks": dict(sorted(tasks.items())),
            "details": self.details,
            "notes": self.notes,
        }


@dataclass
class BuildResult:
    tasks: dict[str, list[Item]]
    stats: BuildStats
    # name -> JSON body: further build outputs a later stage reads from the processed
    # directory (OrderProbe: the released word lists extracted from the acquired scripts)
    files: dict[str, Any] = field(default_factory=dict)


class Benchmark(Protocol):
    """One benchmark: its declared files, its build and its render (idiombench.render).
    Later stages add score hooks."""

    name: str
    render_templates: str  # where render reads its templates: a dependency of the render rule / stage

    def file_specs(self, config: Any) -> list[FileSpec]: ...

    def build(self, raw_dir: Path, config: Any) -> BuildResult: ...

    def render(self, tasks: dict[str, list[Item]], config: Any, raw_dir: Path) -> Any: ...


def write_build(result: BuildResult, out_dir: Path) -> dict[str, Any]:
    """Write every task's items and the stats into a staging directory that replaces
    `out_dir` whole, so it is either the old complete build or the new complete build."""
    with staged_directory(out_dir) as staging:
        counts = {}
        for task, items in sorted(result.tasks.items()):
            write_items(staging / f"{task}.parquet", items)
            counts[task] = len(items)
        for name, body in sorted(result.files.items()):
            write_json(staging / name, body)
        stats = result.stats.to_json(counts)
        write_json(staging / "build_stats.json", stats)
    return stats
