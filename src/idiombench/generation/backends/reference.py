"""Reference systems that need no weights, for sanity checks and tests.

- oracle:   answers with the gold (the item's answer, else its first reference);
- echo:     returns the item's input (e.g. the scrambled idiom);
- random:   a uniformly drawn label (classification tasks only), seeded per request;
- majority: the task's most frequent gold label (classification tasks only); on a choice task,
            the option at the position the gold holds most often, so under the option-order
            pass (docs/METRICS.md#7-option-order-robustness) it is the fixed-position picker:
            it picks the same shown position under every rotation (position bias 1.0).

Label spaces (and so majority's position) come from the prompts as released (rotation 0):
the rotations of the option-order pass spread the gold over every position.

These systems answer from the data, not from the prompt alone: `item_identity(item)` (the
item as the prompt shows it, and for random/majority its task's label space, made from every
item's gold) is part of each request's cache key, so changed gold labels, references, inputs
or options miss the cache instead of serving the old answers.

A task is *classification* when its benchmark says so (`Benchmark.classification_tasks`,
a set of task names) or, when it says nothing, when every item has options (`choices`)
and its gold is an option letter or an option text, or when its items have no reference
texts and its gold answers are labels (at most MAX_LABELS distinct values, each used on
average at least twice). Other tasks are skipped for random/majority with the reason
reported, never answered with a guess.

The answer TEXT follows the benchmark's output format through its hook
`Benchmark.format_reference_answer(item, answer, kind) -> str`; a benchmark without one
(None) gets the plain answer.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import random
import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ...core.generation_types import BackendBase, Completion, ItemContext, Request
from ...core.sampling import SortableKey
from ..config import ReferenceModel
from . import BenchmarkHooks

V = TypeVar("V", bound=SortableKey)

MAX_LABELS = 20
LETTERS = string.ascii_uppercase


def _formatters_fingerprint(hooks: BenchmarkHooks) -> str:
    """Hash of this module and every benchmark's answer hook: editing how reference answers
    are written changes the backend identity, so cached answers are not reused stale."""
    digest = hashlib.sha256(Path(__file__).read_bytes())
    for benchmark in sorted(hooks.answer_formatters):
        hook = hooks.answer_formatters[benchmark]
        if hook is not None:
            digest.update(benchmark.encode())
            module = inspect.getmodule(hook)
            if module is None:
                raise TypeError(f"{benchmark}: format_reference_answer {hook!r} is not a module's function")
            digest.update(inspect.getsource(module).encode("utf-8"))
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class LabelSpace:
    """How random/majority answer one task."""

    kind: str  # "option_letter" | "option_text" | "label"
    labels: tuple[str, ...]  # the label set (kind "label"); empty for options
    majority: str | int  # the most frequent label, or the most frequent gold option position

    def describe(self) -> str:
        if self.kind == "label":
            return f"labels {list(self.labels)}, majority {self.majority!r}"
        return f"{self.kind.replace('_', ' ')}s, majority position {self.majority}"


def _most_common(values: Sequence[V]) -> V:
    """Most frequent value; ties broken by the smallest value, so the choice is stable."""
    counts = Counter(values)
    best = max(counts.values())
    return min(v for v, c in counts.items() if c == best)


def classification_declared(hooks: BenchmarkHooks, benchmark: str, task: str) -> bool | None:
    """What the benchmark says (its classification_tasks), or None if it says nothing."""
    declared = hooks.classification_tasks.get(benchmark)
    return None if declared is None else task in declared


def label_space(items: Sequence[ItemContext], declared: bool | None = None) -> LabelSpace | str:
    """The task's label space, or the reason the task is not classification.

    `declared` is the benchmark's own word (its classification_tasks); without it, a task is
    classification when every item has options, or when no item has reference texts and
    the gold answers are few labels (at most MAX_LABELS, each used twice on average).
    Items without gold are answered too; the label space comes from the others."""
    if not items:
        return "no items"
    if declared is False:
        return "not a classification task (declared by the benchmark)"
    # (gold answer, the item's options) of the items with a gold answer
    gold = [(item.answer, item.choices) for item in items if item.answer is not None]
    if not gold:
        return "not a classification task: no item has a gold answer"
    if all(item.choices for item in items):
        if all(answer in choices for answer, choices in gold):
            positions = [choices.index(answer) for answer, choices in gold]
            return LabelSpace("option_text", (), _most_common(positions))
        if all(answer in LETTERS[: len(choices)] for answer, choices in gold):
            positions = [LETTERS.index(answer) for answer, _ in gold]
            return LabelSpace("option_letter", (), _most_common(positions))
        return "not a classification task: gold answers are neither option letters nor option texts"
    if any(item.choices for item in items):
        return "not a classification task: only some items have options"
    answers = [answer for answer, _ in gold]
    distinct = sorted(set(answers))
    if declared is None:
        if any(item.references for item in items):
            return "not a classification task: items have reference texts"
        if len(distinct) > MAX_LABELS or 2 * len(distinct) > len(answers):
            return (
                f"not a classification task: gold answers look free-form "
                f"({len(distinct)} distinct in {len(answers)} items)"
            )
    return LabelSpace("label", tuple(distinct), _most_common(answers))


def _digest(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _option(item: ItemContext, space: LabelSpace, position: int) -> str:
    return LETTERS[position] if space.kind == "option_letter" else item.choices[position]


class ReferenceBackend(BackendBase):
    def __init__(self, kind: str, hooks: BenchmarkHooks, seed: int = 0):
        if kind not in ("oracle", "echo", "random", "majority"):
            raise ValueError(f"unknown reference system {kind!r}")
        self.kind = kind
        self.seed = seed
        self.hooks = hooks
        self.spaces: dict[tuple[str, str], LabelSpace | str] = {}
        self._identity: dict[str, object] = {"backend": kind, "answer_format": _formatters_fingerprint(hooks)}
        if kind == "random":
            self._identity["seed"] = seed

    answers_from_items = True  # gold answers and label spaces: item_identity is part of each key

    def identity(self) -> dict[str, object]:
        return dict(self._identity)

    def item_identity(self, item: ItemContext) -> dict[str, str]:
        """What this system answers `item` from besides the prompt (the stage adds it to the
        request's key, after `prepare`): the item as shown (its gold, references, input, options,
        fields: the answer hooks may read any of them) and, for random and majority, the task's
        label space, which every item's gold decides."""
        identity = {"item": _digest(dataclasses.asdict(item))}
        if self.kind in ("random", "majority"):
            space = self.spaces.get((item.benchmark, item.task))
            identity["labels"] = _digest(dataclasses.asdict(space) if isinstance(space, LabelSpace) else space)
        return identity

    def prepare(self, requests: Sequence[Request]) -> None:
        if self.kind not in ("random", "majority"):
            return
        by_task: dict[tuple[str, str], dict[str, ItemContext]] = {}
        for request in requests:
            if request.item.rotation == 0:
                by_task.setdefault((request.item.benchmark, request.item.task), {})[request.item.item_id] = request.item
        self.spaces = {
            (benchmark, task): label_space(
                [items[i] for i in sorted(items)], classification_declared(self.hooks, benchmark, task)
            )
            for (benchmark, task), items in sorted(by_task.items())
        }

    def unsupported(self, benchmark: str, task: str, setting: str, pass_name: str) -> str | None:
        if self.kind not in ("random", "majority"):
            return None
        space = self.spaces.get((benchmark, task))
        if space is None:
            return f"{self.kind}: no items seen for {benchmark}/{task}"
        return f"{self.kind}: {space}" if isinstance(space, str) else None

    def report(self) -> list[str]:
        return [
            f"{self.kind} on {b}/{t}: {s.describe() if isinstance(s, LabelSpace) else 'skipped, ' + s}"
            for (b, t), s in sorted(self.spaces.items())
        ]

    def answer(self, request: Request) -> str | None:
        item = request.item
        if self.kind == "oracle":
            return item.answer if item.answer is not None else (item.references[0] if item.references else None)
        if self.kind == "echo":
            return item.input
        space = self.spaces.get((item.benchmark, item.task))
        if not isinstance(space, LabelSpace):
            return None
        if self.kind == "majority":
            # a label (kind "label"), else the position of an option
            return str(space.majority) if space.kind == "label" else _option(item, space, int(space.majority))
        # random: one draw per request, from a generator seeded by the seed and the request key,
        # so the answer does not depend on batching or order.
        rng = random.Random(hashlib.sha256(f"{self.seed}:{request.key}".encode()).digest())
        if space.kind == "label":
            return rng.choice(space.labels)
        return _option(item, space, rng.randrange(len(item.choices)))

    def generate(self, requests: Sequence[Request]) -> list[Completion]:
        completions = []
        for request in requests:
            answer = self.answer(request)
            if answer is None:
                completions.append(
                    Completion("", None, None, "error", 0.0, error=f"{self.kind}: no answer for this item")
                )
                continue
            formatter = self.hooks.answer_formatters.get(request.item.benchmark)
            text = formatter(request.item, answer, self.kind) if formatter else answer
            completions.append(Completion(text, None, None, "stop", 0.0))
        return completions

    def close(self) -> None:
        pass


def make(
    name: str, config: ReferenceModel, *, benchmarks: BenchmarkHooks, seed: int = 0, **_: object
) -> ReferenceBackend:
    return ReferenceBackend(config.backend, benchmarks, seed=seed)
