"""What every benchmark provides, and the shared build driver."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol

from ..core import paths
from ..core.generation_types import ItemContext
from ..core.io import staged_directory, write_json
from ..core.items import Item, write_items
from ..data.manifest import FileSpec
from ..metrics import evaluate
from ..metrics.body import AnyBody
from ..metrics.spec import MetricSpec, Scope
from ..report.published import PublishedCells
from .contexts import ConfigT, ItemView

if TYPE_CHECKING:
    import pandas as pd

    from ..generation.config import ReplaySource
    from ..params.schema import Params
    from ..report.tables import Section
    from ..scoring.provenance import PaperRole
    from .contexts import (
        AggregateContext,
        AttentionContext,
        AttentionPrompt,
        HumanLabels,
        PlotSpec,
        RenderOutput,
        ReportContext,
        ScoreContext,
    )

MAX_EXAMPLES = 10


@dataclass
class BuildStats:
    """Counts in, counts out, and every row dropped, merged or flagged, with the reason."""

    benchmark: str
    rows_read: Counter[str] = field(default_factory=Counter)
    rows_kept: Counter[str] = field(default_factory=Counter)
    dropped: dict[str, list[Any]] = field(default_factory=dict)
    merged: dict[str, list[Any]] = field(default_factory=dict)
    flagged: dict[str, list[Any]] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def read(self, source: str, n: int = 1) -> None:
        self.rows_read[source] += n

    def kept(self, source: str, n: int = 1) -> None:
        self.rows_kept[source] += n

    def drop(self, reason: str, example: object) -> None:
        self.dropped.setdefault(reason, []).append(example)

    def merge(self, reason: str, example: object) -> None:
        self.merged.setdefault(reason, []).append(example)

    def flag(self, reason: str, example: object) -> None:
        self.flagged.setdefault(reason, []).append(example)

    def to_json(self, tasks: dict[str, int]) -> dict[str, object]:
        def summarise(groups: dict[str, list[object]]) -> dict[str, object]:
            return {
                reason: {"count": len(examples), "examples": examples[:MAX_EXAMPLES]}
                for reason, examples in sorted(groups.items())
            }

        return {
            "benchmark": self.benchmark,
            "rows_read": dict(sorted(self.rows_read.items())),
            "rows_read_total": sum(self.rows_read.values()),
            "rows_kept": dict(sorted(self.rows_kept.items())),
            "rows_kept_total": sum(self.rows_kept.values()),
            "dropped": summarise(self.dropped),
            "merged": summarise(self.merged),
            "flagged": summarise(self.flagged),
            "tasks": dict(sorted(tasks.items())),
            "details": self.details,
            "notes": self.notes,
        }


@dataclass
class BuildResult:
    tasks: dict[str, list[Item]]
    stats: BuildStats
    # name -> JSON body: further build outputs a later stage reads from the processed
    # directory (OrderProbe: the released word lists extracted from the acquired scripts)
    files: dict[str, Any] = field(default_factory=dict)


class AnswerFormatter(Protocol):
    """How a reference system's answer is written as a model would (`format_reference_answer`)."""

    def __call__(self, item: ItemContext, answer: str, kind: str) -> str: ...


