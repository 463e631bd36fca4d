"""The per-sample seed rule shared by backends that accept a seed per request."""

from __future__ import annotations

from ...core.generation_types import Request


def sample_seed(request: Request) -> int:
    """Seed for one sample: the run's seed (`request.seed`) plus the sample index.

    Sample 0 uses the run's seed itself, sample k uses seed + k, so the n samples of a
    prompt draw different but reproducible streams, and adding samples later leaves the
    existing ones (and their cache entries) unchanged. Greedy requests carry the seed too;
    it does not change their output."""
    return request.seed + request.sample_index
