"""The toy benchmark (tests/fixtures/toy_benchmark) installed as an external plugin package: pip
builds it from its pyproject.toml and installs it, with its entry point, into a folder of its own
(`--target`: offline, no build isolation, nothing else installed), which the tools then find on
PYTHONPATH: an environment of its own on top of the project's .venv, as a user's plugin would be."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "toy_benchmark"
DISTRIBUTION = "toybench"


def install_plugin(site: Path, source: Path | None = None) -> Path:
    """pip-install the toy plugin (a copy of the fixture, so no build files land in the
    repository) into `site`; returns the installed package's folder."""
    work = site.parent / "toybench-src"
    shutil.copytree(source or FIXTURE, work, ignore=shutil.ignore_patterns("capitals.csv", "__pycache__"))
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--no-build-isolation"]
        + ["--disable-pip-version-check", "--target", str(site), str(work)],
        capture_output=True,
        text=True,
        env={**os.environ, "PIP_NO_INPUT": "1"},
    )
    assert result.returncode == 0, f"pip install of the toy plugin failed:\n{result.stdout}\n{result.stderr}"
    assert any(site.glob(f"{DISTRIBUTION}-0.1.dist-info/entry_points.txt")), sorted(p.name for p in site.iterdir())
    return site / "toybench"


def plugin_env(env: dict[str, str], site: Path) -> dict[str, str]:
    """`env` with the plugin's folder first on PYTHONPATH."""
    return {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH", "")]))}
