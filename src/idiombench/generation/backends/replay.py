"""Replay: predictions produced elsewhere, imported as completions.

Sources come from the model config (`models.<name>.sources`), each for one benchmark,
setting and (optionally) task. Formats:

- a format a benchmark registers for its published predictions
  (`Benchmark.prediction_formats`: name -> reader class, in the benchmark's package);
- `idiombench`: this project's own generations table (results/generations/<model>/...),
  matched by (prompt_id, pass, sample_index), else by (prompt_hash, pass, sample_index).
  A row whose prompt_id matches but whose prompt_hash differs was produced for another
  prompt text: it is not used, and counted as stale.

One record answers one item (`match_records`): a record that fits several items, or has no
identifying field, answers none; an item whose records disagree gets none of them. Every line's
fate (matched, unmatched, ambiguous, unidentified, conflicting) and the items without a
prediction are counted and reported (report()); an item without a prediction gets a failed
completion, error "no prediction in replay source". Only the main pass can be replayed: a
source holds one prediction per item. Sizes: foreign.MAX_FILE_BYTES, MAX_LINE_BYTES.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from ...core.errors import DataError, IdiombenchError
from ...core.foreign import check_file_size, storable_text
from ...core.generation_types import MAIN_PASS, BackendBase, Completion, ItemContext, Request
from ...core.io import read_parquet, sha256_file
from ...templating.prompts import hash_messages
from ..config import ReplayModel, ReplaySource
from . import BenchmarkHooks
from .readers import EXAMPLES, PredictionReader, SourceSummary
from .readers import SourceStats as SourceStats  # re-exported: the benchmarks' readers count into it

NO_PREDICTION = "no prediction in replay source"
OWN_FORMAT = "idiombench"  # this project's generations table


class ReplaySummary(TypedDict):
    sources: list[SourceSummary]
    requests_matched: int
    requests_without_prediction: int
    without_prediction_examples: list[str]


def item_key(item: ItemContext) -> tuple[str, str, str, str]:
    """What one record may answer: one item of one task in one setting (all its samples)."""
    return item.benchmark, item.task, item.setting, item.item_id


@dataclass
class Matches:
    """One reader's records assigned to requests, one record per item at most."""

    predictions: dict[str, str] = field(default_factory=dict)  # request key -> text
    recorded: set[str] = field(default_factory=set)  # request keys with a record of their own (conflicting too)


def match_records(reader: PredictionReader, requests: Sequence[Request]) -> Matches:
    """Assign `reader`'s records to `requests` (docs/ARCHITECTURE.md, "Record matching"): a
    record whose identifying fields fit several items answers none of them (ambiguous); an
    item with several records answers with their prediction when they agree, and with none
    when they differ (conflicting: never resolved by order). Counts go to `reader.stats`."""
    candidates = {request.key: reader.candidates(request) for request in requests}
    items_of: dict[int, set[tuple[str, str, str, str]]] = defaultdict(set)
    for request in requests:
        for line in candidates[request.key]:
            items_of[line].add(item_key(request.item))
    ambiguous = {line: len(items) for line, items in items_of.items() if len(items) > 1}
    reader.stats.ambiguous_lines.update(ambiguous)
    matches = Matches()
    for request in requests:
        own = sorted(set(candidates[request.key]) - set(ambiguous))
        if not own:
            continue
        matches.recorded.add(request.key)
        texts = {reader.prediction(line) for line in own}
        if len(texts) == 1:
            matches.predictions[request.key] = texts.pop()
            reader.stats.matched_lines.update(own)
        else:
            reader.stats.conflicting_lines.update(own)
            reader.stats.conflicting_items.add(request.prompt_id)
    reader.stats.matched_lines -= reader.stats.conflicting_lines  # a line of a conflict answers nothing
    return matches


