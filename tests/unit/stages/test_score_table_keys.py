"""The score stage refuses a benchmark's score table without the row keys (contexts.SCORE_KEYS):
track, the intervals and the comparisons join on them, so a missing one must fail where it is
made, naming the benchmark and the setting, with nothing written for the stage."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from idiombench.benchmarks.contexts import SCORE_KEYS
from idiombench.core.errors import IdiombenchError
from idiombench.core.io import read_parquet
from idiombench.core.progress import Progress
from idiombench.stages.score import write_chunks


def table(**drop: bool) -> pd.DataFrame:
    row = {"prompt_id": "p/1", "pass": "main", "sample_index": 0, "item_id": "1", "task": "t", "correct": True}
    return pd.DataFrame([{key: value for key, value in row.items() if key not in drop}])


def test_a_table_with_every_key_is_written(tmp_path: Path) -> None:
    with Progress(2, "score toy m", unit="row") as progress:
        counts = write_chunks(tmp_path, [("zero_shot", table()), ("zero_shot", table())], progress, "toy")
    assert counts == {"zero_shot": 2}
    assert read_parquet(tmp_path / "zero_shot.parquet").num_rows == 2


@pytest.mark.parametrize("key", SCORE_KEYS)
def test_a_table_without_a_key_is_refused_naming_it(tmp_path: Path, key: str) -> None:
    with Progress(1, "score toy m", unit="row") as progress, pytest.raises(IdiombenchError) as error:
        write_chunks(tmp_path, [("zero_shot", table(**{key: True}))], progress, "toy")
    assert f"score toy: the score table of setting 'zero_shot' has no column {key} " in str(error.value)
    assert not (tmp_path / "zero_shot.parquet").exists()
