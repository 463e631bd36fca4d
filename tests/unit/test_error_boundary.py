"""The CLI's one error boundary (issue 13, item 2): every command reports bad input in one line
(exit 2), and a genuine bug as a one-line internal error (exit 1) whose traceback only the
global --debug shows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from idiombench import cli

SRC = Path(__file__).resolve().parents[2] / "src"


def test_every_command_is_behind_the_boundary() -> None:
    commands = {command.name or command.callback.__name__: command.callback for command in cli.app.registered_commands}
    for group in cli.app.registered_groups:  # `idiombench labels pull` ...
        commands.update(
            {f"{group.name} {command.name}": command.callback for command in group.typer_instance.registered_commands}
        )
    assert len(commands) >= 12 and "labels pull" in commands
    unguarded = sorted(name for name, callback in commands.items() if not getattr(callback, "error_boundary", False))
    assert unguarded == []


def broken(*args, **kwargs):
    raise ZeroDivisionError("division by zero in a stage")


def test_a_bug_is_one_line_saying_internal_error(monkeypatch) -> None:
    monkeypatch.setattr(cli, "load_params", broken)
    result = CliRunner().invoke(cli.app, ["check-params"])
    assert result.exit_code == 1
    assert result.output.strip().replace("\n", " ") == (
        "error: internal error (ZeroDivisionError: division by zero in a stage); rerun with --debug for the traceback"
    )


def test_debug_lets_the_traceback_through(monkeypatch) -> None:
    monkeypatch.setattr(cli, "load_params", broken)
    result = CliRunner().invoke(cli.app, ["--debug", "check-params"])
    assert isinstance(result.exception, ZeroDivisionError)
    monkeypatch.setattr(cli._State, "debug", False)


def test_an_os_error_names_the_path(monkeypatch, tmp_path: Path) -> None:
    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path / "params.yaml"))

    monkeypatch.setattr(cli, "load_params", denied)
    result = CliRunner().invoke(cli.app, ["check-params"])
    assert result.exit_code == 2
    assert result.output.strip() == f"error: {tmp_path / 'params.yaml'}: Permission denied"


@pytest.mark.parametrize("debug", [False, True])
def test_in_a_real_process(tmp_path: Path, debug: bool) -> None:
    """As a user runs it: a bug in a stage (here a params object the command cannot handle,
    patched in by a wrapper script) prints a traceback only with --debug."""
    script = tmp_path / "run.py"
    script.write_text(
        "import sys\nfrom idiombench import cli\n"
        "cli.load_params = lambda *a, **k: 1 / 0\n"
        "sys.argv = ['idiombench', *sys.argv[1:]]\ncli.app()\n",
        encoding="utf-8",
    )
    args = [sys.executable, str(script), *(["--debug"] if debug else []), "check-params"]
    result = subprocess.run(args, capture_output=True, text=True, env={"PYTHONPATH": str(SRC), "PATH": ""}, timeout=120)
    assert result.returncode == 1, (result.returncode, result.stderr)  # 1: a bug; 2 is bad input
    if debug:
        assert "Traceback" in result.stderr and "ZeroDivisionError" in result.stderr
    else:
        assert result.stderr.strip().splitlines() == [
            "error: internal error (ZeroDivisionError: division by zero); rerun with --debug for the traceback"
        ]


def test_a_commands_own_exit_status_passes_the_boundary() -> None:
    import typer

    @cli.user_errors
    def command() -> None:
        raise typer.Exit(3)

    with pytest.raises(typer.Exit) as info:
        command()
    assert info.value.exit_code == 3


def test_a_malformed_source_date_epoch_does_not_break_a_later_scipy_import() -> None:
    """Commands import scipy lazily (rouge-score's nltk, the attention statistics); numpy.f2py,
    which scipy imports, calls int(SOURCE_DATE_EPOCH): the CLI loads it while the value is hidden."""
    import os

    env = {**os.environ, "SOURCE_DATE_EPOCH": "abc"}
    code = "import os, idiombench.cli, scipy.stats; print(os.environ['SOURCE_DATE_EPOCH'])"
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "abc"  # restored: `report` still names it
