"""SemanticQA (jacklanda/SemanticQA): idioms, collocations, noun compounds and verbal MWEs,
twelve test sets (paper table 1) plus two oracle-schema VMWE sets; see build.py and adapters.py."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.items import Item
from ...data.manifest import FileSpec, load_file_specs
from ...report.published import PublishedCells, load_published_cells
from ..base import Benchmark, BuildResult
from . import answers as _answers
from . import build as _build
from . import published_format as _published_format
from . import render as _render
from . import view as _view
from .config import SemanticQAConfig
from .roles import SCORER_ROLES

if TYPE_CHECKING:
    import pandas as pd

    from ...report.tables import Section
    from ...statistics.estimands import Estimand
    from ..contexts import AggregateContext, RenderOutput, ReportContext, ScoreContext, UncertaintyContext


class SemanticQA(Benchmark[SemanticQAConfig]):
    # its choice items are rendered under every rotation of their options for the option-order pass
    rotates_options = True
    name = "semanticqa"
    # its scored rows as items in MLflow (view.py)
    item_view = _view.ITEM_VIEW
    # where render reads its templates (a dependency of the render rule / DVC stage)
    render_templates = "data/raw/semanticqa"
    # its params section (benchmarks.<name> in params.yaml)
    config_model = SemanticQAConfig
    # its headline metrics (regexes on the flattened metric names): MLflow parent runs, dvc exp show
    headline_metrics = (r"[^.]+\.(?:ACC|ACC_s|ROUGE-L)",)
    # the neural scorer roles its metrics need, with the paper's models (roles.py)
    scorer_roles = SCORER_ROLES
    # the reference backends' hooks (answers.py)
    classification_tasks = _answers.CLASSIFICATION_TASKS
    format_reference_answer = staticmethod(_answers.format_reference_answer)
    # its published results format, for replay sources and evaluate-predictions
    prediction_formats = {_published_format.FORMAT: _published_format.PublishedResultsSource}

    def file_specs(self, config: SemanticQAConfig) -> list[FileSpec]:
        return load_file_specs(__name__)

    def build(self, raw_dir: Path, config: SemanticQAConfig) -> BuildResult:
        return _build.build(raw_dir, config.build)

    def render(self, tasks: dict[str, list[Item]], config: SemanticQAConfig, raw_dir: Path) -> RenderOutput:
        """Prompts for every configured setting (see render.py)."""
        return _render.render(tasks, config, raw_dir)

    def score(self, ctx: ScoreContext[SemanticQAConfig]) -> dict[str, pd.DataFrame]:
        """Per-row scores per setting (score.py)."""
        from .score import score

        return score(ctx)

    def aggregate(self, ctx: AggregateContext[SemanticQAConfig]) -> dict[str, Any]:
        """The metrics JSON body (aggregate.py)."""
        from .aggregate import aggregate

        return aggregate(ctx)

    def published_cells(self) -> PublishedCells:
        """The paper's published values (published_cells.yaml beside this module)."""
        return load_published_cells(__name__, self.name)

    def report_section(self, ctx: ReportContext) -> Section | None:
        from .report import report_section

        return report_section(ctx)

    def item_outcomes(self, frame: Any, setting: str, config: SemanticQAConfig) -> Any:
        from .uncertainty import item_outcomes

        return item_outcomes(frame, setting, config)

    def estimands(self, ctx: UncertaintyContext[SemanticQAConfig]) -> dict[str, dict[str, Estimand]]:
        from .uncertainty import estimands

        return estimands(ctx)

    def scores_setting(self, config: SemanticQAConfig, setting: str) -> bool:
        """The rendered settings, plus the sequential and LCC-scaling settings its enabled
        scoring options name (sequential.py)."""
        if setting in config.render.settings:
            return True
        sequential = config.score.sequential
        if sequential.enabled and setting.startswith(sequential.setting_prefix):
            return setting[len(sequential.setting_prefix) :] in config.render.settings
        scaling = config.score.lcc_scaling
        return bool(scaling.enabled and re.fullmatch(scaling.setting_pattern, setting))

    def prediction_metrics(self, body: dict[str, Any], task: str | None, setting: str) -> dict[str, float | None]:  # type: ignore[override]  # TRANSITION
        """The paper's cells of one task and setting, in percent (for `evaluate-predictions`)."""
        from .aggregate import prediction_metrics

        return prediction_metrics(body, task, setting)


BENCHMARK = SemanticQA()
