"""The code records (pipeline/records.py): what a benchmark's stages depend on in both graphs.
`package` covers every file of the benchmark's code, `data` the code acquire, build and render
reach; comments, blank lines and docstrings are in neither; no record holds a machine path."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from idiombench.pipeline.records import records_for

INIT = '''"""A benchmark package (a test fixture)."""

from . import build_helpers as _build
from . import score_helpers as _score
from .config import Config

TEMPLATE = "Which idiom? {text}"


class Bench:
    name = "fixture"
    config_model = Config
    headline_metrics = ("accuracy",)

    def file_specs(self, config):
        return []

    def build(self, raw_dir, config):
        return _build.items(raw_dir)

    def render(self, tasks, config, raw_dir):
        return [TEMPLATE.format(text=item) for item in tasks]

    def score(self, ctx):
        return _score.correct(ctx)

    def aggregate(self, ctx):
        return {"accuracy": _score.mean(ctx)}


BENCHMARK = Bench()
'''
BUILD = """def items(raw_dir):
    # every line is an item
    return [line for line in open(raw_dir)]
"""
SCORE = """def correct(ctx):
    return [a == b for a, b in ctx]


def mean(ctx):
    return sum(ctx) / len(ctx)
"""
CONFIG = """class Config:
    strip = True
"""


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A benchmark package `fixturebench` on sys.path: __init__ (the class), build_helpers,
    score_helpers, config and files.json."""
    root = tmp_path / "site" / "fixturebench"
    root.mkdir(parents=True)
    for name, text in {
        "__init__.py": INIT,
        "build_helpers.py": BUILD,
        "score_helpers.py": SCORE,
        "config.py": CONFIG,
        "files.json": '{"files": []}\n',
    }.items():
        (root / name).write_text(text, encoding="utf-8")
    monkeypatch.syspath_prepend(str(root.parent))
    yield root
    for module in [m for m in sys.modules if m.split(".")[0] == "fixturebench"]:
        del sys.modules[module]


def digests() -> tuple[str, str]:
    """(data, package) sha256 of the fixture package."""
    found = records_for("fixturebench", "fixturebench", "Bench", {"benchmark": "fixture"})
    return found["data"]["sha256"], found["package"]["sha256"]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_the_data_record_holds_the_code_the_data_stages_reach(package: Path) -> None:
    data = records_for("fixturebench", "fixturebench", "Bench", {"benchmark": "fixture"})["data"]
    assert data["units"] == [
        "__init__.py:<module>",
        "__init__.py:Bench",
        "__init__.py:Bench.<attributes>",
        "__init__.py:Bench.build",
        "__init__.py:Bench.file_specs",
        "__init__.py:Bench.render",
        "build_helpers.py:<module>",
        "build_helpers.py:items",
        "config.py:<module>",
        "config.py:Config",
    ]
    assert list(data["files"]) == ["files.json"]


def test_comments_blank_lines_and_docstrings_change_no_record(package: Path) -> None:
    before = digests()
    edit(package / "build_helpers.py", "# every line is an item", "# every line, stripped or not, is an item\n\n")
    edit(package / "__init__.py", '"""A benchmark package (a test fixture)."""', '"""Another docstring."""')
    edit(package / "score_helpers.py", "def mean(ctx):\n", "def mean(ctx):  # the mean\n    '''A docstring.'''\n")
    assert digests() == before


def test_scoring_code_changes_the_package_record_only(package: Path) -> None:
    data, whole = digests()
    edit(package / "score_helpers.py", "sum(ctx) / len(ctx)", "sum(ctx) / max(len(ctx), 1)")
    assert digests()[0] == data and digests()[1] != whole
    data, whole = digests()
    edit(package / "__init__.py", 'headline_metrics = ("accuracy",)', 'headline_metrics = ("accuracy", "f1")')
    edit(package / "__init__.py", "return _score.correct(ctx)", "return list(_score.correct(ctx))")
    assert digests()[0] == data and digests()[1] != whole


