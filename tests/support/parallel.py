"""How `make test` spreads the suite over pytest-xdist's workers (`-n`, `--dist loadgroup`).

A test file is one unit of work: its module-scoped fixtures (a built benchmark, a started Slurm
cluster) are made once, on one worker. Files that share an expensive session fixture are one unit
too (vLLM's offline engine takes most of a minute to start: it starts once). The units start
longest first, so the workers finish together instead of one waiting on the end-to-end test.
"""

from __future__ import annotations

import os

import pytest

# Session fixtures worth one worker: files whose tests take one of them run on the same worker.
SHARED_FIXTURES = {"vllm_semanticqa": "vllm"}

# The longest units, in the order they start (the rest follow in collection order): each takes
# minutes, most of the suite's other files seconds (`--durations` of fresh-clone runs:
# docs/performance.md, "make test from a fresh clone").
LONGEST_FIRST = (
    "tests/integration/test_slurm.py",
    "tests/integration/test_snakemake_dvc_record.py",
    "vllm",
    "tests/integration/test_workflow.py",
)


def unit_of(item: pytest.Item) -> str:
    """The unit of work `item` belongs to: its file, or the group of a shared session fixture."""
    for fixture, group in SHARED_FIXTURES.items():
        if fixture in getattr(item, "fixturenames", ()):
            return group
    return item.nodeid.split("::", 1)[0]


def group_and_order(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each item with its unit (`xdist_group`) and put the longest units first. A no-op
    unless the run is distributed over workers (`-n N`, N ≥ 1)."""
    if not getattr(config.option, "numprocesses", None) and "PYTEST_XDIST_WORKER" not in os.environ:
        return
    units = {id(item): unit_of(item) for item in items}
    for item in items:
        item.add_marker(pytest.mark.xdist_group(units[id(item)]))
    rank = {unit: index for index, unit in enumerate(LONGEST_FIRST)}
    position = {id(item): index for index, item in enumerate(items)}
    items.sort(key=lambda item: (rank.get(units[id(item)], len(rank)), position[id(item)]))