class IdiombenchSource:
    """A generations table written by `idiombench generate`: a row answers the request with its
    (prompt_id, pass, sample_index), else the one with its (prompt_hash, pass, sample_index)."""

    REQUIRED = ("prompt_id", "pass", "sample_index", "text", "error")

    def __init__(self, source: ReplaySource, path: Path, stats: SourceStats):
        self.stats = stats
        check_file_size(path, "generations table")
        table = read_parquet(path, what="generations table")
        missing = [c for c in self.REQUIRED if c not in table.column_names]
        if missing:
            raise DataError(
                path,
                f"not a generations table: missing columns {missing}",
                expected=f"columns {list(self.REQUIRED)} (+ prompt_hash)",
            )
        rows = table.to_pylist()
        stats.lines = len(rows)
        self.texts: dict[int, str] = {}
        self.hashes: dict[int, str | None] = {}
        self.by_id: dict[tuple[str, str, int], list[int]] = defaultdict(list)
        self.by_hash: dict[tuple[str, str, int], list[int]] = defaultdict(list)
        for number, row in enumerate(rows, start=1):
            if row["error"] is not None:
                continue  # a failed generation is no prediction (counted as unmatched)
            if not isinstance(row["text"], str):
                raise DataError(path, f"text is {type(row['text']).__name__}, not text", row=number)
            self.texts[number] = storable_text(row["text"])
            self.hashes[number] = row.get("prompt_hash") or None
            self.by_id[(row["prompt_id"], row["pass"], row["sample_index"])].append(number)
            if row.get("prompt_hash"):
                self.by_hash[(row["prompt_hash"], row["pass"], row["sample_index"])].append(number)

    def candidates(self, request: Request) -> list[int]:
        prompt_hash = hash_messages(request.messages)
        rows = self.by_id.get((request.prompt_id, request.pass_name, request.sample_index), [])
        current = [n for n in rows if self.hashes[n] in (None, prompt_hash)]
        if len(current) < len(rows):
            self.stats.stale_rows += len(rows) - len(current)  # produced for another prompt text
        return current or self.by_hash.get((prompt_hash, request.pass_name, request.sample_index), [])

    def prediction(self, line: int) -> str:
        return self.texts[line]


def known_formats(registered: Mapping[str, type[PredictionReader]]) -> dict[str, type[PredictionReader]]:
    """Every known predictions format: this project's own, and those the benchmarks register
    (`BenchmarkHooks.prediction_formats`, from the registry's `prediction_formats()`)."""
    if OWN_FORMAT in registered:
        raise RuntimeError(f"predictions format {OWN_FORMAT!r} is this project's own; a benchmark may not register it")
    return {OWN_FORMAT: IdiombenchSource, **registered}


def reader_for(fmt: str, registered: Mapping[str, type[PredictionReader]]) -> type[PredictionReader]:
    formats = known_formats(registered)
    if fmt not in formats:
        raise IdiombenchError(f"unknown predictions format {fmt!r} (known: {', '.join(formats)})")
    return formats[fmt]


def source_applies(source: ReplaySource, benchmark: str, task: str, setting: str) -> bool:
    return source.benchmark == benchmark and source.setting == setting and source.task in (None, task)


def unsupported_job(
    sources: Sequence[ReplaySource], benchmark: str, task: str, setting: str, pass_name: str
) -> str | None:
    """Why a replay model skips a job, from its configured sources alone (`idiombench plan` reads
    it without opening the files), or None."""
    if not any(source_applies(source, benchmark, task, setting) for source in sources):
        return f"replay: no source for {benchmark}/{task}/{setting}"
    if pass_name != MAIN_PASS:
        return f"replay: pass {pass_name!r} cannot be replayed (a source holds one prediction per item)"
    return None


