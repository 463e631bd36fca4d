"""Chengyu-Bench: ChID, the official release (when a checkout is given), and the project's sample.

Tasks built:
- `chid` (+ `chid_train_few`, `chid_dev_few` when configured): FewCLUE ChID, see chid.py.
- `connotation`, `appropriateness`, `open_cloze`: the official release read from
  `build.release_dir` through the field mapping `build.release`. The release's layout
  is ASSUMED (see config.py): it was not reachable when this adapter was written.
- `connotation_sample`, `appropriateness_sample`: a small sample written by this
  project (sample/*.jsonl), meta `sample: true`. It is not the official data.

Without the release the build still succeeds and says so in a note starting with
"NOT AVAILABLE", which the CLI prints; the release tasks are then absent, not empty.
"""

from __future__ import annotations

from collections import Counter
from importlib import resources
from pathlib import Path

from ...core.errors import ConfigError
from ...core.io import sha256_file
from ...core.items import Item
from ..base import BuildResult, BuildStats
from .chid import build_chid
from .config import (
    AppropriatenessLabels,
    AppropriatenessRelease,
    ChengyuBenchBuild,
    ConnotationLabels,
    ConnotationRelease,
    ReleaseFile,
)
from .release import Source, read_appropriateness, read_connotation, read_open_cloze

BENCHMARK = "chengyu-bench"
PARAMS = "benchmarks.chengyu-bench.build"
RELEASE_TASKS = ("connotation", "appropriateness", "open_cloze")
SAMPLE_TASKS = ("connotation_sample", "appropriateness_sample")
SAMPLE_NOTE_FIELDS = ("note", "source")
SAMPLE_CONNOTATION = ConnotationRelease(
    file="connotation.jsonl",
    format="jsonl",
    idiom_field="idiom",
    label_field="label",
    labels=ConnotationLabels(positive=["positive"], negative=["negative"]),
)
SAMPLE_APPROPRIATENESS = AppropriatenessRelease(
    file="appropriateness.jsonl",
    format="jsonl",
    passage_field="sentence",
    idiom_field="idiom",
    label_field="label",
    labels=AppropriatenessLabels(correct=["correct"], wrong=["wrong"]),
)


def sample_dir() -> Path:
    return Path(str(resources.files(__package__).joinpath("sample")))


def release_path(cfg: ChengyuBenchBuild) -> Path | None:
    """The release checkout, or None when it is not configured. A configured path that is
    not a directory is an error: a typo must not quietly turn into "release not available"."""
    if cfg.release_dir is None:
        return None
    path = Path(cfg.release_dir).expanduser()
    if not path.is_dir():
        raise ConfigError(
            f"{PARAMS}.release_dir is {cfg.release_dir!r}, which is not a directory: point it at a checkout "
            "of github.com/sofyc/ChengyuBench, or set it to null to run without the release"
        )
    return path


def not_available_note(cfg: ChengyuBenchBuild) -> str | None:
    """The line the CLI prints at acquire and build time when the release cannot be used."""
    if release_path(cfg) is not None:
        return None
    why = f"{PARAMS}.release_dir is null"
    if cfg.samples:
        consequence = (
            "Evaluative Connotation and Appropriateness run only on the small sample written by this project "
            "(tasks connotation_sample and appropriateness_sample, not the official data), and Open Cloze "
            "does not run at all"
        )
    else:
        consequence = (
            "Evaluative Connotation, Appropriateness and Open Cloze do not run at all "
            f"(the project's sample is off: {PARAMS}.samples is false)"
        )
    return (
        "NOT AVAILABLE: the official Chengyu-Bench release (github sofyc/ChengyuBench) is not available "
        f"({why}). To use it, set {PARAMS}.release_dir in params.yaml to a local checkout and check the "
        f"field mapping under {PARAMS}.release (the release layout it describes is an assumption). "
        f"Until then {consequence}. ChID is built as usual."
    )


def build_release(root: Path, cfg: ChengyuBenchBuild, stats: BuildStats) -> dict[str, list[Item]]:
    tasks: dict[str, list[Item]] = {}
    files: dict[str, object] = {}

    def source(task: str, mapping: ReleaseFile) -> Source:
        return Source(root / mapping.file, f"release/{mapping.file}", f"{PARAMS}.release.{task}")

    mappings = cfg.release
    if mappings.connotation is not None:
        tasks["connotation"] = read_connotation(
            source("connotation", mappings.connotation), mappings.connotation, "connotation", stats
        )
    if mappings.appropriateness is not None:
        tasks["appropriateness"] = read_appropriateness(
            source("appropriateness", mappings.appropriateness), mappings.appropriateness, "appropriateness", stats
        )
    if mappings.open_cloze is not None:
        tasks["open_cloze"] = read_open_cloze(
            source("open_cloze", mappings.open_cloze), mappings.open_cloze, "open_cloze", stats
        )
    for task in RELEASE_TASKS:
        mapping: ReleaseFile | None = getattr(mappings, task)
        if mapping is None:
            stats.notes.append(f"Release task {task} not read: {PARAMS}.release.{task} is null.")
            continue
        files[task] = {
            "file": mapping.file,
            "format": mapping.format,
            "rows": len(tasks[task]),
            "sha256": sha256_file(root / mapping.file),
        }
    stats.details["release"] = {"release_dir": cfg.release_dir, "available": True, "files": files}
    stats.notes.append(
        "The official release was read through the field mapping in params.yaml; its layout is an "
        "assumption, and the files' sha256 are recorded under details.release (acquire does not copy or "
        "check them)."
    )
    return tasks


def build_samples(stats: BuildStats) -> dict[str, list[Item]]:
    folder = sample_dir()
    tasks = {
        "connotation_sample": read_connotation(
            Source(
                folder / SAMPLE_CONNOTATION.file,
                f"sample/{SAMPLE_CONNOTATION.file}",
                "(package sample)",
                sample=True,
                keep_fields=SAMPLE_NOTE_FIELDS,
            ),
            SAMPLE_CONNOTATION,
            "connotation_sample",
            stats,
        ),
        "appropriateness_sample": read_appropriateness(
            Source(
                folder / SAMPLE_APPROPRIATENESS.file,
                f"sample/{SAMPLE_APPROPRIATENESS.file}",
                "(package sample)",
                sample=True,
                keep_fields=SAMPLE_NOTE_FIELDS,
            ),
            SAMPLE_APPROPRIATENESS,
            "appropriateness_sample",
            stats,
        ),
    }
    stats.details["sample"] = {
        task: dict(sorted(Counter(str(item.answer) for item in items).items())) for task, items in tasks.items()
    }
    stats.notes.append(
        "connotation_sample and appropriateness_sample are a small SAMPLE written by the idiombench project "
        "(well-known idioms with uncontroversial polarity and textbook correct/incorrect usage), not the "
        "official Chengyu-Bench data; their numbers are not comparable with the paper's table 7."
    )
    return tasks


def build(raw_dir: Path, cfg: ChengyuBenchBuild) -> BuildResult:
    stats = BuildStats(BENCHMARK)
    tasks = build_chid(raw_dir, cfg.chid, stats)
    root = release_path(cfg)
    if root is not None:
        tasks.update(build_release(root, cfg, stats))
    if cfg.samples:
        tasks.update(build_samples(stats))
    note = not_available_note(cfg)
    if note is not None:
        stats.notes.insert(0, note)
        stats.details["release"] = {"release_dir": cfg.release_dir, "available": False}
    return BuildResult(tasks=tasks, stats=stats)