@pytest.mark.parametrize(
    ("file", "old", "new"),
    [
        ("build_helpers.py", "for line in open(raw_dir)", "for line in open(raw_dir) if line.strip()"),
        ("__init__.py", 'TEMPLATE = "Which idiom? {text}"', 'TEMPLATE = "Which idiom is it? {text}"'),
        ("config.py", "strip = True", "strip = False"),
        ("files.json", '"files": []', '"files": [{"file": "a.csv"}]'),
        ("__init__.py", 'name = "fixture"', 'name = "fixture"\n    rotates_options = True'),
    ],
    ids=["a build helper", "a constant render uses", "the config model", "files.json", "a class attribute"],
)
def test_data_code_changes_both_records(package: Path, file: str, old: str, new: str) -> None:
    data, whole = digests()
    edit(package / file, old, new)
    assert digests()[0] != data and digests()[1] != whole


def test_code_the_analysis_cannot_follow_makes_the_data_record_the_whole_package(package: Path) -> None:
    edit(package / "build_helpers.py", "def items(raw_dir):", "import importlib\n\n\ndef items(raw_dir):")
    edit(
        package / "build_helpers.py", "return [", "importlib.import_module('fixturebench.score_helpers')\n    return ["
    )
    found = records_for("fixturebench", "fixturebench", "Bench", {"benchmark": "fixture"})
    assert found["data"]["sha256"] == found["package"]["sha256"]
    assert "uses importlib.import_module" in found["data"]["covers"]


def test_no_record_names_a_machine_path(package: Path) -> None:
    found = records_for("fixturebench", "fixturebench", "Bench", {"benchmark": "fixture"})
    text = json.dumps(found)
    assert str(package.parent) not in text and "/" + package.parts[1] not in text


def test_the_built_in_benchmarks_data_records_leave_out_their_scoring_code() -> None:
    from idiombench.pipeline.records import code_records

    for name in ("orderprobe", "g-idiomalign", "semanticqa", "chengyu-bench"):
        units = code_records(name)["data"]["units"]
        files = {unit.split(":")[0] for unit in units}
        assert {"__init__.py", "build.py", "render.py", "config.py"} <= files, (name, files)
        assert not files & {"score.py", "aggregate.py", "report.py", "uncertainty.py", "view.py"}, (name, files)


def test_a_submodule_reached_through_its_package_counts_whole(package: Path) -> None:
    (package / "text").mkdir()
    (package / "text" / "__init__.py").write_text("", encoding="utf-8")
    (package / "text" / "clean.py").write_text("def clean(line):\n    return line.strip()\n", encoding="utf-8")
    edit(package / "build_helpers.py", "def items(raw_dir):", "import fixturebench.text.clean\n\n\ndef items(raw_dir):")
    edit(package / "build_helpers.py", "return [line", "return [fixturebench.text.clean.clean(line)")
    data, _ = digests()
    edit(package / "text" / "clean.py", "line.strip()", "line.strip(' ')")
    assert digests()[0] != data


def test_the_cache_gives_the_analysis_records_and_follows_every_byte(package: Path, tmp_path: Path) -> None:
    from idiombench.pipeline import records

    cache = tmp_path / "cache"
    args = ("fixturebench", "fixturebench", "Bench", {"benchmark": "fixture"})
    first = records.cached_records(*args, cache)
    assert first == records.records_for(*args) and len(list(cache.iterdir())) == 1
    # a second call reads the entry: the analysis does not run
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(records, "records_for", lambda *_: pytest.fail("the analysis ran again"))
        assert records.cached_records(*args, cache) == first
    # any byte of the code (a comment too) is a new entry, whose records are the analysis' own
    for old, new in (("# every line is an item", "# each line is an item"), ("open(raw_dir)", "open(raw_dir, 'r')")):
        edit(package / "build_helpers.py", old, new)
        assert records.cached_records(*args, cache) == records.records_for(*args)
    assert len(list(cache.iterdir())) == 3
    # an entry that is not what its name says, or not JSON, is computed again and replaced
    (entry,) = [p for p in cache.iterdir() if p.name == f"{records.records_key(*args)}.json"]
    for bad in ('{"key": "another", "records": {}}', "{not json"):
        entry.write_text(bad, encoding="utf-8")
        assert records.cached_records(*args, cache) == records.records_for(*args)
        assert json.loads(entry.read_text(encoding="utf-8"))["key"] == records.records_key(*args)
    # a cache that cannot be written to only costs the analysis
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, not a folder", encoding="utf-8")
    assert records.cached_records(*args, blocked / "cache") == records.records_for(*args)
