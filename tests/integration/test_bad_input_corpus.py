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
from helpers import run, tool_env
from idiombench.benchmarks.registry import NAMES
from idiombench.core.items import ITEM_SCHEMA, write_items
from idiombench.generation.table import write_generations
from idiombench.templating.prompts import write_prompts
from orderprobe_fixtures import items_for

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


def case(
    name: str,
    *expect: str,
    env: dict[str, str] | None = None,
    code: int | None = None,
    needs_raw: bool = False,
    tool: str = "idiombench",
    process: bool = False,
    ours: bool = True,
):
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
    return model(
        "rp",
        {
            "backend": "replay",
            "sources": [{"benchmark": "orderprobe", "setting": "zero_shot", "format": "semanticqa", **source}],
        },
    )


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


# ---- issue 37: YAML within limits (core/yamlfile.py): refused in one line, fast, bounded memory ----


def billion_laughs(path: Path) -> None:
    """Nine levels of ten aliases each: 10^9 strings once expanded, 400 bytes on disk."""
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 10)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@case("params: a billion laughs (aliases)", "laughs.yaml", "refused", "aliases expanded", process=True)
def _(p: Path) -> list[str]:
    billion_laughs(p / "laughs.yaml")
    return ["check-params", "-p", "laughs.yaml"]


@case("params: a 100 MB file", "huge.yaml", "refused", "104,857,600 bytes long")
def _(p: Path) -> list[str]:
    with (p / "huge.yaml").open("wb") as handle:
        handle.truncate(100 << 20)  # sparse: never read
    return ["check-params", "-p", "huge.yaml"]


@case("params: nested 10,000 deep", "deep.yaml", "refused", "nested more than 64 deep")
def _(p: Path) -> list[str]:
    (p / "deep.yaml").write_text("profile: " + "[" * 10_000 + "]" * 10_000 + "\n", encoding="utf-8")
    return ["check-params", "-p", "deep.yaml"]


@case("snakemake --config params=<a billion laughs>", "laughs.yaml", "refused", tool="snakemake")
def _(p: Path) -> list[str]:
    billion_laughs(p / "laughs.yaml")
    return ["-n", "--cores", "1", "--config", "params=laughs.yaml"]


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
    table = table.set_column(
        table.schema.get_field_index("task"), "task", pa.array(["reorder"] * len(table), pa.string())
    )
    pq.write_table(table, p / "preds.parquet")
    return [*EVALUATE, "preds.parquet"]


@case("predictions for a wrong benchmark", "data/processed/semanticqa", "no built items")
def _(p: Path) -> list[str]:
    shutil.copy(p / GENERATIONS, p / "preds.parquet")
    return [
        "evaluate-predictions",
        "--benchmark",
        "semanticqa",
        "--task",
        "idiom_detection",
        "--setting",
        "0-shot",
        "preds.parquet",
    ]


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


# process: the value is hidden while the CLI's modules load
# (core.environment.malformed_source_date_epoch_hidden), in a fresh interpreter only
@case(
    "SOURCE_DATE_EPOCH=abc report", "SOURCE_DATE_EPOCH", "whole number", env={"SOURCE_DATE_EPOCH": "abc"}, process=True
)
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
    edit_params(
        p,
        model(
            "api",
            {
                "backend": "openai",
                "model": "m",
                "base_url": "http://127.0.0.1:9/v1",
                "api_key_env": None,
                "max_retries": 0,
                "timeout_s": 5,
                "batch_size": 64,
            },
        ),
    )
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
    return [
        "evaluate-predictions",
        "--benchmark",
        "orderprobe",
        "--task",
        "nope",
        "--setting",
        "zero_shot",
        "preds.parquet",
    ]


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
key_case("q'x", "with a quote", 'models: the key "q\'x"', NAME_RULE)
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


@case(
    "SemanticQA's sequential setting prefix 'a b'",
    "benchmarks.semanticqa.score.sequential.setting_prefix: 'a b'",
    NAME_RULE,
)
def _(p: Path) -> list[str]:
    edit_params(
        p, lambda params: params["benchmarks"]["semanticqa"].update(score={"sequential": {"setting_prefix": "a b"}})
    )
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


@case(
    "dvc-yaml --out a user's YAML file", "mine.yaml exists and is not a dvc.yaml that `idiombench dvc-yaml` generated"
)
def _(p: Path) -> list[str]:
    (p / "mine.yaml").write_text("stages: {}\n", encoding="utf-8")
    return ["dvc-yaml", "--out", "mine.yaml"]


# ---- issue 23: internal errors that are bad input ---------------------------------------------
KIND = "internal errors"


@case(
    "attention on a benchmark without attention",
    "benchmark orderprobe has no attention diagnostics",
    "g-idiomalign",
    process=True,
)
def _(p: Path) -> list[str]:
    return ["attention", "orderprobe", "-m", "oracle"]


@case("track an unknown model (writes no record)", "unknown model 'typo'", process=True)
def _(p: Path) -> list[str]:
    return ["track", "orderprobe", "-m", "typo"]


@case("noise for an unknown model", "unknown model 'typo'")
def _(p: Path) -> list[str]:
    return ["noise", "-m", "typo"]


@case("aggregate an unknown model", "unknown model 'typo'")
def _(p: Path) -> list[str]:
    return ["aggregate", "orderprobe", "-m", "typo"]


@case("attention an unknown model", "unknown model 'typo'")
def _(p: Path) -> list[str]:
    return ["attention", "g-idiomalign", "-m", "typo"]


@case(
    "track a model whose last generate failed, beside older metrics",
    "generate-oracle.failed.json",
    "rerun it before tracking",
)
def _(p: Path) -> list[str]:
    (p / "results/logs").mkdir(parents=True, exist_ok=True)
    (p / "results/logs/generate-oracle.failed.json").write_text(
        '{"reason": "3 of 48 requests failed"}\n', encoding="utf-8"
    )
    return ["track", "orderprobe", "-m", "oracle"]


@case("score: the prompts OrderProbe's score reads are truncated", PROMPTS, "not a readable Parquet file")
def _(p: Path) -> list[str]:
    truncate(p / PROMPTS)
    return ["score", "orderprobe", "-m", "oracle"]


@case("report: a scores table truncated", f"{SCORES}/zero_shot.parquet", "not a readable Parquet file")
def _(p: Path) -> list[str]:
    truncate(p / SCORES / "zero_shot.parquet")
    return ["report"]


@case(
    "attention: the scores it reads are truncated",
    "results/scores/hf1/g-idiomalign/no_gloss.parquet",
    "not a readable Parquet file",
)
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


