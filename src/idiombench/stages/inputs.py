"""What the stage drivers read: whether a (model, benchmark) pair applies (a pair that does
not is recorded as skipped with the reason, so every stage of the static DAG has a
truthful output), the built items, the generations, the scorers."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from pydantic import ValidationError

from ..benchmarks.registry import get_benchmark
from ..core import paths
from ..core.errors import DataError, IdiombenchError
from ..core.io import parquet_rows, read_json_object, read_parquet, require_complete
from ..core.items import Item, read_items
from ..generation.table import GENERATION_SCHEMA
from ..metrics.body import FrameBody, off_model, read_body
from ..params.schema import Params

if TYPE_CHECKING:
    from ..scoring import Scorers

SKIPPED = "skipped"
SCORED = "scored"


def applies(params: Params, *, benchmark: str, model: str) -> str | None:
    """None when `model` runs `benchmark`, else the reason it does not."""
    if model not in params.models:
        raise IdiombenchError(f"unknown model {model!r} (params models: {', '.join(params.models) or 'none'})")
    if not params.benchmark(benchmark).enabled:
        return f"benchmarks.{benchmark}.enabled is false"
    selected = params.models[model].benchmarks
    if selected is not None and benchmark not in selected:
        return f"models.{model}.benchmarks does not include {benchmark}"
    return None


def load_items(
    benchmark: str, processed_dir: Path | None = None, only: Collection[str] | None = None
) -> dict[str, dict[str, Item]]:
    """task -> item_id -> Item, from the built Parquet files (only the ids in `only`, given)."""
    directory = processed_dir or paths.processed_dir(benchmark)
    out: dict[str, dict[str, Item]] = {}
    for path in sorted(directory.glob("*.parquet")):
        items = read_items(path, only)
        out[path.stem] = {item.item_id: item for item in items}
    if not out:
        raise IdiombenchError(f"{directory} holds no built items: run `idiombench build {benchmark}` first")
    return out


class GenerationTables(Mapping[str, pd.DataFrame]):
    """setting -> generations table, each read when asked for and only the last one kept: a
    benchmark that scores setting by setting holds one setting's generations at a time."""

    def __init__(self, files: dict[str, Path]) -> None:
        self.files = files
        self._last: tuple[str, pd.DataFrame] | None = None

    def __getitem__(self, setting: str) -> pd.DataFrame:
        if self._last is None or self._last[0] != setting:
            self._last = None  # the previous table is freed before the next one is read
            frame = read_parquet(self.files[setting], GENERATION_SCHEMA, what="generations table").to_pandas()
            self._last = (setting, frame)
        return self._last[1]

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)

    def rows(self) -> int:
        return sum(parquet_rows(path, what="generations table") for path in self.files.values())


def load_generations(*, benchmark: str, model: str, generations_dir: Path | None = None) -> GenerationTables:
    """setting -> generations table of one model on one benchmark (read on access)."""
    root = require_complete(
        generations_dir or paths.generations_dir(model),
        paths.GENERATION_INFO,
        how=f"run `idiombench generate --model {model}` first",
    )
    directory = root / benchmark
    if not directory.is_dir():
        raise IdiombenchError(f"{directory} is missing: run `idiombench generate --model {model}` first")
    return GenerationTables({path.stem: path for path in sorted(directory.glob("*.parquet"))})


def _make_scorers(params: Params) -> Scorers | None:
    scoring = getattr(params, "scoring", None)
    if scoring is None:
        return None
    from ..scoring import Scorers

    return Scorers(scoring)


def read_metrics(path: Path, benchmark: str) -> Any:
    """A metrics file (any schema) as the benchmark's typed body (its `results_model`); one that
    does not fit is a one-line error naming the file and key. A benchmark without a results model
    (a plugin, a declaration) gets its JSON back once it fits the frame every body shares
    (metrics.body.FrameBody): its own hooks read the JSON they wrote, generic code reads it
    through `metrics.body.framed`."""
    data = read_json_object(path)
    bench = get_benchmark(benchmark)
    try:
        typed = read_body(data, bench.results_model or FrameBody, bench.migrate_body)
    except ValidationError as error:
        raise DataError(path, off_model(error), expected=f"a {benchmark} metrics body") from None
    if bench.results_model is None:  # a plugin's or declaration's body: its frame checked, handed on as its JSON
        return data
    return typed


def score_tables(benchmark: str, model: str) -> dict[str, pd.DataFrame]:
    """setting -> one model's score table on a benchmark (results/scores), every setting scored."""
    directory = paths.scores_dir(benchmark=benchmark, model=model)
    return {p.stem: read_parquet(p).to_pandas() for p in sorted(directory.glob("*.parquet"))}
