"""Canonical locations of every stage's inputs and outputs.

The Snakefile, dvc.yaml and the CLI defaults all follow these paths; a test keeps
them in step. Paths are relative to the project root (the working directory of
`snakemake` and `dvc repro`).
"""

from __future__ import annotations

from pathlib import Path

from .ownership import Output, files_named_by

DATA = Path("data")
RAW = DATA / "raw"
PROCESSED = DATA / "processed"
# human labels an analysis reads (e.g. benchmarks.g-idiomalign.attention.annotations): a
# tracked input of every attention job, so that editing a label file reruns the analysis
ANNOTATIONS = DATA / "annotations"
RESULTS = Path("results")
REPORTS = Path("reports")
PLOTS = RESULTS / "plots"  # `dvc plots` data, one folder per curve family (dvc.yaml's `plots:`)
# the records of each benchmark's code (data.json, package.json: pipeline/records.py), what its
# stages depend on in both graphs, and a plugin's params section with its defaults (DVC's params)
CODE = RESULTS / "code"
# the records computed before, by the bytes of the code they were computed from: reading and
# analysing a benchmark's code takes ~1 s, and every Snakefile parse needs every record (not an
# output of any stage; deleting it costs one recomputation)
CODE_RECORDS_CACHE = RESULTS / "code-cache"
PLUGIN_PARAMS = RESULTS / "params"

# The file each stage writes last into its output folder: the folder is complete with it, and
# it marks the folder as the stage's own (a stage replaces only a folder that holds it:
# io.check_output_folder).
ACQUIRED = "ACQUIRED.json"
BUILD_STATS = "build_stats.json"
RENDER_STATS = "render_stats.json"
GENERATION_INFO = "generation_info.json"
SCORING_META = "scoring_meta.json"
CONSTRUCTION = "construction.json"
ATTENTION_SUMMARY = "summary.json"
INDEX = "index.json"  # report's tables/ and figures/, results/plots/: what the stage wrote there

# What each stage's output is (io.check_output_folder, io.staged_directory): its completion
# record (ownership.RECORD) names the stage and kind. An earlier version's folder, without that
# record, is recognised only when the record it wrote last parses and names every file in the
# folder (ownership.files_named_by; docs/ARCHITECTURE.md "Owned output").
ACQUIRE_OUTPUT = Output(
    "acquire",
    "release files",
    legacy_record=ACQUIRED,
    legacy=files_named_by(ACQUIRED, lambda body: [entry["file"] for entry in body["files"]]),
)
BUILD_OUTPUT = Output(
    "build",
    "items",
    legacy_record=BUILD_STATS,
    legacy=files_named_by(
        # orderprobe's build also wrote the released word lists (its only extra file)
        BUILD_STATS,
        lambda body: [f"{task}.parquet" for task in body["tasks"]] + ["released_lexicon.json"],
    ),
)
RENDER_OUTPUT = Output(
    "render",
    "prompts",
    legacy_record=RENDER_STATS,
    legacy=files_named_by(RENDER_STATS, lambda body: [s["file"] for s in body["settings"].values() if s["file"]]),
)
GENERATE_OUTPUT = Output(
    "generate",
    "generations",
    legacy_record=GENERATION_INFO,
    legacy=files_named_by(
        GENERATION_INFO, lambda body: [f"{table}.parquet" for table in body["tables"]] + ["identity.json"]
    ),
)
SCORE_OUTPUT = Output(
    "score",
    "score tables",
    legacy_record=SCORING_META,
    legacy=files_named_by(
        SCORING_META,
        lambda body: (
            [f"{setting}.parquet" for setting in body.get("settings", {})]
            if body["status"] in ("scored", "skipped")
            else []
        ),
    ),
)
CONSTRUCT_OUTPUT = Output(
    "construct",
    "construction",
    legacy_record=CONSTRUCTION,
    legacy=files_named_by(
        CONSTRUCTION,
        lambda body: (
            ["alignments.parquet", "mnn_candidates.parquet", "released_status.parquet"]
            if isinstance(body["benchmark"], str)
            else []
        ),
    ),
)
# JSON output files carry their record in a key of their own (ownership.stamp)
AGGREGATE_OUTPUT = Output("aggregate", "metrics")
TRACK_OUTPUT = Output("track", "tracking record")
COMPARISON_OUTPUT = Output("track-comparison", "comparison record")
NOISE_OUTPUT = Output("noise", "serving-noise results")
CODE_OUTPUT = Output("code-record", "code record")
PLUGIN_PARAMS_OUTPUT = Output("code-record", "plugin params")
ATTENTION_OUTPUT = Output(
    "attention",
    "attention diagnostics",
    legacy_record=ATTENTION_SUMMARY,
    legacy=files_named_by(
        ATTENTION_SUMMARY, lambda body: ["items.parquet"] if body["status"] in ("measured", "skipped") else []
    ),
)