class ReplayBackend(BackendBase):
    def __init__(self, name: str, config: ReplayModel, hooks: BenchmarkHooks, root: Path | None = None):
        self.name = name
        root = Path.cwd() if root is None else root
        self.sources: list[tuple[ReplaySource, PredictionReader]] = []
        self.stats: list[SourceStats] = []
        identity_sources: list[dict[str, str | None]] = []
        for source in config.sources:
            path = Path(source.path) if Path(source.path).is_absolute() else root / source.path
            if not path.is_file():
                raise DataError(path, f"replay source of model {name!r} not found")
            stats = SourceStats(source)
            reader = reader_for(source.format, hooks.prediction_formats)
            self.sources.append((source, reader(source, path, stats)))
            self.stats.append(stats)
            identity_sources.append(
                {
                    "benchmark": source.benchmark,
                    "task": source.task,
                    "setting": source.setting,
                    "format": source.format,
                    "file": path.name,
                    "sha256": sha256_file(path),
                }
            )
        self._identity = {"backend": "replay", "sources": identity_sources}
        self.predictions: dict[str, str] = {}
        self.without_prediction: list[str] = []
        self._resolved: set[str] = set()

    def identity(self) -> dict[str, object]:
        identity: dict[str, object] = json.loads(json.dumps(self._identity))
        return identity

    def _applicable(self, benchmark: str, task: str, setting: str) -> list[PredictionReader]:
        return [reader for source, reader in self.sources if source_applies(source, benchmark, task, setting)]

    def unsupported(self, benchmark: str, task: str, setting: str, pass_name: str) -> str | None:
        return unsupported_job([source for source, _ in self.sources], benchmark, task, setting, pass_name)

    def prepare(self, requests: Sequence[Request]) -> None:
        """Match every source's records to the requests. One call must see every request: a
        record is ambiguous when it fits several items among them (`match_records`)."""
        new = [r for r in requests if r.pass_name == MAIN_PASS and r.key not in self._resolved]
        self._resolved.update(r.key for r in new)
        found: list[dict[str, str]] = []
        for source, reader in self.sources:
            mine = [r for r in new if source_applies(source, r.item.benchmark, r.item.task, r.item.setting)]
            matches = match_records(reader, mine)
            if mine and not matches.recorded:
                # another task's or benchmark's file, or an empty one: all-failed rows would score as a result
                why = "; ".join(
                    [
                        f"{reader.stats.lines:,} lines",
                        f"{len(reader.stats.unmatched()):,} naming no item",
                        *reader.stats.problems(),
                    ]
                )
                raise DataError(
                    source.path,
                    f"no line of this replay source matches an item of "
                    f"{source.benchmark}/{source.task or '*'}/{source.setting} ({why})",
                    expected="one record per item, identifying it (docs/troubleshooting.md"
                    "#unmatched-and-ambiguous-records)",
                )
            found.append(matches.predictions)
        for request in new:
            if not self._applicable(request.item.benchmark, request.item.task, request.item.setting):
                continue
            # sources in the order params list them: the first with a prediction answers
            text = next((predictions[request.key] for predictions in found if request.key in predictions), None)
            if text is None:
                self.without_prediction.append(request.prompt_id)
            else:
                self.predictions[request.key] = text

    def summary(self) -> dict[str, object]:  # a ReplaySummary
        summary: ReplaySummary = {
            "sources": [s.to_json() for s in self.stats],
            "requests_matched": len(self.predictions),
            "requests_without_prediction": len(self.without_prediction),
            "without_prediction_examples": sorted(self.without_prediction)[:EXAMPLES],
        }
        return dict(summary)

    def report(self) -> list[str]:
        lines = []
        for stats in self.stats:
            s = stats.to_json()
            line = (
                f"replay {s['path']}: {s['lines']} lines, {s['matched_lines']} matched, "
                f"{s['unmatched_lines']} unmatched"
            )
            if s["unmatched_lines"]:
                more = " ..." if s["unmatched_lines"] > EXAMPLES else ""
                line += f" (lines {', '.join(map(str, s['unmatched_examples']))}{more})"
            if s["non_string_predictions"]:
                line += f", {s['non_string_predictions']} non-string predictions kept as JSON text"
            for problem in stats.problems():
                line += f", {problem}"
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


def make(
    name: str, config: ReplayModel, *, benchmarks: BenchmarkHooks, root: Path | None = None, **_: object
) -> ReplayBackend:
    return ReplayBackend(name, config, benchmarks, root=root)
