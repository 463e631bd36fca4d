"""The Snakemake <-> DVC bridge's pure parts: which DVC stages a Snakemake run covers, and
which Snakemake records describe the output on disk."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from idiombench.pipeline import dvc_sync

STAGES = {
    "build@a": ["data/processed/a"],
    "score@m-a": ["results/scores/m/a"],
    "report": ["reports/all_tables.pdf", "reports/tables", "reports/figures"],
}


def test_a_stage_is_covered_only_when_every_output_is_in_the_run():
    outputs = ["data/processed/a", "results/scores/m/a/", "reports/all_tables.pdf", "reports/tables"]
    assert dvc_sync.stages_covered_by(STAGES, outputs) == ["build@a", "score@m-a"]
    assert dvc_sync.stages_covered_by(STAGES, outputs + ["reports/figures"]) == ["build@a", "report", "score@m-a"]
    assert dvc_sync.stages_covered_by(STAGES, []) == []


def test_snakemake_mtime_uses_the_timestamp_file_of_a_directory(tmp_path: Path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.parquet").write_text("x")
    os.utime(out, (1000, 1000))
    assert dvc_sync.snakemake_mtime(out) == 1000
    stamp = out / dvc_sync.TIMESTAMP_FILE
    stamp.write_text("")
    os.utime(stamp, (2000, 2000))
    assert dvc_sync.snakemake_mtime(out) == 2000
    assert dvc_sync.snakemake_mtime(tmp_path / "missing") is None


@pytest.mark.parametrize(
    ("params", "endtime", "describes"),
    [
        (["'{}'"], 5.0, True),  # Snakemake's own record of this very file
        (["'{}'"], 4.0, False),  # rewritten since (by dvc repro)
        (None, 5.0, False),  # our "current" verdict: asked again every time
        ([dvc_sync.DVC_CHANGED], 5.0, False),  # our "changed" verdict: asked again too
    ],
)
def test_only_snakemakes_own_record_of_the_file_on_disk_is_trusted(params, endtime, describes):
    record = SimpleNamespace(params=params, endtime=endtime)
    assert dvc_sync._describes(record, 5.0) is describes
    assert dvc_sync._describes(None, 5.0) is False


def test_the_bridge_is_off_outside_a_dvc_project_or_when_disabled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    assert dvc_sync.reconcile_snakemake_records(tmp_path).lines() == []
    assert dvc_sync.record_snakemake_run(tmp_path, ["x"]).lines() == []
    monkeypatch.setenv(dvc_sync.SYNC_ENV, "0")
    assert not dvc_sync.enabled()


def test_a_malformed_lock_names_the_file(tmp_path: Path):
    (tmp_path / "dvc.lock").write_text("schema: '2.0'\nstages: [a, b]\n")
    with pytest.raises(ValueError, match="dvc.lock: expected a mapping under 'stages:'"):
        dvc_sync.locked_stage_outs(tmp_path)


DEPS = {
    "build@a": ["data/raw/a", "src/a"],
    "score@m-a": ["data/processed/a", "src/scoring"],
    "report": ["results/scores"],  # a directory holding other stages' outputs
}
OUTS = {"build@a": ["data/processed/a"], "score@m-a": ["results/scores/m/a"], "report": ["reports/all_tables.pdf"]}


def test_stages_are_ordered_upstream_first_through_directory_deps():
    assert dvc_sync.dag_order(["report", "score@m-a", "build@a"], DEPS, OUTS) == ["build@a", "score@m-a", "report"]
    assert dvc_sync.dag_order(["report", "build@a"], DEPS, OUTS) == ["build@a", "report"]
    with pytest.raises(ValueError, match="cycle"):
        dvc_sync.dag_order(["x", "y"], {"x": ["b"], "y": ["a"]}, {"x": ["a"], "y": ["b"]})


def tree(root: Path, mtimes: dict[str, float]) -> None:
    """Files (a name with a suffix) and directories with the given mtimes."""
    for path in mtimes:
        target = root / path
        if target.suffix:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(path)
        else:
            target.mkdir(parents=True, exist_ok=True)
            (target / "part.parquet").write_text(path)
    for path, mtime in mtimes.items():
        os.utime(root / path, (mtime, mtime))


def test_outputs_pulled_out_of_order_get_mtimes_in_dag_order(tmp_path: Path):
    # as `dvc pull` may leave them: every output older than its stage's inputs
    tree(
        tmp_path,
        {
            "src/a": 50,
            "src/scoring": 50,
            "data/raw/a": 400,
            "data/processed/a": 300,
            "results/scores/m/a": 200,
            "reports/all_tables.pdf": 100,
        },
    )
    stamp = tmp_path / "results/scores/m/a" / dvc_sync.TIMESTAMP_FILE  # Snakemake's carrier wins
    stamp.write_text("")
    os.utime(stamp, (200, 200))
    assert dvc_sync.order_mtimes(tmp_path, ["report", "score@m-a", "build@a"], DEPS, OUTS) == [
        "build@a",
        "score@m-a",
        "report",
    ]
    step = dvc_sync.ORDER_STEP_S
    assert dvc_sync.snakemake_mtime(tmp_path / "data/processed/a") == pytest.approx(400 + step)
    assert stamp.stat().st_mtime == pytest.approx(400 + 2 * step)
    assert dvc_sync.snakemake_mtime(tmp_path / "reports/all_tables.pdf") == pytest.approx(400 + 3 * step)
    assert (tmp_path / "reports/all_tables.pdf").read_text() == "reports/all_tables.pdf"  # contents untouched
    # in order now (and as `dvc repro` leaves them): nothing is touched
    assert dvc_sync.order_mtimes(tmp_path, ["report", "score@m-a", "build@a"], DEPS, OUTS) == []


def test_an_output_already_newer_than_its_inputs_keeps_its_mtime(tmp_path: Path):
    tree(
        tmp_path,
        {"src/a": 50, "data/raw/a": 100, "data/processed/a": 300, "src/scoring": 50, "results/scores/m/a": 200},
    )
    assert dvc_sync.order_mtimes(tmp_path, ["build@a", "score@m-a"], DEPS, OUTS) == ["score@m-a"]
    assert dvc_sync.snakemake_mtime(tmp_path / "data/processed/a") == 300
    assert dvc_sync.snakemake_mtime(tmp_path / "results/scores/m/a") == pytest.approx(300 + dvc_sync.ORDER_STEP_S)


def test_a_dep_overlaps_the_outputs_it_is_above_below_or_equal_to():
    index = dvc_sync.OutputIndex(
        {"a": ["results/scores/m/a"], "b": ["results/scores2/x"], "c": ["data/raw"], "d": ["results/scores/m/a/"]}
    )
    assert sorted(index.overlapping("results/scores")) == [("results/scores/m/a", "a"), ("results/scores/m/a", "d")]
    assert index.overlapping("results/scores/m/a/part.parquet") == [
        ("results/scores/m/a", "a"),
        ("results/scores/m/a", "d"),
    ]
    assert index.overlapping("data/raw/x/") == [("data/raw", "c")]
    assert index.overlapping("results/score") == [] and index.overlapping("data") == [("data/raw", "c")]


# ---- issue 30: the sync never records a run as params.yaml's when it ran with other values ----

DEFINED = {
    "generate@m": dvc_sync.DefinedStage(
        outs=["results/generations/m"],
        deps=["results/prompts/a"],
        params={"params.yaml": ["models.m", "benchmarks.a.generate"]},
    ),
    "score@m-a": dvc_sync.DefinedStage(
        outs=["results/scores/m/a"], deps=["results/generations/m"], params={"params.yaml": ["benchmarks.a.score"]}
    ),
    "aggregate@m-a": dvc_sync.DefinedStage(
        outs=["results/metrics/a/m.json"], deps=["results/scores/m/a"], params={"params.yaml": ["benchmarks.a.score"]}
    ),
    "report": dvc_sync.DefinedStage(
        outs=["reports/all_tables.pdf"], deps=["results/metrics"], params={"params.yaml": ["report"]}
    ),
    "whole": dvc_sync.DefinedStage(outs=["w"], deps=[], params={"params.yaml": []}),  # every key of the file
}
FILE = {
    "models": {"m": {"backend": "oracle"}},
    "benchmarks": {"a": {"generate": {"n": 1}, "score": {"mode": "default"}}},
    "report": {"x": 1},
}


def test_only_the_stages_whose_dvc_params_differ_are_named_with_their_keys():
    overlay = {**FILE, "benchmarks": {"a": {"generate": {"n": 1}, "score": {"mode": "strict"}}}}
    stages = ["generate@m", "score@m-a", "aggregate@m-a", "report"]
    assert dvc_sync.params_differences(DEFINED, stages, FILE, FILE) == {}
    assert dvc_sync.params_differences(DEFINED, stages, overlay, FILE) == {
        "aggregate@m-a": ["benchmarks.a.score"],
        "score@m-a": ["benchmarks.a.score"],
    }
    assert dvc_sync.params_differences(DEFINED, ["whole"], overlay, FILE) == {"whole": ["benchmarks"]}
    # a key the run has and params.yaml lacks (or the other way round) differs too
    assert dvc_sync.params_differences(DEFINED, ["report"], {**FILE, "report": {"x": 1, "y": 2}}, FILE) == {
        "report": ["report"]
    }
    assert dvc_sync.params_differences(DEFINED, ["report"], {k: v for k, v in FILE.items() if k != "report"}, FILE) == {
        "report": ["report"]
    }


def test_the_stages_built_on_a_withheld_stage_are_withheld_too():
    among = ["generate@m", "score@m-a", "aggregate@m-a", "report"]
    assert dvc_sync.downstream_of(DEFINED, ["score@m-a"], among) == ["aggregate@m-a", "report"]
    assert dvc_sync.downstream_of(DEFINED, ["generate@m"], among) == ["aggregate@m-a", "report", "score@m-a"]
    assert dvc_sync.downstream_of(DEFINED, ["generate@m"], ["generate@m", "report"]) == []  # not through a gap
    assert dvc_sync.downstream_of(DEFINED, [], among) == []


def test_the_sync_says_which_stages_it_left_out_and_how_to_record_them():
    report = dvc_sync.SyncReport(
        committed=["generate@m"],
        params_file="strict.yaml",
        withheld={"score@m-a": ["benchmarks.a.score"], "aggregate@m-a": ["benchmarks.a.score"], "report": []},
    )
    assert report.lines()[-1] == (
        "dvc-sync: not recorded in dvc.lock, as they did not run with params.yaml's values, which DVC reads: "
        "aggregate@m-a, score@m-a (other values in strict.yaml: benchmarks.a.score), and the stages built on them: "
        "report; `dvc status` reports them changed. To record this run: `idiombench merge-params strict.yaml --out "
        "params.yaml && dvc commit -f aggregate@m-a report score@m-a`"
    )
    edited = dvc_sync.SyncReport(withheld={"report": ["report"]})  # params.yaml edited while the run ran
    assert "(other values in params.yaml as it was when the run started: report)" in edited.lines()[-1]
    assert edited.lines()[-1].endswith("run Snakemake again: it reruns them with params.yaml's values and records them")
