"""The papers' models' released per-item predictions as replay sources: a replay model with
`published: <paper model>` in params runs them as a model of its own (intervals, MLflow items,
disagreement with the other models, the Reproduction table).

The release (`published_predictions/<folder>/<task>_<k>-shot_<run>.json`, acquired with the rest of
the data) holds the paper's DeepSeek-R1 and Qwen3-235B runs of the k-shot settings. Its file
names carry the run as the authors named it (DeepSeek-R1's 3/5-shot files say
`DeepSeek-R1-Instruct`); RUNS maps each to the paper's model id (published_cells.yaml's
`model_id`), so a replay model reproduces that model's published cells. Not replayed as a run:
the sequential (`multi_step`) and scaling (`sacling`) files, whose settings are a separate
study (tests/integration/test_semanticqa_replay_paper.py replays them), and the one-task
Qwen3 8B/14B/32B files no paper table reports.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...data.manifest import FileSpec
from ...generation.config import ReplaySource
from .adapters import ADAPTERS
from .published_format import FORMAT

RELEASE_FOLDER = "published_predictions/"
SHOT_FILE = re.compile(r"(?P<task>.+)_(?P<setting>[0-9]+-shot)_(?P<run>[^_]+)\.json")
# paper model id -> the run names its files carry
RUNS: dict[str, tuple[str, ...]] = {
    "deepseek-r1": ("DeepSeek-R1", "DeepSeek-R1-Instruct"),
    "qwen3-235b": ("qwen3-235b-a22b",),
}


def published_sources(benchmark: str, specs: list[FileSpec], raw_dir: Path) -> dict[str, list[ReplaySource]]:
    """paper model id -> one replay source per released k-shot file of its runs, in file order."""
    run_of = {run: model for model, runs in RUNS.items() for run in runs}
    found: dict[str, list[ReplaySource]] = {model: [] for model in RUNS}
    for spec in sorted(specs, key=lambda s: s.file):
        match = SHOT_FILE.fullmatch(Path(spec.file).name) if spec.file.startswith(RELEASE_FOLDER) else None
        if match is None or match["task"] not in ADAPTERS or match["run"] not in run_of:
            continue  # another study's file (sequential, scaling) or a run no paper table reports
        found[run_of[match["run"]]].append(
            ReplaySource(
                benchmark=benchmark,
                task=match["task"],
                setting=match["setting"],
                path=(raw_dir / spec.file).as_posix(),
                format=FORMAT,
            )
        )
    return found
