"""Differential test (issues 12, 26): the SemanticQA authors' released scorer
(reference-code/semanticqa/semantic_qa/eval.py, pinned by its MANIFEST.json) against this
project's `evaluate-predictions`, on the authors' published DeepSeek-R1 / Qwen3 prediction
files (mirror: semanticqa/published_predictions):

- `--compatibility released` (score.compatibility: released; its default denominator is
  `records`) equals the released scorer on every compared value of every file, no exception;
- the paper reading (`--denominator records`, `extraction_match: released_code`) differs from
  it only in the records listed in DOCUMENTED (docs/METRICS.md#34-the-authors-released-scorer).

The released side is `compute_metric` called as the released main.py calls it per record
(mcq-accuracy for IED and NCC, exact-match for the extraction tasks, acc-f1 for LCC, the
`*-extract-and-*` metrics for the sequential files), accumulated as main.py accumulates it:
sum / records (Ext, Overall), both / extracted (Cond), scikit-learn F1 over the whole file.
Only model calls are stubbed: `evaluate.load` (BERTScore; its values are never compared) and
the unused sentence-transformers import.

Both sides see the same records: the lines of a file that the project matches to a released
item (a line naming no released item cannot be scored by the project; those lines are
counted and the full-file value is printed beside the compared one).

Compared per file, asserted equal (no tolerance) unless listed in DOCUMENTED with the exact
number of records the two differ by and why (see docs/METRICS.md#34-the-authors-released-scorer):
ACC, macro-/micro-/weighted-F1, ACC_s (project `extraction_match: released_code`), Ext,
Cond, Overall. ACC_s with the default `extraction_match: strict` (paper §3.4: a partial span
is wrong) is compared too: never above the released reading, difference recorded.

Not compared (said in the doc): IEI/LCI/NCI ROUGE-L, METEOR and BLEU (`perform_eval` loads
them from the Hugging Face hub through `evaluate`, unavailable offline) and BERTScore (a
model); the LCC multi-step and scaling files (16-class items the authors did not release).
`perform_eval`'s vmwe/nce/lcc branches cannot run as released (asserted below).

Run with `-s` for the per-file table; IDIOMBENCH_DIFF_REPORT=<path> writes the per-metric
counts and maximum differences as JSON.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import json
import os
import re
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from helpers import in_mirror
from idiombench.benchmarks.base import write_build
from idiombench.benchmarks.registry import get_benchmark
from idiombench.data.acquire import acquire
from idiombench.pipeline.config import Params, load_params
from idiombench.stages.predictions import PredictionReport, evaluate_predictions, with_compatibility
from semanticqa_f1 import f1_scores

REPO = Path(__file__).resolve().parents[2]
# the authors' code, in a mirror directory laid out <benchmark>/<path> (IDIOMBENCH_MIRROR)
REFERENCE = (in_mirror("semanticqa/semantic_qa/eval.py") or Path("semanticqa/semantic_qa/eval.py")).parents[1]
EVAL = REFERENCE / "semantic_qa" / "eval.py"
pytestmark = [
    pytest.mark.mirror,
    pytest.mark.skipif(
        not EVAL.is_file(),
        reason=f"the authors' released SemanticQA eval.py is not at {EVAL} "
        "(no IDIOMBENCH_MIRROR directory holds semanticqa/semantic_qa/: "
        "`export IDIOMBENCH_MIRROR=<releases>:<authors' code>`)",
    ),
]

# published file name: <task>_[multi_step_]<k>-shot_<model>.json
FILE = re.compile(
    r"(?P<task>[a-z_]+?|vmwe_extraction_[A-Za-z-]+)_(?P<sequential>multi_step_)?(?P<k>\d)-shot_"
    r"(?P<model>[A-Za-z0-9.-]+)\.json"
)
EXTRACTION_FIELD = {
    "idiom_extraction": "idiom",
    "collocation_extraction": "collocation",
    "noun_compound_extraction": "noun_compound",
}  # the VMWE tasks: "vmwe"
# the sequential files: the released metric, the gold it is given, the project's task
SEQUENTIAL = {
    "idiom_detection": (
        "idiom-extraction-and-judgment",
        lambda r: {"idiom": r["idiom"], "target": r["target"]},
        "idiom_detection",
    ),
    "noun_compound_compositionality": (
        "nc-extract-and-judgment",
        lambda r: {"noun_compound": r["noun_compound"], "target": r["target"]},
        "noun_compound_compositionality",
    ),
    "idiom_extraction_interpretation": (
        "ie-extraction-and-interpretation",
        lambda r: {"idiom": r["idiom"], "paraphrase": r.get("paraphrase")},
        "idiom_paraphrase",
    ),
    "collocation_extraction_interpretation": (
        "lc-extraction-and-interpretation",
        lambda r: {"collocation": r["collocation"], "paraphrases": r.get("paraphrases")},
        "collocation_interpretation",
    ),
}
ATOMIC_INTERPRETATION = ("idiom_paraphrase", "collocation_interpretation", "noun_compound_interpretation")

# (file, metric) -> (project count - released count, in records; why). Every other compared
# value is equal. The counts are of the numerator (records right); Cond follows from them.
DOCUMENTED: dict[tuple[str, str], tuple[int, str]] = {
    ("idiom_extraction_0-shot_DeepSeek-R1.json", "ACC_s"): (
        1,
        "'‘ and finally ’' for 'and finally': the project's normalisation removes the typographic quotes, the "
        "released exact-match compares the lower-cased strings as they are",
    ),
    ("idiom_extraction_3-shot_DeepSeek-R1-Instruct.json", "ACC_s"): (
        1,
        "'and finally’' for 'and finally': a trailing typographic quote, as above",
    ),
    ("collocation_categorization_0-shot_DeepSeek-R1.json", "ACC"): (
        2,
        "'AntiVer **Explanation:** ...', 'AntiBon **Explanation:** ...': the project reads the label before the "
        "explanation, the released code compares the whole string",
    ),
    ("noun_compound_extraction_0-shot_DeepSeek-R1.json", "ACC_s"): (
        2,
        "'Noun compound: film screening', 'Noun compound: Boer standards': the project removes a leading "
        "'<label>:' the model echoed; the released exact-match does not",
    ),
    ("idiom_detection_multi_step_0-shot_DeepSeek-R1.json", "Ext"): (
        1,
        "extracted_idiom 'poison pill，选项A。 </think> Extracted Idiom: poison pill': the project reads the value "
        "after the reasoning block, the released code compares the whole field",
    ),
    ("idiom_detection_multi_step_0-shot_DeepSeek-R1.json", "Overall"): (
        1,
        "the same record; its option (A) is right, so it is right overall for the project only",
    ),
}
# LCC files whose F1s differ by design: the released F1 (scikit-learn over the prediction
# strings) makes every distinct unreadable string a class of its own (F1 0, in the macro
# mean); the project counts an unreadable prediction as a miss of its gold class and no class.
# Asserted: the released values are the project's own F1 formula given the raw strings.
DOCUMENTED_F1 = {
    "collocation_categorization_0-shot_DeepSeek-R1.json": (
        "4 predictions '<label> **Explanation:** ...': 12 classes for scikit-learn, 8 for the project"
    )
}
RESULTS: list[dict[str, Any]] = []
DIFFS: dict[str, dict[str, Any]] = {}


# ---------------------------------------------------------------- the released scorer


class ModelCallStub:
    """`evaluate.load(name)`'s stand-in. eval.py loads "rouge" and "bertscore" at import; of the
    metrics compared here only the sequential interpretation ones call BERTScore (a model),
    whose similarity values are not compared. Any other call is an error."""

    def __init__(self, name: str):
        self.name = name

    def compute(self, predictions: list[str], references: list[Any], **_: Any) -> dict[str, list[float]]:
        if self.name != "bertscore":
            raise AssertionError(f"eval.py called the {self.name!r} metric, which this test does not stub")
        return {"f1": [0.0] * len(predictions)}


@contextlib.contextmanager
def stubbed_imports() -> Iterator[None]:
    evaluate = types.ModuleType("evaluate")
    evaluate.load = ModelCallStub  # type: ignore[attr-defined]
    sentence_transformers = types.ModuleType("sentence_transformers")  # imported, never used by eval.py
    sentence_transformers.SentenceTransformer = object  # type: ignore[attr-defined]
    sentence_transformers.util = None  # type: ignore[attr-defined]
    saved = {name: sys.modules.get(name) for name in ("evaluate", "sentence_transformers")}
    sys.modules.update(evaluate=evaluate, sentence_transformers=sentence_transformers)
    try:
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Iterator[types.ModuleType]:
    manifest = json.loads((REFERENCE / "MANIFEST.json").read_text(encoding="utf-8"))
    pinned = next(f["sha256"] for f in manifest["files"] if f["file"] == "semantic_qa/eval.py")
    assert hashlib.sha256(EVAL.read_bytes()).hexdigest() == pinned, "eval.py is not the version MANIFEST.json pins"
    here = Path.cwd()
    os.chdir(tmp_path_factory.mktemp("released-eval"))  # eval.py opens a log file in the working directory
    try:
        with stubbed_imports():
            spec = importlib.util.spec_from_file_location("semanticqa_released_eval", EVAL)
            assert spec and spec.loader
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
    finally:
        os.chdir(here)
    yield module
    module.log.close()


def records_of(path: Path) -> dict[int, dict[str, Any]]:
    """line number (1-based, as the project counts) -> record."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return {n: json.loads(line) for n, line in enumerate(lines, start=1) if line.strip()}


