"""Shared fixtures: the benchmark mirror, and benchmarks acquired and built once per session."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Any

import pytest

from helpers import PROJECT_FILES, in_mirror, mirror_dirs, run, tool_env
from parallel import group_and_order

ROOT = Path(__file__).resolve().parents[1]

# Every mirror directory, searched in order (acquire, tool_env): IDIOMBENCH_MIRROR. MIRROR is the
# one holding the benchmark releases (tests read its MANIFEST.json files and published predictions).
MIRRORS = mirror_dirs()
_RELEASES = in_mirror("orderprobe/MANIFEST.json")
MIRROR = _RELEASES.parent.parent if _RELEASES else None
NO_MIRROR = (
    "no benchmark mirror: set IDIOMBENCH_MIRROR to directories laid out <benchmark>/<path> holding the "
    f"benchmark releases (now {os.environ.get('IDIOMBENCH_MIRROR', 'unset')!r}; "
    "`export IDIOMBENCH_MIRROR=<releases>:<authors' code>`, as .ci/run does)"
)

requires_mirror = pytest.mark.skipif(MIRROR is None, reason=NO_MIRROR)

# The tiny models' compute dtype in the tests that take `model_dtype`: float32 unless the switch
# says bfloat16 (`--model-dtype bfloat16` or IDIOMBENCH_TEST_DTYPE=bfloat16), on any CPU, emulated
# where the CPU lacks bf16 instructions. `make test` runs those tests once more in bfloat16, so
# a float32-only assumption fails on every machine, not only on one with AVX512-BF16.
MODEL_DTYPES = ("float32", "bfloat16")
DTYPE_ENV = "IDIOMBENCH_TEST_DTYPE"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--model-dtype",
        choices=MODEL_DTYPES,
        default=None,
        help=f"compute dtype of the tiny models in tests taking `model_dtype` (default: ${DTYPE_ENV}, "
        f"else float32); select those tests with -m model_dtype",
    )


def pytest_configure(config: pytest.Config) -> None:
    dtype = config.getoption("--model-dtype") or os.environ.get(DTYPE_ENV) or "float32"
    if dtype not in MODEL_DTYPES:
        raise pytest.UsageError(f"{DTYPE_ENV}={dtype!r}: expected one of {', '.join(MODEL_DTYPES)}")
    config.option.model_dtype = dtype
    config.addinivalue_line("markers", "model_dtype: builds a tiny model in the run's dtype (`model_dtype` fixture)")
    if "PYTEST_XDIST_WORKER" in os.environ:
        # the workers share the cores: an OpenMP thread (PyTorch's) that waits sleeps instead of
        # spinning on a core another worker needs (not measured alone; a known cost of
        # oversubscription). Thread counts, and so every code path that reads them, stay as they are.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the `xdist_group` marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test that takes `model_dtype` (directly or through a fixture) `model_dtype`;
    under xdist, group the tests into units of work, longest first (tests/support/parallel.py)."""
    group_and_order(config, items)
    for item in items:
        if "model_dtype" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.model_dtype)


def pytest_report_header(config: pytest.Config) -> str:
    return f"tiny models compute in {config.option.model_dtype} (--model-dtype / {DTYPE_ENV})"


@pytest.fixture(scope="session")
def model_dtype(pytestconfig: pytest.Config) -> str:
    """float32 or bfloat16: the dtype of the tiny models in this run (see MODEL_DTYPES)."""
    return pytestconfig.option.model_dtype


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> Any:
    """One line after pytest's short summary (this wrapper is outside the terminal reporter's),
    just above its final counts: the tests skipped, grouped by the command that enables them
    (every skip reason names one in backquotes)."""
    result = yield
    skipped = terminalreporter.stats.get("skipped", [])
    if not skipped:
        terminalreporter.write_line("idiombench: 0 skipped")
        return result
    groups: dict[str, list[str]] = {}
    for report in skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        enable = re.search(r"`([^`]+)`", reason)
        name = report.nodeid.split("::")[-1].split("[")[0]
        groups.setdefault(f"run `{enable.group(1)}`" if enable else reason.removeprefix("Skipped: "), []).append(name)
    parts = [f"{len(names)} ({', '.join(sorted(set(names)))}): {enable}" for enable, names in groups.items()]
    terminalreporter.write_line(f"idiombench: {len(skipped)} skipped: " + "; ".join(parts), yellow=True, bold=True)
    return result


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
def papers() -> Path:
    """The folder of the papers' texts, for the tests that hold the published values to them:
    IDIOMBENCH_PAPERS, else a `papers` folder beside a mirror directory (paper_tables.papers_dir).
    Never a path in the package: users do not have the texts."""
    from paper_tables import PAPERS_ENV, papers_dir

    found, how = papers_dir(MIRRORS)
    if found is None:
        pytest.skip(
            f"no papers' texts ({how}): `export {PAPERS_ENV}=<folder of the four papers' texts>`, as .ci/run does"
        )
    return found


