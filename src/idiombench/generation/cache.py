"""Content-addressed store of completions: reruns are free and a killed run resumes.

A request's key is the sha256 of the canonical JSON of exactly what determines its
output: the backend's identity (backend, model id, revision or weight-file hash,
dtype, and for hf the KV cache, attention kernels, the hardware's kernels, batch size
and torch/transformers versions: each changes greedy tokens in bfloat16), the messages, the sampling
parameters, the seed and the sample index.
Two models never share entries (their identities differ, and each model has its own
directory), and changing any sampling parameter changes the key.

On disk, `<cache_dir>/shard-<hash>.jsonl` holds the completions of one completed
batch, one JSON object per line. A shard is written to a temporary file and renamed
into place (idiombench.core.io), so a SIGKILL loses at most the batch in flight and never
leaves a half shard under a shard name. Loading reads every complete shard, ignores
temporary files, and reports (never crashes on) a line that does not parse.
Failed completions are not stored: a rerun retries them.

Entries are written once per key: a writer holds `.write.lock` (fcntl.flock), rereads the
shards other processes wrote meanwhile, and stores only keys not yet present (the first
writer wins; `get` then returns the stored entry).

In memory the cache is an index (key -> the shard that holds it), not the completions: a
model's grid is millions of completions (gigabytes of text), and the generate stage reads the
texts of one output table at a time (`read`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from ..core.errors import IdiombenchError
from ..core.generation_types import Completion, Message, Sampling
from ..core.io import write_text

SHARD_PREFIX = "shard-"
SHARD_SUFFIX = ".jsonl"
WRITE_LOCK = ".write.lock"  # held while a shard is checked and written: one entry per key
_COMPLETION_FIELDS = ("text", "prompt_tokens", "completion_tokens", "finish_reason", "latency_s")


def canonical_json(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)


def request_key(
    identity: Mapping[str, object],
    messages: Sequence[Message],
    sampling: Sampling,
    seed: int,
    sample_index: int,
) -> str:
    """sha256 (hex) of the canonical JSON of exactly the inputs that determine a completion."""
    payload = {
        "identity": identity,
        "messages": [{"role": m.role, "content": m.content} for m in messages],
        "sampling": sampling.to_json(),
        "seed": seed,
        "sample_index": sample_index,
    }
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


@dataclass
class CacheProblem:
    """A shard line that could not be read (reported, then skipped)."""

    path: str
    line: int
    problem: str

    def __str__(self) -> str:
        return f"{self.path}, line {self.line}: {self.problem}"


class CompletionJson(TypedDict):
    """One shard line: a request key and its completion (_COMPLETION_FIELDS)."""

    key: str
    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    finish_reason: str
    latency_s: float


def completion_to_json(key: str, completion: Completion) -> CompletionJson:
    return {
        "key": key,
        "text": completion.text,
        "prompt_tokens": completion.prompt_tokens,
        "completion_tokens": completion.completion_tokens,
        "finish_reason": completion.finish_reason,
        "latency_s": completion.latency_s,
    }


def completion_from_json(record: object) -> tuple[str, Completion]:
    """(key, completion) from one shard line's object; ValueError says what is wrong."""
    if not isinstance(record, dict):
        raise ValueError(f"expected a JSON object, got {type(record).__name__}")
    missing = [name for name in ("key", *_COMPLETION_FIELDS) if name not in record]
    if missing:
        raise ValueError(f"missing keys {missing}")
    key = record["key"]
    if not isinstance(key, str) or len(key) != 64:
        raise ValueError(f"bad key {key!r} (expected 64 hex digits)")
    if not isinstance(record["text"], str) or not isinstance(record["finish_reason"], str):
        raise ValueError("text and finish_reason must be strings")
    for name in ("prompt_tokens", "completion_tokens"):
        if record[name] is not None and not isinstance(record[name], int):
            raise ValueError(f"{name} must be an integer or null")
    if not isinstance(record["latency_s"], (int, float)):
        raise ValueError("latency_s must be a number")
    return key, Completion(
        text=record["text"],
        prompt_tokens=record["prompt_tokens"],
        completion_tokens=record["completion_tokens"],
        finish_reason=record["finish_reason"],
        latency_s=float(record["latency_s"]),
    )


KEY_FIELD = '"key":"'  # how canonical_json writes a line's key: found without parsing the line


def line_key(line: str) -> str | None:
    """The key of a canonical shard line without parsing it (None: not canonical, parse it). A
    string value cannot hold `"key":"` (its quotes are escaped), so the first one is the key's."""
    at = line.find(KEY_FIELD)
    if at < 0:
        return None
    key = line[at + len(KEY_FIELD) : at + len(KEY_FIELD) + 64]
    return key if len(key) == 64 and line.startswith('"', at + len(KEY_FIELD) + 64) else None


