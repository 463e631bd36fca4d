"""Shared fixtures: the benchmark mirror, and benchmarks acquired and built once per session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import PROJECT_FILES, in_mirror, mirror_dirs, run, tool_env

ROOT = Path(__file__).resolve().parents[1]

# Every mirror directory, searched in order (acquire, tool_env): IDIOMBENCH_MIRROR. MIRROR is the
# one holding the benchmark releases (tests read its MANIFEST.json files and published predictions).
MIRRORS = mirror_dirs()
_RELEASES = in_mirror("orderprobe/MANIFEST.json")
MIRROR = _RELEASES.parent.parent if _RELEASES else None
NO_MIRROR = ("no benchmark mirror: set IDIOMBENCH_MIRROR to directories laid out <benchmark>/<path> holding the "
             f"benchmark releases (now {os.environ.get('IDIOMBENCH_MIRROR', 'unset')!r}; .ci/run sets it)")

requires_mirror = pytest.mark.skipif(MIRROR is None, reason=NO_MIRROR)


@pytest.fixture(scope="session")
def mirror() -> Path:
    if MIRROR is None:
        pytest.skip(NO_MIRROR)
    return MIRROR


@pytest.fixture(scope="session")
def mirrors(mirror: Path) -> list[Path]:
    """Every mirror directory (the releases, and the authors' code where present)."""
    return MIRRORS


@pytest.fixture(scope="session")
def default_params():
    from idiombench.config import load_params

    return load_params(ROOT / "params.yaml")


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory, mirrors: list[Path], default_params):
    """build(name) -> processed dir: each benchmark acquired from the mirror and built once."""
    from idiombench.benchmarks.registry import get_benchmark
    from idiombench.benchmarks.base import write_build
    from idiombench.data.acquire import acquire

    root = tmp_path_factory.mktemp("built")
    done: dict[str, Path] = {}

    def build(name: str) -> Path:
        if name not in done:
            bench = get_benchmark(name)
            config = default_params.benchmark(name)
            raw = root / "raw" / name
            acquire(name, bench.file_specs(config), raw, mirrors, download=False)
            out = root / "processed" / name
            write_build(bench.build(raw, config), out)
            done[name] = out
        return done[name]

    return build


def _new_project(dest: Path) -> Path:
    """A fresh git + DVC project at dest holding a copy of this project's workflow files."""
    import shutil

    dest.mkdir()
    for entry in PROJECT_FILES:
        source = ROOT / entry
        if source.is_dir():
            shutil.copytree(source, dest / entry, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        elif source.exists():
            shutil.copy2(source, dest / entry)
    env = tool_env()
    run(["git", "init", "-q"], dest, env)
    run(["git", "config", "user.email", "test@example.com"], dest, env)
    run(["git", "config", "user.name", "test"], dest, env)
    run(["dvc", "init", "-q"], dest, env)
    run(["dvc", "config", "core.analytics", "false"], dest, env)
    run(["git", "add", "-A"], dest, env)
    run(["git", "commit", "-qm", "project copy"], dest, env)
    return dest


@pytest.fixture
def make_project(tmp_path: Path):
    """make_project() -> a fresh git + DVC project holding a copy of this project's workflow files."""

    def make(name: str = "project") -> Path:
        return _new_project(tmp_path / name)

    return make


@pytest.fixture(scope="session")
def _rendered_template(tmp_path_factory: pytest.TempPathFactory, mirrors: list[Path]) -> tuple[Path, str]:
    """One project on the default params after `dvc repro render`, and that command's output:
    the data and prompt stages take about 40 s, so the tests that start from them share one run."""
    project = _new_project(tmp_path_factory.mktemp("rendered") / "project")
    return project, run(["dvc", "repro", "render"], project, tool_env(mirrors)).stdout


@pytest.fixture
def rendered_project(_rendered_template: tuple[Path, str], tmp_path: Path) -> tuple[Path, str]:
    """(a copy of the default project after `dvc repro render`, that command's output). The copy
    (git and DVC cache included, mtimes kept) is the test's own to change."""
    import shutil

    template, output = _rendered_template
    dest = tmp_path / "project"
    shutil.copytree(template, dest, symlinks=True)
    return dest, output


@pytest.fixture(scope="session")
def tiny_chat_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny randomly initialised Llama chat model + BPE tokenizer with a chat template (tests/support/tiny_model.py)."""
    pytest.importorskip("transformers", reason="transformers is not installed")
    from tiny_model import build_tiny_chat_model

    return build_tiny_chat_model(tmp_path_factory.mktemp("models") / "tiny-llama")


@pytest.fixture(scope="session")
def wordnet_root() -> Path:
    """The project's WordNet 3.0 for METEOR (installed like `make setup` does when missing)."""
    from idiombench.scoring import wordnet

    if not wordnet.available():
        try:
            wordnet.install()
        except wordnet.WordNetInstallError as exc:
            pytest.skip(f"WordNet is not installed and cannot be installed here: {exc}")
    return wordnet.data_dir()
