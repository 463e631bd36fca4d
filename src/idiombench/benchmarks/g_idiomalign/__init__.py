"""G-IdiomAlign (NLP2CT/G-IdiomAlign): gloss-pivoted cross-lingual idiom alignment."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ...core.items import Item
from ...data.manifest import FileSpec, load_file_specs
from ...metrics import MetricSpec, Scope
from ...report.published import PublishedCells, load_published_cells
from ..base import Benchmark, BuildResult
from . import answers as _answers
from . import build as _build
from . import labels as _labels
from . import plots as _plots
from . import render as _render
from . import results as _results
from . import view as _view
from .config import GIdiomAlignConfig
from .roles import SCORER_ROLES

if TYPE_CHECKING:
    import pandas as pd

    from ...params.schema import Params
    from ...report.tables import Section
    from ..contexts import (
        AggregateContext,
        AttentionContext,
        AttentionPrompt,
        RenderOutput,
        ReportContext,
        ScoreContext,
    )


class GIdiomAlign(Benchmark[GIdiomAlignConfig]):
    # its choice items are rendered under every rotation of their options for the option-order pass
    rotates_options = True
    name = "g-idiomalign"
    # its scored rows as items in MLflow (view.py)
    item_view = _view.ITEM_VIEW
    # Task 2 output types labelled in the MLflow UI, pulled into the attention stage's annotations (labels.py)
    human_labels = _labels.HUMAN_LABELS
    # where render reads its templates (a dependency of the render rule / DVC stage)
    render_templates = "src/idiombench/benchmarks/g_idiomalign/prompts"
    # its params section (benchmarks.<name> in params.yaml)
    config_model = GIdiomAlignConfig
    # its metrics body (results.py)
    results_model = _results.GIdiomAlignBody
    # its `dvc plots` curves (plots.py)
    plots = _plots.PLOTS
    # the neural scorer roles its metrics need, with the paper's models (roles.py)
    scorer_roles = SCORER_ROLES
    # the reference backends' hooks (answers.py)
    classification_tasks = _answers.CLASSIFICATION_TASKS
    format_reference_answer = staticmethod(_answers.format_reference_answer)
    constructs = True
    # the paper's attention diagnostics (section 5.3, appendices L-M; attention.py): an attention stage per model
    attention_diagnostics = True

    def file_specs(self, config: GIdiomAlignConfig) -> list[FileSpec]:
        return load_file_specs(__name__)

    def build(self, raw_dir: Path, config: GIdiomAlignConfig) -> BuildResult:
        files = [spec.file for spec in self.file_specs(config)]
        return _build.build(raw_dir, config.build, files)

    def render(self, tasks: dict[str, list[Item]], config: GIdiomAlignConfig, raw_dir: Path) -> RenderOutput:
        """Prompts for every configured setting (see render.py)."""
        return _render.render(tasks, config, raw_dir)

    def score(self, ctx: ScoreContext[GIdiomAlignConfig]) -> dict[str, pd.DataFrame]:
        """Per-answer scores per setting (score.py)."""
        from .score import score

        return score(ctx)

    def aggregate(self, ctx: AggregateContext[GIdiomAlignConfig]) -> dict[str, object]:
        """Tables 3, 4, 12, 14, 16 numbers (aggregate.py)."""
        from .aggregate import aggregate

        return aggregate(ctx)

    def migrate_body(self, body: dict[str, object]) -> dict[str, object]:
        return _results.migrate_body(body)

    def published_cells(self) -> PublishedCells:
        """The paper's published values (published_cells.yaml beside this module)."""
        return load_published_cells(__name__, self.name)

    def report_section(self, ctx: ReportContext) -> Section | None:
        from .report import report_section

        return report_section(ctx)

    def metric_specs(self, config: GIdiomAlignConfig) -> tuple[MetricSpec, ...]:
        """Its metrics (tables 3, 4, 12, 14, 16), each declared once (specs.py), built from the
        params: Acc@t per `score.thresholds`, the headline at the last `score.headline_thresholds`,
        BLEU / chrF as `score.surface_aggregation` says."""
        from .specs import metric_specs  # pandas and sacrebleu: only the stages that evaluate them

        return metric_specs(config.score)

    def metric_scopes(self, scores: Mapping[str, pd.DataFrame], config: GIdiomAlignConfig) -> list[Scope]:
        """mcq, and per Task 2 condition its main and its additional pairs (specs.py)."""
        from .specs import scopes

        return scopes(scores, config)

    def run_construction(self, params: Params, source: Path | list[Item], out_dir: Path) -> dict[str, object]:
        """The paper's alignment pipeline rebuilt from the released glosses (construct.py)."""
        from .construct import run_construction

        return run_construction(params, source, out_dir)

    def attention_prompts(self, ctx: AttentionContext[GIdiomAlignConfig]) -> list[AttentionPrompt]:
        """Task 2 generations in both gloss conditions with their idiom and gloss spans (attention.py)."""
        from .attention import attention_prompts

        return attention_prompts(ctx)

    def attention_summary(self, ctx: AttentionContext[GIdiomAlignConfig], rows: pd.DataFrame) -> dict[str, object]:
        """Tables 6-8 statistics of the measured generations (attention.py)."""
        from .attention import attention_summary

        return attention_summary(ctx, rows)


BENCHMARK = GIdiomAlign()
