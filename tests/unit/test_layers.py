"""The layers (docs/ARCHITECTURE.md, "Layers"): import-linter keeps the contracts written in
pyproject.toml, its exceptions are few, documented and each still needed, and the import
graph (grimp's, the one import-linter checks) has no cycle and no module outside a layer."""

from __future__ import annotations

import graphlib
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
PYPROJECT = ROOT / "pyproject.toml"
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
MAX_EXCEPTIONS = 3
LAYERS = "Layers: a module imports only from its own layer or below"
INDEPENDENT = "The benchmark packages never import each other"


def contracts() -> dict[str, dict]:
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["importlinter"]
    return {contract["id"]: contract for contract in config["contracts"]}


def exceptions() -> list[str]:
    """The upward imports the layers contract lets through (its ignore_imports)."""
    return list(contracts()["layers"].get("ignore_imports", []))


def lint(config: Path, src: Path = SRC) -> subprocess.CompletedProcess[str]:
    """lint-imports on `config` (a pyproject.toml), with the package found under `src`."""
    env = {**os.environ, "PYTHONPATH": str(src), "COLUMNS": "400"}  # one import per line
    return subprocess.run(
        [str(LINT_IMPORTS), str(config), "--no-cache"],
        cwd=config.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def with_exceptions(tmp_path: Path, ignored: list[str], name: str) -> Path:
    """pyproject.toml's contracts, with exactly `ignored` as the layers contract's exceptions,
    written as an .importlinter (INI) file: import-linter reads both."""
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["importlinter"]
    lines = ["[importlinter]", f"root_package = {config['root_package']}"]
    for contract in config["contracts"]:
        options = {**contract, "ignore_imports": ignored} if contract["id"] == "layers" else contract
        lines.append(f"[importlinter:contract:{contract['id']}]")
        for key, value in options.items():
            if key == "id" or value == []:
                continue
            lines.append(
                f"{key} =" + "".join(f"\n    {v}" for v in value) if isinstance(value, list) else f"{key} = {value}"
            )
    out = tmp_path / name / ".importlinter"
    out.parent.mkdir()
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def test_the_contracts_are_kept():
    result = lint(PYPROJECT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{LAYERS} KEPT" in result.stdout and f"{INDEPENDENT} KEPT" in result.stdout


def test_exceptions_are_few_documented_and_each_still_needed(tmp_path: Path):
    """At most three upward imports, each named with its reason in ARCHITECTURE.md; removing
    any of them from the contract breaks it (an exception no longer needed must go)."""
    listed = exceptions()
    assert len(listed) <= MAX_EXCEPTIONS, listed
    doc = ARCHITECTURE.read_text(encoding="utf-8")
    assert [line for line in listed if f"`{line}`" not in doc] == []
    for index, line in enumerate(listed):
        config = with_exceptions(tmp_path, listed[:index] + listed[index + 1 :], f"without-{index}")
        result = lint(config)
        assert result.returncode != 0 and line in result.stdout, result.stdout


def test_an_upward_import_or_one_benchmark_importing_another_breaks_a_contract(tmp_path: Path):
    """The check is live: on a copy of the package, a service importing a stage driver breaks
    the layers, which are kept again once that import is listed as an exception and break
    when the exception is removed; one benchmark importing another breaks their independence."""
    copy = tmp_path / "src"
    shutil.copytree(
        SRC / "idiombench",
        copy / "idiombench",
        ignore=shutil.ignore_patterns("__pycache__", "*.json", "*.jsonl", "*.txt", "*.yaml"),
    )
    upward = "idiombench.scoring.lexical -> idiombench.stages.inputs"
    with (copy / "idiombench" / "scoring" / "lexical.py").open("a", encoding="utf-8") as module:
        module.write("\nfrom ..stages.inputs import applies  # noqa: E402,F401  (upward: a service calling a driver)\n")
    broken = lint(PYPROJECT, copy)
    assert broken.returncode != 0 and f"{LAYERS} BROKEN" in broken.stdout and upward in broken.stdout, broken.stdout
    allowed = lint(with_exceptions(tmp_path, exceptions() + [upward], "with-upward"), copy)
    assert allowed.returncode == 0 and f"{LAYERS} KEPT" in allowed.stdout, allowed.stdout
    removed = lint(with_exceptions(tmp_path, exceptions(), "without-upward"), copy)
    assert removed.returncode != 0 and f"{LAYERS} BROKEN" in removed.stdout, removed.stdout

    with (copy / "idiombench" / "benchmarks" / "semanticqa" / "config.py").open("a", encoding="utf-8") as module:
        module.write("\nfrom ..orderprobe.config import OrderProbeConfig  # noqa: E402,F401\n")
    crossed = lint(PYPROJECT, copy)
    assert f"{INDEPENDENT} BROKEN" in crossed.stdout, crossed.stdout
    assert "idiombench.benchmarks.semanticqa.config -> idiombench.benchmarks.orderprobe.config" in crossed.stdout


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("idiombench")


def test_no_import_cycle(graph: grimp.ImportGraph):
    """Every import counts: top-level, inside a function, and under TYPE_CHECKING."""
    imports = {module: graph.find_modules_directly_imported_by(module) for module in graph.modules}
    try:
        graphlib.TopologicalSorter(imports).prepare()
    except graphlib.CycleError as cycle:
        pytest.fail(f"import cycle: {' -> '.join(cycle.args[1])}")


def test_every_module_is_in_a_layer(graph: grimp.ImportGraph):
    """A new module outside every layer would escape the contract: only the packages that
    hold modules of several layers (idiombench, idiombench.generation ...) are outside, and
    their __init__ imports nothing."""
    layered = [name.strip() for layer in contracts()["layers"]["layers"] for name in re.split(r"[|:]", layer)]
    outside = sorted(
        module
        for module in graph.modules
        if not any(module == name or module.startswith(name + ".") for name in layered)
        and (not graph.find_children(module) or graph.find_modules_directly_imported_by(module))
    )
    assert outside == []
