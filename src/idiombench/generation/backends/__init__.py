"""Backends, imported lazily: the default install never imports vllm (nor an HTTP client,
nor transformers when only a reference system runs).

Convention for a backend module: a module-level function

    make(name: str, config: <its ModelConfig>, **options) -> Backend

where `name` is the model's key in params `models:` and `options` are keyword
arguments a module may use or ignore (`seed`: params seed; `cache_root`: a directory
for small memo files such as weight-file hashes).

Optional methods a backend may add to the `Backend` protocol (generate looks them up
with getattr; backends without them serve everything):

    unsupported(benchmark, task, setting, pass_name) -> str | None
        a reason why this backend cannot serve that job (e.g. `random` on a task that is
        not classification, `replay` without a source); such jobs are skipped and reported.
    prepare(requests) -> None
        sees the full request list once before any `generate` call (label sets for
        `majority`, the content index and match counts for `replay`).
    report() -> list[str]
        lines for the run summary (what was loaded, replay match counts ...).
"""

from __future__ import annotations

import importlib
from typing import Any

from ..config import ModelConfig
from ..types import Backend

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


def make_backend(name: str, model_config: ModelConfig, **options: Any) -> Backend:
    """Load the model named `name` with the backend its config names (imported only now)."""
    backend = model_config.backend
    if backend not in MODULES:
        raise KeyError(f"unknown backend {backend!r} for model {name!r} (known: {', '.join(MODULES)})")
    module = importlib.import_module(f"{__name__}.{MODULES[backend]}")
    return module.make(name, model_config, **options)
