"""The main job end to end, and one record across Snakemake and DVC (issues 4 and 10), on a
smaller sample of the embedded default (oracle, echo and SmolLM2-135M-Instruct from PyPI).
One project goes through every step, so the DAG runs once:

- DVC runs the data and prompt stages (the run of them that the session's rendered projects
  share, on the default params, then the ones the smaller sample changes) and Snakemake plans
  none of them again; Snakemake runs
  one model's generate -> score -> aggregate and its `onsuccess` commits exactly the stages
  of its DAG to dvc.lock; a params edit makes `dvc repro` rerun exactly the stages it
  invalidates, after which Snakemake plans nothing; an edit after that is still seen by
  Snakemake.
- The main job: `snakemake reports/all_tables.pdf` runs the rest of the DAG (acquire ->
  build -> render -> generate -> score -> aggregate -> track -> construct -> plots ->
  report) and writes the PDF with a section per benchmark; DVC then finds every stage
  current (`dvc repro` runs nothing); a scoring option reruns scoring, aggregation,
  tracking and the report of that benchmark, and no generation.
- DVC as a data tool: `dvc push` sends every output to the default remote, and a fresh
  `git clone` + `dvc pull` has the same report with nothing to run for either tool; then
  `dvc exp run` / `dvc exp show` and `dvc plots`."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
import yaml

from helpers import pdf_text, planned_rules, run, snakemake_threads, tool_env
from idiombench.benchmarks.registry import NAMES
from idiombench.core.workers import usable_cores

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.mirror, pytest.mark.slow]

MODEL = "oracle"
BENCH = "chengyu-bench"
TARGET = f"results/metrics/{BENCH}/{MODEL}.json"
DATA_STAGES = sorted(f"{stage}@{name}" for stage in ("acquire", "build", "render") for name in NAMES)
# the records of each benchmark's code (pipeline/records.py): the Snakefile writes them as it is
# parsed, so the sync asks DVC no verdict on them
CODE_STAGES = sorted(f"code@{name}" for name in NAMES)
DATA_TARGETS = [f"{d}/{n}" for d in ("data/processed", "results/prompts") for n in NAMES]
MODEL_STAGES = sorted([f"generate@{MODEL}", f"score@{MODEL}-{BENCH}", f"aggregate@{MODEL}-{BENCH}"])
# the data and prompt stages the smaller sample changes
SAMPLE_STAGES = sorted(["build@orderprobe"] + [f"render@{name}" for name in NAMES])
SECTION_TITLES = ("OrderProbe", "G-IdiomAlign", "SemanticQA", "Chengyu-Bench")


def smaller_sample(params: dict) -> dict:
    """The embedded default's models and settings on fewer items and shorter outputs."""
    bench = params["benchmarks"]
    orderprobe = bench["orderprobe"]
    orderprobe["build"]["languages"] = ["zh-CN", "ko"]  # 2 expressions x 24 inputs per setting
    # one setting per benchmark where the checks need no second one: SmolLM2 generates every
    # prompt of the main job, and again in the serving-noise reruns (few-shot prompts: the
    # render and generate tests)
    orderprobe["render"]["settings"] = ["zero_shot"]
    for spec in [orderprobe["generate"]["main"], *orderprobe["generate"]["extra"].values()]:
        spec["max_new_tokens"] = 16
    g_idiomalign = bench["g-idiomalign"]
    g_idiomalign["render"]["settings"] = ["mcq", "no_gloss"]
    g_idiomalign["generate"]["main"]["max_new_tokens"] = 12
    g_idiomalign["construct"]["pairs"] = ["French_Japanese"]
    g_idiomalign["attention"]["items"] = 4
    semanticqa = bench["semanticqa"]
    semanticqa["render"]["settings"] = ["0-shot"]
    semanticqa["render"]["sample"]["items_per_task"] = 1
    semanticqa["generate"]["main"]["max_new_tokens"] = 16
    chengyu = bench["chengyu-bench"]
    chengyu["render"]["sample"]["items_per_task"] = 2
    chengyu["generate"]["main"]["max_new_tokens"] = 16
    # the serving-noise pass on 2 items per benchmark and one perturbation: its place in the DAG
    # and the record is what this test checks (test_serving_noise.py checks the pass itself; each
    # perturbation loads the model and generates again, here twice: the main job and a rerun)
    params["serving_noise"]["sample_size"] = 2
    params["serving_noise"]["perturbations"] = {"batch_size_1": {"batch_size": 1}}
    assert set(params["models"]) == {"oracle", "echo", "smollm2"}, "the embedded default's models changed"
    return params