@case(
    "evaluate-predictions --format idiombench: a table of another setting",
    "preds.parquet",
    "no row of orderprobe/cot (the table holds orderprobe/zero_shot)",
)
def _(p: Path) -> list[str]:
    shutil.copy(p / GENERATIONS, p / "preds.parquet")
    return [
        "evaluate-predictions",
        "--benchmark",
        "orderprobe",
        "--task",
        "restore",
        "--setting",
        "cot",
        "--format",
        "idiombench",
        "preds.parquet",
    ]


@case(
    "evaluate-predictions --format idiombench: a table of another benchmark",
    "preds.parquet",
    "no row of chengyu-bench/connotation (the table holds orderprobe/zero_shot)",
)
def _(p: Path) -> list[str]:
    shutil.copy(p / GENERATIONS, p / "preds.parquet")
    write_items(p / "data/processed/chengyu-bench/connotation.parquet", [])
    return [
        "evaluate-predictions",
        "--benchmark",
        "chengyu-bench",
        "--task",
        "connotation",
        "--setting",
        "connotation",
        "preds.parquet",
    ]


@case("code-record of a benchmark not registered", "unknown benchmark 'nope'")
def _(p: Path) -> list[str]:
    return ["code-record", "nope"]


@case("dvc-yaml --check on a file that differs (exit 2: 1 is for bugs)", "dvc.yaml is not what the registry generates")
def _(p: Path) -> list[str]:
    (p / "dvc.yaml").write_text("# GENERATED by `idiombench dvc-yaml` long ago\nstages: {}\n", encoding="utf-8")
    return ["dvc-yaml", "--check"]


@case(
    "score: items that OrderProbe's build did not write (meta lacks its keys)",
    ITEMS,
    "item zh-CN/0000/ABCD",
    "meta lacks expression_id",
)
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


@case("track-comparison: a metrics file truncated (no comparison record)", METRICS, "not valid JSON")
def _(p: Path) -> list[str]:
    truncate(p / METRICS)
    return ["track-comparison", "orderprobe"]


@case(
    "track-comparison: a scores table truncated (no comparison record)",
    f"{SCORES}/zero_shot.parquet",
    "not a readable Parquet file",
)
def _(p: Path) -> list[str]:
    truncate(p / SCORES / "zero_shot.parquet")
    return ["track-comparison", "orderprobe"]


@case("unknown benchmark (track-comparison)", "unknown benchmark 'nope'")
def _(p: Path) -> list[str]:
    return ["track-comparison", "nope"]


# ---- issue 23: more bad input over the other commands ------------------------------------------
KIND = "more commands"


@case("merge-params of an overlay with a bad model key (nothing written)", "bad.yaml", "models: the key 'a b'")
def _(p: Path) -> list[str]:
    (p / "bad.yaml").write_text("overlay_of: params.yaml\nmodels:\n  a b: {backend: oracle}\n", encoding="utf-8")
    return ["merge-params", "bad.yaml", "--out", "merged.yaml"]


@case("new-benchmark from a JSONL with a truncated line (nothing written)", "quiz.jsonl, row 2", "invalid JSON")
def _(p: Path) -> list[str]:
    good = {"idiom": "break the ice", "options": ["a", "b"], "answer": "A"}
    (p / "quiz.jsonl").write_text(json.dumps(good) + '\n{"idiom": "spill\n', encoding="utf-8")
    return ["new-benchmark", "quiz", "quiz.jsonl"]


