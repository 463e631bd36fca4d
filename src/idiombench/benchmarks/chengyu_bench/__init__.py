"""Chengyu-Bench (sofyc/ChengyuBench) and ChID (FewCLUE): Chinese idiom understanding and use.

Only ChID is acquired: the official Chengyu-Bench release is not reachable from the
development machines and its layout is unknown. The build reads it from a local
checkout (`build.release_dir`) through a field mapping whose defaults describe an
ASSUMED layout (see config.py); without it, the build makes ChID and the project's
clearly labelled sample tasks and says so in a "NOT AVAILABLE" note.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ...core.items import Item
from ...data.manifest import FileSpec, load_file_specs
from ...metrics import Scope
from ...report.published import PublishedCells, load_published_cells
from ...report.tables import Section
from ..base import Benchmark, BuildResult
from . import aggregate as _aggregate
from . import answers as _answers
from . import build as _build
from . import render as _render
from . import report as _report
from . import results as _results
from . import score as _score
from . import specs as _specs
from . import view as _view
from .config import ChengyuBenchConfig

if TYPE_CHECKING:
    import pandas as pd

    from ..contexts import AggregateContext, RenderOutput, ReportContext, ScoreContext


class ChengyuBench(Benchmark[ChengyuBenchConfig]):
    # its choice items are rendered under every rotation of their options for the option-order pass
    rotates_options = True
    name = "chengyu-bench"
    # its scored rows as items in MLflow (view.py)
    item_view = _view.ITEM_VIEW
    # where render reads its templates (a dependency of the render rule / DVC stage)
    render_templates = "src/idiombench/benchmarks/chengyu_bench/prompts"
    # its params section (benchmarks.<name> in params.yaml)
    config_model = ChengyuBenchConfig
    # its metrics (table 7), each declared once (specs.py), and its metrics body (results.py)
    metrics = _specs.METRICS
    results_model = _results.ChengyuBody
    # the reference backends' hooks (answers.py)
    classification_tasks = _answers.CLASSIFICATION_TASKS
    format_reference_answer = staticmethod(_answers.format_reference_answer)

    def file_specs(self, config: ChengyuBenchConfig) -> list[FileSpec]:
        return load_file_specs(__name__)

    def build(self, raw_dir: Path, config: ChengyuBenchConfig) -> BuildResult:
        return _build.build(raw_dir, config.build)

    def acquire_notes(self, config: ChengyuBenchConfig) -> list[str]:
        """Printed by `idiombench acquire` after the declared (ChID) files are in place."""
        note = _build.not_available_note(config.build)
        if note is not None:
            return [note]
        root = _build.release_path(config.build)
        return [
            f"the official Chengyu-Bench release is read at build time from {root} (not copied or "
            "checksummed here: its files and hashes are not declared); the build records each file's sha256 "
            "in build_stats.json."
        ]

    def render(self, tasks: dict[str, list[Item]], config: ChengyuBenchConfig, raw_dir: Path) -> RenderOutput:
        """Prompts for every configured setting (see render.py)."""
        return _render.render(tasks, config, raw_dir)

    def score(self, ctx: ScoreContext[ChengyuBenchConfig]) -> dict[str, pd.DataFrame]:
        """Per-row scores of each setting (score.py; metric definitions in metrics.py)."""
        return _score.score(ctx)

    def aggregate(self, ctx: AggregateContext[ChengyuBenchConfig]) -> dict[str, object]:
        return _aggregate.aggregate(ctx)

    def published_cells(self) -> PublishedCells:
        """The paper's published values (published_cells.yaml beside this module)."""
        return load_published_cells(__name__, self.name)

    def report_section(self, ctx: ReportContext) -> Section | None:
        return _report.report_section(ctx)

    def migrate_body(self, body: dict[str, object]) -> dict[str, object]:
        return _results.migrate_body(body)

    def metric_scopes(self, scores: Mapping[str, pd.DataFrame], config: ChengyuBenchConfig) -> list[Scope]:
        """Each setting's paper task, and its other tasks as breakdowns (specs.py)."""
        return _specs.scopes(scores, config)


BENCHMARK = ChengyuBench()
