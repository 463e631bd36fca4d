"""OrderProbe (Zhaolu-K/OrderProbe): restore scrambled four-character idioms."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ...core.items import Item
from ...data.manifest import FileSpec, load_file_specs
from ...metrics import MetricSpec, Scope
from ...report.published import PublishedCells, load_published_cells
from ..base import Benchmark, BuildResult
from . import aggregate as _aggregate
from . import answers as _answers
from . import build as _build
from . import plots as _plots
from . import render as _render
from . import report as _report
from . import results as _results
from . import score as _score
from . import specs as _specs
from . import view as _view
from .config import OrderProbeConfig, OrderProbeScore
from .lexical import runs_workers
from .roles import SCORER_ROLES

if TYPE_CHECKING:
    from collections.abc import Iterator

    import pandas as pd

    from ...report.tables import Section
    from ..contexts import AggregateContext, RenderOutput, ReportContext, ScoreContext


class OrderProbe(Benchmark[OrderProbeConfig]):
    name = "orderprobe"
    # its scored rows as items in MLflow (view.py)
    item_view = _view.ITEM_VIEW
    # where render reads its templates (a dependency of the render rule / DVC stage)
    render_templates = "src/idiombench/benchmarks/orderprobe/prompts"
    # its params section (benchmarks.<name> in params.yaml)
    config_model = OrderProbeConfig
    # its metrics (tables 3, 4, 11, figures 4 and 5), each declared once (specs.py); the headline
    # Recovery follows score.recovery, so metric_specs builds them from the config
    metrics = _specs.specs(OrderProbeScore())
    # its metrics body (results.py): written by aggregate, read through it by every reader
    results_model = _results.OrderProbeBody
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

    def aggregate(self, ctx: AggregateContext[OrderProbeConfig]) -> dict[str, object]:
        """The metrics JSON: table 3 per setting, breakdowns, provenance (aggregate.py)."""
        return _aggregate.aggregate(ctx)

    def published_cells(self) -> PublishedCells:
        """The paper's published values (published_cells.yaml beside this module)."""
        return load_published_cells(__name__, self.name)

    def report_section(self, ctx: ReportContext) -> Section | None:
        """Tables 3, 4, 11, figures 4 and 5, format failures (report.py)."""
        return _report.report_section(ctx)

    def migrate_body(self, body: dict[str, object]) -> dict[str, object]:
        """Schema 1's provenance.sample and role records in the current shapes (results.py)."""
        return _results.migrate_body(body)

    def metric_specs(self, config: OrderProbeConfig) -> tuple[MetricSpec, ...]:
        """Table 3's metrics under the config's score section (the headline Recovery's test and
        identity inputs, the consistency pass, the S_Rob options; specs.py)."""
        return _specs.specs(config.score)

    def metric_scopes(self, scores: Mapping[str, pd.DataFrame], config: OrderProbeConfig) -> list[Scope]:
        """Each setting, its languages, categories, permutation patterns and canonical inputs (specs.py)."""
        return _specs.scopes(scores, config.score)


BENCHMARK = OrderProbe()
