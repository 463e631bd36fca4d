"""One record across Snakemake and DVC (issue 10, item 1), both directions on a small grid:
DVC runs the data and prompt stages and Snakemake plans none of them again; Snakemake
runs generate -> score -> aggregate and its `onsuccess` commits exactly the stages of its
DAG to dvc.lock; a params edit makes `dvc repro` rerun exactly the stages it invalidates,
after which Snakemake plans nothing; an edit after that is still seen by Snakemake.
DVC as a data tool (item 2): `dvc repro` runs the rest of the DAG to reports/all_tables.pdf,
`dvc push` sends it to the default remote, and a fresh `git clone` + `dvc pull` has the same
report with nothing to run for either tool; then `dvc exp run` / `dvc exp show` and `dvc plots`."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
import yaml

from idiombench.benchmarks import NAMES

from helpers import run, tool_env

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.mirror, pytest.mark.slow]

MODEL = "oracle"
BENCH = "chengyu-bench"
TARGET = f"results/metrics/{BENCH}/{MODEL}.json"
DATA_STAGES = sorted(f"{stage}@{name}" for stage in ("acquire", "build", "render") for name in NAMES)
DATA_TARGETS = [f"{d}/{n}" for d in ("data/processed", "results/prompts") for n in NAMES]
MODEL_STAGES = sorted([f"generate@{MODEL}", f"score@{MODEL}-{BENCH}", f"aggregate@{MODEL}-{BENCH}"])


def write_params(project: Path, params: dict) -> None:
    (project / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")


def dvc_ran(output: str) -> list[str]:
    return sorted(re.findall(r"Running stage '([^']+)'", output))


def snakemake_jobs(output: str) -> list[str]:
    """Rule names of the jobs Snakemake ran or (with -n) plans, one per job."""
    return sorted(re.findall(r"^\s*(?:local)?rule (\w+):", output, flags=re.MULTILINE))


def sync_line(output: str, prefix: str) -> list[str]:
    """The stage list of the dvc-sync line starting with `prefix` ([] when absent)."""
    for line in output.splitlines():
        if line.startswith(prefix):
            return sorted(s.strip() for s in line.split(": ", 2)[-1].split(","))
    return []


def dvc_status(project: Path, env: dict[str, str], *targets: str) -> list[str]:
    args = ["dvc", "status", "--json", *targets] + (["--with-deps"] if targets else [])
    return sorted(json.loads(run(args, project, env).stdout or "{}"))


def report_files(project: Path) -> dict[str, bytes]:
    """The report (PDF, tables, figures) by path, as bytes (not Snakemake's or git's markers)."""
    return {path.relative_to(project).as_posix(): path.read_bytes()
            for path in sorted((project / "reports").rglob("*"))
            if path.is_file() and path.name not in (".gitkeep", ".snakemake_timestamp")}


def test_snakemake_and_dvc_share_one_record(make_project, mirrors: list[Path]):
    project = make_project()
    # the track stages' MLflow store: the project's own, whatever the environment says
    env = {**tool_env(mirrors), "MLFLOW_TRACKING_URI": f"sqlite:///{project / 'mlflow.db'}"}
    params = yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8"))
    params["models"] = {MODEL: params["models"][MODEL]}
    write_params(project, params)
    # the project's DVC config (its default remote: ../idiombench-dvc-storage beside the checkout)
    (project / ".dvc" / "config").write_text((ROOT / ".dvc" / "config").read_text(encoding="utf-8"), encoding="utf-8")
    # (the project's .gitignore, copied by make_project, ignores results/*: DVC's cache carries them)
    run(["git", "add", "-A"], project, env)
    run(["git", "commit", "-qm", "oracle only"], project, env)

    # DVC first: the data and prompt stages. Snakemake then plans none of them: it has no
    # records of them, dvc.lock vouches for them, and DVC ran them in dependency order.
    assert dvc_ran(run(["dvc", "repro", "render"], project, env).stdout) == DATA_STAGES
    planned = run(["snakemake", "-n", "--cores", "2", *DATA_TARGETS], project, env)
    out = planned.stdout + planned.stderr
    assert snakemake_jobs(out) == [] and "Nothing to be done" in out, out
    assert sync_line(out, "dvc-sync: Snakemake records take DVC's word") == DATA_STAGES

    # Snakemake runs the model's stages only; onsuccess commits every stage of its DAG.
    ran = run(["snakemake", "--cores", "2", TARGET], project, env)
    out = ran.stdout + ran.stderr
    assert snakemake_jobs(out) == ["aggregate", "generate", "score"], out
    assert sync_line(out, "dvc-sync: dvc commit recorded") == sorted(DATA_STAGES + MODEL_STAGES)
    assert dvc_status(project, env, f"aggregate@{MODEL}-{BENCH}") == []
    never_run = sorted(
        [f"{s}@{MODEL}-{b}" for s in ("score", "aggregate", "track") for b in NAMES if b != BENCH]
        + [f"track@{MODEL}-{BENCH}", "construct@g-idiomalign", f"attention@{MODEL}-g-idiomalign", "plots", "report"])
    assert dvc_status(project, env) == never_run

    # A scoring option of one benchmark: DVC reruns exactly its score and aggregate.
    params["benchmarks"][BENCH]["score"]["accept_unformatted"] = False
    write_params(project, params)
    assert dvc_status(project, env, f"aggregate@{MODEL}-{BENCH}") == [f"aggregate@{MODEL}-{BENCH}",
                                                                        f"score@{MODEL}-{BENCH}"]
    repro = run(["dvc", "repro", f"aggregate@{MODEL}-{BENCH}"], project, env)
    assert dvc_ran(repro.stdout) == [f"aggregate@{MODEL}-{BENCH}", f"score@{MODEL}-{BENCH}"]
    assert json.loads((project / TARGET).read_text(encoding="utf-8"))["status"] != "skipped"

    # ... after which Snakemake plans nothing (its records of those outputs were of the
    # old params; DVC's verdict replaced them) ...
    planned = run(["snakemake", "-n", "--cores", "2", TARGET], project, env)
    out = planned.stdout + planned.stderr
    assert snakemake_jobs(out) == [] and "Nothing to be done" in out, out
    assert sync_line(out, "dvc-sync: Snakemake records take DVC's word") == sorted(
        DATA_STAGES + [f"aggregate@{MODEL}-{BENCH}", f"score@{MODEL}-{BENCH}"])

    # ... and a later edit is still seen by Snakemake on the outputs DVC made.
    params["benchmarks"][BENCH]["score"]["accept_unformatted"] = True
    write_params(project, params)
    planned = run(["snakemake", "-n", "--cores", "2", TARGET], project, env)
    out = planned.stdout + planned.stderr
    assert snakemake_jobs(out) == ["aggregate", "score"], out
    assert sync_line(out, "dvc-sync: DVC reports changed") == [f"aggregate@{MODEL}-{BENCH}",
                                                                f"score@{MODEL}-{BENCH}"]

    # DVC as a data tool (item 2). Back to the recorded params, then `dvc repro` runs the
    # rest of the DAG (exactly the stages never run so far) to the report, and `dvc push`
    # sends every output to the default remote.
    params["benchmarks"][BENCH]["score"]["accept_unformatted"] = False
    write_params(project, params)
    target = f"aggregate@{MODEL}-{BENCH}"
    assert dvc_status(project, env, target) == []
    assert dvc_ran(run(["dvc", "repro"], project, env, timeout=1800).stdout) == never_run
    assert dvc_status(project, env) == []
    run(["git", "add", "-A"], project, env)
    run(["git", "commit", "-qm", "results"], project, env)
    run(["dvc", "push"], project, env)
    assert (project.parent / "idiombench-dvc-storage" / "files" / "md5").is_dir()
    reports = report_files(project)
    assert {"reports/all_tables.pdf", "reports/tables/chengyu_bench_table7.csv",
            "reports/tables/orderprobe_table3.md"} <= set(reports), sorted(reports)

    # A fresh clone (its own cache, the same remote beside it) pulls everything and runs
    # nothing: DVC finds every stage current, Snakemake plans no job, the report is the same.
    clone = project.parent / "clone"
    run(["git", "clone", "-q", str(project), str(clone)], project.parent, env)
    assert not (clone / "reports" / "all_tables.pdf").exists() and not (clone / ".dvc" / "cache").exists()
    run(["dvc", "pull"], clone, env)
    assert dvc_status(clone, env) == []
    pulled = {path: (clone / path).stat().st_mtime_ns for path in reports}
    assert dvc_ran(run(["dvc", "repro"], clone, env).stdout) == []
    assert {path: (clone / path).stat().st_mtime_ns for path in reports} == pulled  # nothing rewritten
    every_stage = sorted(DATA_STAGES + MODEL_STAGES + never_run)
    for snakemake_target in (["reports/all_tables.pdf"], []):  # the report; the default target (all)
        planned = run(["snakemake", "-n", "--cores", "2", *snakemake_target], clone, env)
        out = planned.stdout + planned.stderr
        assert snakemake_jobs(out) == [] and "Nothing to be done" in out, out
    # no Snakemake record describes a pulled output: each call asks DVC, which vouches for all
    assert sync_line(out, "dvc-sync: Snakemake records take DVC's word") == every_stage
    assert dvc_status(clone, env) == []  # the mtimes put in DAG order changed no hash
    assert report_files(clone) == reports
    assert (clone / TARGET).read_text(encoding="utf-8") == (project / TARGET).read_text(encoding="utf-8")

    # An experiment from the command line: only the invalidated stages run, and
    # `dvc exp show` lists it with its params and metrics.
    # (`dvc exp run` does not print its stages: which outputs were rewritten says which ran)
    watched = [f"results/generations/{MODEL}/identity.json", f"data/processed/{BENCH}/build_stats.json",
               f"results/scores/{MODEL}/{BENCH}/scoring_meta.json", TARGET]
    before = {path: (project / path).stat().st_mtime_ns for path in watched}
    exp = run(["dvc", "exp", "run", target, "--name", "strict-format",
               "-S", f"benchmarks.{BENCH}.score.accept_unformatted=true"], project, env)
    assert "Ran experiment(s): strict-format" in exp.stdout + exp.stderr
    rewritten = [path for path in watched if (project / path).stat().st_mtime_ns != before[path]]
    assert rewritten == [f"results/scores/{MODEL}/{BENCH}/scoring_meta.json", TARGET]
    shown = run(["dvc", "exp", "show", "--no-pager", "--csv", "--drop", ".*", "--keep",
                 r"Experiment|settings\.connotation\.metrics\.accuracy|benchmarks\.chengyu-bench\.score\.accept_unformatted"],
                project, env).stdout
    rows = {row["Experiment"]: row for row in csv.DictReader(shown.splitlines())}
    assert rows["strict-format"]["benchmarks.chengyu-bench.score.accept_unformatted"] == "True", shown
    assert float(rows["strict-format"]["settings.connotation.metrics.accuracy"]) == 100.0, shown

    # `dvc plots`: the curves dvc.yaml declares, from the plots stage's command. OrderProbe
    # and G-IdiomAlign were not scored here: their metrics files are stand-ins with the
    # breakdowns the curves read (pattern -> Recovery; threshold -> Acc@t).
    (project / "results/metrics/orderprobe").mkdir(parents=True, exist_ok=True)
    (project / "results/metrics/orderprobe/oracle.json").write_text(json.dumps({
        "status": "scored", "settings": {"zero_shot": {"metrics": {"recovery": 1.0}}},
        "breakdowns": {"per_pattern": {"zero_shot": {"ABDC": {"recovery_default": 0.5}, "BACD": {"recovery_default": 1.0}}}},
    }), encoding="utf-8")
    (project / "results/metrics/g-idiomalign").mkdir(parents=True, exist_ok=True)
    (project / "results/metrics/g-idiomalign/oracle.json").write_text(json.dumps({
        "status": "scored", "settings": {"no_gloss": {"metrics": {"Acc@0.70": 80.0, "Acc@0.80": 60.0, "EM": 50.0}}},
    }), encoding="utf-8")
    run(["idiombench", "plot-data", "--params", "params.yaml"], project, env)
    assert sorted(json.loads((project / "results" / "headline.json").read_text(encoding="utf-8"))["orderprobe"]["oracle"]) == [
        "zero_shot/recovery"]
    plots = json.loads(run(["dvc", "plots", "show", "--json"], project, env).stdout)["data"]
    assert sorted(plots) == ["results/plots/g-idiomalign-acc-at-t/oracle.json",
                             "results/plots/orderprobe-recovery-by-pattern/oracle.json"], plots
    recovery = json.loads((project / "results/plots/orderprobe-recovery-by-pattern/oracle.json").read_text(encoding="utf-8"))
    assert recovery == [{"pattern": "ABDC", "zero_shot": 50.0, "cot": None, "three_shot": None},
                        {"pattern": "BACD", "zero_shot": 100.0, "cot": None, "three_shot": None}]
    acc = json.loads((project / "results/plots/g-idiomalign-acc-at-t/oracle.json").read_text(encoding="utf-8"))
    assert acc == [{"threshold": 0.7, "no_gloss": 80.0, "with_gloss": None},
                   {"threshold": 0.8, "no_gloss": 60.0, "with_gloss": None}]
