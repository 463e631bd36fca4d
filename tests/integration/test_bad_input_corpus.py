"""The bad-input corpus (issues 13 and 23): every input a new user might get wrong, run through
the CLI and both workflow tools (Snakemake, DVC). Each case must end with its exit status (2 for
bad input), print exactly one `error:` line naming the file, key or row (no traceback), and leave
every file as it was (the project's tree is hashed before and after; only the generation cache and
logs may change, which are not outputs).

The project is small (hand-written OrderProbe items and prompts, gen_project.py), generated,
scored, aggregated and reported once with the oracle; each case works on a fresh copy of it. CLI
cases run in process through typer's CliRunner (the same boundary, cli.user_errors, without a
second's interpreter start per case); a sample (`process=True`) runs the real `idiombench` entry
point as a subprocess. Workflow cases run `snakemake` and `dvc` themselves.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import inspect
import json
import os
import re
import shutil
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from gen_project import ROOT, orderprobe_items, orderprobe_prompts, write_project
from orderprobe_fixtures import items_for
from helpers import run, tool_env
from idiombench.generation.table import GENERATION_SCHEMA, write_generations
from idiombench.core.items import ITEM_SCHEMA, write_items
from idiombench.templating.prompts import write_prompts

# results/cache and results/logs are not stage outputs (a failed generate keeps its successes
# cached); .snakemake/ and .dvc/tmp/ are the workflow tools' own records and locks
NOT_OUTPUTS = ("results/cache/", "results/logs/", ".snakemake/", ".dvc/tmp/")
OUTCOMES: Counter[str] = Counter()
RAN: dict[str, tuple[str, str]] = {}  # case -> (tool, its first argument: the CLI command)
TOOL_CODES = {"idiombench": 2, "snakemake": 2, "dvc": 255}  # dvc repro exits 255 when a stage's command fails


@dataclass
class Case:
    name: str
    setup: Callable[[Path], list[str]]  # prepares the project copy, returns the command's arguments
    expect: tuple[str, ...]  # substrings of the message: the file or field, and the problem
    kind: str
    env: dict[str, str] = field(default_factory=dict)
    code: int | None = None  # default: TOOL_CODES[tool]
    needs_raw: bool = False  # an acquired OrderProbe release in <project>/raw (copied from the mirror)
    tool: str = "idiombench"  # or snakemake, dvc (run in a copy with the workflow files)
    process: bool = False  # idiombench: the real entry point, as a subprocess
    ours: bool = True  # the message is idiombench's one `error:` line (False: the workflow tool's own refusal)


CASES: list[Case] = []
KIND = "input files"  # the kind of the cases registered next (set per section below)


def case(name: str, *expect: str, env: dict[str, str] | None = None, code: int | None = None, needs_raw: bool = False,
         tool: str = "idiombench", process: bool = False, ours: bool = True):
    def register(setup: Callable[[Path], list[str]]) -> Callable[[Path], list[str]]:
        CASES.append(Case(name, setup, expect, KIND, env or {}, code, needs_raw, tool, process, ours))
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
SCORES = "results/scores/oracle/orderprobe"
METRICS = "results/metrics/orderprobe/oracle.json"
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


# ---- issue 13: the cases it lists -----------------------------------------------------------
KIND = "issue 13"


@case("params not UTF-8", "bad.yaml", "not UTF-8", process=True)
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


@case("prompts table truncated", PROMPTS, "not a readable Parquet file", process=True)
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


# process: the value is hidden while the CLI's modules load (core.environment.malformed_source_date_epoch_hidden), in a fresh interpreter only
@case("SOURCE_DATE_EPOCH=abc report", "SOURCE_DATE_EPOCH", "whole number", env={"SOURCE_DATE_EPOCH": "abc"},
      process=True)
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
    shutil.rmtree(p / SCORES)
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


# ---- issue 23: configured names are identifiers ----------------------------------------------
KIND = "names"
NAME_RULE = "is not a valid name"


def key_case(key: Any, label: str, *expect: str) -> None:
    """check-params on a model key that is not a name: refused, naming the key."""
    @case(f"model key {label}", "params.yaml", *expect)
    def _(p: Path) -> list[str]:
        edit_params(p, model(key, {"backend": "oracle"}))
        return ["check-params"]


key_case("x; touch pwned #", "with ';' (a shell command)", "models: the key 'x; touch pwned #'", NAME_RULE)
key_case("a b", "with a space", "models: the key 'a b'", NAME_RULE)
key_case("a/b", "with '/'", "models: the key 'a/b'", NAME_RULE)
key_case("..", "'..'", "models: the key '..'", NAME_RULE)
key_case("../../escape", "'../../escape'", "models: the key '../../escape'", NAME_RULE)
key_case("-rf", "with a leading '-' (an option)", "models: the key '-rf'", NAME_RULE)
key_case(".hidden", "with a leading '.'", "models: the key '.hidden'", NAME_RULE)
key_case("qwen2.5-7b", "with '.' (DVC reads models.<key> as nested keys)", "models: the key 'qwen2.5-7b'", NAME_RULE)
key_case("m" * 65, "of 65 characters", "models: the key 'mmmm", "at most 64 characters")
key_case("$(touch pwned)", "with '$(...)'", "models: the key '$(touch pwned)'", NAME_RULE)
key_case("q'x", "with a quote", "models: the key \"q'x\"", NAME_RULE)
key_case("a\nb", "with a newline", "models: the key 'a\\nb'", NAME_RULE)
key_case("", "empty", "models: the key ''", NAME_RULE)
key_case(123, "that is a number", "models: the key 123: expected a string")


@case("an extra pass named with a space", "benchmarks.orderprobe.generate.extra: the key 'my pass'", NAME_RULE)
def _(p: Path) -> list[str]:
    edit_params(p, orderprobe("generate", "extra", "my pass", value={"n": 1}))
    return ["check-params"]


@case("an extra pass's setting '../x'", "benchmarks.orderprobe.generate.extra.consistency.settings.0", NAME_RULE)
def _(p: Path) -> list[str]:
    edit_params(p, orderprobe("generate", "extra", "consistency", "settings", value=["../x"]))
    return ["check-params"]


@case("a replay source's setting '../../x'", "models.rp.sources.0.setting: '../../x'", NAME_RULE)
def _(p: Path) -> list[str]:
    edit_params(p, replay({"path": "source.jsonl", "setting": "../../x"}))
    return ["generate", "-m", "rp"]


@case("a replay source's task 'a;b'", "models.rp.sources.0.task: 'a;b'", NAME_RULE)
def _(p: Path) -> list[str]:
    edit_params(p, replay({"path": "source.jsonl", "task": "a;b"}))
    return ["check-params"]


@case("a model's benchmarks entry 'orderprobe;rm'", "models.oracle.benchmarks.0: 'orderprobe;rm'", NAME_RULE)
def _(p: Path) -> list[str]:
    edit_params(p, model("oracle", {"backend": "oracle", "benchmarks": ["orderprobe;rm"]}))
    return ["check-params"]


@case("attention models entry 'a/b'", "benchmarks.g-idiomalign.attention.models.0: 'a/b'", NAME_RULE)
def _(p: Path) -> list[str]:
    edit_params(p, lambda params: params["benchmarks"]["g-idiomalign"].update(attention={"models": ["a/b"]}))
    return ["check-params"]


@case("OrderProbe's S_Cons pass name '../x'", "benchmarks.orderprobe.score.s_cons.pass_name: '../x'", NAME_RULE)
def _(p: Path) -> list[str]:
    edit_params(p, orderprobe("score", "s_cons", "pass_name", value="../x"))
    return ["check-params"]


@case("SemanticQA's sequential setting prefix 'a b'", "benchmarks.semanticqa.score.sequential.setting_prefix: 'a b'",
      NAME_RULE)
def _(p: Path) -> list[str]:
    edit_params(p, lambda params: params["benchmarks"]["semanticqa"].update(score={"sequential": {"setting_prefix": "a b"}}))
    return ["check-params"]


@case("G-IdiomAlign construction pair '../x'", "benchmarks.g-idiomalign.construct.pairs.0: '../x'", NAME_RULE)
def _(p: Path) -> list[str]:
    edit_params(p, lambda params: params["benchmarks"]["g-idiomalign"].update(construct={"pairs": ["../x"]}))
    return ["check-params"]


def bad_key_for(command: list[str], key: str) -> None:
    """Every command validates the params before it builds a path: the bad key is named."""
    @case(f"{command[0]} with the model key {key!r} in params", f"models: the key {key!r}", NAME_RULE)
    def _(p: Path) -> list[str]:
        edit_params(p, model(key, {"backend": "oracle"}))
        return [*command]


bad_key_for(["generate", "-m", "x; touch pwned #"], "x; touch pwned #")
bad_key_for(["score", "orderprobe", "-m", "../../escape"], "../../escape")
bad_key_for(["track", "orderprobe", "-m", "a/b"], "a/b")
bad_key_for(["report"], "-rf")
bad_key_for(["plot-data"], "a b")


@case("score --model '../../x' (not a model)", "unknown model '../../x'", "oracle")
def _(p: Path) -> list[str]:
    return ["score", "orderprobe", "-m", "../../x"]


# ---- issue 23: a stage replaces only what it made --------------------------------------------
KIND = "owned outputs"
NOT_OURS = "exists and was not written by idiombench"


def victim(p: Path, folder: str = "victim") -> None:
    """A user's folder with a user's file: must come out byte-identical (the tree snapshot)."""
    (p / folder).mkdir(parents=True, exist_ok=True)
    (p / folder / "thesis.txt").write_text("my thesis\n", encoding="utf-8")


@case("build --out a folder holding a user's file", "victim", NOT_OURS, "no build_stats.json", process=True)
def _(p: Path) -> list[str]:
    victim(p)
    return ["build", "orderprobe", "--raw", "nowhere", "--out", "victim"]


@case("build --out data/processed (every benchmark's builds)", "data/processed", NOT_OURS, "no build_stats.json")
def _(p: Path) -> list[str]:
    return ["build", "orderprobe", "--raw", "nowhere", "--out", "data/processed"]


@case("acquire --out a user's folder", "victim", NOT_OURS, "no ACQUIRED.json")
def _(p: Path) -> list[str]:
    victim(p)
    return ["acquire", "orderprobe", "--out", "victim"]


@case("render --out a user's folder", "victim", NOT_OURS, "no render_stats.json")
def _(p: Path) -> list[str]:
    victim(p)
    return ["render", "orderprobe", "--out", "victim"]


@case("generate --out a user's folder", "victim", NOT_OURS, "no generation_info.json")
def _(p: Path) -> list[str]:
    victim(p)
    return ["generate", "-m", "oracle", "--out", "victim"]


@case("generate over a generations folder without its record", "results/generations/oracle", NOT_OURS)
def _(p: Path) -> list[str]:
    (p / "results/generations/oracle/idiombench-output.json").unlink()  # nor the earlier versions' record
    (p / "results/generations/oracle/generation_info.json").unlink()
    return ["generate", "-m", "oracle"]


@case("score --out a user's folder", "victim", NOT_OURS, "no scoring_meta.json")
def _(p: Path) -> list[str]:
    victim(p)
    return ["score", "orderprobe", "-m", "oracle", "--out", "victim"]


@case("score --out a regular file", "afile is a file, not an output folder")
def _(p: Path) -> list[str]:
    (p / "afile").write_text("x", encoding="utf-8")
    return ["score", "orderprobe", "-m", "oracle", "--out", "afile"]


@case("construct --out a user's folder", "victim", NOT_OURS, "no construction.json")
def _(p: Path) -> list[str]:
    victim(p)
    return ["construct", "g-idiomalign", "--out", "victim"]


@case("attention --out a user's folder", "victim", NOT_OURS, "no summary.json")
def _(p: Path) -> list[str]:
    victim(p)
    return ["attention", "g-idiomalign", "-m", "oracle", "--out", "victim"]


@case("aggregate --out a user's JSON file", "mine.json exists and is not a metrics file of `idiombench aggregate`")
def _(p: Path) -> list[str]:
    (p / "mine.json").write_text('{"notes": "mine"}\n', encoding="utf-8")
    return ["aggregate", "orderprobe", "-m", "oracle", "--out", "mine.json"]


@case("aggregate --out a folder", "adir is a folder (expected a metrics file")
def _(p: Path) -> list[str]:
    (p / "adir").mkdir()
    return ["aggregate", "orderprobe", "-m", "oracle", "--out", "adir"]


@case("track --out a user's file", "notes.txt exists and is not a tracking record of `idiombench track`")
def _(p: Path) -> list[str]:
    (p / "notes.txt").write_text("my notes\n", encoding="utf-8")
    return ["track", "orderprobe", "-m", "oracle", "--out", "notes.txt"]


@case("report --out beside a user's tables/", "victim/tables", NOT_OURS, "no index.json", process=True)
def _(p: Path) -> list[str]:
    victim(p, "victim/tables")
    return ["report", "--out", "victim/r.pdf"]


@case("report --out beside a user's figures/", "victim/figures", NOT_OURS, "no index.json")
def _(p: Path) -> list[str]:
    (p / "victim/figures").mkdir(parents=True)
    (p / "victim/figures/photo.png").write_bytes(b"\x89PNG\r\n")
    return ["report", "--out", "victim/r.pdf"]


@case("report --out a user's PDF", "paper.pdf exists and is not a report PDF of idiombench")
def _(p: Path) -> list[str]:
    (p / "paper.pdf").write_bytes(b"%PDF-1.4\n1 0 obj << /Author (me) >> endobj\n%%EOF\n")
    return ["report", "--out", "paper.pdf"]


@case("report over an earlier report's tables/ holding a user's file", "reports/tables", NOT_OURS)
def _(p: Path) -> list[str]:
    (p / "reports/tables/index.json").unlink()  # as an earlier version wrote it (recognised by its layout)
    (p / "reports/tables/thesis.tex").write_text("\\section{mine}\n", encoding="utf-8")
    return ["report"]


@case("report where figures/ is a file", "reports/figures is a file, not an output folder")
def _(p: Path) -> list[str]:
    shutil.rmtree(p / "reports/figures")
    (p / "reports/figures").write_text("x", encoding="utf-8")
    return ["report"]


@case("plot-data over results/plots holding a user's file", "results/plots", NOT_OURS, "no index.json")
def _(p: Path) -> list[str]:
    (p / "results/plots/idiombench-output.json").unlink()
    (p / "results/plots/index.json").unlink()
    (p / "results/plots/notes.txt").write_text("mine\n", encoding="utf-8")
    return ["plot-data"]


@case("plot-data over a headline.json that is not one", "results/headline.json exists and is not the headline metrics")
def _(p: Path) -> list[str]:
    (p / "results/headline.json").write_text("[1, 2]\n", encoding="utf-8")
    return ["plot-data"]


@case("dvc-yaml --out a user's YAML file", "mine.yaml exists and is not a dvc.yaml that `idiombench dvc-yaml` generated")
def _(p: Path) -> list[str]:
    (p / "mine.yaml").write_text("stages: {}\n", encoding="utf-8")
    return ["dvc-yaml", "--out", "mine.yaml"]


# ---- issue 23: internal errors that are bad input ---------------------------------------------
KIND = "internal errors"


@case("attention on a benchmark without attention", "benchmark orderprobe has no attention diagnostics",
      "g-idiomalign", process=True)
def _(p: Path) -> list[str]:
    return ["attention", "orderprobe", "-m", "oracle"]


@case("track an unknown model (writes no record)", "unknown model 'typo'", process=True)
def _(p: Path) -> list[str]:
    return ["track", "orderprobe", "-m", "typo"]


@case("aggregate an unknown model", "unknown model 'typo'")
def _(p: Path) -> list[str]:
    return ["aggregate", "orderprobe", "-m", "typo"]


@case("attention an unknown model", "unknown model 'typo'")
def _(p: Path) -> list[str]:
    return ["attention", "g-idiomalign", "-m", "typo"]


@case("track a model whose last generate failed, beside older metrics", "generate-oracle.failed.json",
      "rerun it before tracking")
def _(p: Path) -> list[str]:
    (p / "results/logs").mkdir(parents=True, exist_ok=True)
    (p / "results/logs/generate-oracle.failed.json").write_text('{"reason": "3 of 48 requests failed"}\n',
                                                                encoding="utf-8")
    return ["track", "orderprobe", "-m", "oracle"]


@case("score: the prompts OrderProbe's score reads are truncated", PROMPTS, "not a readable Parquet file")
def _(p: Path) -> list[str]:
    truncate(p / PROMPTS)
    return ["score", "orderprobe", "-m", "oracle"]


@case("report: a scores table truncated", f"{SCORES}/zero_shot.parquet", "not a readable Parquet file")
def _(p: Path) -> list[str]:
    truncate(p / SCORES / "zero_shot.parquet")
    return ["report"]


@case("attention: the scores it reads are truncated", "results/scores/hf1/g-idiomalign/no_gloss.parquet",
      "not a readable Parquet file")
def _(p: Path) -> list[str]:
    """An hf model measured on G-IdiomAlign (its weights are never reached): complete generations
    and items, then a truncated scores table."""
    def enable(params: dict[str, Any]) -> None:
        params["benchmarks"]["g-idiomalign"] = {"enabled": True, "attention": {"enabled": True}}
        params["models"]["hf1"] = {"backend": "hf", "model": "nowhere", "benchmarks": ["g-idiomalign"]}
    edit_params(p, enable)
    generations = p / "results/generations/hf1"
    write_generations(generations / "g-idiomalign/no_gloss.parquet", [])
    (generations / "generation_info.json").write_text("{}\n", encoding="utf-8")
    write_items(p / "data/processed/g-idiomalign/task2.parquet", [])
    scores = p / "results/scores/hf1/g-idiomalign"
    scores.mkdir(parents=True)
    (scores / "scoring_meta.json").write_text('{"status": "scored"}\n', encoding="utf-8")
    shutil.copy(p / SCORES / "zero_shot.parquet", scores / "no_gloss.parquet")
    truncate(scores / "no_gloss.parquet")
    return ["attention", "g-idiomalign", "-m", "hf1"]


@case("evaluate-predictions --format idiombench: a table of another setting", "preds.parquet",
      "no row of orderprobe/cot (the table holds orderprobe/zero_shot)")
def _(p: Path) -> list[str]:
    shutil.copy(p / GENERATIONS, p / "preds.parquet")
    return ["evaluate-predictions", "--benchmark", "orderprobe", "--task", "restore", "--setting", "cot",
            "--format", "idiombench", "preds.parquet"]


@case("evaluate-predictions --format idiombench: a table of another benchmark", "preds.parquet",
      "no row of chengyu-bench/connotation (the table holds orderprobe/zero_shot)")
def _(p: Path) -> list[str]:
    shutil.copy(p / GENERATIONS, p / "preds.parquet")
    write_items(p / "data/processed/chengyu-bench/connotation.parquet", [])
    return ["evaluate-predictions", "--benchmark", "chengyu-bench", "--task", "connotation", "--setting",
            "connotation", "preds.parquet"]


@case("dvc-yaml --check on a file that differs (exit 2: 1 is for bugs)", "dvc.yaml is not what the registry generates")
def _(p: Path) -> list[str]:
    (p / "dvc.yaml").write_text("# GENERATED by `idiombench dvc-yaml` long ago\nstages: {}\n", encoding="utf-8")
    return ["dvc-yaml", "--check"]


@case("score: items that OrderProbe's build did not write (meta lacks its keys)", ITEMS, "item zh-CN/0000/ABCD",
      "meta lacks expression_id")
def _(p: Path) -> list[str]:
    write_items(p / ITEMS, orderprobe_items())  # generate's hand-written items: no expression meta
    return ["score", "orderprobe", "-m", "oracle"]


@case("aggregate: a scoring record without a status", f"{SCORES}/scoring_meta.json", "status None")
def _(p: Path) -> list[str]:
    (p / SCORES / "scoring_meta.json").write_text('{"benchmark": "orderprobe"}\n', encoding="utf-8")
    return ["aggregate", "orderprobe", "-m", "oracle"]


@case("aggregate: a scoring record that is a JSON list", f"{SCORES}/scoring_meta.json", "a JSON list at the top level")
def _(p: Path) -> list[str]:
    (p / SCORES / "scoring_meta.json").write_text("[]\n", encoding="utf-8")
    return ["aggregate", "orderprobe", "-m", "oracle"]


@case("report: a metrics file that is a JSON list", METRICS, "a JSON list at the top level")
def _(p: Path) -> list[str]:
    (p / METRICS).write_text("[]\n", encoding="utf-8")
    return ["report"]


@case("plot-data: a metrics file truncated", METRICS, "not valid JSON")
def _(p: Path) -> list[str]:
    truncate(p / METRICS)
    return ["plot-data"]


@case("track: a metrics file truncated", METRICS, "not valid JSON")
def _(p: Path) -> list[str]:
    truncate(p / METRICS)
    return ["track", "orderprobe", "-m", "oracle"]


# ---- issue 23: more bad input over the other commands ------------------------------------------
KIND = "more commands"


@case("merge-params of an overlay with a bad model key (nothing written)", "bad.yaml", "models: the key 'a b'")
def _(p: Path) -> list[str]:
    (p / "bad.yaml").write_text("overlay_of: params.yaml\nmodels:\n  a b: {backend: oracle}\n", encoding="utf-8")
    return ["merge-params", "bad.yaml", "--out", "merged.yaml"]


@case("check-params of an overlay whose base is missing", "absent.yaml")
def _(p: Path) -> list[str]:
    (p / "over.yaml").write_text("overlay_of: absent.yaml\nseed: 1\n", encoding="utf-8")
    return ["check-params", "-p", "over.yaml"]


@case("evaluate-predictions --denominator bogus", "unknown denominator 'bogus'")
def _(p: Path) -> list[str]:
    shutil.copy(p / GENERATIONS, p / "preds.parquet")
    return [*EVALUATE, "--denominator", "bogus", "preds.parquet"]


@case("construct a benchmark without a construction pipeline", "benchmark orderprobe has no construction pipeline")
def _(p: Path) -> list[str]:
    return ["construct", "orderprobe"]


@case("render an unknown benchmark", "unknown benchmark 'nope'")
def _(p: Path) -> list[str]:
    return ["render", "nope"]


@case("acquire an unknown benchmark", "unknown benchmark 'nope'")
def _(p: Path) -> list[str]:
    return ["acquire", "nope"]


@case("prepare-models: a GGUF file missing from the model folder", "no GGUF file 'x.gguf' in that directory")
def _(p: Path) -> list[str]:
    (p / "weights").mkdir()
    edit_params(p, model("g", {"backend": "hf", "model": str(p / "weights"), "gguf_file": "x.gguf"}))
    return ["prepare-models"]


@case("generate with --params a folder", "folder.yaml", "is a folder")
def _(p: Path) -> list[str]:
    (p / "folder.yaml").mkdir()
    return ["generate", "-m", "oracle", "-p", "folder.yaml"]


@case("plan of a params file with an unknown key", "plan.yaml", "bogus")
def _(p: Path) -> list[str]:
    return ["plan", "-p", edit_params(p, lambda params: params.__setitem__("bogus", 1), "plan.yaml")]


@case("plan with a rates file that is not JSON", "rates.json")
def _(p: Path) -> list[str]:
    random_bytes(p / "rates.json")
    return ["plan", "--rates", "rates.json"]


@case("plan with a rates file holding a negative rate", "rates.json", "cpu.stages.score.orderprobe.rows_per_s")
def _(p: Path) -> list[str]:
    (p / "rates.json").write_text('{"format": 1, "cpu": {"stages": {"score": {"orderprobe": {"rows_per_s": -3}}}}, '
                                  '"gpu": null}', encoding="utf-8")
    return ["plan", "--rates", "rates.json"]


@case("score: the generations folder lacks the benchmark", "results/generations/oracle/orderprobe is missing")
def _(p: Path) -> list[str]:
    shutil.rmtree(p / "results/generations/oracle/orderprobe")
    return ["score", "orderprobe", "-m", "oracle"]


# ---- issue 23: the workflow tools refuse what check-params refuses ------------------------------
KIND = "workflow"


def hostile_params(p: Path, key: str) -> None:
    """The project's own params.yaml (every section DVC reads) plus a model under `key`."""
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    params["models"][key] = {"backend": "oracle"}
    (p / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")


def snakemake_case(key: str, label: str) -> None:
    @case(f"snakemake: model key {label}", f"models: the key {key!r}", NAME_RULE, tool="snakemake")
    def _(p: Path) -> list[str]:
        hostile_params(p, key)
        return ["-n", "-p", "--cores", "1"]


def dvc_case(key: str, label: str) -> None:
    """`dvc repro -s generate@<key>` (only that stage): DVC puts the key into the command unquoted,
    so dvc.yaml runs check-params first, as a command of its own."""
    @case(f"dvc: model key {label}", f"models: the key {key!r}", NAME_RULE, tool="dvc")
    def _(p: Path) -> list[str]:
        hostile_params(p, key)
        return ["repro", "-s", f"generate@{key}"]


for _key, _label in (("x; touch pwned #", "with ';'"), ("a b", "with a space"), ("a/b", "with '/'"),
                     ("..", "'..'"), ("-rf", "with a leading '-'")):
    snakemake_case(_key, _label)
for _key, _label in (("x; touch pwned #", "with ';'"), ("a b", "with a space"), ("a/b", "with '/'"),
                     ("-rf", "with a leading '-'"), ("q'; touch pwned; '", "breaking out of quotes")):
    dvc_case(_key, _label)


@case("dvc: model key '..' (DVC's own check refuses the overlapping output)", "overlap", "generate@..", tool="dvc",
      ours=False)
def _(p: Path) -> list[str]:
    # not `-s`: `dvc repro -s` skips DVC's graph checks and removes the stage's declared output (here
    # results/) before any command runs; docs/models.md says to run check-params before `dvc repro -s`
    hostile_params(p, "..")
    return ["repro"]


@case("snakemake --config params=<a missing file>", "absent.yaml", "no such params file", tool="snakemake")
def _(p: Path) -> list[str]:
    return ["-n", "--cores", "1", "--config", "params=absent.yaml"]


# ---- issue 30: the classes, generated for every stage and every benchmark task --------------
#
# The cases above are examples; these are classes. For each stage that reads input someone else
# may have made and each benchmark task (UNITS: every task at least once and every setting at
# least once, checked against a project built from the mirror), the corpus generates: an item
# without a record, a record without an item, records of one item that disagree, a record that
# fits several items or none, wrong types, empty, huge, undecodable, strange characters; for
# every stage that takes --out, a look-alike ownership record; for every command that reads
# params, a secret-bearing value. Each case asserts its outcome: one clear error (exit 2, one
# `error:` line naming the file or key) or the right result (exit 0 and the counts that prove
# it), in both cases no file changed beyond the stage's own outputs, no internal error, and no
# secret in any output. They run in process (the CLI's own boundary, cli.user_errors) on a copy of
# a small project with every benchmark's real items (a few per task) and the oracle's outputs.

@dataclass(frozen=True)
class Unit:
    benchmark: str
    task: str
    setting: str

    def __str__(self) -> str:
        return f"{self.benchmark}/{self.task}/{self.setting}"


# Every task at least once, every (benchmark, setting) at least once; SemanticQA's tasks spread
# over its settings (its parsers depend on the task's kind, not on k). Checked against the
# project's prompts by test_units_cover_every_task_and_setting.
UNITS: tuple[Unit, ...] = (
    *(Unit("orderprobe", "restore", s) for s in ("zero_shot", "cot", "three_shot")),
    Unit("g-idiomalign", "mcq", "mcq"),
    *(Unit("g-idiomalign", "gloss_generation", s) for s in ("no_gloss", "with_gloss")),
    *(Unit("semanticqa", task, ("0-shot", "3-shot", "5-shot")[i % 3]) for i, task in enumerate((
        "collocation_categorization", "collocation_extraction", "collocation_interpretation", "idiom_detection",
        "idiom_extraction", "idiom_paraphrase", "noun_compound_compositionality", "noun_compound_extraction",
        "noun_compound_interpretation", "vmwe_extraction_LVC", "vmwe_extraction_VID", "vmwe_extraction_VPC"))),
    *(Unit("chengyu-bench", task, setting) for task, setting in (
        ("appropriateness_sample", "appropriateness"), ("chid", "chid_candidates"), ("chid", "chid_open_cloze"),
        ("connotation_sample", "connotation"))),
)
PER_TASK = 8  # prompts kept per (benchmark, setting, task) in the tasks project
CANARY = "S3CRET-c4n4ry"  # a secret no output may show
HUGE = 1_000_000  # characters of the huge output (principle 6: 1 MB lines)
# The huge output: the answer, then a 1 MB run without spaces (1 MB through every parser, the
# storage and the character-level scorers). Not 200,000 words: METEOR and ROUGE-L compare every
# word with every reference, linear but minutes against NCI's up to 167 references
# (docs/troubleshooting.md); the parsers' growth on long texts of every shape is
# tests/unit/test_parsing_linear.py's.


def huge(text: str) -> str:
    return text + " " + "x" * HUGE
STRANGE = "\x00\x01\x1b[31m\x7f\x85\u202e\u2066\u200f\u200b\ufeff"  # NUL, C0/C1 controls, direction marks, zero-width


@dataclass
class Generated:
    """One generated case: `setup` prepares the project copy and returns the command's arguments;
    `check` (None: a clear error) asserts the right result from the output and the project."""

    stage: str
    where: str  # the unit, the benchmark or the command
    klass: str
    setup: Callable[[Path], list[str]]
    errors: tuple[str, ...] = ()  # substrings of the one error line (check None)
    check: Callable[[Result, Path], None] | None = None
    writes: tuple[str, ...] = ()  # path prefixes the command may write (its outputs)
    limits: dict[str, int] = field(default_factory=dict)  # foreign.* limits lowered for the case
    tool: str = "idiombench"
    process: bool = False

    @property
    def id(self) -> str:
        return f"{self.stage} | {self.where} | {self.klass}"


GENERATED: list[Generated] = []


def through_entry_point(unit: Unit) -> bool:
    """The sample run as a subprocess of the real `idiombench` (the rest in process): each stage's
    first unit of each file format."""
    return unit in (UNITS[0], next(u for u in UNITS if u.benchmark == "semanticqa"))


def generated(stage: str, where: object, klass: str, **options: Any) -> Callable[[Callable[[Path], list[str]]], None]:
    def register(setup: Callable[[Path], list[str]]) -> None:
        GENERATED.append(Generated(stage, str(where), klass, setup, **options))
    return register


# ---- reading and writing the tasks project's files

def oracle_table(p: Path, unit: Unit) -> Path:
    return p / "results/generations/oracle" / unit.benchmark / f"{unit.setting}.parquet"


def table_rows(path: Path) -> tuple[list[dict[str, Any]], pa.Schema]:
    table = pq.read_table(path)
    return table.to_pylist(), table.schema


def unit_rows(rows: list[dict[str, Any]], unit: Unit) -> list[dict[str, Any]]:
    return [r for r in rows if r["task"] == unit.task and r["pass"] == "main" and r["sample_index"] == 0]


def write_rows(path: Path, rows: list[dict[str, Any]], schema: pa.Schema) -> None:
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def unit_items(p: Path, unit: Unit) -> list[Any]:
    from idiombench.core.items import read_items

    return read_items(p / "data/processed" / unit.benchmark / f"{unit.task}.parquet")


def evaluate(unit: Unit, path: str, *extra: str) -> list[str]:
    return ["evaluate-predictions", "--benchmark", unit.benchmark, "--task", unit.task, "--setting", unit.setting,
            "--json", *extra, path]


def coverage(result: Result) -> dict[str, Any]:
    return json.loads(result.stdout.strip().splitlines()[-1])


def both_denominators(body: dict[str, Any]) -> None:
    """Both denominators computed with the same metrics (a missing item changes numbers, not keys)."""
    by = body["metrics_by_denominator"]
    assert set(by) == {"test-set", "records"} and set(by["test-set"]) == set(by["records"]) == set(body["metrics"]), by


def counts_are(**expected: int) -> Callable[[Result, Path], None]:
    def check(result: Result, _: Path) -> None:
        body = coverage(result)
        both_denominators(body)
        found = {key: body["coverage"][key] for key in expected}
        assert found == expected, body["coverage"]
    return check


def released_records(p: Path, unit: Unit) -> list[dict[str, Any]]:
    """One published-format record per item of the unit: its fields (all of them identify it)
    and the oracle's output as `prediction`."""
    texts = {r["item_id"]: r["text"] for r in unit_rows(table_rows(oracle_table(p, unit))[0], unit)}
    return [{**item.fields, "prediction": texts[item.item_id]} for item in unit_items(p, unit) if item.item_id in texts]


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def add_twin(p: Path, unit: Unit) -> str:
    """A second item with the same fields as the unit's first (a release holding one record
    twice), and its prompt: a record of the first now fits two items. The first's id."""
    items = p / "data/processed" / unit.benchmark / f"{unit.task}.parquet"
    rows, schema = table_rows(items)
    first = next(r for r in rows if r["item_id"] in {i.item_id for i in unit_items(p, unit)}
                 and r["item_id"] in {g["item_id"] for g in unit_rows(table_rows(oracle_table(p, unit))[0], unit)})
    write_rows(items, [*rows, {**first, "item_id": first["item_id"] + "-twin"}], schema)
    prompts = p / "results/prompts" / unit.benchmark / f"{unit.setting}.parquet"
    rows, schema = table_rows(prompts)
    prompt = next(r for r in rows if r["item_id"] == first["item_id"] and r["task"] == unit.task)
    write_rows(prompts, [*rows, {**prompt, "item_id": first["item_id"] + "-twin",
                                 "prompt_id": prompt["prompt_id"] + "-twin"}], schema)
    return first["item_id"]


def replay_model(p: Path, unit: Unit, fmt: str, path: str = "source") -> None:
    source = {"benchmark": unit.benchmark, "setting": unit.setting, "path": path, "format": fmt}
    if fmt != "idiombench":
        source["task"] = unit.task
    edit_params(p, model("rp", {"backend": "replay", "benchmarks": [unit.benchmark], "sources": [source]}))


def replayed(p: Path, unit: Unit) -> dict[str, dict[str, Any]]:
    """The replay model's generations of the unit, by item id."""
    rows, _ = table_rows(p / "results/generations/rp" / unit.benchmark / f"{unit.setting}.parquet")
    return {r["item_id"]: r for r in unit_rows(rows, unit)}


def replay_summary(p: Path) -> dict[str, Any]:
    return json.loads((p / "results/logs/generate-rp.json").read_text(encoding="utf-8"))["backend_summary"]


REPLAY_WRITES = ("results/generations/rp",)


def score_rows(p: Path, unit: Unit) -> list[dict[str, Any]]:
    rows, _ = table_rows(p / "results/scores/oracle" / unit.benchmark / f"{unit.setting}.parquet")
    return [r for r in rows if r.get("task", unit.task) == unit.task and r.get("pass", "main") == "main"]


# ---- evaluate-predictions on a generations table (every benchmark task) ----------------------

def table_classes(unit: Unit) -> None:
    stage = "evaluate-predictions (idiombench table)"

    @generated(stage, unit, "item without a record", process=through_entry_point(unit),
               check=counts_are(items_without_record=1, records_unmatched=0))
    def _(p: Path) -> list[str]:
        rows, schema = table_rows(oracle_table(p, unit))
        first = unit_rows(rows, unit)[0]
        write_rows(p / "preds.parquet", [r for r in rows if r is not first], schema)
        return evaluate(unit, "preds.parquet")

    @generated(stage, unit, "record without an item", check=counts_are(items_without_record=0, records_unmatched=1))
    def _(p: Path) -> list[str]:
        rows, schema = table_rows(oracle_table(p, unit))
        stray = {**unit_rows(rows, unit)[0], "item_id": "no-such-item", "prompt_id": "stray"}
        write_rows(p / "preds.parquet", [*rows, stray], schema)
        return evaluate(unit, "preds.parquet")

    @generated(stage, unit, "records of one item that disagree",
               check=counts_are(records_conflicting=2, items_with_conflicting_records=1, items_without_record=0))
    def _(p: Path) -> list[str]:
        rows, schema = table_rows(oracle_table(p, unit))
        first = unit_rows(rows, unit)[0]
        write_rows(p / "preds.parquet", [*rows, {**first, "text": first["text"] + " (another answer)"}], schema)
        return evaluate(unit, "preds.parquet")

    @generated(stage, unit, "huge output (1 MB)", check=counts_are(items_without_record=0))
    def _(p: Path) -> list[str]:
        rows, schema = table_rows(oracle_table(p, unit))
        first = unit_rows(rows, unit)[0]
        write_rows(p / "preds.parquet", [{**r, "text": huge(r["text"])} if r is first else r for r in rows], schema)
        return evaluate(unit, "preds.parquet", "-p", "lexical.yaml")  # neural embedders: see docs/troubleshooting.md

    @generated(stage, unit, "control and direction characters", check=counts_are(items_without_record=0))
    def _(p: Path) -> list[str]:
        rows, schema = table_rows(oracle_table(p, unit))
        write_rows(p / "preds.parquet", [{**r, "text": STRANGE + r["text"] + STRANGE} for r in rows], schema)
        return evaluate(unit, "preds.parquet")


def table_file_classes(benchmark: str, unit: Unit) -> None:
    """What is wrong with the file, not with a record: the same for every task of the file."""
    stage = "evaluate-predictions (idiombench table)"

    @generated(stage, benchmark, "wrong types (text of int64)", errors=("preds.parquet", "text is int64"))
    def _(p: Path) -> list[str]:
        rows, schema = table_rows(oracle_table(p, unit))
        schema = pa.schema([f if f.name != "text" else pa.field("text", pa.int64()) for f in schema])
        write_rows(p / "preds.parquet", [{**r, "text": n} for n, r in enumerate(rows)], schema)
        return evaluate(unit, "preds.parquet")

    @generated(stage, benchmark, "empty (no rows)", errors=("preds.parquet", f"no prediction matches an item of "
                                                                             f"{unit.benchmark}/{unit.task}"))
    def _(p: Path) -> list[str]:
        write_rows(p / "preds.parquet", [], table_rows(oracle_table(p, unit))[1])
        return evaluate(unit, "preds.parquet")

    @generated(stage, benchmark, "undecodable (random bytes)", errors=("preds.parquet", "not a readable Parquet file"))
    def _(p: Path) -> list[str]:
        random_bytes(p / "preds.parquet")
        return evaluate(unit, "preds.parquet")

    @generated(stage, benchmark, "larger than the size limit", errors=("preds.parquet", "larger than the 1 KiB"),
               limits={"MAX_FILE_BYTES": 1024})
    def _(p: Path) -> list[str]:
        shutil.copy(oracle_table(p, unit), p / "preds.parquet")
        return evaluate(unit, "preds.parquet")


# ---- evaluate-predictions on a published-format file (SemanticQA's tasks) ---------------------

def published_classes(unit: Unit) -> None:
    stage = "evaluate-predictions (semanticqa format)"

    @generated(stage, unit, "item without a record", process=through_entry_point(unit),
               check=counts_are(items_without_record=1, records_unmatched=0))
    def _(p: Path) -> list[str]:
        write_jsonl(p / "preds.jsonl", released_records(p, unit)[1:])
        return evaluate(unit, "preds.jsonl")

    @generated(stage, unit, "record without an item", check=counts_are(items_without_record=0, records_unmatched=1))
    def _(p: Path) -> list[str]:
        records = released_records(p, unit)
        write_jsonl(p / "preds.jsonl", [*records, {**records[0], "item_of_no_task": "x"}])
        return evaluate(unit, "preds.jsonl")

    @generated(stage, unit, "a record that fits several items",
               check=counts_are(records_ambiguous=1, items_without_record=2))  # the item and its twin
    def _(p: Path) -> list[str]:
        records = released_records(p, unit)
        add_twin(p, unit)
        write_jsonl(p / "preds.jsonl", records)
        return evaluate(unit, "preds.jsonl")

    @generated(stage, unit, "a record without an identifying field",
               check=counts_are(records_without_identifying_field=1, items_without_record=0))
    def _(p: Path) -> list[str]:
        write_jsonl(p / "preds.jsonl", [{"prediction": "A"}, *released_records(p, unit)])
        return evaluate(unit, "preds.jsonl")

    @generated(stage, unit, "only a record without an identifying field (the issue's example)",
               errors=("preds.jsonl", "no prediction matches an item", "1 without an identifying field"))
    def _(p: Path) -> list[str]:
        write_jsonl(p / "preds.jsonl", [{"prediction": "A"}])
        return evaluate(unit, "preds.jsonl")

    @generated(stage, unit, "wrong types (predictions that are not text)", check=counts_are(items_without_record=0))
    def _(p: Path) -> list[str]:
        records = released_records(p, unit)
        odd = [None, 3.5, ["A"], {"answer": "A"}, True]
        write_jsonl(p / "preds.jsonl", [{**r, "prediction": odd[n % len(odd)]} if n < 3 else r
                                        for n, r in enumerate(records)])
        return evaluate(unit, "preds.jsonl")

    @generated(stage, unit, "huge output (1 MB)", check=counts_are(items_without_record=0))
    def _(p: Path) -> list[str]:
        records = released_records(p, unit)
        records[0]["prediction"] = huge(records[0]["prediction"])
        write_jsonl(p / "preds.jsonl", records)
        return evaluate(unit, "preds.jsonl", "-p", "lexical.yaml")

    @generated(stage, unit, "lone surrogates, control and direction characters",
               check=counts_are(items_without_record=0))
    def _(p: Path) -> list[str]:
        records = [{**r, "prediction": "\ud800" + STRANGE + r["prediction"] + "\udfff"} for r in released_records(p, unit)]
        (p / "preds.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")  # \\ud800 escapes
        return evaluate(unit, "preds.jsonl")


def published_file_classes(unit: Unit) -> None:
    stage = "evaluate-predictions (semanticqa format)"

    @generated(stage, "semanticqa", "wrong types (a record that is a list)", errors=("preds.jsonl, row 2", "no `prediction`"))
    def _(p: Path) -> list[str]:
        records = released_records(p, unit)
        (p / "preds.jsonl").write_text(json.dumps(records[0]) + "\n[1, 2]\n", encoding="utf-8")
        return evaluate(unit, "preds.jsonl")

    @generated(stage, "semanticqa", "wrong types (NaN, a 5,000-digit number)", errors=("preds.jsonl, row 1", "JSON"))
    def _(p: Path) -> list[str]:
        (p / "preds.jsonl").write_text('{"idiom": NaN, "prediction": ' + "1" * 5000 + "}\n", encoding="utf-8")
        return evaluate(unit, "preds.jsonl")

    @generated(stage, "semanticqa", "empty", errors=("preds.jsonl", "no prediction matches an item"))
    def _(p: Path) -> list[str]:
        (p / "preds.jsonl").write_text("\n\n", encoding="utf-8")
        return evaluate(unit, "preds.jsonl")

    @generated(stage, "semanticqa", "undecodable (invalid UTF-8)", errors=("preds.jsonl, row 2", "invalid UTF-8 byte 0xff"))
    def _(p: Path) -> list[str]:
        records = released_records(p, unit)
        (p / "preds.jsonl").write_bytes(json.dumps(records[0]).encode() + b'\n{"prediction": "\xff"}\n')
        return evaluate(unit, "preds.jsonl")

    @generated(stage, "semanticqa", "a line longer than the limit", errors=("preds.jsonl, row 1", "a line longer than 64 KiB"),
               limits={"MAX_LINE_BYTES": 64 * 1024})
    def _(p: Path) -> list[str]:
        record = released_records(p, unit)[0]
        write_jsonl(p / "preds.jsonl", [{**record, "prediction": "x" * 100_000}])
        return evaluate(unit, "preds.jsonl")

    @generated(stage, "semanticqa", "a line longer than the limit (16 MiB, through the real entry point)",
               errors=("preds.jsonl, row 2", "a line longer than 16 MiB"), process=True)
    def _(p: Path) -> list[str]:
        records = released_records(p, unit)
        write_jsonl(p / "preds.jsonl", [records[0], {**records[1], "prediction": "x" * (16 * 1024**2)}])
        return evaluate(unit, "preds.jsonl")


# ---- generate with a replay model (every benchmark task) ---------------------------------------

def replay_classes(unit: Unit) -> None:
    stage = "generate (replay, idiombench table)"

    def source(p: Path, rows: list[dict[str, Any]], schema: pa.Schema) -> list[str]:
        write_rows(p / "source.parquet", rows, schema)
        replay_model(p, unit, "idiombench", "source.parquet")
        return ["generate", "-m", "rp"]

    def without(first_id: str) -> Callable[[Result, Path], None]:
        def check(_: Result, p: Path) -> None:
            got = replayed(p, unit)
            assert got[first_id]["error"] == "no prediction in replay source", got[first_id]
            assert all(r["error"] is None for i, r in got.items() if i != first_id)
        return check

    first_ids: dict[str, str] = {}

    def first(p: Path) -> tuple[list[dict[str, Any]], pa.Schema, dict[str, Any]]:
        rows, schema = table_rows(oracle_table(p, unit))
        row = unit_rows(rows, unit)[0]
        first_ids["id"] = row["item_id"]
        return rows, schema, row

    @generated(stage, unit, "item without a record", process=through_entry_point(unit),
               writes=REPLAY_WRITES,
               check=lambda r, p: without(first_ids["id"])(r, p))
    def _(p: Path) -> list[str]:
        rows, schema, row = first(p)
        return source(p, [r for r in rows if r is not row], schema)

    def record_without_item(_: Result, p: Path) -> None:
        assert all(r["error"] is None for r in replayed(p, unit).values())
        assert replay_summary(p)["sources"][0]["unmatched_lines"] >= 1

    @generated(stage, unit, "record without an item", writes=REPLAY_WRITES, check=record_without_item)
    def _(p: Path) -> list[str]:
        rows, schema, row = first(p)
        return source(p, [*rows, {**row, "prompt_id": "stray", "prompt_hash": "stray"}], schema)

    def conflicting(result: Result, p: Path) -> None:
        without(first_ids["id"])(result, p)
        assert replay_summary(p)["sources"][0]["conflicting_lines"] == 2

    @generated(stage, unit, "records of one item that disagree", writes=REPLAY_WRITES, check=conflicting)
    def _(p: Path) -> list[str]:
        rows, schema, row = first(p)
        return source(p, [*rows, {**row, "text": row["text"] + " (another answer)"}], schema)

    def stored(text: Callable[[str], str]) -> Callable[[Result, Path], None]:
        def check(_: Result, p: Path) -> None:
            original = {r["item_id"]: r["text"] for r in unit_rows(table_rows(oracle_table(p, unit))[0], unit)}
            got = replayed(p, unit)
            assert {i: r["text"] for i, r in got.items()} == {i: text(t) for i, t in original.items()}
        return check

    @generated(stage, unit, "control and direction characters", writes=REPLAY_WRITES,
               check=stored(lambda t: STRANGE + t))
    def _(p: Path) -> list[str]:
        rows, schema = table_rows(oracle_table(p, unit))
        return source(p, [{**r, "text": STRANGE + r["text"]} for r in rows], schema)

    @generated(stage, unit, "huge output (1 MB)", writes=REPLAY_WRITES,
               check=stored(huge))
    def _(p: Path) -> list[str]:
        rows, schema = table_rows(oracle_table(p, unit))
        return source(p, [{**r, "text": huge(r["text"])} if r["task"] == unit.task else r for r in rows], schema)


def replay_file_classes(benchmark: str, unit: Unit) -> None:
    stage = "generate (replay, idiombench table)"

    @generated(stage, benchmark, "wrong types (text of int64)", errors=("source.parquet", "text is int"))
    def _(p: Path) -> list[str]:
        rows, schema = table_rows(oracle_table(p, unit))
        schema = pa.schema([f if f.name != "text" else pa.field("text", pa.int64()) for f in schema])
        write_rows(p / "source.parquet", [{**r, "text": n} for n, r in enumerate(rows)], schema)
        replay_model(p, unit, "idiombench", "source.parquet")
        return ["generate", "-m", "rp"]

    @generated(stage, benchmark, "empty (no rows)", errors=("source.parquet", "no line of this replay source matches"))
    def _(p: Path) -> list[str]:
        write_rows(p / "source.parquet", [], table_rows(oracle_table(p, unit))[1])
        replay_model(p, unit, "idiombench", "source.parquet")
        return ["generate", "-m", "rp"]

    @generated(stage, benchmark, "undecodable (random bytes)", errors=("source.parquet", "not a readable Parquet file"))
    def _(p: Path) -> list[str]:
        random_bytes(p / "source.parquet")
        replay_model(p, unit, "idiombench", "source.parquet")
        return ["generate", "-m", "rp"]


def replay_published_classes(unit: Unit) -> None:
    stage = "generate (replay, semanticqa format)"

    @generated(stage, unit, "item without a record", process=through_entry_point(unit),
               writes=REPLAY_WRITES,
               check=lambda _, p: None if sum(r["error"] is not None for r in replayed(p, unit).values()) == 1
               else pytest.fail(f"{replayed(p, unit)}"))
    def _(p: Path) -> list[str]:
        write_jsonl(p / "source.jsonl", released_records(p, unit)[1:])
        replay_model(p, unit, "semanticqa", "source.jsonl")
        return ["generate", "-m", "rp"]

    twins: dict[str, str] = {}

    def ambiguous(_: Result, p: Path) -> None:
        got = replayed(p, unit)
        unanswered = {i for i, r in got.items() if r["error"] is not None}
        assert unanswered == {twins["id"], twins["id"] + "-twin"}, unanswered  # the record answers neither
        assert replay_summary(p)["sources"][0]["ambiguous_lines"] == 1

    @generated(stage, unit, "a record that fits several items", writes=REPLAY_WRITES, check=ambiguous)
    def _(p: Path) -> list[str]:
        records = released_records(p, unit)
        twins["id"] = add_twin(p, unit)
        write_jsonl(p / "source.jsonl", records)
        replay_model(p, unit, "semanticqa", "source.jsonl")
        return ["generate", "-m", "rp"]

    def surrogates(_: Result, p: Path) -> None:
        texts = {r["text"] for r in replayed(p, unit).values()}
        assert all(t.startswith("\ufffd" + STRANGE) and t.endswith("\ufffd") for t in texts), texts

    @generated(stage, unit, "lone surrogates, control and direction characters", writes=REPLAY_WRITES,
               check=surrogates)
    def _(p: Path) -> list[str]:
        records = [{**r, "prediction": "\ud800" + STRANGE + r["prediction"] + "\udfff"} for r in released_records(p, unit)]
        (p / "source.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        replay_model(p, unit, "semanticqa", "source.jsonl")
        return ["generate", "-m", "rp"]

    @generated(stage, unit, "undecodable (invalid UTF-8)", errors=("source.jsonl, row 1", "invalid UTF-8 byte 0xff"))
    def _(p: Path) -> list[str]:
        (p / "source.jsonl").write_bytes(b'{"prediction": "\xff"}\n')
        replay_model(p, unit, "semanticqa", "source.jsonl")
        return ["generate", "-m", "rp"]

    @generated(stage, unit, "only records without an identifying field",
               errors=("source.jsonl", "no line of this replay source matches", "1 without an identifying field"))
    def _(p: Path) -> list[str]:
        write_jsonl(p / "source.jsonl", [{"prediction": "A"}])
        replay_model(p, unit, "semanticqa", "source.jsonl")
        return ["generate", "-m", "rp"]


# ---- score: the generations table it reads (every benchmark task) ------------------------------

def score_classes(unit: Unit) -> None:
    stage = "score"
    writes = (f"results/scores/oracle/{unit.benchmark}",)
    argv = ["score", unit.benchmark, "-m", "oracle", "-p", "lexical.yaml"]
    dropped: dict[str, str] = {}

    def lacks_dropped(_: Result, p: Path) -> None:
        ids = {r["item_id"] for r in score_rows(p, unit)}
        assert dropped["id"] not in ids and ids, ids

    @generated(stage, unit, "item without a record", process=through_entry_point(unit), writes=writes,
               check=lacks_dropped)
    def _(p: Path) -> list[str]:
        rows, schema = table_rows(oracle_table(p, unit))
        first = unit_rows(rows, unit)[0]
        dropped["id"] = first["item_id"]
        write_rows(oracle_table(p, unit), [r for r in rows if r is not first], schema)
        return argv

    @generated(stage, unit, "record without an item", errors=("no-such-item",))
    def _(p: Path) -> list[str]:
        rows, schema = table_rows(oracle_table(p, unit))
        stray = {**unit_rows(rows, unit)[0], "item_id": "no-such-item", "prompt_id": "zz-stray"}
        write_rows(oracle_table(p, unit), [*rows, stray], schema)
        return argv

    def every_row_scored(_: Result, p: Path) -> None:
        rows = unit_rows(table_rows(oracle_table(p, unit))[0], unit)
        assert {r["item_id"] for r in score_rows(p, unit)} >= {r["item_id"] for r in rows}

    @generated(stage, unit, "huge output (1 MB)", writes=writes, check=every_row_scored)
    def _(p: Path) -> list[str]:
        rows, schema = table_rows(oracle_table(p, unit))
        first = unit_rows(rows, unit)[0]
        write_rows(oracle_table(p, unit), [{**r, "text": huge(r["text"])} if r is first else r
                                           for r in rows], schema)
        return argv

    @generated(stage, unit, "control and direction characters", writes=writes, check=every_row_scored)
    def _(p: Path) -> list[str]:
        rows, schema = table_rows(oracle_table(p, unit))
        write_rows(oracle_table(p, unit), [{**r, "text": STRANGE + r["text"] + STRANGE} for r in rows], schema)
        return argv  # the neural scorers meet these characters in evaluate-predictions' cases


def score_file_classes(benchmark: str, unit: Unit) -> None:
    @generated("score", benchmark, "wrong types (text of int64)", errors=(f"{unit.setting}.parquet", "text"))
    def _(p: Path) -> list[str]:
        rows, schema = table_rows(oracle_table(p, unit))
        schema = pa.schema([f if f.name != "text" else pa.field("text", pa.int64()) for f in schema])
        write_rows(oracle_table(p, unit), [{**r, "text": n} for n, r in enumerate(rows)], schema)
        return ["score", unit.benchmark, "-m", "oracle"]

    @generated("score", benchmark, "undecodable (random bytes)", errors=(f"{unit.setting}.parquet", "not a readable Parquet"))
    def _(p: Path) -> list[str]:
        random_bytes(oracle_table(p, unit))
        return ["score", unit.benchmark, "-m", "oracle"]


for _unit in UNITS:
    table_classes(_unit)
    replay_classes(_unit)
    score_classes(_unit)
    if _unit.benchmark == "semanticqa":
        published_classes(_unit)
        replay_published_classes(_unit)
for _benchmark in dict.fromkeys(u.benchmark for u in UNITS):
    _first = next(u for u in UNITS if u.benchmark == _benchmark)
    table_file_classes(_benchmark, _first)
    replay_file_classes(_benchmark, _first)
    score_file_classes(_benchmark, _first)
published_file_classes(next(u for u in UNITS if u.benchmark == "semanticqa"))


# ---- every stage that takes --out: a folder holding a look-alike of its completion record -----
# (issue 30 principle 1, helper 30a: ownership proven by content. A user's folder holding a file
# named like the record, e.g. summary.json with `{}`, must be refused and left intact.)

def lookalike(stage: str, where: str, argv: list[str], record: str, folder: str = "victim") -> None:
    @generated(f"{stage} --out", where, f"look-alike ownership record ({record} holding {{}})",
               errors=(folder,))
    def _(p: Path) -> list[str]:
        (p / folder).mkdir(parents=True, exist_ok=True)
        (p / folder / record).write_text("{}\n", encoding="utf-8")
        (p / folder / "thesis.tex").write_text("\\section{mine}\n", encoding="utf-8")
        return argv


for _benchmark in dict.fromkeys(u.benchmark for u in UNITS):
    lookalike("acquire", _benchmark, ["acquire", _benchmark, "--out", "victim"], "ACQUIRED.json")
    lookalike("build", _benchmark, ["build", _benchmark, "--raw", f"data/raw/{_benchmark}", "--out", "victim"],
              "build_stats.json")
    lookalike("render", _benchmark, ["render", _benchmark, "--out", "victim"], "render_stats.json")
    lookalike("score", _benchmark, ["score", _benchmark, "-m", "oracle", "--out", "victim"], "scoring_meta.json")
lookalike("generate", "oracle", ["generate", "-m", "oracle", "--out", "victim"], "generation_info.json")
lookalike("construct", "g-idiomalign", ["construct", "g-idiomalign", "--out", "victim"], "construction.json")
lookalike("attention", "g-idiomalign", ["attention", "g-idiomalign", "-m", "oracle", "--out", "victim"], "summary.json")
lookalike("report", "tables/", ["report", "--out", "victim/r.pdf"], "index.json", "victim/tables")
lookalike("report", "figures/", ["report", "--out", "victim/r.pdf"], "index.json", "victim/figures")


# ---- every command that reads params: a secret-bearing value ----------------------------------
# (issue 30 principle 2, helper 30b: the schema refuses credentials in base_url with one line
# naming the key; no output shows the secret.)

SECRET_URLS = {
    "credentials in base_url": f"https://al:{CANARY}@gateway.example/v1",
    "api_key in base_url's query": f"https://gateway.example/v1?api_key=sk-{CANARY}",
    "token in base_url's query": f"https://gateway.example/v1?token={CANARY}",
}
PARAMS_COMMANDS = {  # command -> its arguments (every command that reads params: test_generated_corpus_size)
    "check-params": [], "acquire": ["orderprobe", "--out", "fresh"], "build": ["orderprobe", "--out", "fresh"],
    "render": ["orderprobe"], "generate": ["-m", "api"], "prepare-models": [], "score": ["orderprobe", "-m", "api"],
    "construct": ["g-idiomalign"], "attention": ["g-idiomalign", "-m", "api"], "aggregate": ["orderprobe", "-m", "api"],
    "track": ["orderprobe", "-m", "api"], "labels-pull": ["g-idiomalign", "-m", "api"], "report": [],
    "plot-data": [], "evaluate-predictions": ["--benchmark", "semanticqa", "--task", "idiom_detection", "--setting",
                                              "0-shot", "preds.jsonl"],
    "merge-params": ["over.yaml", "--out", "merged.yaml"],  # the overlay names the model
}


def secret_case(command: str, label: str, url: str, backend: str = "openai") -> None:
    tag = "" if backend == "openai" else f", under a wrong backend tag {backend!r}"
    @generated(command, "params", f"secret-bearing value ({label}{tag})", errors=("models.api",))
    def _(p: Path) -> list[str]:
        entry = {"backend": backend, "model": "m", "base_url": url}
        if command == "merge-params":
            (p / "over.yaml").write_text(yaml.safe_dump({"overlay_of": "params.yaml", "models": {"api": entry}}),
                                         encoding="utf-8")
            return [command, *PARAMS_COMMANDS[command]]
        edit_params(p, model("api", entry))
        return [command, *PARAMS_COMMANDS[command]]


for _command in PARAMS_COMMANDS:
    for _label, _url in SECRET_URLS.items():
        secret_case(_command, _label, _url)
secret_case("check-params", "credentials in base_url", SECRET_URLS["credentials in base_url"], backend="OpenAI")


# ---- the harness ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small project, generated, scored, aggregated and reported once with the oracle, so every
    stage has inputs to read and outputs of its own to replace."""
    project = write_project(tmp_path_factory.mktemp("corpus") / "project", {"oracle": {"backend": "oracle"}})
    # one expression's 24 inputs as OrderProbe's build writes them (score reads their meta)
    items = [dataclasses.replace(item, meta={**item.meta, "copy": 0})
             for item in items_for("zh-CN", 0, "画蛇添足", ["比喻做了多余的事"], None)]
    write_items(project / ITEMS, items)
    for setting, prompts in orderprobe_prompts(items).items():
        write_prompts(project / "results/prompts/orderprobe" / f"{setting}.parquet", prompts)
    env = tool_env()
    for command in (["generate", "-m", "oracle"], ["score", "orderprobe", "-m", "oracle"],
                    ["aggregate", "orderprobe", "-m", "oracle"], ["report"], ["plot-data"]):
        run(["idiombench", *command], project, env)
    return project


@pytest.fixture(scope="module")
def workflow_base(base: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project with the workflow files (Snakefile, workflow/, dvc.yaml) and a DVC repository
    (no git: DVC's own checks are what the cases meet); every benchmark's generate inputs exist."""
    project = tmp_path_factory.mktemp("workflow") / "project"
    shutil.copytree(base, project)
    for entry in ("Snakefile", "workflow", "dvc.yaml", ".dvcignore", "data/annotations"):
        source = ROOT / entry
        if source.is_dir():
            shutil.copytree(source, project / entry, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, project / entry)
    from idiombench.benchmarks.registry import NAMES

    for name in NAMES:
        for folder in (project / "results/prompts" / name, project / "data/processed" / name):
            if not folder.exists():
                folder.mkdir(parents=True)
                (folder / "placeholder").write_text("", encoding="utf-8")
    run(["dvc", "init", "--no-scm", "-q"], project, tool_env())
    return project


@pytest.fixture(scope="module")
def raw_release(tmp_path_factory: pytest.TempPathFactory, mirrors: list[Path]) -> Path:
    """OrderProbe's release as acquire writes it, from the mirror."""
    raw = tmp_path_factory.mktemp("raw") / "orderprobe"
    run(["idiombench", "acquire", "orderprobe", "--out", str(raw), "-p", str(ROOT / "params.yaml")],
        ROOT, tool_env(mirrors))
    return raw


def snapshot(project: Path) -> dict[str, str]:
    """Every file's content hash, except the cache, logs and the workflow tools' own records."""
    return {
        path.relative_to(project).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(project.rglob("*"))
        if path.is_file() and not path.relative_to(project).as_posix().startswith(NOT_OUTPUTS)
    }


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str
    crashed: bool  # an exception other than the exit got out (in process), or a traceback was printed


def invoke(bad: Case, argv: list[str], project: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Result:
    if bad.tool != "idiombench" or bad.process:
        done = subprocess.run([bad.tool, *argv], cwd=project, env=env, capture_output=True, text=True, timeout=300)
        return Result(done.returncode, done.stdout, done.stderr, "Traceback" in done.stdout + done.stderr)
    from typer.testing import CliRunner

    from idiombench.cli import app

    monkeypatch.chdir(project)
    for key in set(os.environ) - set(env):
        monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    done = CliRunner().invoke(app, argv)
    crashed = done.exception is not None and not isinstance(done.exception, SystemExit)
    return Result(done.exit_code, done.stdout, done.stderr, crashed or "Traceback" in done.output)


# The line a long stage's Progress prints when stderr is not a terminal (idiombench.core.progress):
# `<what>: 144/144 requests in 0.2 s (698.5 requests/s)`; the work done before the error.
PROGRESS_SUMMARY = re.compile(r"^[^:]+: [\d,]+/[\d,]+ \w+ in [\d.]+ s \(.*\)$")


def outcome(bad: Case, result: Result, before: dict[str, str], after: dict[str, str]) -> str:
    if result.crashed:
        return "traceback"
    if before != after:
        return "changed files"
    if result.code == 0:
        return "exit 0"
    ours = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    if bad.tool == "idiombench":  # the CLI prints its one line and nothing else (a stage's progress summary aside)
        said = [line for line in result.stderr.strip().splitlines() if not PROGRESS_SUMMARY.match(line)]
        return "clear error" if len(said) == 1 and len(ours) == 1 else "several lines"
    if not bad.ours:  # the workflow tool's own refusal
        return "clear error" if not ours else "several lines"
    return "clear error" if len(ours) == 1 else "several lines"


@pytest.mark.parametrize("bad", CASES, ids=[c.name for c in CASES])
def test_bad_input_gives_one_line_and_no_output(bad: Case, base: Path, tmp_path: Path, request,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    shutil.copytree(request.getfixturevalue("workflow_base") if bad.tool != "idiombench" else base, project)
    env = {**tool_env(), "TQDM_DISABLE": "1", "IDIOMBENCH_DVC_SYNC": "0", **bad.env}  # stderr: the message alone
    env.pop("IDIOMBENCH_MIRROR", None)
    if bad.needs_raw:
        shutil.copytree(request.getfixturevalue("raw_release"), project / "raw")
        env["IDIOMBENCH_MIRROR"] = str(project / "mirror")
    argv = bad.setup(project)
    before = snapshot(project)
    result = invoke(bad, argv, project, env, monkeypatch)
    after = snapshot(project)
    found = outcome(bad, result, before, after)
    OUTCOMES[found] += 1
    RAN[bad.name] = (bad.tool, argv[0])
    print(f"corpus outcome {found}: {bad.name}")
    changed = sorted(set(before.items()) ^ set(after.items()))[:6]
    detail = (f"{bad.tool} {' '.join(argv)} -> {result.code}\nstdout: {result.stdout[-3000:]}\n"
              f"stderr: {result.stderr[-3000:]}\nchanged: {changed}")
    assert found == "clear error", detail
    assert result.code == (bad.code if bad.code is not None else TOOL_CODES[bad.tool]), detail
    message = "\n".join(line for line in result.stderr.splitlines() if line.startswith("error: ")) if bad.ours \
        else result.stdout + result.stderr
    for expected in bad.expect:
        assert expected in message, f"{expected!r} not in the message\n{detail}"
    assert not (project / "pwned").exists(), detail


def test_corpus_size_and_kinds() -> None:
    """At least 100 cases, over every CLI command and both workflow tools; prints the count by kind
    and by outcome (run with -s)."""
    from idiombench.cli import app

    assert len(CASES) >= 100
    assert {"snakemake", "dvc"} <= {bad.tool for bad in CASES}
    if len(RAN) == len(CASES):  # the whole corpus ran (not a -k selection): every command met bad input
        commands = {command.name or command.callback.__name__.replace("_", "-") for command in app.registered_commands}
        missing = commands - {command for tool, command in RAN.values() if tool == "idiombench"}
        assert not missing, f"commands without a bad-input case: {sorted(missing)}"
    print(f"bad-input corpus: {len(CASES)} cases; by kind: {dict(Counter(bad.kind for bad in CASES))}; "
          f"by tool: {dict(Counter(bad.tool for bad in CASES))}; outcomes of this run: {dict(OUTCOMES)}")


def test_outputs_of_an_earlier_version_are_replaced(base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Today's results and a `dvc pull` of them stay replaceable: folders are recognised by the
    completion records every version wrote, and report's tables/ and figures/ and results/plots,
    which had none before index.json, by their layout. Rerunning every stage replaces them and
    writes the same bytes where the stage is deterministic."""
    from typer.testing import CliRunner

    from idiombench.cli import app

    project = tmp_path / "project"
    shutil.copytree(base, project)
    for record in project.rglob("idiombench-output.json"):  # as the version before these records left them
        record.unlink()
    for path in (project / "results/metrics").rglob("*.json"):
        body = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(json.dumps({k: v for k, v in body.items() if k != "idiombench_output"}), encoding="utf-8")
    for index in ("reports/tables/index.json", "reports/figures/index.json", "results/plots/index.json"):
        (project / index).unlink()  # as an earlier version left them
    monkeypatch.chdir(project)
    monkeypatch.setenv("TQDM_DISABLE", "1")
    for command in (["generate", "-m", "oracle"], ["score", "orderprobe", "-m", "oracle"],
                    ["aggregate", "orderprobe", "-m", "oracle"], ["report"], ["plot-data"]):
        result = CliRunner().invoke(app, command)
        assert result.exit_code == 0, (command, result.output)
    for index in ("reports/tables/index.json", "reports/figures/index.json", "results/plots/index.json"):
        assert (project / index).is_file()
    changed = [path for path in ("results/generations", "results/scores", "results/metrics", "reports/tables", "results/plots")
            if snapshot(project / path) != snapshot(base / path)]
    assert not changed, f"rerunning changed {changed}"


# ---- the harness of the generated classes ------------------------------------------------------

def in_process(argv: list[str], project: Path) -> None:
    """A command of the tasks project's preparation, in process; it must succeed."""
    from typer.testing import CliRunner

    from idiombench.cli import app

    with contextlib.chdir(project):
        done = CliRunner().invoke(app, argv)
    assert done.exit_code == 0, f"{argv}: {done.output}"


def keep_first(path: Path, per_task: int) -> set[tuple[str, str]]:
    """Keep the first `per_task` prompts of each task of a prompts table; their (task, item id)."""
    table = pq.read_table(path).sort_by("prompt_id")
    seen: Counter[str] = Counter()
    keep = []
    for task in table["task"].to_pylist():
        seen[task] += 1
        keep.append(seen[task] <= per_task)
    table = table.filter(pa.array(keep))
    pq.write_table(table, path)
    return set(zip(table["task"].to_pylist(), table["item_id"].to_pylist()))


@pytest.fixture(scope="module")
def tasks_project(tmp_path_factory: pytest.TempPathFactory, built) -> Path:
    """Every benchmark's real items (built from the mirror), rendered with the project's params,
    PER_TASK prompts kept per task and setting and only their items, generated by the oracle, scored
    and aggregated. lexical.yaml: the same params without neural scorers (the huge-output cases)."""
    from idiombench.benchmarks.registry import NAMES

    project = tmp_path_factory.mktemp("tasks") / "project"
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    params["benchmarks"]["semanticqa"]["render"]["sample"]["items_per_task"] = 3
    params["models"] = {"oracle": {"backend": "oracle"}}
    project.mkdir(parents=True)
    (project / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")
    for role in params["scoring"]["roles"].values():
        role["model"] = None
    (project / "lexical.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")
    os.environ.setdefault("TQDM_DISABLE", "1")
    for name in NAMES:
        processed = built(name)
        (project / "data/raw").mkdir(parents=True, exist_ok=True)
        (project / "data/raw" / name).symlink_to(processed.parent.parent / "raw" / name)
        shutil.copytree(processed, project / "data/processed" / name)
        in_process(["render", name], project)
        kept: set[tuple[str, str]] = set()
        for prompts in sorted((project / "results/prompts" / name).glob("*.parquet")):
            kept |= keep_first(prompts, PER_TASK)
        for items in sorted((project / "data/processed" / name).glob("*.parquet")):
            table = pq.read_table(items)
            rendered = [(items.stem, i) in kept for i in table["item_id"].to_pylist()]
            # tasks no setting renders (G-IdiomAlign's pairs) keep a few rows: the stages read them
            keep = rendered if any(rendered) else [n < PER_TASK for n in range(table.num_rows)]
            pq.write_table(table.filter(pa.array(keep)), items)
    in_process(["generate", "-m", "oracle"], project)
    for name in NAMES:
        in_process(["score", name, "-m", "oracle"], project)
        in_process(["aggregate", name, "-m", "oracle"], project)
    return project


def snapshot_outputs(project: Path) -> dict[str, str]:
    """snapshot() without the acquired releases (symlinks to the shared build)."""
    return {path: digest for path, digest in snapshot(project).items() if not path.startswith("data/raw/")}


@pytest.mark.mirror
@pytest.mark.parametrize("case", GENERATED, ids=[c.id for c in GENERATED])
def test_generated_class(case: Generated, tasks_project: Path, tmp_path: Path,
                         monkeypatch: pytest.MonkeyPatch) -> None:
    from idiombench.core import foreign

    project = tmp_path / "project"
    shutil.copytree(tasks_project, project, symlinks=True)
    env = {**tool_env(), "TQDM_DISABLE": "1", "IDIOMBENCH_DVC_SYNC": "0"}
    env.pop("IDIOMBENCH_MIRROR", None)
    for name, value in case.limits.items():
        monkeypatch.setattr(foreign, name, value)
    argv = case.setup(project)
    before = snapshot_outputs(project)
    started = time.process_time()
    result = invoke(case, argv, project, env, monkeypatch)  # type: ignore[arg-type]  # a Case's tool/process
    GENERATED_CPU[case.stage] += time.process_time() - started
    after = snapshot_outputs(project)
    changed = sorted(path for path in set(before) | set(after)
                     if before.get(path) != after.get(path) and not path.startswith(case.writes))
    detail = (f"idiombench {' '.join(argv)} -> {result.code}\nstdout: {result.stdout[-2000:]}\n"
              f"stderr: {result.stderr[-2000:]}\nchanged: {changed[:6]}")
    OUTCOMES["generated: traceback" if result.crashed else "generated: ran"] += 1
    assert not result.crashed, detail
    assert CANARY not in result.stdout + result.stderr, f"the secret was printed\n{detail}"
    assert not changed, detail
    if case.check is None:
        assert outcome(case, result, before, after) == "clear error", detail  # type: ignore[arg-type]
        assert result.code == 2, detail
        message = "\n".join(line for line in result.stderr.splitlines() if line.startswith("error: "))
        for expected in case.errors:
            assert expected in message, f"{expected!r} not in the message\n{detail}"
    else:
        assert result.code == 0, detail
        assert not [line for line in result.stderr.splitlines() if line.startswith("error: ")], detail
        case.check(result, project)


GENERATED_CPU: Counter[str] = Counter()


@pytest.mark.mirror
def test_units_cover_every_task_and_setting(tasks_project: Path) -> None:
    """UNITS, the tasks the classes are generated for, name every task and every setting the
    project renders (add a new task or setting to UNITS), and nothing it does not render."""
    rendered: set[tuple[str, str, str]] = set()
    for prompts in (tasks_project / "results/prompts").glob("*/*.parquet"):
        table = pq.read_table(prompts, columns=["task"])
        rendered |= {(prompts.parent.name, task, prompts.stem) for task in set(table["task"].to_pylist())}
    units = {(u.benchmark, u.task, u.setting) for u in UNITS}
    assert units <= rendered, sorted(units - rendered)
    assert {(b, t) for b, t, _ in rendered} == {(b, t) for b, t, _ in units}, "a task without its classes"
    assert {(b, s) for b, _, s in rendered} == {(b, s) for b, _, s in units}, "a setting without its classes"


def test_generated_corpus_size() -> None:
    """How many cases the classes generate, by stage and by class (run with -s); every command
    that reads params has its secret-bearing cases, and the CPU time per stage when they ran."""
    from idiombench.cli import app

    reads_params = {command.name or command.callback.__name__.replace("_", "-") for command in app.registered_commands
                    if "params" in inspect.signature(command.callback).parameters}
    assert reads_params - {"merge-params"} <= set(PARAMS_COMMANDS), sorted(reads_params - set(PARAMS_COMMANDS))
    ids = [case.id for case in GENERATED]
    assert len(ids) == len(set(ids)), "two generated cases with one id"
    klasses = Counter(re.sub(r" \(.*", "", case.klass) for case in GENERATED)
    print(f"generated corpus: {len(GENERATED)} cases over {len(UNITS)} tasks x settings; "
          f"by stage: {dict(Counter(c.stage for c in GENERATED))}; by class: {dict(klasses)}; "
          f"CPU seconds by stage (this run): { {k: round(v, 1) for k, v in GENERATED_CPU.items()} }")
    assert len(GENERATED) >= 400