def code_record(benchmark: str, kind: str) -> Path:
    """A benchmark's code record: `data` (what acquire, build, render reach) or `package` (all)."""
    return CODE / benchmark / f"{kind}.json"


def plugin_params(benchmark: str) -> Path:
    """A plugin's params section with its defaults, as DVC reads it (generated)."""
    return PLUGIN_PARAMS / f"{benchmark}.json"


def raw_dir(benchmark: str) -> Path:
    return RAW / benchmark


def acquired_record(benchmark: str) -> Path:
    """Written last by `acquire`: the list of files, their hashes and where each came from."""
    return raw_dir(benchmark) / ACQUIRED


def processed_dir(benchmark: str) -> Path:
    return PROCESSED / benchmark


def task_items(benchmark: str, task: str) -> Path:
    return processed_dir(benchmark) / f"{task}.parquet"


def build_stats(benchmark: str) -> Path:
    return processed_dir(benchmark) / BUILD_STATS


def prompts_dir(benchmark: str) -> Path:
    return RESULTS / "prompts" / benchmark


def prompts_file(benchmark: str, setting: str) -> Path:
    return prompts_dir(benchmark) / f"{setting}.parquet"


def generations_dir(model: str) -> Path:
    return RESULTS / "generations" / model


def generations_complete(model: str) -> bool:
    """Whether the model's generations folder holds its completion record."""
    return (generations_dir(model) / GENERATION_INFO).is_file()


def generations_file(*, benchmark: str, model: str, setting: str) -> Path:
    return generations_dir(model) / benchmark / f"{setting}.parquet"


def cache_dir(model: str) -> Path:
    """Content-addressed generation cache. Not a declared output of any stage: Snakemake
    and DVC delete declared outputs before a rerun, and the cache must survive that."""
    return RESULTS / "cache" / model


def logs_dir() -> Path:
    """Per-run logs and summaries (cache hits, timings) that differ between runs and so
    are kept out of the declared outputs."""
    return RESULTS / "logs"


def generate_failure(model: str, logs: Path | None = None) -> Path:
    """Written by a generate run that failed for too many failed requests, removed by the next
    successful one: the report marks the model's cells "failed" while it exists."""
    return (logs if logs is not None else logs_dir()) / f"generate-{model}.failed.json"


def scores_dir(*, benchmark: str, model: str) -> Path:
    return RESULTS / "scores" / model / benchmark


def noise_dir(model: str) -> Path:
    """The serving-noise pass of one model: its sample, perturbed outputs and figures."""
    return RESULTS / "noise" / model


def metrics_file(*, benchmark: str, model: str) -> Path:
    """DVC metrics file: the aggregates of one model on one benchmark."""
    return RESULTS / "metrics" / benchmark / f"{model}.json"


def tracking_record(*, benchmark: str, model: str) -> Path:
    """What `track` logged for one model on one benchmark: run ids per setting."""
    return RESULTS / "tracking" / benchmark / f"{model}.json"


def comparison_record(benchmark: str) -> Path:
    """What `track-comparison` logged for a benchmark: its comparison run, the traces it tagged."""
    return RESULTS / "comparison" / f"{benchmark}.json"


def report_pdf() -> Path:
    return REPORTS / "all_tables.pdf"


def report_tables_dir() -> Path:
    return REPORTS / "tables"


def report_figures_dir() -> Path:
    return REPORTS / "figures"


def construction_dir(benchmark: str) -> Path:
    """A benchmark's own data-construction pipeline rebuilt from its release (G-IdiomAlign's
    gloss alignment): the rebuilt set and its comparison with the release."""
    return RESULTS / "construction" / benchmark


def attention_dir(*, benchmark: str, model: str) -> Path:
    """A model's attention diagnostics on a benchmark (per-item table, summary)."""
    return RESULTS / "analysis" / benchmark / "attention" / model
