"""Greedy outputs compared within a stated tolerance, not token for token.

Two numerically different paths to the same greedy decoding (a static vs a dynamic KV
cache, a request alone vs left-padded in a batch) compute the same logits up to rounding:
in float32 to about 1e-5, in bfloat16 to a few of its steps (logits of magnitude 8-16 are
resolved to 1/16). Where the two best tokens of a step are closer than that, the argmax
can flip and the continuations part, so "the texts are equal" holds only in float32 and
only by luck. What must hold in every dtype: up to and including the first step where the
two runs choose differently, every logit agrees within the tolerance (so a divergence is a
near-tie, never a bug), and identical token ids give identical texts.

`traced(backend)` records the new token ids and per-step logits of every row of every
`model.generate` call the hf backend makes, through the backend's own generate path.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

# Largest difference of any logit between two paths, per compute dtype: float32 measured
# ~2e-5 on the tiny model (logits up to ~10); bfloat16 measured up to 0.14 (2-3 steps of 1/16).
LOGIT_TOLERANCE = {"float32": 1e-3, "bfloat16": 0.25}


@dataclass
class Trace:
    ids: list[int]  # the generated tokens through the first end token (the rest is padding)
    logits: Any  # torch.Tensor [len(ids), vocab], float32


@contextmanager
def traced(backend: Any) -> Iterator[list[Trace]]:
    """Every row of every generate call the backend makes while inside, in order."""
    import torch

    model = backend.model
    original = model.generate
    traces: list[Trace] = []

    def generate(*args: Any, **kwargs: Any) -> Any:
        config = kwargs["generation_config"]
        config.output_logits, config.return_dict_in_generate = True, True
        out = original(*args, **kwargs)
        start = out.sequences.shape[1] - len(out.logits)
        for row in range(out.sequences.shape[0]):
            ids = out.sequences[row, start:].tolist()
            end = next((i + 1 for i, token in enumerate(ids) if token in backend.eos_ids), len(ids))
            logits = [step[row].float() for step in out.logits[:end]]
            traces.append(Trace(ids[:end], torch.stack(logits)))
        return out.sequences

    model.generate = generate  # an instance attribute shadows the bound method
    try:
        yield traces
    finally:
        del model.generate


def first_divergence(a: Trace, b: Trace) -> int | None:
    """The first step where the two runs chose different tokens, or None."""
    return next((i for i, (x, y) in enumerate(zip(a.ids, b.ids, strict=False)) if x != y), None)


def assert_same_up_to_near_ties(a: Trace, b: Trace, dtype: str, what: str) -> bool:
    """Every logit agrees within LOGIT_TOLERANCE[dtype] up to and including the first
    step where the runs part (or through the shorter run); True where the ids are equal."""
    tolerance = LOGIT_TOLERANCE[dtype]
    step = first_divergence(a, b)
    compared = step + 1 if step is not None else min(len(a.ids), len(b.ids))
    worst = (a.logits[:compared] - b.logits[:compared]).abs().max().item()
    where = f"{what}: the runs part at step {step}" if step is not None else f"{what}: same tokens"
    assert worst <= tolerance, f"{where}; logits differ by {worst:.4g} > {tolerance} ({dtype})"
    if step is None:
        assert a.ids == b.ids, f"{what}: one run ended early without a different token: {a.ids} vs {b.ids}"
        return True
    return False
