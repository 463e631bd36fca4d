"""Scoring a declared benchmark's prompts on given outputs, in process: the generations table a
generate run would write (one main-pass row per prompt), through the benchmark's score hook."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from idiombench.benchmarks.contexts import ScoreContext


def score_outputs(
    bench: Any,
    config: Any,
    items: dict[str, dict[str, Any]],
    prompts: Sequence[Any],
    text: Callable[[Any], str],
    scorers: Any = None,
    notes: list[str] | None = None,
) -> pd.DataFrame:
    """The score table of `prompts` (one setting) answered with `text(prompt)`, the neural scores
    by `scorers` (None: none); the stage's notes appended to `notes`."""
    setting = prompts[0].setting
    generations = pd.DataFrame(
        [
            {"prompt_id": p.prompt_id, "task": p.task, "setting": p.setting, "item_id": p.item_id, "pass": "main"}
            | {"sample_index": 0, "text": text(p), "error": None}
            for p in prompts
        ]
    )
    ctx = ScoreContext(
        params=None,  # the declared score stage reads only its own section
        benchmark=bench.name,
        model="m",
        config=config,
        generations={setting: generations},
        items=items,
        scorers=scorers,
    )
    table = bench.score(ctx)[setting]
    if notes is not None:
        notes += ctx.notes
    return table
