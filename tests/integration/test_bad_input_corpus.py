"""The bad-input corpus (issue 13, item 2): every input a new user might get wrong, run
through the CLI as a subprocess. Each case must exit with its status (2 for bad input),
print exactly one line on stderr naming the file or field (no traceback), and leave
every output as it was (no partial output; only the generation cache and logs may change).

The project is small (generate's hand-written OrderProbe items and prompts, gen_project.py),
generated once with the oracle backend; each case works on a fresh copy of it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from gen_project import orderprobe_items, write_project
from helpers import run, tool_env
from idiombench.generation.table import GENERATION_SCHEMA
from idiombench.items import ITEM_SCHEMA

# results/cache and results/logs are not stage outputs (a failed generate keeps its successes cached)
NOT_OUTPUTS = ("results/cache/", "results/logs/")
OUTCOMES: Counter[str] = Counter()


@dataclass
class Case:
    name: str
    setup: Callable[[Path], list[str]]  # prepares the project copy, returns the CLI arguments
    expect: tuple[str, ...]  # substrings of the message: the file or field, and the problem
    env: dict[str, str] = field(default_factory=dict)
    code: int = 2
    needs_raw: bool = False  # an acquired OrderProbe release in <project>/raw (copied from the mirror)


CASES: list[Case] = []


def case(name: str, *expect: str, env: dict[str, str] | None = None, code: int = 2, needs_raw: bool = False):
    def register(setup: Callable[[Path], list[str]]) -> Callable[[Path], list[str]]:
        CASES.append(Case(name, setup, expect, env or {}, code, needs_raw))
        return setup
    return register


# ---- helpers that spoil one input ------------------------------------------------------

def edit_params(project: Path, change: Callable[[dict[str, Any]], None], name: str = "params.yaml") -> str:
    params = yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8"))
    change(params)
    (project / name).write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return name


def model(name: str, config: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    return lambda params: params["models"].__setitem__(name, config)


def orderprobe(*keys: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(params: dict[str, Any]) -> None:
        section = params["benchmarks"]["orderprobe"]
        for key in keys[:-1]:
            section = section.setdefault(key, {})
        section[keys[-1]] = value
    return change


PROMPTS = "results/prompts/orderprobe/zero_shot.parquet"
ITEMS = "data/processed/orderprobe/restore.parquet"
GENERATIONS = "results/generations/oracle/orderprobe/zero_shot.parquet"
EVALUATE = ["evaluate-predictions", "--benchmark", "orderprobe", "--task", "restore", "--setting", "zero_shot"]


def truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def random_bytes(path: Path, size: int = 3000) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes((i * 131 + 7) % 256 for i in range(size)))  # deterministic, not UTF-8


def replay(source: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    return model("rp", {"backend": "replay", "sources": [{"benchmark": "orderprobe", "setting": "zero_shot",
                                                            "format": "semanticqa", **source}]})


# ---- the cases the issue lists ---------------------------------------------------------

@case("params not UTF-8", "bad.yaml", "not UTF-8")
def _(p: Path) -> list[str]:
    (p / "bad.yaml").write_bytes(b"profile: caf\xe9\n")
    return ["check-params", "-p", "bad.yaml"]


@case("params path is a folder", "folder.yaml", "is a folder")
def _(p: Path) -> list[str]:
    (p / "folder.yaml").mkdir()
    return ["check-params", "-p", "folder.yaml"]


@case("params not valid YAML", "bad.yaml", "not valid YAML", "line 2, column 1")
def _(p: Path) -> list[str]:
    (p / "bad.yaml").write_text("profile: [unclosed\n", encoding="utf-8")
    return ["check-params", "-p", "bad.yaml"]


@case("predictions binary (semanticqa format)", "preds.jsonl", "UTF-8")
def _(p: Path) -> list[str]:
    random_bytes(p / "preds.jsonl")
    return [*EVALUATE, "--format", "semanticqa", "preds.jsonl"]


@case("predictions truncated (semanticqa format)", "preds.jsonl", "row 2", "not JSON")
def _(p: Path) -> list[str]:
    (p / "preds.jsonl").write_text('{"idiom": "x", "prediction": "y"}\n{"idiom": "画蛇', encoding="utf-8")
    return [*EVALUATE, "--format", "semanticqa", "preds.jsonl"]


@case("predictions empty (semanticqa format)", "preds.jsonl", "no prediction matches")
def _(p: Path) -> list[str]:
    (p / "preds.jsonl").write_bytes(b"")
    return [*EVALUATE, "--format", "semanticqa", "preds.jsonl"]


@case("predictions binary (--format idiombench)", "preds.parquet", "not a readable Parquet file")
def _(p: Path) -> list[str]:
    random_bytes(p / "preds.parquet")
    return [*EVALUATE, "--format", "idiombench", "preds.parquet"]


@case("predictions truncated (--format idiombench)", "preds.parquet", "not a readable Parquet file")
def _(p: Path) -> list[str]:
    shutil.copy(p / GENERATIONS, p / "preds.parquet")
    truncate(p / "preds.parquet")
    return [*EVALUATE, "--format", "idiombench", "preds.parquet"]


@case("predictions empty file (--format idiombench)", "preds.parquet", "not a readable Parquet file")
def _(p: Path) -> list[str]:
    (p / "preds.parquet").write_bytes(b"")
    return [*EVALUATE, "preds.parquet"]


@case("predictions of another task", "preds.parquet", "no prediction matches an item of orderprobe/restore")
def _(p: Path) -> list[str]:
    table = pq.read_table(p / GENERATIONS)
    table = table.set_column(table.schema.get_field_index("task"), "task",
                             pa.array(["reorder"] * len(table), pa.string()))
    pq.write_table(table, p / "preds.parquet")
    return [*EVALUATE, "preds.parquet"]


@case("predictions for a wrong benchmark", "data/processed/semanticqa", "no built items")
def _(p: Path) -> list[str]:
    shutil.copy(p / GENERATIONS, p / "preds.parquet")
    return ["evaluate-predictions", "--benchmark", "semanticqa", "--task", "idiom_detection", "--setting", "0-shot",
            "preds.parquet"]


@case("--setting 7-shot (not a setting)", "--setting '7-shot'", "benchmarks.orderprobe.render.settings")
def _(p: Path) -> list[str]:
    shutil.copy(p / GENERATIONS, p / "preds.parquet")
    return [*EVALUATE[:-1], "7-shot", "preds.parquet"]


@case("replay source binary", "source.jsonl", "row 1", "UTF-8")
def _(p: Path) -> list[str]:
    random_bytes(p / "source.jsonl")
    edit_params(p, replay({"path": "source.jsonl"}))
    return ["generate", "-m", "rp"]


@case("prompts table truncated", PROMPTS, "not a readable Parquet file")
def _(p: Path) -> list[str]:
    truncate(p / PROMPTS)
    return ["generate", "-m", "oracle"]


@case("prompts table empty", PROMPTS, "not a readable Parquet file")
def _(p: Path) -> list[str]:
    (p / PROMPTS).write_bytes(b"")
    return ["generate", "-m", "oracle"]


@case("prompts table random bytes", PROMPTS, "not a readable Parquet file")
def _(p: Path) -> list[str]:
    random_bytes(p / PROMPTS)
    return ["generate", "-m", "oracle"]


@case("generations table truncated (score)", GENERATIONS, "not a readable Parquet file")
def _(p: Path) -> list[str]:
    truncate(p / GENERATIONS)
    return ["score", "orderprobe", "-m", "oracle"]


@case("--out under a regular file (generate)", "afile", "is a file")
def _(p: Path) -> list[str]:
    (p / "afile").write_text("x", encoding="utf-8")
    return ["generate", "-m", "oracle", "--out", "afile/gen"]


@case("SOURCE_DATE_EPOCH=abc report", "SOURCE_DATE_EPOCH", "whole number", env={"SOURCE_DATE_EPOCH": "abc"})
def _(p: Path) -> list[str]:
    return ["report"]


@case("replay source naming an unknown benchmark", "models.rp.sources.0.benchmark", "unknown benchmark 'nope'")
def _(p: Path) -> list[str]:
    edit_params(p, replay({"path": "source.jsonl", "benchmark": "nope"}))
    (p / "source.jsonl").write_text('{"idiom": "x", "prediction": "y"}\n', encoding="utf-8")
    return ["generate", "-m", "rp"]


@case("empty raw language file at build", "Japanese.csv", "no data rows", needs_raw=True)
def _(p: Path) -> list[str]:
    (p / "raw" / "data" / "Japanese.csv").write_bytes(b"")
    return ["build", "orderprobe", "--raw", "raw", "--out", "data/processed/orderprobe"]


@case("check-params: a model's benchmarks name an unknown benchmark", "models.oracle.benchmarks.0", "'nope'")
def _(p: Path) -> list[str]:
    edit_params(p, model("oracle", {"backend": "oracle", "benchmarks": ["nope"]}))
    return ["check-params"]


@case("openai model whose every request fails", "generate api", "requests failed", "max_failed_share")
def _(p: Path) -> list[str]:
    edit_params(p, model("api", {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1",
                                 "api_key_env": None, "max_retries": 0, "timeout_s": 5, "batch_size": 64}))
    return ["generate", "-m", "api"]


# ---- more of our own ----------------------------------------------------------------------

@case("unknown model (generate)", "unknown model 'nope'", "oracle")
def _(p: Path) -> list[str]:
    return ["generate", "-m", "nope"]


@case("unknown model (score)", "unknown model 'nope'")
def _(p: Path) -> list[str]:
    return ["score", "orderprobe", "-m", "nope"]


@case("unknown benchmark (score)", "unknown benchmark 'nope'")
def _(p: Path) -> list[str]:
    return ["score", "nope", "-m", "oracle"]


@case("unknown benchmark (evaluate-predictions)", "unknown benchmark 'nope'")
def _(p: Path) -> list[str]:
    shutil.copy(p / GENERATIONS, p / "preds.parquet")
    return ["evaluate-predictions", "--benchmark", "nope", "--task", "t", "--setting", "s", "preds.parquet"]


@case("unknown predictions format", "unknown format 'xml'")
def _(p: Path) -> list[str]:
    shutil.copy(p / GENERATIONS, p / "preds.parquet")
    return [*EVALUATE, "--format", "xml", "preds.parquet"]


@case("unknown task (evaluate-predictions)", "orderprobe has no task 'nope'")
def _(p: Path) -> list[str]:
    shutil.copy(p / GENERATIONS, p / "preds.parquet")
    return ["evaluate-predictions", "--benchmark", "orderprobe", "--task", "nope", "--setting", "zero_shot",
            "preds.parquet"]


@case("predictions file missing", "absent.parquet", "no such predictions file")
def _(p: Path) -> list[str]:
    return [*EVALUATE, "absent.parquet"]


@case("params: negative batch_size", "models.oracle.batch_size")
def _(p: Path) -> list[str]:
    edit_params(p, model("oracle", {"backend": "oracle", "batch_size": -1}))
    return ["generate", "-m", "oracle"]


@case("params: zero max_new_tokens", "benchmarks.orderprobe.generate.main.max_new_tokens")
def _(p: Path) -> list[str]:
    edit_params(p, orderprobe("generate", "main", "max_new_tokens", value=0))
    return ["check-params"]


@case("params: zero consistency samples", "benchmarks.orderprobe.generate.extra.consistency.n")
def _(p: Path) -> list[str]:
    edit_params(p, orderprobe("generate", "extra", "consistency", "n", value=0))
    return ["check-params"]


@case("params: seed of the wrong type", "seed: expected an integer, got 'zero'")
def _(p: Path) -> list[str]:
    edit_params(p, lambda params: params.__setitem__("seed", "zero"))
    return ["check-params"]


@case("params: a string for a bool", "benchmarks.orderprobe.enabled: expected true or false")
def _(p: Path) -> list[str]:
    edit_params(p, orderprobe("enabled", value="yes"))
    return ["check-params"]


@case("params: unknown key", "benchmarks.orderprobe.bogus: unknown key")
def _(p: Path) -> list[str]:
    edit_params(p, orderprobe("bogus", value=1))
    return ["check-params"]


@case("params: a list at the top level", "params.yaml", "expected a mapping at the top level")
def _(p: Path) -> list[str]:
    (p / "params.yaml").write_text("- a\n- b\n", encoding="utf-8")
    return ["check-params"]


@case("params: empty file", "params.yaml", "expected a mapping at the top level")
def _(p: Path) -> list[str]:
    (p / "params.yaml").write_bytes(b"")
    return ["check-params"]


@case("params file missing", "absent.yaml", "no such params file")
def _(p: Path) -> list[str]:
    return ["generate", "-m", "oracle", "-p", "absent.yaml"]


@case("params: max_failed_share above 1", "models.oracle.max_failed_share")
def _(p: Path) -> list[str]:
    edit_params(p, model("oracle", {"backend": "oracle", "max_failed_share": 1.5}))
    return ["check-params"]


@case("params: device cuda with gpus 0", "models.g.gpus", "device cuda needs gpus >= 1")
def _(p: Path) -> list[str]:
    edit_params(p, model("g", {"backend": "hf", "model": "x", "device": "cuda", "gpus": 0}))
    return ["check-params"]


@case("params: device cpu claiming a GPU", "models.g.gpus", "device cpu uses no GPU")
def _(p: Path) -> list[str]:
    edit_params(p, model("g", {"backend": "hf", "model": "x", "device": "cpu", "gpus": 1}))
    return ["check-params"]


@case("params: hf on two GPUs", "models.g.gpus", "runs on one GPU")
def _(p: Path) -> list[str]:
    edit_params(p, model("g", {"backend": "hf", "model": "x", "gpus": 2}))
    return ["check-params"]


@case("params: the main pass restricted to settings", "benchmarks.orderprobe.generate.main.settings")
def _(p: Path) -> list[str]:
    edit_params(p, orderprobe("generate", "main", "settings", value=["zero_shot"]))
    return ["generate", "-m", "oracle"]


@case("params: an extra pass called main", "benchmarks.orderprobe.generate.extra.main")
def _(p: Path) -> list[str]:
    edit_params(p, orderprobe("generate", "extra", "main", value={"n": 2, "temperature": 0.7}))
    return ["check-params"]


@case("prompts table missing columns", PROMPTS, "missing columns")
def _(p: Path) -> list[str]:
    pq.write_table(pa.table({"prompt_id": ["a"]}), p / PROMPTS)
    return ["generate", "-m", "oracle"]


@case("prompts table with a repeated prompt", PROMPTS, "repeated", "row 24")
def _(p: Path) -> list[str]:
    table = pq.read_table(p / PROMPTS)
    pq.write_table(pa.concat_tables([table, table.slice(0, 1)]), p / PROMPTS)
    return ["generate", "-m", "oracle"]


@case("prompts table with bad messages JSON", PROMPTS, "row 0", "column messages")
def _(p: Path) -> list[str]:
    table = pq.read_table(p / PROMPTS)
    index = table.schema.get_field_index("messages")
    table = table.set_column(index, table.schema.field(index), pa.array(["{oops"] * len(table), pa.string()))
    pq.write_table(table, p / PROMPTS)
    return ["generate", "-m", "oracle"]


@case("items with a repeated item id", ITEMS, "repeated", "row 24")
def _(p: Path) -> list[str]:
    table = pq.read_table(p / ITEMS)
    pq.write_table(pa.concat_tables([table, table.slice(0, 1)]), p / ITEMS)
    return ["generate", "-m", "oracle"]


@case("items with a column of the wrong type", ITEMS, "language is int64")
def _(p: Path) -> list[str]:
    rows = [item.to_row() | {"language": 1} for item in orderprobe_items()]
    schema = pa.schema([f if f.name != "language" else pa.field("language", pa.int64()) for f in ITEM_SCHEMA])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), p / ITEMS)
    return ["score", "orderprobe", "-m", "oracle"]


@case("items with a meta that is not JSON", ITEMS, "column meta is not a JSON object", "row 0")
def _(p: Path) -> list[str]:
    rows = [item.to_row() | {"meta": "[1"} for item in orderprobe_items()]
    pq.write_table(pa.Table.from_pylist(rows, schema=ITEM_SCHEMA), p / ITEMS)
    return ["generate", "-m", "oracle"]


@case("generations table missing columns (score)", GENERATIONS, "missing columns")
def _(p: Path) -> list[str]:
    pq.write_table(pq.read_table(p / GENERATIONS).drop_columns(["text"]), p / GENERATIONS)
    return ["score", "orderprobe", "-m", "oracle"]


@case("generations folder without its completion record", "results/generations/oracle", "incomplete")
def _(p: Path) -> list[str]:
    (p / "results/generations/oracle/generation_info.json").unlink()
    return ["score", "orderprobe", "-m", "oracle"]


@case("score before build", "data/processed/orderprobe", "no built items")
def _(p: Path) -> list[str]:
    (p / ITEMS).unlink()
    return ["score", "orderprobe", "-m", "oracle"]


@case("aggregate before score", "scoring_meta.json is missing")
def _(p: Path) -> list[str]:
    return ["aggregate", "orderprobe", "-m", "oracle"]


@case("build before acquire", "ACQUIRED.json is missing")
def _(p: Path) -> list[str]:
    return ["build", "orderprobe", "--raw", "nowhere"]


@case("replay source missing", "absent.jsonl", "not found")
def _(p: Path) -> list[str]:
    edit_params(p, replay({"path": "absent.jsonl"}))
    return ["generate", "-m", "rp"]


@case("replay source for a setting not rendered", "generate rp", "no request to run")
def _(p: Path) -> list[str]:
    edit_params(p, replay({"path": "source.jsonl", "setting": "five_shot"}))
    (p / "source.jsonl").write_text('{"idiom": "x", "prediction": "y"}\n', encoding="utf-8")
    return ["generate", "-m", "rp"]


@case("--out under a regular file (score)", "afile", "is a file")
def _(p: Path) -> list[str]:
    (p / "afile").write_text("x", encoding="utf-8")
    return ["score", "orderprobe", "-m", "oracle", "--out", "afile/scores"]


@case("--out under a regular file (report)", "afile", "is a file")
def _(p: Path) -> list[str]:
    (p / "afile").write_text("x", encoding="utf-8")
    return ["report", "--out", "afile/report.pdf"]


@case("raw release file truncated at build", "Korean.csv", "row ", needs_raw=True)
def _(p: Path) -> list[str]:
    truncate(p / "raw" / "data" / "Korean.csv")
    return ["build", "orderprobe", "--raw", "raw", "--out", "data/processed/orderprobe"]


@case("mirror file with a wrong checksum", "checksum mismatch", needs_raw=True)
def _(p: Path) -> list[str]:
    mirror = p / "mirror" / "orderprobe"
    shutil.copytree(p / "raw", mirror, ignore=shutil.ignore_patterns("ACQUIRED.json"))
    with open(mirror / "data" / "Korean.csv", "ab") as handle:
        handle.write(b"x\n")
    edit_params(p, lambda params: params["data"].update(download=False))
    return ["acquire", "orderprobe", "--out", "acquired"]


# ---- the harness ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small project, generated once with the oracle (so score has generations to read)."""
    project = write_project(tmp_path_factory.mktemp("corpus") / "project", {"oracle": {"backend": "oracle"}})
    run(["idiombench", "generate", "-m", "oracle"], project, tool_env())
    return project


