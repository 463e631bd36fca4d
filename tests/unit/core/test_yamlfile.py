"""Every YAML file the project reads goes through core/yamlfile.py, which refuses a file past its
limits (bytes, nodes with aliases expanded, nesting depth) in one line naming it, fast and in
bounded memory (issue 37, part 5)."""

from __future__ import annotations

import ast
import time
import tracemalloc
from pathlib import Path

import pytest
from typer.testing import CliRunner

from idiombench.cli import app
from idiombench.core.yamlfile import USER_FILE, YamlError, YamlLimits, load_yaml_file, load_yaml_text

ROOT = Path(__file__).resolve().parents[3]


def billion_laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def refused(path: Path) -> tuple[str, float, int]:
    """(the error's text, seconds, peak bytes allocated) of reading `path`, which must be refused."""
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(YamlError) as error:
            load_yaml_file(path)
        seconds = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return str(error.value), seconds, peak


def test_a_billion_laughs_is_refused_in_milliseconds(tmp_path: Path) -> None:
    path = tmp_path / "laughs.yaml"
    path.write_text(billion_laughs(), encoding="utf-8")
    message, seconds, peak = refused(path)
    assert message.startswith(f"{path}: refused: more than 200,000 nodes with its aliases expanded"), message
    assert "docs/troubleshooting.md#a-yaml-file-is-refused" in message and "\n" not in message
    assert seconds < 2 and peak < 20 << 20, (seconds, peak)


def test_a_100_mb_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    with path.open("wb") as handle:
        handle.truncate(100 << 20)
    message, seconds, peak = refused(path)
    assert message.startswith(f"{path}: refused: 104,857,600 bytes long (the limit for this YAML file is 1,048,576"), (
        message
    )
    assert seconds < 1 and peak < 5 << 20, (seconds, peak)


@pytest.mark.parametrize(
    "text",
    [
        "a: " + "[" * 10_000 + "]" * 10_000 + "\n",  # flow sequences
        "a: " + "{b: " * 10_000 + "c" + "}" * 10_000 + "\n",  # flow mappings
        "".join(" " * i + f"k{i}:\n" for i in range(1_000)),  # block mappings, 500 KB
    ],
    ids=["flow sequences", "flow mappings", "block mappings"],
)
def test_deep_nesting_is_refused_without_recursion(tmp_path: Path, text: str) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text(text, encoding="utf-8")
    message, seconds, _ = refused(path)
    assert message.startswith(f"{path}: refused: collections nested more than 64 deep at line"), message
    assert seconds < 2, seconds


def test_an_alias_counts_its_anchors_depth_and_size() -> None:
    nested = "a: &a " + "[" * 40 + "]" * 40 + "\nb: [[[[[[[[[[[[[[[[[[[[[[[[[[[[*a]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n"
    with pytest.raises(YamlError, match=r"an alias \(\*a\) nests collections more than 64 deep"):
        load_yaml_text(nested, "nested.yaml")
    small = YamlLimits(bytes=1 << 20, nodes=25, depth=64)
    text = "a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9]\nb: [*a, *a]\n"  # 1 + 10 + 1 + 1 + 2 * 10 = 33 nodes
    with pytest.raises(YamlError, match="more than 25 nodes"):
        load_yaml_text(text, "x.yaml", small)
    assert load_yaml_text(text, "x.yaml") == {"a": list(range(1, 10)), "b": [list(range(1, 10))] * 2}