@case("new-benchmark whose gold is none of the candidates (nothing written)", "chid.jsonl, row 2", "gold '锦上添花'")
def _(p: Path) -> list[str]:
    records = [
        {"content": f"#idiom#{n}", "candidates": ["画蛇添足", "对牛弹琴"], "answer": gold}
        for n, gold in enumerate(["画蛇添足", "锦上添花"])
    ]
    (p / "chid.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return ["new-benchmark", "chid", "chid.jsonl"]


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
    (p / "rates.json").write_text(
        '{"format": 1, "cpu": {"stages": {"score": {"orderprobe": {"rows_per_s": -3}}}}, "gpu": null}', encoding="utf-8"
    )
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


for _key, _label in (
    ("x; touch pwned #", "with ';'"),
    ("a b", "with a space"),
    ("a/b", "with '/'"),
    ("..", "'..'"),
    ("-rf", "with a leading '-'"),
):
    snakemake_case(_key, _label)
for _key, _label in (
    ("x; touch pwned #", "with ';'"),
    ("a b", "with a space"),
    ("a/b", "with '/'"),
    ("-rf", "with a leading '-'"),
    ("q'; touch pwned; '", "breaking out of quotes"),
):
    dvc_case(_key, _label)


@case(
    "dvc: model key '..' (DVC's own check refuses the overlapping output)",
    "overlap",
    "generate@..",
    tool="dvc",
    ours=False,
)
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
# The cases above are examples; these are classes. The corpus is generated from the registries:
# for every benchmark (registry.NAMES) and each of its tasks and settings as the project renders
# them (discover_units: every task at least once, every setting at least once), every stage that
# reads input someone else may have made (evaluate-predictions in the project's own format and in
# each format a benchmark registers, generate with a replay model, score) meets: an item without
# a record, a record without an item, records of one item that disagree, a record that fits
# several items or none, wrong types, empty, huge, undecodable, strange characters. Every command
# that takes --out (read from the CLI) meets look-alike ownership records; every command that
# reads params meets secret-bearing values, and foreign files quote a credential in a bad row.
# A new benchmark, task, setting, format or command gets its cases without an edit here.
#
# Each case asserts its outcome: one clear error (exit 2, one `error:` line naming the file,
# row or key) or the right result (exit 0 and the counts that prove it); in both cases no
# traceback, no file changed beyond the stage's own outputs (none for an error: nothing partial),
# and no credential in the output or in any file written. They run in process (the CLI's own
# boundary, cli.user_errors) on one copy of a small project per benchmark (every benchmark's real
# items, a few per task, and the oracle's outputs), put back between cases; two run the real
# `idiombench` entry point as a subprocess.


@dataclass(frozen=True)
class Unit:
    benchmark: str
    task: str
    setting: str

    def __str__(self) -> str:
        return f"{self.benchmark}/{self.task}/{self.setting}"


def discover_units(project: Path, benchmark: str) -> list[Unit]:
    """The benchmark's (task, setting) pairs as the project renders them, chosen so that every
    task and every setting appears at least once (a task decides the parser and the scorers; a
    setting the prompt and, for some, the parse), tasks spread over the settings."""
    pairs: set[tuple[str, str]] = set()
    for prompts in sorted((project / "results/prompts" / benchmark).glob("*.parquet")):
        pairs |= {(task, prompts.stem) for task in set(pq.read_table(prompts, columns=["task"])["task"].to_pylist())}
    used: Counter[str] = Counter()
    units = []
    for task in sorted({task for task, _ in pairs}):
        setting = min((s for t, s in pairs if t == task), key=lambda s: (used[s], s))
        used[setting] += 1
        units.append(Unit(benchmark, task, setting))
    for setting in sorted({s for _, s in pairs} - set(used)):
        units.append(Unit(benchmark, min(t for t, s in pairs if s == setting), setting))
    return units


PER_TASK = 8  # prompts kept per (benchmark, setting, task) in the tasks project
CANARY = "S3CRET-c4n4ry"  # a secret no output may show
KEY_CANARY = "sk-" + CANARY + "0123456789abcdef"  # the value of a key variable (OPENAI_API_KEY) in every case's env
SECRETS = (CANARY, KEY_CANARY)
SECRET_ENV = {"OPENAI_API_KEY": KEY_CANARY}
LEXICAL = ("-p", "lexical.yaml")  # the project's params without neural scorers (see tasks_project)
HUGE = 1_000_000  # characters of the huge output (principle 6: 1 MB lines)
# The huge output: the answer, then a 1 MB run without spaces (1 MB through every parser, the
# storage and the character-level scorers). Not 200,000 words: METEOR and ROUGE-L compare every
# word with every reference, linear but minutes against NCI's up to 167 references
# (docs/troubleshooting.md); the parsers' growth on long texts of every shape is
# tests/unit/test_parsing_linear.py's.


def huge(text: str) -> str:
    return text + " " + "x" * HUGE


STRANGE = "\x00\x01\x1b[31m\x7f\x85\u202e\u2066\u200f\u200b\ufeff"  # NUL, C0/C1 controls, direction marks, zero-width
# A bad row of a foreign file that quotes a credential URL and the key variable's value: the
# message naming the row must not repeat them.
SECRET_ROW = (
    '{"prediction": "see https://al:' + CANARY + "@gw.example/v1?api_key=" + CANARY + " and " + KEY_CANARY + '", '
)


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
    env: dict[str, str] = field(default_factory=dict)  # Case's field (invoke reads it)

    @property
    def id(self) -> str:
        return f"{self.stage} | {self.where} | {self.klass}"

    @property
    def family(self) -> str:
        """The class without its variant: 'wrong types (text of int64)' -> 'wrong types'."""
        return re.sub(r" \(.*", "", self.klass)


_COLLECTING: list[Generated] = []  # where `generated` registers (corpus_for, COMMAND_CASES)


def generated(stage: str, where: object, klass: str, **options: Any) -> Callable[[Callable[[Path], list[str]]], None]:
    def register(setup: Callable[[Path], list[str]]) -> None:
        _COLLECTING.append(Generated(stage, str(where), klass, setup, **options))

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


def evaluate(unit: Unit, path: str, *extra: str, params: tuple[str, ...] = LEXICAL) -> list[str]:
    """evaluate-predictions of the unit, --json; lexical scorers unless `params` says otherwise
    (the neural scorers meet the strange characters, once per task)."""
    return [
        "evaluate-predictions",
        "--benchmark",
        unit.benchmark,
        "--task",
        unit.task,
        "--setting",
        unit.setting,
        "--json",
        *params,
        *extra,
        path,
    ]


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
    first = next(
        r
        for r in rows
        if r["item_id"] in {i.item_id for i in unit_items(p, unit)}
        and r["item_id"] in {g["item_id"] for g in unit_rows(table_rows(oracle_table(p, unit))[0], unit)}
    )
    write_rows(items, [*rows, {**first, "item_id": first["item_id"] + "-twin"}], schema)
    prompts = p / "results/prompts" / unit.benchmark / f"{unit.setting}.parquet"
    rows, schema = table_rows(prompts)
    prompt = next(r for r in rows if r["item_id"] == first["item_id"] and r["task"] == unit.task)
    write_rows(
        prompts,
        [*rows, {**prompt, "item_id": first["item_id"] + "-twin", "prompt_id": prompt["prompt_id"] + "-twin"}],
        schema,
    )
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


def table_classes(unit: Unit, entry_point: bool = False) -> None:
    stage = "evaluate-predictions (idiombench table)"

    @generated(
        stage,
        unit,
        "item without a record",
        process=entry_point,
        check=counts_are(items_without_record=1, records_unmatched=0),
    )
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

    @generated(
        stage,
        unit,
        "records of one item that disagree",
        check=counts_are(records_conflicting=2, items_with_conflicting_records=1, items_without_record=0),
    )
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
        return evaluate(unit, "preds.parquet")  # lexical: neural embedders on 1 MB, see docs/troubleshooting.md

    @generated(stage, unit, "control and direction characters", check=counts_are(items_without_record=0))
    def _(p: Path) -> list[str]:
        rows, schema = table_rows(oracle_table(p, unit))
        write_rows(p / "preds.parquet", [{**r, "text": STRANGE + r["text"] + STRANGE} for r in rows], schema)
        return evaluate(unit, "preds.parquet", params=())


def table_file_classes(benchmark: str, unit: Unit) -> None:
    """What is wrong with the file, not with a record: the same for every task of the file."""
    stage = "evaluate-predictions (idiombench table)"

    @generated(stage, benchmark, "wrong types (text of int64)", errors=("preds.parquet", "text is int64"))
    def _(p: Path) -> list[str]:
        rows, schema = table_rows(oracle_table(p, unit))
        schema = pa.schema([f if f.name != "text" else pa.field("text", pa.int64()) for f in schema])
        write_rows(p / "preds.parquet", [{**r, "text": n} for n, r in enumerate(rows)], schema)
        return evaluate(unit, "preds.parquet")

    @generated(
        stage,
        benchmark,
        "empty (no rows)",
        errors=("preds.parquet", f"no prediction matches an item of {unit.benchmark}/{unit.task}"),
    )
    def _(p: Path) -> list[str]:
        write_rows(p / "preds.parquet", [], table_rows(oracle_table(p, unit))[1])
        return evaluate(unit, "preds.parquet")

    @generated(stage, benchmark, "undecodable (random bytes)", errors=("preds.parquet", "not a readable Parquet file"))
    def _(p: Path) -> list[str]:
        random_bytes(p / "preds.parquet")
        return evaluate(unit, "preds.parquet")

    @generated(
        stage,
        benchmark,
        "larger than the size limit",
        errors=("preds.parquet", "larger than the 1 KiB"),
        limits={"MAX_FILE_BYTES": 1024},
    )
    def _(p: Path) -> list[str]:
        shutil.copy(oracle_table(p, unit), p / "preds.parquet")
        return evaluate(unit, "preds.parquet")


# ---- evaluate-predictions on a published-format file (every format a benchmark registers) ------


def published_classes(unit: Unit, fmt: str, entry_point: bool = False) -> None:
    stage = f"evaluate-predictions ({fmt} format)"
    fmt_args = ("--format", fmt)

    @generated(
        stage,
        unit,
        "item without a record",
        process=entry_point,
        check=counts_are(items_without_record=1, records_unmatched=0),
    )
    def _(p: Path) -> list[str]:
        write_jsonl(p / "preds.jsonl", released_records(p, unit)[1:])
        return evaluate(unit, "preds.jsonl", *fmt_args)

    @generated(stage, unit, "record without an item", check=counts_are(items_without_record=0, records_unmatched=1))
    def _(p: Path) -> list[str]:
        records = released_records(p, unit)
        write_jsonl(p / "preds.jsonl", [*records, {**records[0], "item_of_no_task": "x"}])
        return evaluate(unit, "preds.jsonl", *fmt_args)

    @generated(
        stage, unit, "a record that fits several items", check=counts_are(records_ambiguous=1, items_without_record=2)
    )  # the item and its twin
    def _(p: Path) -> list[str]:
        records = released_records(p, unit)
        add_twin(p, unit)
        write_jsonl(p / "preds.jsonl", records)
        return evaluate(unit, "preds.jsonl", *fmt_args)

    @generated(
        stage,
        unit,
        "a record without an identifying field",
        check=counts_are(records_without_identifying_field=1, items_without_record=0),
    )
    def _(p: Path) -> list[str]:
        write_jsonl(p / "preds.jsonl", [{"prediction": "A"}, *released_records(p, unit)])
        return evaluate(unit, "preds.jsonl", *fmt_args)

    @generated(
        stage,
        unit,
        "only a record without an identifying field (the issue's example)",
        errors=("preds.jsonl", "no prediction matches an item", "1 without an identifying field"),
    )
    def _(p: Path) -> list[str]:
        write_jsonl(p / "preds.jsonl", [{"prediction": "A"}])
        return evaluate(unit, "preds.jsonl", *fmt_args)

    @generated(stage, unit, "wrong types (predictions that are not text)", check=counts_are(items_without_record=0))
    def _(p: Path) -> list[str]:
        records = released_records(p, unit)
        odd = [None, 3.5, ["A"], {"answer": "A"}, True]
        write_jsonl(
            p / "preds.jsonl", [{**r, "prediction": odd[n % len(odd)]} if n < 3 else r for n, r in enumerate(records)]
        )
        return evaluate(unit, "preds.jsonl", *fmt_args)

    @generated(stage, unit, "huge output (1 MB)", check=counts_are(items_without_record=0))
    def _(p: Path) -> list[str]:
        records = released_records(p, unit)
        records[0]["prediction"] = huge(records[0]["prediction"])
        write_jsonl(p / "preds.jsonl", records)
        return evaluate(unit, "preds.jsonl", *fmt_args)

    @generated(
        stage, unit, "lone surrogates, control and direction characters", check=counts_are(items_without_record=0)
    )
    def _(p: Path) -> list[str]:
        records = [
            {**r, "prediction": "\ud800" + STRANGE + r["prediction"] + "\udfff"} for r in released_records(p, unit)
        ]
        (p / "preds.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in records), encoding="utf-8"
        )  # \\ud800 escapes
        return evaluate(unit, "preds.jsonl", *fmt_args)


def published_file_classes(unit: Unit, fmt: str) -> None:
    stage = f"evaluate-predictions ({fmt} format)"
    fmt_args = ("--format", fmt)

    @generated(
        stage,
        unit.benchmark,
        "secret-bearing value (a bad row quoting a credential URL and a key)",
        errors=("preds.jsonl, row 2", "JSON"),
    )
    def _(p: Path) -> list[str]:
        records = released_records(p, unit)
        (p / "preds.jsonl").write_text(json.dumps(records[0]) + "\n" + SECRET_ROW + "\n", encoding="utf-8")
        return evaluate(unit, "preds.jsonl", *fmt_args)

    @generated(
        stage, unit.benchmark, "wrong types (a record that is a list)", errors=("preds.jsonl, row 2", "no `prediction`")
    )
    def _(p: Path) -> list[str]:
        records = released_records(p, unit)
        (p / "preds.jsonl").write_text(json.dumps(records[0]) + "\n[1, 2]\n", encoding="utf-8")
        return evaluate(unit, "preds.jsonl", *fmt_args)

    @generated(stage, unit.benchmark, "wrong types (NaN, a 5,000-digit number)", errors=("preds.jsonl, row 1", "JSON"))
    def _(p: Path) -> list[str]:
        (p / "preds.jsonl").write_text('{"idiom": NaN, "prediction": ' + "1" * 5000 + "}\n", encoding="utf-8")
        return evaluate(unit, "preds.jsonl", *fmt_args)

    @generated(stage, unit.benchmark, "empty", errors=("preds.jsonl", "no prediction matches an item"))
    def _(p: Path) -> list[str]:
        (p / "preds.jsonl").write_text("\n\n", encoding="utf-8")
        return evaluate(unit, "preds.jsonl", *fmt_args)

    @generated(
        stage, unit.benchmark, "undecodable (invalid UTF-8)", errors=("preds.jsonl, row 2", "invalid UTF-8 byte 0xff")
    )
    def _(p: Path) -> list[str]:
        records = released_records(p, unit)
        (p / "preds.jsonl").write_bytes(json.dumps(records[0]).encode() + b'\n{"prediction": "\xff"}\n')
        return evaluate(unit, "preds.jsonl", *fmt_args)

    @generated(
        stage,
        unit.benchmark,
        "a line longer than the limit",
        errors=("preds.jsonl, row 1", "a line longer than 64 KiB"),
        limits={"MAX_LINE_BYTES": 64 * 1024},
    )
    def _(p: Path) -> list[str]:
        record = released_records(p, unit)[0]
        write_jsonl(p / "preds.jsonl", [{**record, "prediction": "x" * 100_000}])
        return evaluate(unit, "preds.jsonl", *fmt_args)

    @generated(
        stage,
        unit.benchmark,
        "a line longer than the limit (16 MiB, the limit as shipped)",
        errors=("preds.jsonl, row 2", "a line longer than 16 MiB"),
    )
    def _(p: Path) -> list[str]:
        records = released_records(p, unit)
        write_jsonl(p / "preds.jsonl", [records[0], {**records[1], "prediction": "x" * (16 * 1024**2)}])
        return evaluate(unit, "preds.jsonl", *fmt_args)


# ---- generate with a replay model (every benchmark task) ---------------------------------------


def replay_classes(unit: Unit, entry_point: bool = False) -> None:
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

    @generated(
        stage,
        unit,
        "item without a record",
        process=entry_point,
        writes=REPLAY_WRITES,
        check=lambda r, p: without(first_ids["id"])(r, p),
    )
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

    @generated(
        stage, unit, "control and direction characters", writes=REPLAY_WRITES, check=stored(lambda t: STRANGE + t)
    )
    def _(p: Path) -> list[str]:
        rows, schema = table_rows(oracle_table(p, unit))
        return source(p, [{**r, "text": STRANGE + r["text"]} for r in rows], schema)

    @generated(stage, unit, "huge output (1 MB)", writes=REPLAY_WRITES, check=stored(huge))
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


def replay_published_classes(unit: Unit, fmt: str) -> None:
    stage = f"generate (replay, {fmt} format)"

    @generated(
        stage,
        unit,
        "item without a record",
        process=False,
        writes=REPLAY_WRITES,
        check=lambda _, p: (
            None
            if sum(r["error"] is not None for r in replayed(p, unit).values()) == 1
            else pytest.fail(f"{replayed(p, unit)}")
        ),
    )
    def _(p: Path) -> list[str]:
        write_jsonl(p / "source.jsonl", released_records(p, unit)[1:])
        replay_model(p, unit, fmt, "source.jsonl")
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
        replay_model(p, unit, fmt, "source.jsonl")
        return ["generate", "-m", "rp"]

    def surrogates(_: Result, p: Path) -> None:
        texts = {r["text"] for r in replayed(p, unit).values()}
        assert all(t.startswith("\ufffd" + STRANGE) and t.endswith("\ufffd") for t in texts), texts

    @generated(stage, unit, "lone surrogates, control and direction characters", writes=REPLAY_WRITES, check=surrogates)
    def _(p: Path) -> list[str]:
        records = [
            {**r, "prediction": "\ud800" + STRANGE + r["prediction"] + "\udfff"} for r in released_records(p, unit)
        ]
        (p / "source.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        replay_model(p, unit, fmt, "source.jsonl")
        return ["generate", "-m", "rp"]

    @generated(stage, unit, "undecodable (invalid UTF-8)", errors=("source.jsonl, row 1", "invalid UTF-8 byte 0xff"))
    def _(p: Path) -> list[str]:
        (p / "source.jsonl").write_bytes(b'{"prediction": "\xff"}\n')
        replay_model(p, unit, fmt, "source.jsonl")
        return ["generate", "-m", "rp"]

    @generated(
        stage,
        unit,
        "secret-bearing value (a bad row quoting a credential URL and a key)",
        errors=("source.jsonl, row 1", "JSON"),
    )
    def _(p: Path) -> list[str]:
        (p / "source.jsonl").write_text(SECRET_ROW + "\n", encoding="utf-8")
        replay_model(p, unit, fmt, "source.jsonl")
        return ["generate", "-m", "rp"]

    @generated(
        stage,
        unit,
        "only records without an identifying field",
        errors=("source.jsonl", "no line of this replay source matches", "1 without an identifying field"),
    )
    def _(p: Path) -> list[str]:
        write_jsonl(p / "source.jsonl", [{"prediction": "A"}])
        replay_model(p, unit, fmt, "source.jsonl")
        return ["generate", "-m", "rp"]


# ---- score: the generations table it reads (every benchmark task) ------------------------------


def score_classes(unit: Unit, entry_point: bool = False) -> None:
    stage = "score"
    writes = (f"results/scores/oracle/{unit.benchmark}",)
    argv = ["score", unit.benchmark, "-m", "oracle", "-p", "lexical.yaml"]
    dropped: dict[str, str] = {}

    def lacks_dropped(_: Result, p: Path) -> None:
        ids = {r["item_id"] for r in score_rows(p, unit)}
        assert dropped["id"] not in ids and ids, ids

    @generated(stage, unit, "item without a record", process=entry_point, writes=writes, check=lacks_dropped)
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
        write_rows(oracle_table(p, unit), [{**r, "text": huge(r["text"])} if r is first else r for r in rows], schema)
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

    @generated(
        "score", benchmark, "undecodable (random bytes)", errors=(f"{unit.setting}.parquet", "not a readable Parquet")
    )
    def _(p: Path) -> list[str]:
        random_bytes(oracle_table(p, unit))
        return ["score", unit.benchmark, "-m", "oracle"]


def corpus_for(benchmark: str, units: list[Unit]) -> list[Generated]:
    """Every class for every unit of the benchmark, and the classes of a whole file once per
    file format; the published formats are those the benchmark registers. The first unit of the
    first benchmark and of the first published format run the real entry point."""
    from idiombench.benchmarks.registry import NAMES, get_benchmark, prediction_formats

    formats = list(get_benchmark(benchmark).prediction_formats)
    first_format = next(iter(prediction_formats()), None)
    _COLLECTING.clear()
    for n, unit in enumerate(units):
        table_classes(unit)
        replay_classes(unit, entry_point=n == 0 and benchmark == NAMES[0])
        score_classes(unit)
        for fmt in formats:
            published_classes(unit, fmt, entry_point=n == 0 and fmt == first_format)
            replay_published_classes(unit, fmt)
    table_file_classes(benchmark, units[0])
    replay_file_classes(benchmark, units[0])
    score_file_classes(benchmark, units[0])
    for fmt in formats:
        published_file_classes(units[0], fmt)
    # CPU: a 1 MB output goes through every task's parser and scorers in evaluate-predictions (the
    # project's table); the stages that read, store or score it with that same code whatever the
    # task (published files, replay, score) meet it on the benchmark's first unit only.
    cases = [
        case
        for case in _COLLECTING
        if case.family != "huge output"
        or case.where == str(units[0])
        or case.stage == "evaluate-predictions (idiombench table)"
    ]
    _COLLECTING.clear()
    return cases


# ---- every command that takes --out: look-alike ownership records -----------------------------
# (principle 1: ownership proven by content.) For every command the CLI gives an --out, in a
# user's folder (or file) holding a file of the user's: a file named like the stage's record
# (legacy name, idiombench-output.json) but not ours: empty, claiming the stage but not covering
# the user's file, listing the user's file with another content. Refused with exit 2 and one
# line naming the folder; nothing changed (the snapshot).


def cli_commands() -> dict[str, list[str]]:
    """Every command of the CLI (a group's as 'group command') and the names of its parameters."""
    from idiombench.cli import app

    def named(commands: list[Any], prefix: str = "") -> dict[str, list[str]]:
        return {
            prefix + (command.name or command.callback.__name__.replace("_", "-")): list(
                inspect.signature(command.callback).parameters
            )
            for command in commands
        }

    found = named(app.registered_commands)
    for group in app.registered_groups:
        found |= named(group.typer_instance.registered_commands, f"{group.name} ")
    return found


def accepted_benchmarks(command: str) -> list[str]:
    """The benchmarks a command accepts (registry): construct and attention only those that have them."""
    from idiombench.benchmarks.registry import NAMES, attention_names, construction_names, get_benchmark

    labelled = [name for name in NAMES if get_benchmark(name).human_labels is not None]
    return {"construct": construction_names(), "attention": attention_names(), "labels pull": labelled}.get(
        command, list(NAMES)
    )


def command_argv(command: str, benchmark: str | None, *, model: str = "oracle", out: str | None = None) -> list[str]:
    """Arguments that take the command to its own checks (the rest are the defaults)."""
    names = cli_commands()[command]
    argv = command.split(" ")
    if command == "evaluate-predictions":
        return [*argv, "--benchmark", benchmark or "", "--task", "t", "--setting", "s", "preds.parquet"]
    if "benchmark" in names:
        argv.append(benchmark or "")
    if "overlay" in names:
        argv.append("over.yaml")
    if "model" in names:
        argv += ["-m", model]
    return [*argv, "--out", out] if out else argv


def folder_outputs() -> dict[str, Any]:
    """stage -> its folder Output (core.paths, stages.plots): the record names it recognises."""
    from idiombench.core import paths
    from idiombench.core.ownership import Output
    from idiombench.stages import plots

    return {
        value.stage: value
        for module in (paths, plots)
        for value in vars(module).values()
        if isinstance(value, Output) and value.legacy_record
    }


USER_FILE = "thesis.tex"
USER_TEXT = "\\section{mine}\n"


def folder_lookalikes(stage: str, kind: str, legacy_record: str | None) -> dict[str, Callable[[Path], None]]:
    """label -> writes the look-alike record into a folder (beside the user's file)."""
    from idiombench.core.ownership import FORMAT, RECORD, TOOL

    def record(body: Any) -> Callable[[Path], None]:
        return lambda folder: (folder / RECORD).write_text(json.dumps(body) + "\n", encoding="utf-8")

    claim = {"format": FORMAT, "tool": TOOL, "stage": stage, "kind": kind}
    found: dict[str, Callable[[Path], None]] = {
        f"{RECORD} holding {{}}": record({}),
        f"{RECORD} of this stage not listing the user's file": record({**claim, "files": {}}),
        f"{RECORD} listing the user's file with another content": record(
            {**claim, "files": {USER_FILE: {"sha256": "0" * 64, "size": len(USER_TEXT)}}}
        ),
    }
    if legacy_record:
        found[f"{legacy_record} holding {{}}"] = lambda folder: (folder / legacy_record).write_text(
            "{}\n", encoding="utf-8"
        )
    return found


def lookalike_folder(
    command: str, benchmark: str | None, label: str, write: Callable[[Path], None], folder: str, out: str
) -> None:
    @generated(
        f"{command} --out",
        benchmark or "-",
        f"look-alike ownership record ({label}{', ' + folder if folder != 'victim' else ''})",
        errors=(folder,),
    )
    def _(p: Path) -> list[str]:
        (p / folder).mkdir(parents=True, exist_ok=True)
        (p / folder / USER_FILE).write_text(USER_TEXT, encoding="utf-8")
        write(p / folder)
        return command_argv(command, benchmark, out=out)


def lookalike_file(command: str, benchmark: str | None, label: str, name: str, content: str) -> None:
    @generated(f"{command} --out", benchmark or "-", f"look-alike ownership record ({label})", errors=(name,))
    def _(p: Path) -> list[str]:
        (p / name).write_text(content, encoding="utf-8")
        if command == "merge-params":
            (p / "over.yaml").write_text("overlay_of: params.yaml\nseed: 7\n", encoding="utf-8")
        return command_argv(command, benchmark, out=name)


def stamped_lookalike(stage: str, kind: str) -> str:
    """A user's JSON file carrying a record of `stage` that does not seal its content."""
    from idiombench.core.ownership import STAMP, TOOL

    return json.dumps({"notes": "mine", STAMP: {"tool": TOOL, "stage": stage, "kind": kind, "sha256": "0" * 64}}) + "\n"


FILE_LOOKALIKES: dict[str, dict[str, tuple[str, str]]] = {  # command -> label -> (file, content)
    "aggregate": {
        "a metrics file's record not sealing its content": ("mine.json", stamped_lookalike("aggregate", "metrics")),
        "a JSON object of the user's": ("mine.json", '{"notes": "mine"}\n'),
    },
    "track": {
        "a tracking record's record not sealing its content": (
            "mine.json",
            stamped_lookalike("track", "tracking record"),
        ),
        "a text file": ("notes.txt", "my notes\n"),
    },
    "track-comparison": {
        "a comparison record's record not sealing its content": (
            "mine.json",
            stamped_lookalike("track-comparison", "comparison record"),
        ),
        "a text file": ("notes.txt", "my notes\n"),
    },
    "report": {
        "a PDF authored by idiombench, not sealed": (
            "paper.pdf",
            "%PDF-1.4\n1 0 obj << /Author (idiombench) /Keywords (sha256=" + "0" * 64 + ") >> endobj\n%%EOF\n",
        )
    },
    "dvc-yaml": {
        "a YAML file of the user's": ("mine.yaml", "stages: {}\n"),
        "a user's YAML file under the generated header": (
            "mine.yaml",
            "# GENERATED by `idiombench dvc-yaml`\nstages: {mine: {cmd: make}}\n",
        ),
    },
    "labels pull": {
        "a text file of the user's": ("notes.txt", "my notes\n"),
        "a CSV file of the user's": ("labels.csv", "id,label\n1,mine\n"),
    },
    "merge-params": {
        "a YAML file of the user's that is not params": ("mine.yaml", "notes: mine\n"),
        "a user's YAML file under the generated header": (
            "mine.yaml",
            "# GENERATED by `idiombench merge-params over.yaml`\nnotes: mine\n",
        ),
    },
}


def lookalike_cases() -> None:
    """For every command with --out: its folder output (per accepted benchmark), report's
    tables/ and figures/ beside its PDF, or its output file."""
    outputs = folder_outputs()
    for command, names in cli_commands().items():
        if "out" not in names:
            continue
        assert command in outputs or command in FILE_LOOKALIKES, f"{command} takes --out: give it its look-alikes"
        for benchmark in accepted_benchmarks(command) if "benchmark" in names else [None]:
            if command in outputs:
                output = outputs[command]
                for label, write in folder_lookalikes(output.stage, output.kind, output.legacy_record).items():
                    lookalike_folder(command, benchmark, label, write, "victim", "victim")
            if command == "report":  # --out the PDF; tables/ and figures/ beside it are the folders
                from idiombench.core.paths import INDEX

                for sub in ("tables", "figures"):
                    for label, write in folder_lookalikes("report", f"report {sub}", INDEX).items():
                        lookalike_folder(command, benchmark, label, write, f"victim/{sub}", "victim/r.pdf")
            for label, (name, content) in FILE_LOOKALIKES.get(command, {}).items():
                lookalike_file(command, benchmark, label, name, content)


# ---- every command that reads params: a secret-bearing value ----------------------------------
# (principle 2: no secret in any output.) The schema refuses a credential in params with one line
# naming the key and never repeats it; the same whatever the backend tag says.

SECRET_VALUES: dict[str, dict[str, Any]] = {  # label -> a model entry
    "credentials in base_url": {"backend": "openai", "model": "m", "base_url": f"https://al:{CANARY}@gw.example/v1"},
    "api_key in base_url's query": {
        "backend": "openai",
        "model": "m",
        "base_url": f"https://gw.example/v1?api_key={CANARY}",
    },
    "token in base_url's query": {
        "backend": "openai",
        "model": "m",
        "base_url": f"https://gw.example/v1?token={CANARY}",
    },
    "credentials in base_url under a wrong backend tag 'OpenAI'": {
        "backend": "OpenAI",
        "model": "m",
        "base_url": f"https://al:{CANARY}@h/v1?api_key=sk-LEAK{CANARY}",
    },
    "a key-shaped model name": {"backend": "openai", "model": KEY_CANARY, "base_url": "https://gw.example/v1"},
}


def secret_case(command: str, label: str, entry: dict[str, Any]) -> None:
    @generated(command, "params", f"secret-bearing value ({label})", errors=("models.api",))
    def _(p: Path) -> list[str]:
        if command == "merge-params":  # the overlay names the model
            (p / "over.yaml").write_text(
                yaml.safe_dump({"overlay_of": "params.yaml", "models": {"api": entry}}), encoding="utf-8"
            )
        else:
            edit_params(p, model("api", entry))
        return command_argv(
            command,
            accepted_benchmarks(command)[0],
            model="api",
            out="merged.yaml" if command == "merge-params" else None,
        )


def secret_cases() -> None:
    for command, names in cli_commands().items():
        if "params" in names or "overlay" in names:
            for label, entry in SECRET_VALUES.items():
                secret_case(command, label, entry)


def command_corpus() -> list[Generated]:
    _COLLECTING.clear()
    lookalike_cases()
    secret_cases()
    cases = list(_COLLECTING)
    _COLLECTING.clear()
    return cases


COMMAND_CASES = command_corpus()

# ---- the harness ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small project, generated, scored, aggregated and reported once with the oracle, so every
    stage has inputs to read and outputs of its own to replace."""
    project = write_project(tmp_path_factory.mktemp("corpus") / "project", {"oracle": {"backend": "oracle"}})
    # one expression's 24 inputs as OrderProbe's build writes them (score reads their meta)
    items = [
        dataclasses.replace(item, meta={**item.meta, "copy": 0})
        for item in items_for("zh-CN", 0, "画蛇添足", ["比喻做了多余的事"], None)
    ]
    write_items(project / ITEMS, items)
    for setting, prompts in orderprobe_prompts(items).items():
        write_prompts(project / "results/prompts/orderprobe" / f"{setting}.parquet", prompts)
    os.environ.setdefault("TQDM_DISABLE", "1")
    for command in (
        ["generate", "-m", "oracle"],
        ["score", "orderprobe", "-m", "oracle"],
        ["aggregate", "orderprobe", "-m", "oracle"],
        ["report"],
        ["plot-data"],
    ):
        in_process(command, project)  # CPU: no interpreter start per command
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
    run(
        ["idiombench", "acquire", "orderprobe", "--out", str(raw), "-p", str(ROOT / "params.yaml")],
        ROOT,
        tool_env(mirrors),
    )
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
def test_bad_input_gives_one_line_and_no_output(
    bad: Case, base: Path, tmp_path: Path, request, monkeypatch: pytest.MonkeyPatch
) -> None:
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
    detail = (
        f"{bad.tool} {' '.join(argv)} -> {result.code}\nstdout: {result.stdout[-3000:]}\n"
        f"stderr: {result.stderr[-3000:]}\nchanged: {changed}"
    )
    assert found == "clear error", detail
    assert result.code == (bad.code if bad.code is not None else TOOL_CODES[bad.tool]), detail
    message = (
        "\n".join(line for line in result.stderr.splitlines() if line.startswith("error: "))
        if bad.ours
        else result.stdout + result.stderr
    )
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
    print(
        f"bad-input corpus: {len(CASES)} cases; by kind: {dict(Counter(bad.kind for bad in CASES))}; "
        f"by tool: {dict(Counter(bad.tool for bad in CASES))}; outcomes of this run: {dict(OUTCOMES)}"
    )


def test_outputs_of_an_earlier_version_are_replaced(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
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
        # the keys of that version: no ownership record, and no schema_version (schema 1)
        earlier = {k: v for k, v in body.items() if k not in ("idiombench_output", "schema_version")}
        path.write_text(json.dumps(earlier), encoding="utf-8")
    for index in ("reports/tables/index.json", "reports/figures/index.json", "results/plots/index.json"):
        (project / index).unlink()  # as an earlier version left them
    monkeypatch.chdir(project)
    monkeypatch.setenv("TQDM_DISABLE", "1")
    for command in (
        ["generate", "-m", "oracle"],
        ["score", "orderprobe", "-m", "oracle"],
        ["aggregate", "orderprobe", "-m", "oracle"],
        ["report"],
        ["plot-data"],
    ):
        result = CliRunner().invoke(app, command)
        assert result.exit_code == 0, (command, result.output)
    for index in ("reports/tables/index.json", "reports/figures/index.json", "results/plots/index.json"):
        assert (project / index).is_file()
    changed = [
        path
        for path in ("results/generations", "results/scores", "results/metrics", "reports/tables", "results/plots")
        if snapshot(project / path) != snapshot(base / path)
    ]
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
    return set(zip(table["task"].to_pylist(), table["item_id"].to_pylist(), strict=True))


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
    for name in NAMES:  # lexical: the neural scorers meet the cases' texts in evaluate-predictions
        in_process(["score", name, "-m", "oracle", *LEXICAL], project)
        in_process(["aggregate", name, "-m", "oracle", *LEXICAL], project)
    return project


Signature = tuple[int, int, int]  # (inode, size, mtime in ns): a file rewritten or replaced changes it


def signatures(project: Path) -> dict[str, Signature]:
    """Every file under the project (the acquired releases, symlinked folders, not entered)."""
    found: dict[str, Signature] = {}
    for folder, _, files in os.walk(project):
        for name in files:
            path = os.path.join(folder, name)
            stat = os.lstat(path)
            found[os.path.relpath(path, project)] = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
    return found


def put_back(project: Path, base: Path, reference: dict[str, Signature]) -> dict[str, Signature]:
    """The project as `base` again after a case (cheaper than a copy per case): files the case
    added removed, files it changed or removed copied back, folders it made removed."""
    now = signatures(project)
    for added in now.keys() - reference.keys():
        os.unlink(project / added)
    for path, signature in reference.items():
        if now.get(path) != signature:
            (project / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(base / path, project / path)
    for folder, _, _ in os.walk(project, topdown=False):
        if not (base / os.path.relpath(folder, project)).is_dir():
            os.rmdir(folder)
    return signatures(project)


GENERATED_CPU: Counter[str] = Counter()  # CPU seconds by stage, this run (the test process and its children)
GENERATED_RAN: Counter[str] = Counter()  # cases run by class, this run


def cpu_seconds() -> float:
    import resource

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def run_generated(case: Generated, project: Path, env: dict[str, str]) -> str | None:
    """Runs one case on the project; what is wrong with its outcome, or None."""
    from idiombench.core import foreign

    argv = case.setup(project)
    before = signatures(project)
    started = cpu_seconds()
    with pytest.MonkeyPatch.context() as patch:
        for name, value in case.limits.items():
            patch.setattr(foreign, name, value)
        result = invoke(case, argv, project, env, patch)  # type: ignore[arg-type]  # a Case's tool/process/env
    GENERATED_CPU[case.stage] += cpu_seconds() - started
    GENERATED_CPU[f"class: {case.family}"] += cpu_seconds() - started
    GENERATED_RAN[case.family] += 1
    after = signatures(project)
    touched = sorted(path for path in before.keys() | after.keys() if before.get(path) != after.get(path))
    changed = [path for path in touched if not path.startswith(NOT_OUTPUTS + case.writes)]
    detail = (
        f"{case.id}: idiombench {' '.join(argv)} -> {result.code}\nstdout: {result.stdout[-1500:]}\n"
        f"stderr: {result.stderr[-1500:]}\nchanged: {changed[:6]}"
    )
    try:
        assert not result.crashed, "an internal error"
        said = result.stdout + result.stderr
        assert not [secret for secret in SECRETS if secret in said], "a secret in the output"
        written = [
            path
            for path in touched
            if path in after and any(secret.encode() in (project / path).read_bytes() for secret in SECRETS)
        ]
        assert not written, f"a secret in a file written: {written}"
        if case.check is None:
            assert outcome(case, result, {}, {}) == "clear error", "not one `error:` line"  # type: ignore[arg-type]
            assert result.code == 2, f"exit {result.code}"
            assert not [path for path in touched if path.startswith(case.writes) or not path.startswith(NOT_OUTPUTS)], (
                "a partial output left"
            )
            message = "\n".join(line for line in result.stderr.splitlines() if line.startswith("error: "))
            missing = [expected for expected in case.errors if expected not in message]
            assert not missing, f"{missing} not in the message"
        else:
            assert not changed, "files changed beyond the stage's outputs"
            assert result.code == 0, f"exit {result.code}"
            assert not [line for line in result.stderr.splitlines() if line.startswith("error: ")], "an error line"
            case.check(result, project)
    except AssertionError as problem:
        return f"{problem}\n{detail}"
    return None


def run_corpus(cases: list[Generated], tasks_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every case on one copy of the tasks project, put back between cases; all failures at once."""
    project = tmp_path / "project"
    shutil.copytree(tasks_project, project, symlinks=True)
    reference = signatures(project)
    env = {**tool_env(), "TQDM_DISABLE": "1", "IDIOMBENCH_DVC_SYNC": "0", **SECRET_ENV}
    env.pop("IDIOMBENCH_MIRROR", None)
    failures = []
    for case in cases:
        problem = run_generated(case, project, env)
        if problem:
            failures.append(problem)
        reference = put_back(project, tasks_project, reference)
    print(f"ran {len(cases)} generated cases, {len(failures)} failed")
    assert not failures, f"{len(failures)} of {len(cases)} cases:\n\n" + "\n\n".join(failures)


@pytest.mark.mirror
@pytest.mark.parametrize("benchmark", NAMES)
def test_generated_classes(
    benchmark: str, tasks_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every class, for every task and setting of the benchmark (discover_units), through
    evaluate-predictions (each format), generate (replay) and score."""
    run_corpus(corpus_for(benchmark, discover_units(tasks_project, benchmark)), tasks_project, tmp_path, monkeypatch)


@pytest.mark.mirror
def test_generated_command_classes(tasks_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Look-alike ownership records for every command with --out, secret-bearing values for
    every command that reads params."""
    run_corpus(COMMAND_CASES, tasks_project, tmp_path, monkeypatch)


@pytest.mark.mirror
def test_generated_corpus_size(tasks_project: Path) -> None:
    """How many cases the classes generate, by stage and by class (run with -s), and the CPU time
    per stage of this run; every benchmark meets every class of every stage, every task and
    setting it renders has its unit, every command with --out or params its cases."""
    from idiombench.benchmarks.registry import get_benchmark

    by_benchmark = {name: corpus_for(name, discover_units(tasks_project, name)) for name in NAMES}
    cases = [case for found in by_benchmark.values() for case in found] + COMMAND_CASES
    ids = [case.id for case in cases]
    assert len(ids) == len(set(ids)), "two generated cases with one id"
    unit_families = {
        "item without a record",
        "record without an item",
        "records of one item that disagree",
        "wrong types",
        "empty",
        "huge output",
        "undecodable",
        "control and direction characters",
    }
    for name, found in by_benchmark.items():
        stages = {case.stage for case in found}
        assert {"evaluate-predictions (idiombench table)", "generate (replay, idiombench table)", "score"} <= stages, (
            name
        )
        for fmt in get_benchmark(name).prediction_formats:
            assert {f"evaluate-predictions ({fmt} format)", f"generate (replay, {fmt} format)"} <= stages, (name, fmt)
        missing = unit_families - {
            case.family for case in found if case.stage.startswith("evaluate-predictions (idiombench")
        }
        assert not missing, (name, missing)
        rendered = {(p.parent.name, p.stem) for p in (tasks_project / "results/prompts" / name).glob("*.parquet")}
        assert {(name, u.setting) for u in discover_units(tasks_project, name)} == rendered, name
    commands = cli_commands()
    assert {c for c, names in commands.items() if "params" in names or "overlay" in names} == {
        case.stage for case in COMMAND_CASES if case.family == "secret-bearing value"
    }
    assert {c for c, names in commands.items() if "out" in names} == {
        case.stage.removesuffix(" --out") for case in COMMAND_CASES if case.family == "look-alike ownership record"
    }
    units = {name: len(discover_units(tasks_project, name)) for name in NAMES}
    print(
        f"generated corpus: {len(cases)} cases ({len(cases) - len(COMMAND_CASES)} over the benchmarks' "
        f"{sum(units.values())} task x setting units {units}, {len(COMMAND_CASES)} over the commands); "
        f"by class: {dict(Counter(case.family for case in cases))}; by stage: {dict(Counter(c.stage for c in cases))}; "
        f"ran this run: {sum(GENERATED_RAN.values())}; CPU seconds by stage (this run): "
        f"{ {k: round(v, 1) for k, v in GENERATED_CPU.items()} }"
    )
    assert len(cases) >= 400
