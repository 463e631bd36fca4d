"""SemanticQA (jacklanda/SemanticQA): idioms, collocations, noun compounds and verbal MWEs,
twelve test sets (paper table 1) plus two oracle-schema VMWE sets; see build.py and adapters.py."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ...core import paths
from ...core.items import Item
from ...data.manifest import FileSpec, load_file_specs
from ...generation.config import ReplaySource
from ...metrics import MetricSpec, Scope
from ...report.published import PublishedCells, load_published_cells
from ..base import Benchmark, BuildResult
from . import answers as _answers
from . import build as _build
from . import published_format as _published_format
from . import published_runs as _published_runs
from . import render as _render
from . import results as _results
from . import specs as _specs
from . import view as _view
from .config import SemanticQAConfig
from .roles import SCORER_ROLES

if TYPE_CHECKING:
    import pandas as pd

    from ...report.tables import Section
    from ..contexts import AggregateContext, RenderOutput, ReportContext, ScoreContext


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
    # its metrics (tables 3-6, the LCC F1s, the option-order pass), each declared once (specs.py);
    # the F1s read a prediction as `score.count_format_deviations` says: metric_specs(config)
    metrics = _specs.METRICS[True]
    # its metrics body (results.py)
    results_model = _results.SemanticQABody
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

    def aggregate(self, ctx: AggregateContext[SemanticQAConfig]) -> dict[str, object]:
        """The metrics JSON body (aggregate.py)."""
        from .aggregate import aggregate

        return aggregate(ctx)

    def migrate_body(self, body: dict[str, object]) -> dict[str, object]:
        return _results.migrate_body(body)

    def published_runs(self, config: SemanticQAConfig) -> dict[str, list[ReplaySource]]:
        """DeepSeek-R1's and Qwen3-235B's released predictions (published_runs.py)."""
        runs = _published_runs.published_sources(self.name, self.file_specs(config), paths.raw_dir(self.name))
        built = set(config.build.selected_tasks())  # a source of a task not built would answer nothing
        return {model: [s for s in sources if s.task in built] for model, sources in runs.items()}

    def published_cells(self) -> PublishedCells:
        """The paper's published values (published_cells.yaml beside this module)."""
        return load_published_cells(__name__, self.name)

    def report_section(self, ctx: ReportContext) -> Section | None:
        from .report import report_section

        return report_section(ctx)

    def metric_specs(self, config: SemanticQAConfig) -> tuple[MetricSpec, ...]:
        """Its specs under `config` (the F1s count an off-format label as ACC does, or not)."""
        return _specs.metric_specs(config)

    def metric_scopes(self, scores: Mapping[str, pd.DataFrame], config: SemanticQAConfig) -> list[Scope]:
        """Each (setting, task) of a setting's main pass, its kind the task's (specs.py)."""
        return _specs.scopes(scores, config)

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


BENCHMARK = SemanticQA()
