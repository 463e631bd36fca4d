"""Every Parquet and JSON file a stage reads goes through the io layer (io.read_parquet,
io.read_parquet_schema, io.read_json) or the release readers (data/readers.py), which turn a
missing, truncated or malformed file into one line naming it (exit 2). A direct read elsewhere
would surface a truncated file as an internal error: this test fails on a new one."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "idiombench"
# The layer that converts read errors, and the readers of the upstream release files.
READERS = {"core/io.py", "data/readers.py"}
# Reads that are not of a stage's input, each with why it may read directly.
ALLOWED = {
    # the weight-hash memo is a cache: an unreadable one is ignored and recomputed
    ("generation/backends/hf.py", "json.loads"),
    # the code-records cache (results/code-cache/): an entry that cannot be read is recomputed
    ("pipeline/records.py", "json.loads"),
    # an output's ownership record: one that cannot be read is not ours (the output is refused in one line)
    ("core/ownership.py", "json.loads"),
}
PARQUET_CALLS = {"read_parquet", "read_table", "read_schema", "read_metadata", "ParquetFile", "ParquetDataset"}
PARQUET_MODULES = {"pd", "pandas", "pq", "parquet", "pyarrow.parquet", "ds", "dataset"}


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _reads_a_whole_file(argument: ast.AST) -> bool:
    """json.loads(<path>.read_text(...)) or json.loads(<path>.read_bytes())."""
    return (
        isinstance(argument, ast.Call)
        and isinstance(argument.func, ast.Attribute)
        and argument.func.attr in ("read_text", "read_bytes")
    )


def direct_reads(source: str) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        module, _, call = name.rpartition(".")
        if call in PARQUET_CALLS and module in PARQUET_MODULES:
            found.append((node.lineno, name))
        elif name == "json.load" or name == "pd.read_json":
            found.append((node.lineno, name))
        elif name == "json.loads" and node.args and _reads_a_whole_file(node.args[0]):
            found.append((node.lineno, name))
    return found


def test_the_scan_finds_each_kind_of_direct_read() -> None:
    source = (
        "import json, pandas as pd, pyarrow.parquet as pq\n"
        "pd.read_parquet(p)\npq.read_table(p)\npq.read_schema(p)\njson.load(f)\n"
        "json.loads(p.read_text(encoding='utf-8'))\njson.loads(line)\n"
    )
    assert [name for _, name in direct_reads(source)] == [
        "pd.read_parquet",
        "pq.read_table",
        "pq.read_schema",
        "json.load",
        "json.loads",
    ]


def test_stage_inputs_are_read_through_the_io_layer() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        relative = path.relative_to(SRC).as_posix()
        if relative in READERS:
            continue
        for line, name in direct_reads(path.read_text(encoding="utf-8")):
            if (relative, name) not in ALLOWED:
                offenders.append(f"src/idiombench/{relative}:{line}: {name}")
    assert not offenders, (
        "read these through io.read_parquet / io.read_parquet_schema / io.read_json "
        "(one-line errors naming the file):\n" + "\n".join(offenders)
    )