@pytest.fixture(scope="module")
def raw_release(tmp_path_factory: pytest.TempPathFactory, mirrors: list[Path]) -> Path:
    """OrderProbe's release as acquire writes it, from the mirror."""
    raw = tmp_path_factory.mktemp("raw") / "orderprobe"
    project = Path(__file__).resolve().parents[2]
    run(["idiombench", "acquire", "orderprobe", "--out", str(raw), "-p", str(project / "params.yaml")],
        project, tool_env(mirrors))
    return raw


def snapshot(project: Path) -> dict[str, str]:
    """Every file's content hash, except the cache and logs, which are not outputs."""
    return {
        path.relative_to(project).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(project.rglob("*"))
        if path.is_file() and not path.relative_to(project).as_posix().startswith(NOT_OUTPUTS)
    }


def outcome(result: subprocess.CompletedProcess[str], before: dict[str, str], after: dict[str, str]) -> str:
    if "Traceback" in result.stderr + result.stdout:
        return "traceback"
    if before != after:
        return "partial output"
    if result.returncode == 0:
        return "exit 0"
    return "clear error" if len(result.stderr.strip().splitlines()) == 1 else "several lines"


@pytest.mark.parametrize("bad", CASES, ids=[c.name for c in CASES])
def test_bad_input_gives_one_line_and_no_output(bad: Case, base: Path, tmp_path: Path, request) -> None:
    project = tmp_path / "project"
    shutil.copytree(base, project)
    env = {**tool_env(), "TQDM_DISABLE": "1", **bad.env}  # no progress bar: stderr is the message alone
    env.pop("IDIOMBENCH_MIRROR", None)
    if bad.needs_raw:
        shutil.copytree(request.getfixturevalue("raw_release"), project / "raw")
        env["IDIOMBENCH_MIRROR"] = str(project / "mirror")
    argv = bad.setup(project)
    before = snapshot(project)
    result = subprocess.run(["idiombench", *argv], cwd=project, env=env, capture_output=True, text=True, timeout=120)
    after = snapshot(project)
    found = outcome(result, before, after)
    OUTCOMES[found] += 1
    print(f"corpus outcome {found}: {bad.name}")
    detail = f"idiombench {' '.join(argv)} -> {result.returncode}\nstdout: {result.stdout}\nstderr: {result.stderr}"
    assert found == "clear error", detail
    assert result.returncode == bad.code, detail
    message = result.stderr.strip()
    assert message.startswith("error: "), detail
    for expected in bad.expect:
        assert expected in message, f"{expected!r} not in the message\n{detail}"


def test_corpus_size_and_outcomes() -> None:
    """At least the issue's cases plus 20 of our own; prints the count by outcome (run with -s)."""
    assert len(CASES) >= 45
    print(f"bad-input corpus: {len(CASES)} cases; outcomes of this run: {dict(OUTCOMES)}")
