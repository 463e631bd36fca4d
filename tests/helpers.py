"""Helpers shared by tests: running the CLI, snakemake and dvc as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path


PROJECT_FILES = ("Snakefile", "dvc.yaml", "params.yaml", "workflow", "src", "overlays", ".dvcignore", ".gitignore")


def tool_env(mirror: Path | Sequence[Path] | None = None) -> dict[str, str]:
    """Environment for running the CLI, snakemake and dvc as a user would: the venv's
    bin first on PATH (rules call `idiombench`), no DVC analytics, the mirror directories if
    known (a project copied elsewhere cannot use params.yaml's relative default)."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["DVC_NO_ANALYTICS"] = "1"
    if mirror is not None:
        roots = [mirror] if isinstance(mirror, Path) else list(mirror)
        env["IDIOMBENCH_MIRROR"] = os.pathsep.join(str(root) for root in roots)
    return env


def run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 900):
    """Run a command; on failure show its output in the assertion message."""
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{' '.join(cmd)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
    return result


