"""OrderProbe (Zhaolu-K/OrderProbe): restore scrambled four-character idioms."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.items import Item
from ...data.manifest import FileSpec, load_file_specs
from ..base import Benchmark, BuildResult
from . import aggregate as _aggregate
from . import answers as _answers
from . import build as _build
from . import plots as _plots
from . import render as _render
from . import report as _report
from . import score as _score
from . import view as _view
from .config import OrderProbeConfig
from .lexical import runs_workers
from .roles import SCORER_ROLES

if TYPE_CHECKING:
    from collections.abc import Iterator

    import pandas as pd

    from ...report.tables import Section
    from ...statistics.estimands import Estimand
    from ..contexts import AggregateContext, RenderOutput, ReportContext, ScoreContext, UncertaintyContext


class OrderProbe(Benchmark[OrderProbeConfig]):
    name = "orderprobe"
    # its scored rows as items in MLflow (view.py)
    item_view = _view.ITEM_VIEW
    # where render reads its templates (a dependency of the render rule / DVC stage)
    render_templates = "src/idiombench/benchmarks/orderprobe/prompts"
    # its params section (benchmarks.<name> in params.yaml)
    config_model = OrderProbeConfig
    # its headline metrics (regexes on the flattened metric names): MLflow parent runs, dvc exp show
    headline_metrics = (r"recovery", r"e_perf")
    # its `dvc plots` curves (plots.py)
    plots = _plots.PLOTS
    # the neural scorer roles its metrics need, with the paper's models (roles.py)
    scorer_roles = SCORER_ROLES
    # the reference backends' hooks (answers.py)
    classification_tasks = _answers.CLASSIFICATION_TASKS
    format_reference_answer = staticmethod(_answers.format_reference_answer)
    # its lexical terms run in worker processes (lexical.py) where a run is large enough
    score_workers = True

    def score_workers_for(self, config: OrderProbeConfig) -> bool:
        """Worker processes where the first setting has POOL_MIN_ROWS rows or more (lexical.py)."""
        return runs_workers(config)

    def file_specs(self, config: OrderProbeConfig) -> list[FileSpec]:
        return load_file_specs(__name__)

    def build(self, raw_dir: Path, config: OrderProbeConfig) -> BuildResult:
        return _build.build(raw_dir, config.build)

    def render(self, tasks: dict[str, list[Item]], config: OrderProbeConfig, raw_dir: Path) -> RenderOutput:
        """Prompts for every configured setting (see render.py)."""
        return _render.render(tasks, config, raw_dir)

    def score(self, ctx: ScoreContext[OrderProbeConfig]) -> dict[str, pd.DataFrame]:
        """Per generation row: Recovery, S_Acc and its components, S_Logic, S_Info (score.py)."""
        return _score.score(ctx)

    def score_chunks(self, ctx: ScoreContext[OrderProbeConfig]) -> Iterator[tuple[str, pd.DataFrame]]:
        """The same, in chunks of generation rows (score.CHUNK_ROWS): bounded memory on long settings."""
        return _score.score_ctx_chunks(ctx)

    def aggregate(self, ctx: AggregateContext[OrderProbeConfig]) -> dict[str, Any]:
        """The metrics JSON: table 3 per setting, breakdowns, provenance (aggregate.py)."""
        return _aggregate.aggregate(ctx)

    def report_section(self, ctx: ReportContext) -> Section | None:
        """Tables 3, 4, 11, figures 4 and 5, format failures (report.py)."""
        return _report.report_section(ctx)

    def item_outcomes(self, frame: Any, setting: str, config: OrderProbeConfig) -> Any:
        from .uncertainty import item_outcomes

        return item_outcomes(frame, setting, config.score)

    def estimands(self, ctx: UncertaintyContext[OrderProbeConfig]) -> dict[str, dict[str, Estimand]]:
        """Tables 3 and 4's cells for the report's intervals and tests (uncertainty.py)."""
        from .uncertainty import estimands

        return estimands(ctx)

    def prediction_metrics(self, body: dict[str, Any], task: str | None, setting: str) -> dict[str, float]:
        """Table 3's cells for one setting, as the paper prints them (report.py)."""
        return _report.prediction_metrics(body, task, setting)


BENCHMARK = OrderProbe()