def released_metrics(
    module: types.ModuleType, task: str, sequential: bool, records: list[dict[str, Any]]
) -> dict[str, float]:
    """The file's metrics as the released main.py accumulates compute_metric, in percent."""
    n, metric = len(records), module.compute_metric
    if sequential:
        name, gold, _ = SEQUENTIAL[task]
        values = [metric(name, pred=r["prediction"], gold=gold(r)) for r in records]
        extracted = sum(v["extracted_correct"] for v in values)
        out = {"Ext": 100.0 * extracted / n}
        if "both_correct" in values[0]:  # judgement; interpretation similarities are BERTScore (a model)
            both = sum(v["both_correct"] for v in values)
            out.update(Cond=100.0 * both / extracted if extracted else 0.0, Overall=100.0 * both / n)
        return out
    if task == "idiom_detection":  # main.py passes no instance here
        return {"ACC": 100.0 * sum(metric("mcq-accuracy", pred=r["prediction"], gold=r["target"]) for r in records) / n}
    if task == "noun_compound_compositionality":
        return {
            "ACC": 100.0
            * sum(metric("mcq-accuracy", pred=r["prediction"], gold=r["target"], instance=r) for r in records)
            / n
        }
    if task == "collocation_categorization":
        preds, golds = [r["prediction"] for r in records], [r["label"] for r in records]
        right = sum(metric("acc", pred=p, gold=g) for p, g in zip(preds, golds, strict=True))
        # main.py calls acc-f1 on every record with the records so far: the last call's F1s cover the file
        _, macro, micro, weighted = metric("acc-f1", pred=preds[-1], gold=golds[-1], preds=preds, golds=golds)
        return {
            "ACC": 100.0 * right / n,
            "macro-F1": 100.0 * macro,
            "micro-F1": 100.0 * micro,
            "weighted-F1": 100.0 * weighted,
        }
    field = EXTRACTION_FIELD.get(task, "vmwe")
    return {"ACC_s": 100.0 * sum(metric("exact-match", pred=r["prediction"], gold=r[field]) for r in records) / n}


