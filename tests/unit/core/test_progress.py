"""progress.Progress: a bar on a terminal, one summary line where stderr is a log."""

from __future__ import annotations

import io

from idiombench.core.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_log_gets_one_summary_line() -> None:
    log = io.StringIO()
    with Progress(1_200, "score orderprobe m", unit="row", stream=log) as progress:
        for _ in range(12):
            progress.update(100)
    lines = log.getvalue().splitlines()
    assert len(lines) == 1 and "\r" not in log.getvalue()
    assert lines[0].startswith("score orderprobe m: 1,200/1,200 rows in ") and "rows/s)" in lines[0]


def test_a_terminal_gets_the_bar_with_count_rate_and_eta() -> None:
    terminal = Terminal()
    with Progress(10, "track b m", unit="row", initial=4, stream=terminal) as progress:
        progress.update(6)
    shown = terminal.getvalue()
    assert "track b m: 100%" in shown and "10/10" in shown and "row/s" in shown


def test_nothing_to_do_says_so() -> None:
    log = io.StringIO()
    Progress(5, "generate m", unit="request", initial=5, stream=log).close()
    assert log.getvalue().strip().endswith("(nothing to do)")
