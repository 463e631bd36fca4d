"""G-IdiomAlign (NLP2CT/G-IdiomAlign): gloss-pivoted cross-lingual idiom alignment."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ...data.manifest import FileSpec, load_file_specs
from ...items import Item
from ..base import BuildResult
from . import build as _build
from .config import GIdiomAlignConfig
from . import render as _render
from .answers import CLASSIFICATION_TASKS, format_reference_answer  # noqa: F401  (reference backends' hooks)

if TYPE_CHECKING:
    from ...render import RenderOutput


class GIdiomAlign:
    name = "g-idiomalign"
    # where render reads its templates (a dependency of the render rule / DVC stage)
    render_templates = "src/idiombench/benchmarks/g_idiomalign/prompts"

    def file_specs(self, config: GIdiomAlignConfig) -> list[FileSpec]:
        return load_file_specs(__name__)

    def build(self, raw_dir: Path, config: GIdiomAlignConfig) -> BuildResult:
        files = [spec.file for spec in self.file_specs(config)]
        return _build.build(raw_dir, config.build, files)

    def render(self, tasks: dict[str, list[Item]], config: GIdiomAlignConfig, raw_dir: Path) -> RenderOutput:
        """Prompts for every configured setting (see render.py)."""
        return _render.render(tasks, config, raw_dir)


BENCHMARK = GIdiomAlign()
