"""SemanticQA's typed metrics body: a schema-1 body migrates to exactly the shape the aggregate
writes now (coverage beside the counts it is read from, every breakdown key, role records as
metrics.body.RoleRecord), and a body with a key the model does not know is one error line."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from test_semanticqa_scoring import OUTPUTS, generations, run

from idiombench.benchmarks.semanticqa.config import SemanticQASample
from idiombench.benchmarks.semanticqa.results import BREAKDOWNS, SemanticQABody, migrate_body
from idiombench.core.errors import DataError
from idiombench.metrics.body import SCHEMA_VERSION, RoleRecord, migrate
from idiombench.stages.inputs import read_metrics

ROOT = Path(__file__).resolve().parents[4]


@pytest.fixture(scope="module")
def params():
    from idiombench.pipeline.config import load_params

    return load_params(ROOT / "params.yaml")


SCHEMA1 = ROOT / "tests/fixtures/metrics_schema1/semanticqa_echo.json"


def test_a_schema1_body_migrates_to_the_typed_body() -> None:
    old = json.loads(SCHEMA1.read_text(encoding="utf-8"))
    kept = copy.deepcopy(old)
    new = migrate(old, migrate_body)
    assert old == kept  # the caller's body is not changed
    assert new["schema_version"] == SCHEMA_VERSION
    assert SemanticQABody.model_validate(new).dump() == new  # exactly the shape the model writes
    assert set(new["breakdowns"]) == set(BREAKDOWNS) and new["breakdowns"]["lcc_scaling"] == {}
    assert set(new["provenance"]["roles"]["bertscore_en"]) == set(RoleRecord.model_fields)  # no resolved path
    shot0 = new["provenance"]["coverage"]["0-shot"]
    counts = old["settings"]["0-shot"]["counts"]
    assert shot0["scored"] == sum(c["items"] for c in counts.values()) == 12
    assert shot0["available"] == sum(c["items_in_task"] for c in counts.values())
    assert shot0["parts"]["idiom_detection"] == {
        "unit": "item",
        "scored": 1,
        "available": 273,
        "complete": False,
        "selection": "1 item(s) per task (seed 0)",  # provenance.render_sample
        "parts": {},
    }
    assert new["settings"] == old["settings"]  # the counts the counts table prints stay


@pytest.mark.parametrize("per_task", [None, 2])
def test_the_migrated_body_is_what_the_aggregate_writes(params, per_task: int | None) -> None:
    """The aggregate's body made schema 1 (as the aggregate wrote it before: no coverage, the score
    stage's role record whole, empty breakdowns left out), migrated, is the aggregate's body."""
    config = params.benchmark("semanticqa")
    sample = SemanticQASample(seed=0, items_per_task=per_task) if per_task else None
    config = config.model_copy(update={"render": config.render.model_copy(update={"sample": sample})})
    gens = generations(OUTPUTS)
    if per_task:  # what a sample renders: the first items of each task
        gens = gens.groupby("task").head(per_task).reset_index(drop=True)
    _, new, _ = run(params, {"0-shot": gens}, config=config)
    old = copy.deepcopy(new)
    del old["provenance"]["coverage"]
    for record in old["provenance"]["roles"].values():
        record.update(resolved={"engine": "transformers", "location": "/x"}, revision=None, note=None)
    old["breakdowns"] = {k: v for k, v in old["breakdowns"].items() if v}
    assert migrate_body(old) == new
    coverage = new["provenance"]["coverage"]["0-shot"]
    assert coverage["complete"] is (per_task is None)
    assert coverage["selection"] == (f"{per_task} item(s) per task (seed 0)" if per_task else None)


def test_a_wrong_key_is_one_line_naming_it(tmp_path: Path) -> None:
    body = json.loads(SCHEMA1.read_text(encoding="utf-8"))
    body["provenance"]["meteor"]["resaon"] = None
    path = tmp_path / "echo.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(DataError) as error:
        read_metrics(path, "semanticqa")
    message = str(error.value)
    assert "\n" not in message and str(path) in message and "key provenance.meteor.resaon" in message
