"""Generation rows from the SemanticQA published results format (one JSON object per line:
the item's released fields plus `prediction`), matched to built items BY CONTENT through
the replay backend (generation/backends/replay.py), for scoring predictions produced
elsewhere with the pipeline's own score/aggregate code.

Every built item of the task gets one row: its prediction, or a failed row (error "no
prediction in replay source") that scores as wrong. With only_matched, items without a
prediction get no row (the scores then cover the items the file covers, as the authors'
own evaluation did, the `records` denominator of evaluate-predictions: the counts say how
many of the task's items that is). Either way the
summary counts the lines that match no item (`unmatched_lines`, `unmatched_examples`) and
the items without a prediction (`requests_without_prediction`); nothing is dropped silently.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ...core.generation_types import Message, Request, Sampling, item_context
from ...core.items import Item
from ...generation.backends import BenchmarkHooks, make_backend
from ...generation.cache import request_key
from ...generation.config import ReplayModel, ReplaySource
from ...generation.table import GENERATION_SCHEMA
from .published_format import FORMAT, PublishedResultsSource

BENCHMARK = "semanticqa"
MAIN_PASS = "main"


def published_generations(
    path: Path, task: str, setting: str, items: dict[str, Item], model: str = "published", only_matched: bool = False
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """(generations table of `task` in `setting`, the replay summary) for one published file."""
    source = ReplaySource(benchmark=BENCHMARK, task=task, setting=setting, path=str(path), format=FORMAT)
    backend = make_backend(
        model,
        ReplayModel(backend="replay", sources=[source]),
        benchmarks=BenchmarkHooks(prediction_formats={FORMAT: PublishedResultsSource}),
    )
    identity = backend.identity()
    requests = []
    for item_id in sorted(items):
        # No rendered prompt stands behind a published prediction: the request carries the
        # prompt id only (replay matches by the item's content, not by the prompt).
        messages = (Message("user", f"{BENCHMARK}/{task}/{setting}/{item_id}"),)
        requests.append(
            Request(
                key=request_key(identity, messages, Sampling(), 0, 0),
                prompt_id=f"{BENCHMARK}/{task}/{setting}/{item_id}",
                messages=messages,
                sampling=Sampling(),
                seed=0,
                sample_index=0,
                item=item_context(items[item_id], setting),
                pass_name=MAIN_PASS,
            )
        )
    backend.prepare(requests)
    completions = backend.generate(requests)
    rows = [
        {
            "prompt_id": r.prompt_id,
            "benchmark": BENCHMARK,
            "task": task,
            "setting": setting,
            "item_id": r.item.item_id,
            "prompt_hash": "",
            "pass": MAIN_PASS,
            "sample_index": 0,
            "rotation": 0,
            "text": c.text,
            "prompt_tokens": None,
            "completion_tokens": None,
            "finish_reason": c.finish_reason,
            "error": c.error,
            "request_key": r.key,
        }
        for r, c in zip(requests, completions, strict=False)
        if not (only_matched and c.failed)
    ]
    frame = pd.DataFrame(rows, columns=GENERATION_SCHEMA.names)
    summary = backend.summary() or {}  # the replay backend's match counts
    summary["report"] = backend.report()
    return frame, summary
