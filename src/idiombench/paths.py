"""Canonical locations of every stage's inputs and outputs.

The Snakefile, dvc.yaml and the CLI defaults all follow these paths; a test keeps
them in step. Paths are relative to the project root (the working directory of
`snakemake` and `dvc repro`).
"""

from __future__ import annotations

from pathlib import Path

DATA = Path("data")
RAW = DATA / "raw"
PROCESSED = DATA / "processed"
RESULTS = Path("results")
REPORTS = Path("reports")


def raw_dir(benchmark: str) -> Path:
    return RAW / benchmark


def acquired_record(benchmark: str) -> Path:
    """Written last by `acquire`: the list of files, their hashes and where each came from."""
    return raw_dir(benchmark) / "ACQUIRED.json"


def processed_dir(benchmark: str) -> Path:
    return PROCESSED / benchmark


def task_items(benchmark: str, task: str) -> Path:
    return processed_dir(benchmark) / f"{task}.parquet"


def build_stats(benchmark: str) -> Path:
    return processed_dir(benchmark) / "build_stats.json"
