"""The main job end to end on a smaller sample of the embedded default: `dvc repro` runs
acquire -> build -> render -> generate (oracle, echo and SmolLM2-135M-Instruct from PyPI)
-> score -> aggregate -> track -> construct -> report and writes reports/all_tables.pdf with
a section per benchmark; a rerun runs nothing; a scoring option reruns scoring, aggregation,
tracking and the report of that benchmark, and no generation (issue 4, item 7)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from idiombench.benchmarks import NAMES

from helpers import run, tool_env

pytestmark = [pytest.mark.mirror, pytest.mark.slow]

SECTION_TITLES = ("OrderProbe", "G-IdiomAlign", "SemanticQA", "Chengyu-Bench")


def smaller_sample(params: dict) -> dict:
    """The embedded default's models and settings on fewer items and shorter outputs."""
    bench = params["benchmarks"]
    orderprobe = bench["orderprobe"]
    orderprobe["build"]["languages"] = ["zh-CN", "ko"]  # 2 expressions x 24 inputs per setting
    for spec in [orderprobe["generate"]["main"], *orderprobe["generate"]["extra"].values()]:
        spec["max_new_tokens"] = 16
    g_idiomalign = bench["g-idiomalign"]
    g_idiomalign["render"]["settings"] = ["mcq", "no_gloss"]
    g_idiomalign["generate"]["main"]["max_new_tokens"] = 12
    g_idiomalign["construct"]["pairs"] = ["French_Japanese"]
    semanticqa = bench["semanticqa"]
    semanticqa["render"]["settings"] = ["0-shot", "3-shot"]
    semanticqa["render"]["sample"]["items_per_task"] = 1
    semanticqa["generate"]["main"]["max_new_tokens"] = 16
    chengyu = bench["chengyu-bench"]
    chengyu["render"]["sample"]["items_per_task"] = 2
    chengyu["generate"]["main"]["max_new_tokens"] = 16
    assert set(params["models"]) == {"oracle", "echo", "smollm2"}, "the embedded default's models changed"
    return params


def chengyu_sample(params: dict) -> int:
    return params["benchmarks"]["chengyu-bench"]["render"]["sample"]["items_per_task"]


def evaluate(project: Path, env: dict, file: str, benchmark: str, task: str, setting: str) -> dict:
    result = run(["idiombench", "evaluate-predictions", file, "--benchmark", benchmark, "--task", task,
                  "--setting", setting, "--model", file.split("/")[2], "--json"], project, env)
    body = json.loads(result.stdout)
    assert body["denominator"] == "test-set"  # the default: an item without a prediction is wrong
    return {"summary": " ".join(result.stderr.split()), "metrics": body["metrics"], "coverage": body["coverage"]}


def write(project: Path, params: dict) -> None:
    (project / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")


def ran_stages(output: str) -> list[str]:
    return sorted(re.findall(r"Running stage '([^']+)'", output))


def pdf_text(path: Path) -> str:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(path))
    return "\n".join(page.get_textpage().get_text_range() for page in document)


def test_dvc_repro_runs_the_main_job_to_the_pdf_and_a_scoring_option_reruns_no_generation(make_project, mirrors: list[Path]):
    project = make_project()
    params = smaller_sample(yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8")))
    write(project, params)
    run(["git", "commit", "-qam", "smaller sample"], project, tool_env())
    env = {**tool_env(mirrors), "MLFLOW_TRACKING_URI": f"sqlite:///{project / 'mlflow.db'}"}

    first = run(["dvc", "repro"], project, env, timeout=1800)
    stages = ran_stages(first.stdout)
    models = sorted(params["models"])
    assert [s for s in stages if s.startswith("generate@")] == [f"generate@{m}" for m in models]
    assert "construct@g-idiomalign" in stages and "report" in stages

    pdf = project / "reports" / "all_tables.pdf"
    text = pdf_text(pdf)
    for title in SECTION_TITLES:
        assert title in text, f"no {title} section in the PDF"
    assert "SmolLM2-135M-Instruct" in text and "oracle (gold answers)" in text
    tables = {p.name for p in (project / "reports" / "tables").iterdir()}
    expected_tables = {"orderprobe_table3.csv", "orderprobe_table3.md", "g_idiomalign_table3.csv",
                       "g_idiomalign_construction.csv", "semanticqa_table3.csv", "chengyu_bench_table7.csv"}
    assert expected_tables <= tables, sorted(tables)

    # the reference systems score as they must on the perturbed inputs
    orderprobe = {m: json.loads((project / "results" / "metrics" / "orderprobe" / f"{m}.json").read_text(encoding="utf-8"))
                  for m in models}
    for setting, group in orderprobe["oracle"]["settings"].items():
        assert group["metrics"]["recovery"] == 1.0, setting
    for setting, group in orderprobe["echo"]["settings"].items():
        assert group["metrics"]["recovery_default_excl_identity"] == 0.0, setting
    smollm2 = json.loads((project / "results" / "logs" / "generate-smollm2.json").read_text(encoding="utf-8"))
    assert smollm2["total"]["generated"] > 0 and smollm2["total"]["failed"] == 0
    for name in NAMES:
        for model in models:
            tracked = json.loads((project / "results" / "tracking" / name / f"{model}.json").read_text(encoding="utf-8"))
            assert tracked["status"] == "scored" and tracked["runs"], (name, model)

    assert ran_stages(run(["dvc", "repro"], project, env, timeout=900).stdout) == []

    # the pipeline's own generations, scored again as predictions produced elsewhere: the
    # sampled items are predicted, the rest of the task counts as unanswered (wrong)
    chid = evaluate(project, env, "results/generations/oracle/chengyu-bench/chid_candidates.parquet",
                    "chengyu-bench", "chid", "chid_candidates")
    chid_items = chengyu_sample(params)
    assert chid["summary"].startswith(f"evaluate-predictions chengyu-bench/chid/chid_candidates (oracle): 2,002 items, "
                                      f"{chid_items} with a prediction")
    assert chid["metrics"] == {"accuracy": pytest.approx(100.0 * chid_items / 2002, abs=1e-6)}  # rounded to 6 places
    mcq = evaluate(project, env, "results/generations/echo/g-idiomalign/mcq.parquet", "g-idiomalign", "mcq", "mcq")
    assert "18,999 items, 30 with a prediction" in mcq["summary"] and "0 matched no item" in mcq["summary"]
    assert mcq["metrics"]["accuracy.micro.overall"] == 0.0  # echo never names an option letter

    params["benchmarks"]["orderprobe"]["score"]["s_info"]["bp_mode"] = "bleu"
    write(project, params)
    rerun = ran_stages(run(["dvc", "repro"], project, env, timeout=1800).stdout)
    expected = sorted(
        [f"{stage}@{m}-orderprobe" for stage in ("score", "aggregate", "track") for m in models] + ["plots", "report"]
    )
    assert rerun == expected
