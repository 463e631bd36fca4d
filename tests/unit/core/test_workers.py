"""How many worker processes a score run starts (core.workers.worker_budget): the threads its
job was granted, never more than the usable cores. Snakemake exports a job's threads as
OMP_NUM_THREADS (checked with the real score rule in tests/integration/test_score_threads.py);
IDIOMBENCH_SCORE_WORKERS chooses explicitly."""

from __future__ import annotations

import pytest

from idiombench.core.workers import usable_cores, worker_budget, worker_count


@pytest.mark.parametrize(
    ("environ", "cores", "expected", "capped"),
    [
        ({}, 4, 4, False),  # nothing granted: one per usable core
        ({"OMP_NUM_THREADS": "2"}, 4, 2, False),  # Snakemake granted 2 threads of 4 cores
        ({"OMP_NUM_THREADS": "1"}, 4, 1, False),  # `--set-threads score=1`: in process
        ({"OMP_NUM_THREADS": "8"}, 2, 2, True),  # `--cores 8` on a 2-core machine: never more than the cores
        ({"OMP_NUM_THREADS": " 3 "}, 16, 3, False),
        ({"OMP_NUM_THREADS": "4,2"}, 8, 4, False),  # an OpenMP list: its outermost level
        ({"OMP_NUM_THREADS": "0"}, 3, 3, False),  # not a thread count (OpenMP ignores it too)
        ({"OMP_NUM_THREADS": "all"}, 3, 3, False),
        ({"IDIOMBENCH_SCORE_WORKERS": "3", "OMP_NUM_THREADS": "1"}, 4, 3, False),  # the explicit choice wins
        ({"IDIOMBENCH_SCORE_WORKERS": "0", "OMP_NUM_THREADS": "4"}, 4, 0, False),  # 0: in process
        ({"IDIOMBENCH_SCORE_WORKERS": "6"}, 2, 2, True),  # explicit, still never more than the cores
        ({"IDIOMBENCH_SCORE_WORKERS": "", "OMP_NUM_THREADS": ""}, 3, 3, False),  # empty: unset
    ],
)
def test_the_workers_are_the_threads_granted_never_more_than_the_cores(environ, cores, expected, capped):
    assert worker_count(environ, cores=cores) == expected
    workers, source = worker_budget(environ, cores=cores)
    assert workers == expected and ("capped" in source) == capped, source


def test_the_budget_says_where_it_comes_from():
    assert worker_budget({"OMP_NUM_THREADS": "2"}, cores=4) == (
        2,
        "OMP_NUM_THREADS=2: the threads granted; 4 usable cores",
    )
    assert worker_budget({"OMP_NUM_THREADS": "8"}, cores=2) == (
        2,
        "OMP_NUM_THREADS=8: the threads granted, capped at the 2 usable cores",
    )
    assert worker_budget({}, cores=3) == (3, "one per usable core; 3 usable cores")
    assert worker_budget({"IDIOMBENCH_SCORE_WORKERS": "1"}, cores=3) == (
        1,
        "IDIOMBENCH_SCORE_WORKERS=1; 3 usable cores",
    )


def test_the_default_reads_this_process(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("IDIOMBENCH_SCORE_WORKERS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert worker_count() == usable_cores() >= 1
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert worker_count() == 1


@pytest.mark.parametrize("value", ["two", "-1", "1.5"])
def test_a_malformed_explicit_count_is_named(value):
    with pytest.raises(ValueError, match=f"IDIOMBENCH_SCORE_WORKERS='{value}': expected a non-negative integer"):
        worker_count({"IDIOMBENCH_SCORE_WORKERS": value}, cores=2)