@pytest.fixture(scope="session")
def default_params():
    from idiombench.pipeline.config import load_params

    return load_params(ROOT / "params.yaml")


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory, mirrors: list[Path], default_params):
    """build(name) -> processed dir: each benchmark acquired from the mirror and built once."""
    from idiombench.benchmarks.base import write_build
    from idiombench.benchmarks.registry import get_benchmark
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


@functools.cache
def _session_code_records() -> Path:
    """A code-records cache filled once per session with every registered benchmark's records."""
    import atexit
    import shutil
    import tempfile

    from idiombench.benchmarks.registry import NAMES
    from idiombench.pipeline.records import code_records

    cache = Path(tempfile.mkdtemp(prefix="idiombench-code-records-"))
    atexit.register(shutil.rmtree, cache, True)
    for name in NAMES:
        code_records(name, cache)
    return cache


def _new_project(dest: Path) -> Path:
    """A fresh git + DVC project at dest holding a copy of this project's workflow files."""
    import shutil

    from idiombench.core import paths

    dest.mkdir()
    for entry in PROJECT_FILES:
        source = ROOT / entry
        if source.is_dir():
            shutil.copytree(source, dest / entry, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        elif source.exists():
            shutil.copy2(source, dest / entry)
    # the session's code records (the analysis of each benchmark's code, keyed by its bytes):
    # every project's first Snakefile parse would otherwise analyse all of it again (~4 s)
    shutil.copytree(_session_code_records(), dest / paths.CODE_RECORDS_CACHE)
    env = tool_env()
    run(["git", "init", "-q"], dest, env)
    run(["git", "config", "user.email", "test@example.com"], dest, env)
    run(["git", "config", "user.name", "test"], dest, env)
    run(["dvc", "init", "-q"], dest, env)
    # what `dvc config core.analytics false` writes into the empty config (a second DVC start)
    (dest / ".dvc" / "config").write_text("[core]\n    analytics = false\n", encoding="utf-8")
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
def vllm_semanticqa(tmp_path_factory: pytest.TempPathFactory, mirrors: list[Path]):
    """The real-vLLM tests' project (tests/support/real_vllm.py) after acquire, build, render and
    vLLM's offline engine on its 12 prompts, run once per session (the engine's start is most of a
    minute): test_vllm_real.py compares the hf backend with those outputs, test_vllm_server.py
    vLLM's OpenAI server. Skipped, naming `make vllm-env`, where .venv-vllm does not exist."""
    import time

    from real_vllm import OFFLINE_MODEL, VLLM_PYTHON, VLLM_VENV, OfflineRun, small_project, vllm_check, vllm_env

    if not VLLM_PYTHON.is_file():
        pytest.skip(f"no vLLM environment at {VLLM_VENV} (build it with `make vllm-env`)")
    problem = vllm_check()
    if problem:
        pytest.skip(problem)
    project = _new_project(tmp_path_factory.mktemp("vllm") / "project")
    small_project(project)
    env = tool_env(mirrors)  # the releases and the authors' code (acquire reads both)
    for stage in ("acquire", "build", "render"):
        run(["idiombench", stage, "semanticqa"], project, env)
    # vLLM's environment: its own console script (with the `__main__` guard the spawned engine
    # core process needs when it re-imports the main module)
    started = time.perf_counter()
    run([str(VLLM_PYTHON.parent / "idiombench"), "generate", "-m", OFFLINE_MODEL], project, vllm_env(env), timeout=1800)
    return OfflineRun(project, time.perf_counter() - started)


@pytest.fixture(scope="session")
def tiny_chat_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny randomly initialised Llama chat model + BPE tokenizer with a chat template
    (tests/support/tiny_model.py)."""
    pytest.importorskip("transformers", reason="transformers is not installed (`make setup`)")
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
            pytest.skip(
                f"WordNet is not installed and cannot be installed here: {exc} "
                "(`python -m idiombench.scoring.wordnet`, run by `make setup`)"
            )
    return wordnet.data_dir()
