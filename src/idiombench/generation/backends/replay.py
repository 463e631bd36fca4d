"""Replay: predictions produced elsewhere, imported as completions.

Sources come from the model config (`models.<name>.sources`), each for one benchmark,
setting and (optionally) task. Formats:

- a format a benchmark registers for its published predictions
  (`Benchmark.prediction_formats`: name -> reader class, in the benchmark's package);
- `idiombench`: this project's own generations table (results/generations/<model>/...),
  matched by (prompt_id, pass, sample_index), else by (prompt_hash, pass, sample_index).
  A row whose prompt_id matches but whose prompt_hash differs was produced for another
  prompt text: it is not used, and counted as stale.

Unmatched lines and items without a prediction are counted and reported (report()); an
item without a prediction gets a failed completion, error "no prediction in replay source".
Only the main pass can be replayed: a source holds one prediction per item.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ...errors import DataError, IdiombenchError
from ...io import read_parquet, sha256_file
from ...prompts import hash_messages
from ..config import ReplayModel, ReplaySource
from ..types import Completion, Request
from . import BenchmarkHooks

NO_PREDICTION = "no prediction in replay source"
OWN_FORMAT = "idiombench"  # this project's generations table
MAIN_PASS = "main"
EXAMPLES = 10


@dataclass
class SourceStats:
    source: ReplaySource
    lines: int = 0
    matched_lines: set[int] = field(default_factory=set)
    conflicting_duplicates: list[int] = field(default_factory=list)
    non_string_predictions: int = 0
    stale_rows: int = 0
    blank_lines: set[int] = field(default_factory=set)
    duplicate_of: dict[int, int] = field(default_factory=dict)  # line -> earlier line with the same content

    def unmatched(self) -> list[int]:
        return [
            n for n in range(1, self.lines + 1)
            if n not in self.blank_lines and self.duplicate_of.get(n, n) not in self.matched_lines
        ]

    def to_json(self) -> dict[str, Any]:
        unmatched = self.unmatched()
        return {
            "path": self.source.path,
            "format": self.source.format,
            "benchmark": self.source.benchmark,
            "task": self.source.task,
            "setting": self.source.setting,
            "lines": self.lines - len(self.blank_lines),
            "matched_lines": self.lines - len(self.blank_lines) - len(unmatched),
            "unmatched_lines": len(unmatched),
            "unmatched_examples": unmatched[:EXAMPLES],
            "conflicting_duplicate_lines": self.conflicting_duplicates[:EXAMPLES],
            "non_string_predictions": self.non_string_predictions,
            "stale_rows": self.stale_rows,
        }


class IdiombenchSource:
    """A generations table written by `idiombench generate`."""

    REQUIRED = ("prompt_id", "pass", "sample_index", "text", "error")

    def __init__(self, source: ReplaySource, path: Path, stats: SourceStats):
        self.stats = stats
        table = read_parquet(path, what="generations table")
        missing = [c for c in self.REQUIRED if c not in table.column_names]
        if missing:
            raise DataError(path, f"not a generations table: missing columns {missing}",
                            expected=f"columns {list(self.REQUIRED)} (+ prompt_hash)")
        rows = table.to_pylist()
        stats.lines = len(rows)
        self.by_id: dict[tuple[str, str, int], tuple[int, dict[str, Any]]] = {}
        self.by_hash: dict[tuple[str, str, int], tuple[int, dict[str, Any]]] = {}
        for number, row in enumerate(rows, start=1):
            if row["error"] is not None:
                continue  # a failed generation is no prediction
            self.by_id.setdefault((row["prompt_id"], row["pass"], row["sample_index"]), (number, row))
            if row.get("prompt_hash"):
                self.by_hash.setdefault((row["prompt_hash"], row["pass"], row["sample_index"]), (number, row))

    def lookup(self, request: Request) -> str | None:
        prompt_hash = hash_messages(request.messages)
        hit = self.by_id.get((request.prompt_id, request.pass_name, request.sample_index))
        if hit is not None and hit[1].get("prompt_hash") not in (None, prompt_hash):
            self.stats.stale_rows += 1
            hit = None
        if hit is None:
            hit = self.by_hash.get((prompt_hash, request.pass_name, request.sample_index))
        if hit is None:
            return None
        self.stats.matched_lines.add(hit[0])
        return hit[1]["text"]


class PredictionReader(Protocol):
    """Reads one predictions file; `lookup` gives a request's prediction or None, and
    records in `stats` which lines it matched."""

    stats: SourceStats

    def __init__(self, source: ReplaySource, path: Path, stats: SourceStats) -> None: ...

    def lookup(self, request: Request) -> str | None: ...


def known_formats(registered: Mapping[str, type[Any]]) -> dict[str, type[PredictionReader]]:
    """Every known predictions format: this project's own, and those the benchmarks register
    (`BenchmarkHooks.prediction_formats`, from the registry's `prediction_formats()`)."""
    if OWN_FORMAT in registered:
        raise RuntimeError(f"predictions format {OWN_FORMAT!r} is this project's own; a benchmark may not register it")
    return {OWN_FORMAT: IdiombenchSource, **registered}


def reader_for(fmt: str, registered: Mapping[str, type[Any]]) -> type[PredictionReader]:
    formats = known_formats(registered)
    if fmt not in formats:
        raise IdiombenchError(f"unknown predictions format {fmt!r} (known: {', '.join(formats)})")
    return formats[fmt]


def source_applies(source: ReplaySource, benchmark: str, task: str, setting: str) -> bool:
    return source.benchmark == benchmark and source.setting == setting and source.task in (None, task)


def unsupported_job(sources: Sequence[ReplaySource], benchmark: str, task: str, setting: str,
                    pass_name: str) -> str | None:
    """Why a replay model skips a job, from its configured sources alone (`idiombench plan` reads
    it without opening the files), or None."""
    if not any(source_applies(source, benchmark, task, setting) for source in sources):
        return f"replay: no source for {benchmark}/{task}/{setting}"
    if pass_name != MAIN_PASS:
        return f"replay: pass {pass_name!r} cannot be replayed (a source holds one prediction per item)"
    return None


class ReplayBackend:
    def __init__(self, name: str, config: ReplayModel, hooks: BenchmarkHooks, root: Path | None = None):
        self.name = name
        root = Path.cwd() if root is None else root
        self.sources: list[tuple[ReplaySource, PredictionReader]] = []
        self.stats: list[SourceStats] = []
        identity_sources = []
        for source in config.sources:
            path = Path(source.path) if Path(source.path).is_absolute() else root / source.path
            if not path.is_file():
                raise DataError(path, f"replay source of model {name!r} not found")
            stats = SourceStats(source)
            reader = reader_for(source.format, hooks.prediction_formats)
            self.sources.append((source, reader(source, path, stats)))
            self.stats.append(stats)
            identity_sources.append({
                "benchmark": source.benchmark, "task": source.task, "setting": source.setting,
                "format": source.format, "file": path.name, "sha256": sha256_file(path),
            })
        self._identity = {"backend": "replay", "sources": identity_sources}
        self.predictions: dict[str, str] = {}
        self.without_prediction: list[str] = []
        self._resolved: set[str] = set()

    def identity(self) -> dict[str, Any]:
        return json.loads(json.dumps(self._identity))

    def _applicable(self, benchmark: str, task: str, setting: str) -> list[PredictionReader]:
        return [reader for source, reader in self.sources if source_applies(source, benchmark, task, setting)]

    def unsupported(self, benchmark: str, task: str, setting: str, pass_name: str) -> str | None:
        return unsupported_job([source for source, _ in self.sources], benchmark, task, setting, pass_name)

    def prepare(self, requests: Sequence[Request]) -> None:
        for request in requests:
            item = request.item
            if request.pass_name != MAIN_PASS or request.key in self._resolved:
                continue
            self._resolved.add(request.key)
            readers = self._applicable(item.benchmark, item.task, item.setting)
            if not readers:
                continue
            for reader in readers:
                prediction = reader.lookup(request)
                if prediction is not None:
                    self.predictions[request.key] = prediction
                    break
            else:
                self.without_prediction.append(request.prompt_id)

    def summary(self) -> dict[str, Any]:
        return {
            "sources": [s.to_json() for s in self.stats],
            "requests_matched": len(self.predictions),
            "requests_without_prediction": len(self.without_prediction),
            "without_prediction_examples": sorted(self.without_prediction)[:EXAMPLES],
        }

    def report(self) -> list[str]:
        lines = []
        for stats in self.stats:
            s = stats.to_json()
            line = (f"replay {s['path']}: {s['lines']} lines, {s['matched_lines']} matched, "
                    f"{s['unmatched_lines']} unmatched")
            if s["unmatched_lines"]:
                line += f" (lines {', '.join(map(str, s['unmatched_examples']))}{' ...' if s['unmatched_lines'] > EXAMPLES else ''})"
            if s["non_string_predictions"]:
                line += f", {s['non_string_predictions']} non-string predictions kept as JSON text"
            if s["conflicting_duplicate_lines"]:
                line += f", duplicate lines with other predictions at {s['conflicting_duplicate_lines']} (first kept)"
            if s["stale_rows"]:
                line += f", {s['stale_rows']} rows for another prompt text (not used)"
            lines.append(line)
        lines.append(
            f"replay: {len(self.predictions)} requests matched, "
            f"{len(self.without_prediction)} without a prediction"
            + (f" (e.g. {', '.join(sorted(self.without_prediction)[:3])})" if self.without_prediction else "")
        )
        return lines

    def generate(self, requests: Sequence[Request]) -> list[Completion]:
        self.prepare(requests)  # a no-op for requests already seen by prepare()
        out = []
        for request in requests:
            text = self.predictions.get(request.key)
            if text is None:
                out.append(Completion("", None, None, "error", 0.0, error=NO_PREDICTION))
            else:
                out.append(Completion(text, None, None, "stop", 0.0))
        return out

    def close(self) -> None:
        pass


def make(name: str, config: ReplayModel, *, benchmarks: BenchmarkHooks, root: Path | None = None,
         **_: Any) -> ReplayBackend:
    return ReplayBackend(name, config, benchmarks, root=root)
