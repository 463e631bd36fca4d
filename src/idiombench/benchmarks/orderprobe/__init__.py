"""OrderProbe (Zhaolu-K/OrderProbe): restore scrambled four-character idioms."""

from __future__ import annotations

from pathlib import Path

from ...data.manifest import FileSpec, load_file_specs
from ..base import BuildResult
from . import build as _build
from .answers import CLASSIFICATION_TASKS, format_reference_answer  # noqa: F401  (reference backends' hooks)
from .config import OrderProbeConfig


class OrderProbe:
    name = "orderprobe"

    def file_specs(self, config: OrderProbeConfig) -> list[FileSpec]:
        return load_file_specs(__name__)

    def build(self, raw_dir: Path, config: OrderProbeConfig) -> BuildResult:
        return _build.build(raw_dir, config.build)


BENCHMARK = OrderProbe()