# ---------------------------------------------------------------- the project's side


@dataclass(frozen=True)
class Published:
    path: Path
    task: str  # the released file's task
    project_task: str
    setting: str
    sequential: bool


def published_files(mirror: Path) -> list[Published]:
    out = []
    for path in sorted((mirror / "semanticqa" / "published_predictions").glob("*/*.json")):
        match = FILE.fullmatch(path.name)
        if match is None or match["task"] in ATOMIC_INTERPRETATION:
            continue  # scaling / LCC multi-step files (items not released); ROUGE-L/METEOR/BERTScore tasks
        task, sequential = match["task"], match["sequential"] is not None
        if sequential and task not in SEQUENTIAL:
            continue
        project_task = SEQUENTIAL[task][2] if sequential else task
        out.append(
            Published(path, task, project_task, f"{'multi_step_' if sequential else ''}{match['k']}-shot", sequential)
        )
    return out


def project_params(extraction_match: str, compatibility: str = "paper") -> Params:
    params = load_params(REPO / "params.yaml")
    config = params.benchmark("semanticqa")
    config = config.model_copy(
        update={
            "build": config.build.model_copy(update={"extensions": True}),  # the oracle-schema VMWE sets
            "score": config.score.model_copy(
                update={
                    "extraction_match": extraction_match,
                    "sequential": config.score.sequential.model_copy(update={"enabled": True}),
                }
            ),
        }
    )
    roles = params.scoring.roles
    scoring = params.scoring.model_copy(
        update={
            "roles": roles.model_copy(update={"bertscore_en": roles.bertscore_en.model_copy(update={"model": None})})
        }
    )  # a model: not compared
    return params.model_copy(
        update={"benchmarks": params.benchmarks.model_copy(update={"semanticqa": config}), "scoring": scoring}
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, mirror: Path) -> Iterator[dict[str, Params]]:
    """A project directory holding the built SemanticQA items (extensions included), as cwd."""
    params = project_params("released_code")
    config = params.benchmark("semanticqa")
    bench = get_benchmark("semanticqa")
    root = tmp_path_factory.mktemp("semanticqa-released-eval")
    acquire("semanticqa", bench.file_specs(config), root / "raw", mirror, download=False)
    write_build(bench.build(root / "raw", config), root / "data" / "processed" / "semanticqa")
    here = Path.cwd()
    os.chdir(root)
    try:
        yield {
            "released_code": params,
            "strict": project_params("strict"),
            "released": with_compatibility(project_params("strict"), "semanticqa", "released"),
        }
    finally:
        os.chdir(here)