class Benchmark(ABC, Generic[ConfigT]):
    """What every benchmark provides: the contract the stage drivers call, never probe.

    Generic over its params section (`config_model`), which every hook and context is typed with.
    Required: `name`, `render_templates`, `config_model`, and the hooks of every stage (files, build,
    render, score, aggregate, report section, predictions). Optional, with defaults:
    notes at acquire, a construction pipeline, the scorer roles its metrics need, and the
    reference backends' hooks. A package registers its instance as `BENCHMARK` (see
    benchmarks/registry.py); docs/ARCHITECTURE.md has the recipe.
    """

    name: ClassVar[str]
    render_templates: ClassVar[str]  # where render reads its templates: a dependency of the render rule / stage
    # its params section, `benchmarks.<name>` (a schema.StrictModel with build/render/generate/score...)
    config_model: type[ConfigT]
    # the neural scorer roles its metrics need, with the paper's models (read-only provenance)
    scorer_roles: ClassVar[tuple[PaperRole, ...]] = ()
    # tasks the random/majority reference systems answer as classification; None: inferred from the items
    classification_tasks: ClassVar[frozenset[str] | None] = None
    # how oracle/echo/random write an answer as a model would (item, answer, kind) -> text;
    # None: the answer as is. A plain function (its module's source is part of the backends' identity).
    format_reference_answer: ClassVar[AnswerFormatter | None] = None
    # formats of predictions it publishes: name -> reader class (generation.backends.replay.PredictionReader),
    # for replay sources and `evaluate-predictions --format <name>`
    prediction_formats: ClassVar[dict[str, type[Any]]] = {}
    # the metrics it reports, each declared once (metrics.MetricSpec: key, label, unit, direction,
    # rows, resampling unit, per-item outcome, statistic); their values, intervals, MLflow metrics,
    # item outcomes and report cells are derived from them (docs/ARCHITECTURE.md, "Add a metric")
    metrics: ClassVar[tuple[MetricSpec, ...]] = ()
    # its metrics body (metrics.body.MetricsBody with its settings, breakdowns and provenance): the
    # aggregate stage writes through it, every reader reads through it
    # None: its body is checked against the frame every body shares (metrics.body.FrameBody) and
    # handed to its own hooks as the JSON it wrote
    results_model: ClassVar[type[AnyBody] | None] = None
    # `dvc plots` curve families (contexts.PlotSpec), written by the plots stage
    plots: ClassVar[tuple[PlotSpec, ...]] = ()
    # whether run_construction rebuilds the benchmark's own data (a construct stage)
    constructs: ClassVar[bool] = False
    # whether its score hook can run worker processes (core.workers, as many as worker_count():
    # the threads granted); `score_workers_for` says whether a params section makes it use them
    score_workers: ClassVar[bool] = False
    # whether it has attention diagnostics: an `attention` stage per model (hf backend only),
    # configured by its params section's `attention` (with `enabled` and `models`), and the
    # hooks attention_prompts + attention_summary
    attention_diagnostics: ClassVar[bool] = False
    # whether its render writes the option-order pass's rotations of choice items (it reads
    # `generate.extra`, so its render stage depends on that and not on the rest of `generate`)
    rotates_options: ClassVar[bool] = False
    # how its scored rows appear as items in MLflow (a trace each: metrics, filter tags, parsed
    # answer); the default shows every numeric column as a metric and the generic tags only
    item_view: ClassVar[ItemView] = ItemView()
    # labels a person gives items in the MLflow UI, which `idiombench labels pull` writes into
    # the annotation file an analysis of it reads (None: it reads none)
    human_labels: ClassVar[HumanLabels | None] = None

    def score_workers_for(self, config: ConfigT) -> bool:
        """Whether its score stage runs worker processes for this params section (a run too small
        for them scores in the stage's process): its score job then declares every core Snakemake
        gives it as its threads, and gets that many workers (pipeline/threads.py); otherwise one."""
        return self.score_workers

    @abstractmethod
    def file_specs(self, config: ConfigT) -> list[FileSpec]:
        """The upstream files acquire fetches and checks."""

    @abstractmethod
    def build(self, raw_dir: Path, config: ConfigT) -> BuildResult:
        """Acquired files -> items per task, with counts of what was dropped and why."""

    @abstractmethod
    def render(self, tasks: dict[str, list[Item]], config: ConfigT, raw_dir: Path) -> RenderOutput:
        """Items -> prompts per setting."""

    @abstractmethod
    def score(self, ctx: ScoreContext[ConfigT]) -> dict[str, pd.DataFrame]:
        """Generations -> per-item score tables per setting: one
        row per scored generation row, with the columns contexts.SCORE_KEYS and its metrics."""

    def metric_specs(self, config: ConfigT) -> tuple[MetricSpec, ...]:
        """Its metric specs under `config` (by default `metrics`; a benchmark whose formula follows a
        params option, e.g. OrderProbe's Recovery test, builds them from the config)."""
        return self.metrics

    def metric_scopes(self, scores: Mapping[str, pd.DataFrame], config: ConfigT) -> list[Scope]:
        """Where its specs are evaluated: by default one scope per score table, every row of it, its
        values under `settings.<setting>.metrics` of the metrics body, every spec applying."""
        specs = self.metric_specs(config)
        return [
            Scope(setting, setting, frame, ("settings", setting, "metrics"), specs=specs)
            for setting, frame in sorted(scores.items())
        ]

    def aggregate(self, ctx: AggregateContext[ConfigT]) -> dict[str, object]:
        """Per-item scores -> the metrics JSON body. By default every spec's value in every scope,
        with each setting's rows and items counted."""
        body: dict[str, Any] = {"settings": {}}
        for setting, frame in sorted(ctx.scores.items()):
            body["settings"][setting] = {
                "metrics": {},
                "counts": {"rows": len(frame), "items": int(frame["item_id"].nunique()) if len(frame) else 0},
            }
        evaluate.place(body, self.metric_scopes(ctx.scores, ctx.config))
        return body

    def report_section(self, ctx: ReportContext) -> Section | None:
        """Metrics of every model -> its section of the report, or None. By default one table, a row
        per model and a column per setting and paper metric (the default scopes' cells), every cell
        with its interval."""
        from ..report.default import metrics_section

        return metrics_section(
            self.name, ctx.metrics, self.metric_specs(ctx.params.benchmark(self.name)), ctx.display_name
        )

    def prediction_metrics(
        self, body: Mapping[str, object], scopes: list[Scope], task: str | None, setting: str
    ) -> dict[str, float | None]:
        """The paper cells (specs with `paper`) of one setting, read from its metrics body, for
        `evaluate-predictions`: "<key>", or "<task>/<key>" where the setting's scopes are its tasks
        (`task` given: that task's). A setting or task not scored is a one-line error."""
        return evaluate.paper_cells(self.name, body, scopes, task, setting)

    def score_chunks(self, ctx: ScoreContext[ConfigT]) -> Iterator[tuple[str, pd.DataFrame]]:
        """The score tables as (setting, DataFrame) chunks, a setting's chunks contiguous and in
        order (the score stage writes each as it comes: memory holds one chunk). By default each
        setting's whole table from `score`; a benchmark with long settings scores them in chunks."""
        yield from sorted(self.score(ctx).items())

    def scores_setting(self, config: ConfigT, setting: str) -> bool:
        """Whether `setting` is one its score stage produces under `config` (evaluate-predictions
        refuses others): by default the rendered settings."""
        return setting in config.render.settings

    def migrate_body(self, body: dict[str, object]) -> dict[str, object]:
        """Its part of moving a schema-1 metrics body to the current schema (metrics.body.migrate):
        its own records of schema 1 in the current shape. By default nothing to move."""
        return body

    def item_outcomes(self, frame: pd.DataFrame, setting: str, config: ConfigT) -> pd.DataFrame | None:
        """The headline metrics' per-item outcomes of a setting's score table: a frame of
        `metrics.evaluate.OUTCOME_COLUMNS` per main-pass row (derived from the specs marked
        headline). The serving-noise pass (flips) and the report's disagreement tables read it;
        None: the setting has none."""
        return evaluate.headline_outcomes(self.metric_scopes({setting: frame}, config), setting)

    def published_cells(self) -> PublishedCells:
        """Its paper's published values, for the tables its report reproduces: model, setting,
        metric, value and place in the paper per printed cell, errata, what was left out
        (`report.published`; docs/papers.md#published-values). By default none; a package that
        ships `published_cells.yaml` returns `report.published.load_published_cells(__name__, self.name)`."""
        return PublishedCells.none(self.name)

    def roles_used(self, config: ConfigT) -> frozenset[str]:
        """The scorer roles its score stage calls under `config` (the ones the score log reports):
        by default its `scorer_roles`."""
        return frozenset(role.name for role in self.scorer_roles)

    def published_runs(self, config: ConfigT) -> dict[str, list[ReplaySource]]:
        """The papers' models whose per-item predictions its release holds: paper model id (as
        published_cells names it) -> replay sources over the acquired files, which a replay model
        with `published: <id>` runs as a model of its own. By default none."""
        return {}

    def acquire_notes(self, config: ConfigT) -> list[str]:
        """Lines acquire prints after the files (e.g. what could not be acquired)."""
        return []

    def run_construction(self, params: Params, source: Path | list[Item], out_dir: Path) -> dict[str, object]:
        """Rebuild the benchmark's own data from its release (only where `constructs`)."""
        raise NotImplementedError(f"benchmark {self.name} has no construction pipeline")

    def attention_prompts(self, ctx: AttentionContext[ConfigT]) -> list[AttentionPrompt]:
        """The generations to measure, with their spans (only where `attention_diagnostics`)."""
        raise NotImplementedError(f"benchmark {self.name} has no attention diagnostics")

    def attention_summary(self, ctx: AttentionContext[ConfigT], rows: pd.DataFrame) -> dict[str, object]:
        """The measured per-item table -> the summary JSON body (statistics)."""
        raise NotImplementedError(f"benchmark {self.name} has no attention diagnostics")


def write_build(result: BuildResult, out_dir: Path) -> dict[str, Any]:
    """Write every task's items and the stats into a staging directory that replaces
    `out_dir` whole, so it is either the old complete build or the new complete build."""
    with staged_directory(out_dir, paths.BUILD_OUTPUT) as staging:
        counts: dict[str, int] = {}
        for task, items in sorted(result.tasks.items()):
            write_items(staging / f"{task}.parquet", items)
            counts[task] = len(items)
        for name, body in sorted(result.files.items()):
            write_json(staging / name, body)
        stats = result.stats.to_json(counts)
        write_json(staging / paths.BUILD_STATS, stats)
    return stats
