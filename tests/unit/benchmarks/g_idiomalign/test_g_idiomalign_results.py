"""G-IdiomAlign's typed metrics body: a schema-1 body migrates to exactly the shape the
aggregate writes now (its coverage record to provenance.coverage), and a body with a key the
model does not know is one error line naming the key."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pandas as pd
import pytest

from g_idiomalign_fixtures import AggCtx, gen_item, gen_scores, index, mcq_item, mcq_scores
from idiombench.benchmarks.g_idiomalign import aggregate as agg
from idiombench.benchmarks.g_idiomalign.results import GIdiomAlignBody, migrate_body
from idiombench.core.errors import DataError
from idiombench.metrics.body import SCHEMA_VERSION, migrate
from idiombench.stages.inputs import read_metrics

ROOT = Path(__file__).resolve().parents[4]
SCHEMA1 = ROOT / "tests/fixtures/metrics_schema1/g-idiomalign_echo.json"


def test_a_schema1_body_migrates_to_the_typed_body() -> None:
    old = json.loads(SCHEMA1.read_text(encoding="utf-8"))
    kept = copy.deepcopy(old)
    new = migrate(old, migrate_body)
    assert old == kept  # the caller's body is not changed
    assert new["schema_version"] == SCHEMA_VERSION and "sample" not in new["provenance"]
    assert GIdiomAlignBody.model_validate(new).dump() == new  # exactly the shape the model writes
    mcq = GIdiomAlignBody.model_validate(new).provenance.coverage["mcq"]  # type: ignore[union-attr]
    assert (mcq.unit, mcq.scored, mcq.available, mcq.complete) == ("item", 30, 18_999, False)
    task = mcq.parts["mcq"]
    assert (task.scored, task.available) == (30, 18_999)
    assert task.parts["directions"].model_dump() == {
        "unit": "direction",
        "scored": 30,
        "available": 30,
        "complete": True,
        "selection": None,
        "parts": {},
    }


def test_the_migrated_coverage_is_what_the_aggregate_writes() -> None:
    """The same scored answers: the coverage the aggregate writes now equals the schema-1 record
    the aggregate wrote before (by hand below), migrated; the additional pairs get their own
    setting, and With-gloss counts only the items that have a gloss."""
    groups = {"en->zh": "Zh-target", "zh->en": "En-target"}
    mcq = mcq_scores({"en->zh": ["Correct", "LT"], "zh->en": ["LC"]}, groups)
    no = pd.concat([gen_scores({"zh->en": [0.6], "en->zh": [0.5]}), gen_scores({"ar->en": [0.7]}, additional=True)])
    with_ = no.assign(setting="with_gloss")
    built = index(
        *(mcq_item(d, i, groups[d]) for d in groups for i in range(3)),
        mcq_item("fr->de", 0, "Other targets"),
        gen_item("zh->en", 0, "g"),
        gen_item("zh->en", 1, "h", gloss=""),  # no gloss: not asked With-gloss
        gen_item("en->zh", 0, "g"),
        gen_item("ar->en", 0, "g", task="gloss_generation_additional"),
        gen_item("ar->en", 1, "g", task="gloss_generation_additional"),
    )
    body = agg.aggregate(AggCtx({"mcq": mcq, "no_gloss": no, "with_gloss": with_}, built))
    gen = {"items_scored": 2, "directions_scored": 2, "directions_available": 2}
    additional = {"items_scored": 1, "items_available": 2, "directions_scored": 1, "directions_available": 1}
    schema1_sample = {
        "mcq": {
            "mcq": {
                "items_scored": 3,
                "items_available": 7,
                "directions_scored": 2,
                "directions_available": 3,
                "complete": False,
            }
        },
        "no_gloss": {
            "gloss_generation": {**gen, "items_available": 3, "complete": False},
            "gloss_generation_additional": {**additional, "complete": False},
        },
        "with_gloss": {
            "gloss_generation": {**gen, "items_available": 2, "complete": True},
            "gloss_generation_additional": {**additional, "complete": False},
        },
    }
    migrated = migrate_body({"provenance": {"sample": schema1_sample}})["provenance"]["coverage"]
    assert body["provenance"]["coverage"] == migrated  # type: ignore[index]
    assert sorted(migrated) == ["mcq", "no_gloss", "no_gloss_additional", "with_gloss", "with_gloss_additional"]
    assert migrated["with_gloss"]["complete"] and not migrated["no_gloss"]["complete"]


def test_a_wrong_key_is_one_line_naming_it(tmp_path: Path) -> None:
    body = json.loads(SCHEMA1.read_text(encoding="utf-8"))
    body["provenance"]["sampel"] = {}
    path = tmp_path / "echo.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(DataError) as error:
        read_metrics(path, "g-idiomalign")
    message = str(error.value)
    assert "\n" not in message and str(path) in message and "key provenance.sampel" in message

    body = json.loads(SCHEMA1.read_text(encoding="utf-8"))
    body["breakdowns"]["no_gloss"]["per_direction"]["de->en"]["Acc@high"] = 1.0
    path.write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(DataError, match=r"key breakdowns\.no_gloss\.per_direction\.generation\.de->en: .*'Acc@high'"):
        read_metrics(path, "g-idiomalign")
