"""G-IdiomAlign (NLP2CT/G-IdiomAlign): gloss-pivoted cross-lingual idiom alignment."""

from __future__ import annotations

from pathlib import Path

from ...data.manifest import FileSpec, load_file_specs
from ..base import BuildResult
from . import build as _build
from .config import GIdiomAlignConfig


class GIdiomAlign:
    name = "g-idiomalign"

    def file_specs(self, config: GIdiomAlignConfig) -> list[FileSpec]:
        return load_file_specs(__name__)

    def build(self, raw_dir: Path, config: GIdiomAlignConfig) -> BuildResult:
        files = [spec.file for spec in self.file_specs(config)]
        return _build.build(raw_dir, config.build, files)


BENCHMARK = GIdiomAlign()
