"""SemanticQA (jacklanda/SemanticQA): idioms, collocations, noun compounds and verbal MWEs,
twelve test sets (paper table 1) plus two oracle-schema VMWE sets; see build.py and adapters.py."""

from __future__ import annotations

from pathlib import Path

from ...data.manifest import FileSpec, load_file_specs
from ..base import BuildResult
from . import build as _build
from .config import SemanticQAConfig


class SemanticQA:
    name = "semanticqa"

    def file_specs(self, config: SemanticQAConfig) -> list[FileSpec]:
        return load_file_specs(__name__)

    def build(self, raw_dir: Path, config: SemanticQAConfig) -> BuildResult:
        return _build.build(raw_dir, config.build)


BENCHMARK = SemanticQA()