def test_ordinary_files_load_as_before() -> None:
    import yaml

    for path in [ROOT / "params.yaml", ROOT / "overlays" / "paper.yaml", ROOT / "dvc.yaml"]:
        assert load_yaml_file(path, expected="x") == yaml.safe_load(path.read_text(encoding="utf-8")), path
    assert load_yaml_text("a: &x {b: 1}\nc: *x\nd: 2024-01-02\n", "t.yaml")["c"] == {"b": 1}
    deepest = "a: " + "[" * (USER_FILE.depth - 1) + "]" * (USER_FILE.depth - 1) + "\n"
    assert load_yaml_text(deepest, "t.yaml") is not None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("profile: [unclosed\n", "line 2, column 1: expected ',' or ']', but got '<stream end>'"),
        ("a:\n\t- x\n", "found character '\\t' that cannot start any token"),
        ("a: *nowhere\n", "found undefined alias 'nowhere' at line 1"),
        ("a: 1\n---\nb: 2\n", "line 2, column 1: but found another document"),
    ],
)
def test_invalid_yaml_is_one_line_in_pyyamls_words(text: str, expected: str) -> None:
    with pytest.raises(YamlError) as error:
        load_yaml_text(text, "bad.yaml")
    assert str(error.value).startswith("bad.yaml: not valid YAML: ") and expected in str(error.value), error.value
    assert "\n" not in str(error.value)


def test_the_cli_refuses_in_one_line_with_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("laughs.yaml").write_text(billion_laughs(), encoding="utf-8")
    result = CliRunner().invoke(app, ["check-params", "--params", "laughs.yaml"])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: laughs.yaml: refused: "), result.output


# Readers of YAML: only core/yamlfile.py calls PyYAML's (or ruamel's) loaders.
LOADERS = {"safe_load", "load", "full_load", "unsafe_load", "load_all", "safe_load_all", "compose", "parse"}


def direct_yaml_reads(source: str) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in LOADERS:
            owner = node.func.value
            if isinstance(owner, ast.Name) and owner.id in {"yaml", "YAML", "ruamel"}:
                found.append((node.lineno, f"{owner.id}.{node.func.attr}"))
        if isinstance(node, ast.ImportFrom) and node.module in {"yaml", "ruamel.yaml"}:
            names = {alias.name for alias in node.names} & (LOADERS | {"YAML"})
            if names and node.module == "yaml":
                found.append((node.lineno, f"from yaml import {', '.join(sorted(names))}"))
    return sorted(found)


def sources() -> list[tuple[str, str]]:
    """Every source the project runs: src/ and bench/ (Python), the Snakefile and workflow rules."""
    files = [*sorted((ROOT / "src").rglob("*.py")), *sorted((ROOT / "bench").glob("*.py")), ROOT / "Snakefile"]
    files += sorted((ROOT / "workflow").rglob("*.smk"))
    return [(path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")) for path in files]


def test_the_scan_finds_each_kind_of_direct_read() -> None:
    source = "import yaml\nyaml.safe_load(t)\nyaml.load(t, Loader=L)\nyaml.compose(t)\nfrom yaml import safe_load\n"
    assert [name for _, name in direct_yaml_reads(source)] == [
        "yaml.safe_load",
        "yaml.load",
        "yaml.compose",
        "from yaml import safe_load",
    ]


def test_every_yaml_read_goes_through_the_one_loader() -> None:
    """src/, bench/, the Snakefile and the rules. Snakemake reads no params of ours itself: the
    Snakefile has no `configfile:` (its params come from `--config params=<file>`, read here)."""
    offenders = []
    for relative, text in sources():
        if relative == "src/idiombench/core/yamlfile.py":
            continue
        if relative.endswith(".py"):
            offenders += [f"{relative}:{line}: {name}" for line, name in direct_yaml_reads(text)]
            continue
        for number, line in enumerate(text.splitlines(), 1):  # Snakemake's syntax: a text search
            code = line.split("#", 1)[0]
            if "yaml." in code and any(f".{loader}(" in code for loader in LOADERS) or code.startswith("configfile"):
                offenders.append(f"{relative}:{number}: {line.strip()}")
    assert not offenders, "read YAML with idiombench.core.yamlfile.load_yaml_file:\n" + "\n".join(offenders)


def test_the_refusal_names_a_section_that_exists() -> None:
    from idiombench.core.yamlfile import DOCS

    page, anchor = DOCS.split("#")
    headings = [line.lstrip("#").strip() for line in (ROOT / page).read_text(encoding="utf-8").splitlines()]
    assert anchor in {heading.lower().replace(" ", "-") for heading in headings if heading}, DOCS