def write_params(project: Path, params: dict) -> None:
    (project / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")


def dvc_ran(output: str) -> list[str]:
    return sorted(re.findall(r"Running stage '([^']+)'", output))


def sync_line(output: str, prefix: str) -> list[str]:
    """The stage list of the dvc-sync line starting with `prefix` ([] when absent)."""
    for line in output.splitlines():
        if line.startswith(prefix):
            return sorted(s.strip() for s in line.split(": ", 2)[-1].split(","))
    return []


def dvc_status(project: Path, env: dict[str, str], *targets: str) -> list[str]:
    args = ["dvc", "status", "--json", *targets] + (["--with-deps"] if targets else [])
    return sorted(json.loads(run(args, project, env).stdout or "{}"))


def dvc_stages(project: Path, env: dict[str, str]) -> list[str]:
    """Every stage of dvc.yaml (foreach/matrix expanded)."""
    return sorted(run(["dvc", "stage", "list", "--name-only"], project, env).stdout.split())


def report_files(project: Path) -> dict[str, bytes]:
    """The report (PDF, tables, figures) by path, as bytes (not Snakemake's or git's markers)."""
    return {
        path.relative_to(project).as_posix(): path.read_bytes()
        for path in sorted((project / "reports").rglob("*"))
        if path.is_file() and path.name not in (".gitkeep", ".snakemake_timestamp")
    }


def evaluate(project: Path, env: dict, file: str, benchmark: str, task: str, setting: str) -> dict:
    result = run(
        [
            "idiombench",
            "evaluate-predictions",
            file,
            "--benchmark",
            benchmark,
            "--task",
            task,
            "--setting",
            setting,
            "--model",
            file.split("/")[2],
            "--json",
        ],
        project,
        env,
    )
    body = json.loads(result.stdout)
    assert body["denominator"] == "test-set"  # the default: an item without a prediction is wrong
    return {"summary": " ".join(result.stderr.split()), "metrics": body["metrics"], "coverage": body["coverage"]}


@pytest.mark.timeout(2400)  # ~10-14 min alone; more beside make test's other workers
def test_main_job_and_one_record_across_snakemake_and_dvc(rendered_project: tuple[Path, str], mirrors: list[Path]):
    # DVC first: the data and prompt stages, every one of them (the default params: the run the
    # session's rendered projects share, ~70 s of CPU); then the smaller sample, for which DVC
    # reruns exactly the stages it changes.
    project, first = rendered_project
    assert dvc_ran(first) == sorted(CODE_STAGES + DATA_STAGES)
    # the track stages' MLflow store: the project's own, whatever the environment says
    env = {**tool_env(mirrors), "MLFLOW_TRACKING_URI": f"sqlite:///{project / 'mlflow.db'}"}
    params = smaller_sample(yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8")))
    models = sorted(params["models"])
    write_params(project, params)
    # the project's DVC config (its default remote: ../idiombench-dvc-storage beside the checkout)
    (project / ".dvc" / "config").write_text((ROOT / ".dvc" / "config").read_text(encoding="utf-8"), encoding="utf-8")
    # (the project's .gitignore, copied by make_project, ignores results/*: DVC's cache carries them)
    run(["git", "add", "-A"], project, env)
    run(["git", "commit", "-qm", "smaller sample"], project, env)
    # OrderProbe's build (two languages) and every render (fewer settings and items)
    assert dvc_ran(run(["dvc", "repro", "render"], project, env).stdout) == SAMPLE_STAGES

    # Snakemake then plans none of the data and prompt stages: it has no records of them,
    # dvc.lock vouches for them, and DVC ran them in dependency order.
    planned = run(["snakemake", "-n", "--cores", "2", *DATA_TARGETS], project, env)
    out = planned.stdout + planned.stderr
    assert planned_rules(out) == [] and "Nothing to be done" in out, out
    assert sync_line(out, "dvc-sync: Snakemake records take DVC's word") == DATA_STAGES

    # Snakemake runs the model's stages only; onsuccess commits every stage of its DAG.
    ran = run(["snakemake", "--cores", "2", TARGET], project, env)
    out = ran.stdout + ran.stderr
    assert planned_rules(out) == ["aggregate", "generate", "score"], out
    assert sync_line(out, "dvc-sync: dvc commit recorded") == sorted(CODE_STAGES + DATA_STAGES + MODEL_STAGES)
    assert dvc_status(project, env, f"aggregate@{MODEL}-{BENCH}") == []
    every_stage = dvc_stages(project, env)
    never_run = sorted(set(every_stage) - set(CODE_STAGES) - set(DATA_STAGES) - set(MODEL_STAGES))
    assert "generate@smollm2" in never_run and "report" in never_run
    assert dvc_status(project, env) == never_run

    # A scoring option of one benchmark: DVC reruns exactly its score and aggregate.
    params["benchmarks"][BENCH]["score"]["accept_unformatted"] = False
    write_params(project, params)
    assert dvc_status(project, env, f"aggregate@{MODEL}-{BENCH}") == [
        f"aggregate@{MODEL}-{BENCH}",
        f"score@{MODEL}-{BENCH}",
    ]
    repro = run(["dvc", "repro", f"aggregate@{MODEL}-{BENCH}"], project, env)
    assert dvc_ran(repro.stdout) == [f"aggregate@{MODEL}-{BENCH}", f"score@{MODEL}-{BENCH}"]
    assert json.loads((project / TARGET).read_text(encoding="utf-8"))["status"] != "skipped"

    # ... after which Snakemake plans nothing (its records of those outputs were of the
    # old params; DVC's verdict replaced them) ...
    planned = run(["snakemake", "-n", "--cores", "2", TARGET], project, env)
    out = planned.stdout + planned.stderr
    assert planned_rules(out) == [] and "Nothing to be done" in out, out
    assert sync_line(out, "dvc-sync: Snakemake records take DVC's word") == sorted(
        DATA_STAGES + [f"aggregate@{MODEL}-{BENCH}", f"score@{MODEL}-{BENCH}"]
    )

    # ... and a later edit is still seen by Snakemake on the outputs DVC made.
    params["benchmarks"][BENCH]["score"]["accept_unformatted"] = True
    write_params(project, params)
    planned = run(["snakemake", "-n", "--cores", "2", TARGET], project, env)
    out = planned.stdout + planned.stderr
    assert planned_rules(out) == ["aggregate", "score"], out
    assert sync_line(out, "dvc-sync: DVC reports changed") == [f"aggregate@{MODEL}-{BENCH}", f"score@{MODEL}-{BENCH}"]

    # The main job (issue 4): back to the recorded params, Snakemake runs the rest of the
    # report's DAG, as a user's first command would, and its `onsuccess` commits every stage
    # of that DAG: DVC then has only the plots stage to run.
    params["benchmarks"][BENCH]["score"]["accept_unformatted"] = False
    write_params(project, params)
    target = f"aggregate@{MODEL}-{BENCH}"
    assert dvc_status(project, env, target) == []
    ran = run(
        ["snakemake", "reports/all_tables.pdf", "--cores", "2", "--resources", "gpu=0"], project, env, timeout=1800
    )
    out = ran.stdout + ran.stderr
    # Every score job here takes one thread: OrderProbe's sample is too small for its worker
    # processes (a first setting of 2,000 rows starts them: tests/integration/test_score_threads.py),
    # and its score jobs say so: the one thread Snakemake granted (OMP_NUM_THREADS), one worker
    granted = snakemake_threads(out, "score")
    assert {f"model={m}, benchmark=orderprobe" for m in models} <= set(granted) and set(granted.values()) == {1}, out
    cores = usable_cores()
    for model in models:
        announced = (
            f"score orderprobe {model}: at most 1 worker process (OMP_NUM_THREADS=1: the threads granted; "
            f"{cores} usable cores)"
        )
        assert announced in " ".join(out.split()), out
    # every stage of the report's DAG (the plots stage is not an input of the report)
    assert sync_line(out, "dvc-sync: dvc commit recorded") == [s for s in every_stage if s != "plots"], out
    assert dvc_status(project, env) == ["plots"]
    assert dvc_ran(run(["dvc", "repro"], project, env).stdout) == ["plots"]  # only what is missing
    assert dvc_ran(run(["dvc", "repro"], project, env).stdout) == []

    text = pdf_text(project / "reports" / "all_tables.pdf")
    for title in SECTION_TITLES:
        assert title in text, f"no {title} section in the PDF"
    assert "SmolLM2-135M-Instruct" in text and "oracle (gold answers)" in text
    assert text.index("Headline metrics per benchmark") < text.index("Git commit")  # the summary page comes first
    assert "serving noise" in text and "where two models disagree" in text
    tables = {p.name for p in (project / "reports" / "tables").iterdir()}
    expected_tables = {
        "orderprobe_table3.csv",
        "orderprobe_table3.md",
        "g_idiomalign_table3.csv",
        "g_idiomalign_construction.csv",
        "semanticqa_table3.csv",
        "chengyu_bench_table7.csv",
    }
    assert expected_tables <= tables, sorted(tables)

    # the reference systems score as they must on the perturbed inputs
    orderprobe = {
        m: json.loads((project / "results" / "metrics" / "orderprobe" / f"{m}.json").read_text(encoding="utf-8"))
        for m in models
    }
    for setting, group in orderprobe["oracle"]["settings"].items():
        assert group["metrics"]["recovery"] == 1.0, setting
    for setting, group in orderprobe["echo"]["settings"].items():
        assert group["metrics"]["recovery_default_excl_identity"] == 0.0, setting
    smollm2 = json.loads((project / "results" / "logs" / "generate-smollm2.json").read_text(encoding="utf-8"))
    assert smollm2["total"]["generated"] > 0 and smollm2["total"]["failed"] == 0
    for name in NAMES:
        for model in models:
            tracked = json.loads(
                (project / "results" / "tracking" / name / f"{model}.json").read_text(encoding="utf-8")
            )
            assert tracked["status"] == "scored" and tracked["runs"], (name, model)

    # the pipeline's own generations, scored again as predictions produced elsewhere: the
    # sampled items are predicted, the rest of the task counts as unanswered (wrong)
    chid = evaluate(
        project,
        env,
        "results/generations/oracle/chengyu-bench/chid_candidates.parquet",
        "chengyu-bench",
        "chid",
        "chid_candidates",
    )
    chid_items = params["benchmarks"]["chengyu-bench"]["render"]["sample"]["items_per_task"]
    assert chid["summary"].startswith(
        f"evaluate-predictions chengyu-bench/chid/chid_candidates (oracle): 2,002 items, {chid_items} with a prediction"
    )
    assert chid["metrics"] == {"accuracy": pytest.approx(100.0 * chid_items / 2002, abs=1e-6)}  # rounded to 6 places
    mcq = evaluate(project, env, "results/generations/echo/g-idiomalign/mcq.parquet", "g-idiomalign", "mcq", "mcq")
    assert "18,999 items, 30 with a prediction" in mcq["summary"] and "0 matched no item" in mcq["summary"]
    assert mcq["metrics"]["accuracy.micro.overall"] == 0.0  # echo never names an option letter

    # A scoring option (issue 4, item 7): `dvc repro` reruns scoring, aggregation, tracking
    # (the models' runs and their comparison) and the report of that benchmark, and no
    # generation; Snakemake then plans nothing.
    params["benchmarks"][BENCH]["score"]["valid_idiom"]["four_character_only"] = False
    write_params(project, params)
    rerun = dvc_ran(run(["dvc", "repro"], project, env, timeout=1800).stdout)
    # noise reads every benchmark's scores and score options (the configured outcomes): rerun per model
    assert rerun == sorted(
        [f"{stage}@{m}-{BENCH}" for stage in ("score", "aggregate", "track") for m in models]
        + [f"noise@{m}" for m in models]
        + [f"track-comparison@{BENCH}", "plots", "report"]
    )
    planned = run(["snakemake", "-n", "--cores", "2", "reports/all_tables.pdf"], project, env)
    assert planned_rules(planned.stdout + planned.stderr) == [], planned.stdout + planned.stderr

    # DVC as a data tool (issue 10, item 2): `dvc push` sends every output to the default
    # remote.
    run(["git", "add", "-A"], project, env)
    run(["git", "commit", "-qm", "results"], project, env)
    run(["dvc", "push"], project, env)
    assert (project.parent / "idiombench-dvc-storage" / "files" / "md5").is_dir()
    reports = report_files(project)
    assert {
        "reports/all_tables.pdf",
        "reports/tables/chengyu_bench_table7.csv",
        "reports/tables/orderprobe_table3.md",
    } <= set(reports), sorted(reports)

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
    for snakemake_target in (["reports/all_tables.pdf"], []):  # the report; the default target (all)
        planned = run(["snakemake", "-n", "--cores", "2", *snakemake_target], clone, env)
        out = planned.stdout + planned.stderr
        assert planned_rules(out) == [] and "Nothing to be done" in out, out
    # no Snakemake record describes a pulled output: each call asks DVC, which vouches for all
    assert sync_line(out, "dvc-sync: Snakemake records take DVC's word") == sorted(set(every_stage) - set(CODE_STAGES))
    assert dvc_status(clone, env) == []  # the mtimes put in DAG order changed no hash
    assert report_files(clone) == reports
    assert (clone / TARGET).read_text(encoding="utf-8") == (project / TARGET).read_text(encoding="utf-8")

    # An experiment from the command line: only the invalidated stages run, and
    # `dvc exp show` lists it with its params and metrics.
    # (`dvc exp run` does not print its stages: which outputs were rewritten says which ran)
    watched = [
        f"results/generations/{MODEL}/identity.json",
        f"data/processed/{BENCH}/build_stats.json",
        f"results/scores/{MODEL}/{BENCH}/scoring_meta.json",
        TARGET,
    ]
    before = {path: (project / path).stat().st_mtime_ns for path in watched}
    exp = run(
        [
            "dvc",
            "exp",
            "run",
            target,
            "--name",
            "strict-format",
            "-S",
            f"benchmarks.{BENCH}.score.accept_unformatted=true",
        ],
        project,
        env,
    )
    assert "Ran experiment(s): strict-format" in exp.stdout + exp.stderr
    rewritten = [path for path in watched if (project / path).stat().st_mtime_ns != before[path]]
    assert rewritten == [f"results/scores/{MODEL}/{BENCH}/scoring_meta.json", TARGET]
    # every model's metrics file has the key: DVC names the column <file>:<key>
    accuracy = f"{TARGET}:settings.connotation.metrics.accuracy"
    shown = run(
        [
            "dvc",
            "exp",
            "show",
            "--no-pager",
            "--csv",
            "--drop",
            ".*",
            "--keep",
            rf"Experiment|{re.escape(accuracy)}|benchmarks\.chengyu-bench\.score\.accept_unformatted",
        ],
        project,
        env,
    ).stdout
    rows = {row["Experiment"]: row for row in csv.DictReader(shown.splitlines())}
    assert rows["strict-format"]["benchmarks.chengyu-bench.score.accept_unformatted"] == "True", shown
    assert float(rows["strict-format"][accuracy]) == 100.0, shown

    # `dvc plots`: the curves dvc.yaml declares, written by the plots stage of the main job
    # (pattern -> Recovery; threshold -> Acc@t), one file per model.
    plots = json.loads(run(["dvc", "plots", "show", "--json"], project, env).stdout)["data"]
    assert sorted(plots) == sorted(
        f"results/plots/{curve}/{m}.json"
        for curve in ("g-idiomalign-acc-at-t", "orderprobe-recovery-by-pattern")
        for m in models
    ), plots
    recovery = json.loads(
        (project / "results/plots/orderprobe-recovery-by-pattern/oracle.json").read_text(encoding="utf-8")
    )
    for setting in ("zero_shot",):
        values = [row[setting] for row in recovery if row[setting] is not None]
        assert values and set(values) == {100.0}, (setting, recovery)  # the oracle restores every pattern it met
    acc = json.loads((project / "results/plots/g-idiomalign-acc-at-t/oracle.json").read_text(encoding="utf-8"))
    assert acc and all(row["no_gloss"] == 100.0 and row["with_gloss"] is None for row in acc), (
        acc
    )  # with_gloss not rendered
    headline = json.loads((project / "results" / "headline.json").read_text(encoding="utf-8"))
    assert headline["orderprobe"]["oracle"]["zero_shot/recovery"] == 1.0
