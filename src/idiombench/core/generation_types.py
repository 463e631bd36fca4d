"""The generation interface shared by every backend.

A backend turns `Request`s into `Completion`s, one completion per request, in order.
Requests are fully specified (messages, sampling, seed, sample index); their `key`
is the content address used by the cache (see cache.py).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypedDict

if TYPE_CHECKING:
    from .items import Item

# The generation pass every paper number is computed from (others, e.g. OrderProbe's `consistency`
# samples or the option-order pass, feed the metrics that need them).
MAIN_PASS = "main"


@dataclass(frozen=True)
class Message:
    role: str  # "system" | "user" | "assistant"
    content: str


class SamplingJson(TypedDict):
    """`Sampling` as JSON (part of every request key)."""

    temperature: float
    top_p: float
    max_new_tokens: int
    stop: list[str]


@dataclass(frozen=True)
class Sampling:
    """Decoding parameters. temperature 0 means greedy decoding."""

    temperature: float = 0.0
    top_p: float = 1.0
    max_new_tokens: int = 256
    stop: tuple[str, ...] = ()

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0

    def to_json(self) -> SamplingJson:
        return {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_new_tokens": self.max_new_tokens,
            "stop": list(self.stop),
        }


@dataclass(frozen=True)
class ItemContext:
    """What reference systems (oracle, echo, random, majority) and replay need to know
    about the item behind a prompt. A model's output depends on the prompt's messages only; a
    backend that answers from the item's data (gold, options) adds what it reads to the request's
    cache key (`Backend.item_identity`)."""

    benchmark: str
    task: str
    setting: str
    item_id: str
    input: str
    answer: str | None = None
    references: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    fields: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    meta: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    rotation: int = 0  # the options' rotation the prompt shows (items.rotate); choices and answer are as shown


def item_context(item: Item, setting: str, rotation: int = 0) -> ItemContext:
    """The item as a prompt shows it: under an option rotation, its choices in the rotated order
    and a gold option letter where that order puts it."""
    from .items import rotate, rotated_answer

    return ItemContext(
        benchmark=item.benchmark,
        task=item.task,
        setting=setting,
        item_id=item.item_id,
        input=item.input,
        answer=rotated_answer(item.answer, len(item.choices), rotation),
        references=tuple(item.references),
        choices=rotate(tuple(item.choices), rotation),
        fields=item.fields,
        meta=item.meta,
        rotation=rotation,
    )


@dataclass(frozen=True)
class Request:
    key: str  # content address: model identity + messages + sampling + seed + sample index
    prompt_id: str  # the rendered prompt this request samples from
    messages: tuple[Message, ...]
    sampling: Sampling
    seed: int
    sample_index: int
    item: ItemContext
    pass_name: str = "main"  # the generation pass (benchmarks.<b>.generate): "main" or an extra pass


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    finish_reason: str  # "stop", "length", "error", or the backend's own word
    latency_s: float  # wall time of the batch or call that produced it, per request
    error: str | None = None  # set when the backend could not produce text for this request

    @property
    def failed(self) -> bool:
        return self.error is not None


def prompt_chars(request: Request) -> int:
    """A cheap, backend-independent estimate of a prompt's length (characters)."""
    return sum(len(m.content) for m in request.messages)


class Backend(Protocol):
    """One loaded model. Constructed once per process; `generate` is called with batches.

    Every hook the generate stage calls is declared here; `BackendBase` gives each one its
    default, so a backend (which inherits it) writes only the hooks it needs."""

    # whether a request's output depends on the batch it runs in (hf: padding and matrix shapes);
    # the stage then adds the batch size to the identity
    batch_size_changes_outputs: ClassVar[bool]
    # whether the output depends on the item's data beyond the prompt (the reference systems:
    # gold answers, label spaces); the stage then adds `item_identity(item)` to that request's key
    # after `prepare`
    answers_from_items: ClassVar[bool]

    def identity(self) -> dict[str, object]:
        """What makes this model's outputs this model's: backend, model id, revision or file
        hash, dtype, ... Part of every cache key, so two models never share entries."""
        ...

    def generate(self, requests: Sequence[Request]) -> list[Completion]: ...

    def close(self) -> None: ...

    def unsupported(self, benchmark: str, task: str, setting: str, pass_name: str) -> str | None:
        """Why this backend cannot serve that job (e.g. `random` on a task that is not
        classification, `replay` without a source), or None; such jobs are skipped and reported."""
        ...

    def prepare(self, requests: Sequence[Request]) -> None:
        """Sees the full request list once before any `generate` call (label sets for
        `majority`, the content index and match counts for `replay`)."""
        ...

    def item_identity(self, item: ItemContext) -> object:
        """What, beyond the prompt, decides the answer to `item` (a JSON value; only where
        `answers_from_items`)."""
        ...

    def report(self) -> list[str]:
        """Lines for the run summary (what was loaded, replay match counts ...)."""
        ...

    def summary(self) -> dict[str, object] | None:
        """A JSON body for the generate log's `backend_summary` (replay's match counts), or None."""
        ...

    def describe(self) -> str | None:
        """What was loaded, for identity.json's `loaded` (None: the backend's name)."""
        ...

    def prompt_length(self, request: Request) -> int:
        """A prompt's length, by which requests are ordered into batches of similar lengths."""
        ...

    def choose_batch_size(self, requests: Sequence[Request]) -> tuple[int, str] | None:
        """(batch size, why) for `batch_size: auto`, or None where the backend cannot size batches."""
        ...


class BackendBase(ABC):
    """The defaults of every optional hook of `Backend`: a backend serves every job, needs no
    preparation, answers from the prompt alone, reports nothing and cannot size batches."""

    batch_size_changes_outputs: ClassVar[bool] = False
    answers_from_items: ClassVar[bool] = False

    @abstractmethod
    def identity(self) -> dict[str, object]: ...

    @abstractmethod
    def generate(self, requests: Sequence[Request]) -> list[Completion]: ...

    def close(self) -> None:  # noqa: B027  # a default: nothing to release
        pass

    def unsupported(self, benchmark: str, task: str, setting: str, pass_name: str) -> str | None:
        return None

    def prepare(self, requests: Sequence[Request]) -> None:  # noqa: B027  # a default: nothing to prepare
        pass

    def item_identity(self, item: ItemContext) -> object:
        raise NotImplementedError(f"{type(self).__name__} answers from the prompt alone")

    def report(self) -> list[str]:
        return []

    def summary(self) -> dict[str, object] | None:
        return None

    def describe(self) -> str | None:
        return None

    def prompt_length(self, request: Request) -> int:
        return prompt_chars(request)

    def choose_batch_size(self, requests: Sequence[Request]) -> tuple[int, str] | None:
        return None
