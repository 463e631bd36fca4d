"""Backends, imported lazily: the default install never imports vllm (nor an HTTP client,
nor transformers when only a reference system runs).

Convention for a backend module: a module-level function

    make(name: str, config: <its ModelConfig>, **options) -> Backend

where `name` is the model's key in params `models:` and `options` are keyword
arguments a module may use or ignore (`seed`: params seed; `cache_root`: a directory
for small memo files such as weight-file hashes; `benchmarks`: the `BenchmarkHooks` the
reference and replay backends require, handed down by the caller: generation never reads the
benchmark registry, which sits above it).

A backend class inherits `core.generation_types.BackendBase`: the `Backend` protocol declares
every hook the generate stage calls (unsupported, prepare, item_identity, report, summary,
describe, prompt_length, choose_batch_size), and the base class gives each its default, so a
backend overrides only what it needs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, Unpack

from ...core.generation_types import Backend, ItemContext
from ..config import ModelConfig

if TYPE_CHECKING:
    from .readers import PredictionReader


@dataclass(frozen=True)
class BenchmarkHooks:
    """What the reference and replay backends take from the benchmarks (the registry's
    `backend_hooks()` collects them): predictions formats (name -> reader class, for replay
    sources), and per benchmark how a reference answer is written (`format_reference_answer`;
    None: the answer as is) and which tasks are classification (None: inferred from the items).
    A benchmark not named here gets the defaults, as hand-made test items do."""

    prediction_formats: Mapping[str, type[PredictionReader]] = field(default_factory=dict)
    answer_formatters: Mapping[str, Callable[[ItemContext, str, str], str] | None] = field(default_factory=dict)
    classification_tasks: Mapping[str, frozenset[str] | None] = field(default_factory=dict)


class BackendOptions(TypedDict, total=False):
    """What `make_backend` hands every backend module's `make` (each takes what it uses)."""

    seed: int  # the params seed
    cache_root: Path | None  # a directory for small memo files (weight-file hashes)
    benchmarks: BenchmarkHooks  # required by the reference and replay backends
    root: Path | None  # where a replay source's relative path starts (default: the working directory)


# backend name in params (`models.<name>.backend`) -> module in this package
MODULES: dict[str, str] = {
    "hf": "hf",
    "vllm": "vllm",
    "openai": "openai",
    "replay": "replay",
    "oracle": "reference",
    "echo": "reference",
    "random": "reference",
    "majority": "reference",
}


def make_backend(name: str, model_config: ModelConfig, **options: Unpack[BackendOptions]) -> Backend:
    """Load the model named `name` with the backend its config names (imported only now)."""
    backend = model_config.backend
    if backend not in MODULES:
        raise KeyError(f"unknown backend {backend!r} for model {name!r} (known: {', '.join(MODULES)})")
    module = importlib.import_module(f"{__name__}.{MODULES[backend]}")
    made: Backend = module.make(name, model_config, **options)
    return made
