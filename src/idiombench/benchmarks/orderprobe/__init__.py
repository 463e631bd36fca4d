"""OrderProbe (Zhaolu-K/OrderProbe): restore scrambled four-character idioms."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ...data.manifest import FileSpec, load_file_specs
from ...items import Item
from ..base import BuildResult
from . import build as _build
from .answers import CLASSIFICATION_TASKS, format_reference_answer  # noqa: F401  (reference backends' hooks)
from .config import OrderProbeConfig
from . import render as _render

if TYPE_CHECKING:
    from ...render import RenderOutput


class OrderProbe:
    name = "orderprobe"
    # where render reads its templates (a dependency of the render rule / DVC stage)
    render_templates = "src/idiombench/benchmarks/orderprobe/prompts"

    def file_specs(self, config: OrderProbeConfig) -> list[FileSpec]:
        return load_file_specs(__name__)

    def build(self, raw_dir: Path, config: OrderProbeConfig) -> BuildResult:
        return _build.build(raw_dir, config.build)

    def render(self, tasks: dict[str, list[Item]], config: OrderProbeConfig, raw_dir: Path) -> RenderOutput:
        """Prompts for every configured setting (see render.py)."""
        return _render.render(tasks, config, raw_dir)


BENCHMARK = OrderProbe()