def ours(params: Params, published: Published) -> PredictionReport:
    return evaluate_predictions(
        params,
        benchmark="semanticqa",
        task=published.project_task,
        setting=published.setting,
        model="published",
        path=published.path,
        fmt="semanticqa",
        denominator="records",
    )


def test_compatibility_released_equals_the_released_scorer_on_every_file(released, project, mirror: Path):
    """Every compared value of every file, the LCC accuracies and F1s included, with no tolerance
    and no documented exception; the denominator is the file's records, as main.py's."""
    files = published_files(mirror)
    assert len(files) >= 50
    failures: list[str] = []
    compared: dict[str, int] = {}
    for published in files:
        report = ours(project["released"], published)
        all_records = records_of(published.path)
        records = [r for number, r in all_records.items() if number not in set(report.unmatched_lines)]
        assert report.recorded == len(records), published.path.name
        for metric, value in released_metrics(released, published.task, published.sequential, records).items():
            mine = report.metrics.get(metric)
            compared[metric] = compared.get(metric, 0) + 1
            if mine is None or abs(mine - value) > 1e-9:
                failures.append(f"{published.path.name} {metric}: project {mine}, released {value}")
    assert not failures, "\n".join(failures)
    print(f"\ncompatibility released vs the released scorer, values compared per metric: {compared}")
    assert compared["ACC"] >= 14 and compared["ACC_s"] >= 30 and compared["macro-F1"] == 4, compared
    assert {"Ext", "Cond", "Overall"} <= set(compared)