@dataclass
class GenerationCache:
    """The completed entries of one model: an index of its shard directory (key -> shard name)."""

    directory: Path
    index: dict[str, str] = field(default_factory=dict)
    problems: list[CacheProblem] = field(default_factory=list)
    shards_read: int = 0

    seen: set[str] = field(default_factory=set)  # names of the shards read so far

    @classmethod
    def load(cls, directory: str | Path) -> GenerationCache:
        cache = cls(Path(directory))
        cache.refresh()
        return cache

    def refresh(self) -> None:
        """Index the shards written since the last look (by this or another process)."""
        if self.directory.is_dir():
            for shard in sorted(self.directory.glob(f"{SHARD_PREFIX}*{SHARD_SUFFIX}")):
                if shard.name not in self.seen:
                    self._index_shard(shard)

    def _shard_lines(self, shard: Path) -> list[str] | None:
        try:
            return shard.read_text(encoding="utf-8").split("\n")  # not splitlines: a text may hold U+2028
        except (OSError, UnicodeDecodeError) as exc:
            self.problems.append(CacheProblem(str(shard), 0, f"unreadable shard: {exc}"))
            return None

    def _index_shard(self, shard: Path) -> None:
        # Temporary files of an interrupted write start with "." (io.atomic_path): not matched by the glob.
        self.seen.add(shard.name)
        self.shards_read += 1
        for number, line in enumerate(self._shard_lines(shard) or (), start=1):
            if not line.strip():
                continue
            try:
                key, _ = completion_from_json(json.loads(line))  # every line checked once, when indexed
            except (ValueError, TypeError) as exc:  # json.JSONDecodeError is a ValueError
                self.problems.append(CacheProblem(str(shard), number, str(exc)))
                continue
            self.index.setdefault(key, shard.name)

    def __contains__(self, key: str) -> bool:
        return key in self.index

    def __len__(self) -> int:
        return len(self.index)

    def read(self, keys: Iterable[str]) -> dict[str, Completion]:
        """The stored completions of these keys (absent keys are left out), each shard read once;
        a key's entry is the one its index names (the first writer's)."""
        by_shard: dict[str, set[str]] = {}
        for key in keys:
            shard = self.index.get(key)
            if shard is not None:
                by_shard.setdefault(shard, set()).add(key)
        found: dict[str, Completion] = {}
        for shard, wanted in sorted(by_shard.items()):
            try:
                lines = (self.directory / shard).read_text(encoding="utf-8").split("\n")
            except (OSError, UnicodeDecodeError) as exc:
                raise IdiombenchError(f"generation cache: cannot read {self.directory / shard}: {exc}") from exc
            for line in lines:
                cheap = line_key(line)
                if cheap is not None and cheap not in wanted:
                    continue  # most lines of a shard belong to other tables: not parsed
                try:
                    key, completion = completion_from_json(json.loads(line))
                except (ValueError, TypeError):
                    continue  # reported when the shard was indexed
                if key in wanted:
                    found.setdefault(key, completion)
        return found

    def get(self, key: str) -> Completion | None:
        return self.read((key,)).get(key)

    def put_batch(self, items: Iterable[tuple[str, Completion]]) -> Path | None:
        """Store one completed batch as one shard (atomically). Failed completions are
        left out so that a rerun retries them. Returns the shard path, or None if empty."""
        offered = [(key, c) for key, c in items if not c.failed]
        if not offered:
            return None
        with self._write_lock():
            # Another process may have stored some of these keys meanwhile: its entry wins, and
            # ours is dropped, so every key has exactly one entry on disk.
            self.refresh()
            records = sorted(
                (completion_to_json(key, c) for key, c in offered if key not in self.index), key=lambda r: r["key"]
            )
            if not records:
                return None
            body = "".join(canonical_json(r) + "\n" for r in records)
            # Named by content: rewriting the same batch gives the same shard name.
            name = hashlib.sha256(body.encode("utf-8")).hexdigest()[:24]
            path = self.directory / f"{SHARD_PREFIX}{name}{SHARD_SUFFIX}"
            write_text(path, body)
            self.seen.add(path.name)
        for record in records:
            self.index.setdefault(record["key"], path.name)
        return path

    @contextlib.contextmanager
    def _write_lock(self) -> Iterator[None]:
        """Exclusive among writers of this directory, in any process (fcntl.flock)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / WRITE_LOCK, "a", encoding="utf-8") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
