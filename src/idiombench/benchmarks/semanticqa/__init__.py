"""SemanticQA (jacklanda/SemanticQA): idioms, collocations, noun compounds and verbal MWEs,
twelve test sets (paper table 1) plus two oracle-schema VMWE sets; see build.py and adapters.py."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ...data.manifest import FileSpec, load_file_specs
from ...items import Item
from ..base import BuildResult
from . import build as _build
from .config import SemanticQAConfig
from . import render as _render
from .answers import CLASSIFICATION_TASKS, format_reference_answer  # noqa: F401  (reference backends' hooks)

if TYPE_CHECKING:
    from ...render import RenderOutput


class SemanticQA:
    name = "semanticqa"
    # where render reads its templates (a dependency of the render rule / DVC stage)
    render_templates = "data/raw/semanticqa"

    def file_specs(self, config: SemanticQAConfig) -> list[FileSpec]:
        return load_file_specs(__name__)

    def build(self, raw_dir: Path, config: SemanticQAConfig) -> BuildResult:
        return _build.build(raw_dir, config.build)

    def render(self, tasks: dict[str, list[Item]], config: SemanticQAConfig, raw_dir: Path) -> RenderOutput:
        """Prompts for every configured setting (see render.py)."""
        return _render.render(tasks, config, raw_dir)


BENCHMARK = SemanticQA()
