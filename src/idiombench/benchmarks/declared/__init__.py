"""Declarative benchmarks: a researcher's data set as a benchmark in one YAML file,
`benchmarks/<name>.yaml` in the project (the working directory every stage runs in), for the
shapes idiom data sets take: multiple choice (options, gold), label classification and cloze with
candidates (an idiom chosen among the record's candidates, ChID's form).

The registry finds every declaration in the project's `benchmarks/` folder (its file name is the
benchmark's name) and makes each a `Benchmark` through `declared_benchmark`: its files (local
under data/<name>/, versioned by DVC, or a pinned URL, each with its sha256), build, render,
score and metrics (named specs of library.py) come from the declaration; the rest (aggregate,
report section, item outcomes, MLflow, intervals, serving noise, the summary page) is every
benchmark's default, derived from the specs. docs/ARCHITECTURE.md, "Add a benchmark", names
every key.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.errors import DataError
from ...core.items import Item
from ...data.manifest import FileSpec
from ..base import Benchmark, BuildResult
from ..contexts import ItemMetric, ItemView
from . import answers as _answers
from . import build as _build
from . import library as _library
from . import render as _render
from . import score as _score
from .config import DeclaredSection, config_model
from .schema import DATA, DECLARATIONS, RESERVED, SUFFIX, Declaration, read_declaration

if TYPE_CHECKING:
    import pandas as pd

    from ..contexts import RenderOutput, ScoreContext

__all__ = ["DATA", "DECLARATIONS", "RESERVED", "DeclaredBenchmark", "declared_benchmark", "discover", "load"]


class DeclaredBenchmark(Benchmark[DeclaredSection]):
    """A benchmark made from a declaration (one subclass per declaration: declared_benchmark)."""

    declaration: Declaration
    path: Path  # the declaration, relative to the project root
    format_reference_answer = staticmethod(_answers.format_reference_answer)

    @property
    def where(self) -> str:
        return self.path.as_posix()

    def data_dir(self) -> Path:
        return DATA / self.name

    def local_data(self) -> list[Path]:
        """Its files in the project (data/<name>/<file>), whether present or not."""
        return [self.data_dir() / entry.file for entry in self.declaration.local_files()]

    def file_specs(self, config: DeclaredSection) -> list[FileSpec]:
        """Its files, each pinned by its declared sha256: a local one read from data/<name>/, a
        downloaded one from its URL (or a mirror's `mirror_path`)."""
        specs = []
        for index, entry in enumerate(self.declaration.data):
            if entry.url is not None:
                specs.append(
                    FileSpec(
                        file=entry.file,
                        mirror_path=entry.mirror_path or f"{self.name}/{entry.file}",
                        sha256=entry.sha256,
                        bytes=0,
                        source_repo="",
                        source_commit="",
                        source_path="",
                        url=entry.url,
                    )
                )
                continue
            local = self.data_dir() / entry.file
            if not local.is_file():
                raise DataError(
                    local,
                    "no such file",
                    expected=f"the local file of data.{index} in {self.where} (after a clone: `dvc pull`)",
                )
            specs.append(
                FileSpec(
                    file=entry.file,
                    mirror_path=local.as_posix(),
                    sha256=entry.sha256,
                    bytes=local.stat().st_size,
                    source_repo="",
                    source_commit="",
                    source_path=local.as_posix(),
                    local=local.as_posix(),
                )
            )
        return specs

    def build(self, raw_dir: Path, config: DeclaredSection) -> BuildResult:
        return _build.build(self.name, self.declaration, self.where, raw_dir)

    def render(self, tasks: dict[str, list[Item]], config: DeclaredSection, raw_dir: Path) -> RenderOutput:
        return _render.render(self.name, self.declaration, self.where, tasks, config)

    def score(self, ctx: ScoreContext[DeclaredSection]) -> dict[str, pd.DataFrame]:
        return _score.score(self.declaration, ctx)

    def roles_used(self, config: DeclaredSection) -> frozenset[str]:
        """BERTScore's role of its language, where it declares the metric (no other role)."""
        role = _score.bertscore_role(self.declaration)
        return frozenset({role}) if role is not None and "bertscore" in self.declaration.metrics else frozenset()

    def acquire_notes(self, config: DeclaredSection) -> list[str]:
        local = self.declaration.local_files()
        if not local:
            return []
        read = f"read {len(local)} local file(s) from {self.data_dir()}/ (declared in {self.where})"
        tracked = self.data_dir().with_name(f"{self.name}.dvc")
        if tracked.is_file():
            return [f"{read}; versioned by DVC ({tracked})"]
        return [f"{read}; version them with `dvc add {self.data_dir()}` so that `dvc push` / `dvc pull` carry them"]


_LOADED: dict[Path, DeclaredBenchmark] = {}


def item_metrics(decl: Declaration) -> tuple[ItemMetric, ...]:
    """What each item's MLflow trace shows: right or wrong, and a generation's graded scores."""
    graded = {"rouge_l": ItemMetric("rouge_l"), "bertscore": ItemMetric("bertscore_f1", _score.bertscore_role(decl))}
    return (ItemMetric("correct"), *(graded[m] for m in decl.metrics if m in graded))


def declared_benchmark(name: str, path: Path, decl: Declaration) -> DeclaredBenchmark:
    """The Benchmark `name` declared by `decl` (read from `path`)."""
    splits = decl.splits()
    attributes: dict[str, Any] = {
        "name": name,
        "render_templates": path.as_posix(),
        "config_model": config_model(name, decl),
        "metrics": _library.specs(decl.metrics, decl.headline_metric, decl.resampling),
        "declaration": decl,
        "path": path,
        # random and majority answer every split of a label benchmark from its labels (an
        # multiple-choice one's splits are inferred from the options)
        "classification_tasks": frozenset(splits) if splits is not None and decl.shape == "label" else None,
        "item_view": ItemView(
            metrics=item_metrics(decl),
            tags=("answered", "unformatted", "parse_failed"),
            answer=("prediction",),
            parse_ok="ok",
            flags=("flags",),
            strata=("task",),
        ),
        "__module__": __name__,
    }
    cls: type[DeclaredBenchmark] = type(f"Declared[{name}]", (DeclaredBenchmark,), attributes)
    return cls()


def discover(root: Path = DECLARATIONS) -> dict[str, Path]:
    """name -> declaration file of every `<name>.yaml` in the project's benchmarks/ folder
    (relative to the working directory, the project root), in name order."""
    if not root.is_dir():
        return {}
    return {path.name.removesuffix(SUFFIX): path for path in sorted(root.glob(f"*{SUFFIX}")) if path.is_file()}


def load(name: str, path: Path) -> DeclaredBenchmark:
    """The benchmark declared at `path` (read once per process); a ConfigError naming the file and
    every bad key when the declaration is invalid."""
    if path not in _LOADED:
        _LOADED[path] = declared_benchmark(name, path, read_declaration(path, _library.SHAPES))
    return _LOADED[path]