# ---------------------------------------------------------------- comparison


def note(metric: str, records: int, difference: float, documented: bool) -> None:
    entry = DIFFS.setdefault(
        metric,
        {
            "files": 0,
            "records": 0,
            "max_abs_difference": 0.0,
            "max_abs_difference_undocumented": 0.0,
            "documented_files": 0,
        },
    )
    entry["files"] += 1
    entry["records"] += records
    entry["max_abs_difference"] = max(entry["max_abs_difference"], abs(difference))
    if documented:
        entry["documented_files"] += 1
    else:
        entry["max_abs_difference_undocumented"] = max(entry["max_abs_difference_undocumented"], abs(difference))
    write_report()


def write_report() -> None:
    target = os.environ.get("IDIOMBENCH_DIFF_REPORT")
    if target:
        Path(target).write_text(json.dumps(DIFFS, indent=1, ensure_ascii=False), encoding="utf-8")


def count(percent: float, n: int) -> int:
    """Records right behind a percentage of n (exact: both sides divide integers by n)."""
    value = percent * n / 100.0
    assert abs(value - round(value)) < 1e-6, (percent, n)
    return round(value)


def compare_file(
    published: Published, theirs: dict[str, float], ours_metrics: dict[str, float | None], records: list[dict[str, Any]]
) -> list[str]:
    failures, n = [], len(records)
    for metric, value in theirs.items():
        mine = ours_metrics.get(metric)
        if mine is None:
            failures.append(f"{published.path.name} {metric}: the project computed nothing (released: {value})")
            continue
        documented = DOCUMENTED.get((published.path.name, metric))
        if metric.endswith("-F1") and published.path.name in DOCUMENTED_F1:
            documented = (0, DOCUMENTED_F1[published.path.name])
        note(
            metric,
            n,
            mine - value,
            documented is not None or (metric == "Cond" and (published.path.name, "Ext") in DOCUMENTED),
        )
        RESULTS.append(
            {
                "file": published.path.name,
                "metric": metric,
                "records": n,
                "released": value,
                "project": mine,
                "documented": documented is not None,
            }
        )
        if metric == "Cond":
            continue  # follows from Ext and Overall (asserted below)
        if metric.endswith("-F1"):
            if documented:
                raw = f1_scores([r["label"].strip() for r in records], [r["prediction"].strip() for r in records])
                if abs(raw[metric] - value) > 1e-9:
                    failures.append(
                        f"{published.path.name} {metric}: released {value} is not the project's F1 of the "
                        f"raw prediction strings ({raw[metric]})"
                    )
            elif abs(mine - value) > 1e-9:
                failures.append(f"{published.path.name} {metric}: project {mine}, released {value}")
            continue
        delta = count(mine, n) - count(value, n)
        expected = documented[0] if documented else 0
        if delta != expected:
            failures.append(
                f"{published.path.name} {metric}: project - released = {delta} record(s), "
                f"expected {expected} (project {mine}, released {value})"
            )
    if "Cond" in theirs:
        for side, values in (("released", theirs), ("project", ours_metrics)):
            ext, overall = count(values["Ext"], n), count(values["Overall"], n)
            if abs(values["Cond"] - (100.0 * overall / ext if ext else 0.0)) > 1e-9:
                failures.append(f"{published.path.name} Cond ({side}) is not Overall / Ext")
    return failures


def test_released_eval_agrees_with_evaluate_predictions_records(released, project, mirror: Path):
    files = published_files(mirror)
    assert len(files) >= 50, [f.path.name for f in files]  # 4 models' k-shot files + 12 sequential files
    failures: list[str] = []
    lines = ["| file | metric | records | released | project | documented |", "|---|---|---|---|---|---|"]
    for published in files:
        report = ours(project["released_code"], published)
        all_records = records_of(published.path)
        records = [r for number, r in all_records.items() if number not in set(report.unmatched_lines)]
        # the project's denominator is the records it matched, the released one the records compared
        assert report.recorded == len(records), (published.path.name, report.recorded, len(records))
        theirs = released_metrics(released, published.task, published.sequential, records)
        failures += compare_file(published, theirs, report.metrics, records)
        if report.unmatched_lines:  # the full file, for the record: what the released code printed
            full = released_metrics(released, published.task, published.sequential, list(all_records.values()))
            lines.append(
                f"| {published.path.name} | (full file, {len(all_records)} records, "
                f"{len(report.unmatched_lines)} naming no released item) | | "
                + ", ".join(f"{k} {v:.2f}" for k, v in full.items())
                + " | | |"
            )
    for row in RESULTS:
        lines.append(
            f"| {row['file']} | {row['metric']} | {row['records']} | {row['released']:.3f} | "
            f"{row['project']:.3f} | {'yes' if row['documented'] else ''} |"
        )
    print("\n" + "\n".join(lines) + "\n" + json.dumps(DIFFS, indent=1))
    assert not failures, "\n".join(failures)
    compared = {metric: entry["files"] for metric, entry in DIFFS.items()}
    assert compared["ACC"] >= 14 and compared["ACC_s"] >= 30 and compared["weighted-F1"] == 4, compared
    assert {"Ext", "Cond", "Overall"} <= set(compared)
    assert all(key in {(r["file"], r["metric"]) for r in RESULTS} for key in DOCUMENTED), "a documented case went away"
    assert all(
        f"{r['file']}" in DOCUMENTED_F1
        for r in RESULTS
        if r["metric"] == "macro-F1" and abs(r["project"] - r["released"]) > 1e-9
    )


def test_strict_exact_match_is_never_above_the_released_one(released, project, mirror: Path):
    """The default `extraction_match: strict` (paper §3.4: a partial span is wrong) can only
    count fewer records right than the released containment patterns (plus the documented
    normalisation cases); its difference is recorded, not asserted zero."""
    largest, files, lines = 0.0, 0, 0
    for published in published_files(mirror):
        if published.sequential or not (published.task in EXTRACTION_FIELD or published.task.startswith("vmwe_")):
            continue
        report = ours(project["strict"], published)
        records = [r for number, r in records_of(published.path).items() if number not in set(report.unmatched_lines)]
        value = released_metrics(released, published.task, False, records)["ACC_s"]
        documented = DOCUMENTED.get((published.path.name, "ACC_s"), (0, ""))[0]
        assert count(report.metrics["ACC_s"], len(records)) <= count(value, len(records)) + documented, (
            published.path.name
        )
        largest = max(largest, abs(report.metrics["ACC_s"] - value))
        files, lines = files + 1, lines + len(records)
    DIFFS["ACC_s (extraction_match: strict)"] = {"files": files, "records": lines, "max_abs_difference": largest}
    write_report()
    print(
        f"\nACC_s strict vs released exact-match: {files} files, {lines} records, max |difference| {largest:.3f} points"
    )
    assert files >= 30


def test_perform_eval_cannot_run_its_accuracy_branches_as_released(released, mirror: Path):
    """perform_eval's `import json` inside its interpretation branch makes `json` local to the
    whole function: the vmwe, nce and lcc branches fail before reading a line. The paper's
    cells come from main.py's per-record compute_metric, which the test above reproduces."""
    published = mirror / "semanticqa" / "published_predictions"
    for task, path in (
        ("vmwe", "verbal_mwe_extraction/vmwe_extraction_VID_0-shot_DeepSeek-R1.json"),
        ("nce", "noun_compound_extraction/noun_compound_extraction_0-shot_DeepSeek-R1.json"),
        ("lcc", "collocation_categorization/collocation_categorization_0-shot_DeepSeek-R1.json"),
    ):
        with contextlib.redirect_stdout(io.StringIO()), pytest.raises(UnboundLocalError, match="json"):
            released.perform_eval(task=task, result_file=str(published / path))
