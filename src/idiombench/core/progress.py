"""Progress of a long stage: a bar on a terminal, one summary line in a log.

Every long stage (generate, score, aggregate, track, attention, report) counts its units
(requests, rows, items, traces) through one `Progress`. On a terminal it is tqdm's bar (count,
rate, ETA); where stderr is not a terminal (a Snakemake or DVC log, a Slurm job) the bar is
off and closing prints one line, `<what>: 1,234/1,234 rows in 5.2 s (237 rows/s)`, so a log
holds the figures without hundreds of carriage-return updates.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import IO


class Progress:
    """Count `total` units of `unit`, starting at `initial` (e.g. cached requests)."""

    def __init__(
        self, total: int, desc: str, *, unit: str = "item", initial: int = 0, stream: IO[str] | None = None
    ) -> None:
        from tqdm import tqdm

        self.desc, self.unit, self.total = desc, unit, total
        self._stream = stream if stream is not None else sys.stderr
        self._started = time.perf_counter()
        self._initial = initial
        self._closed = False
        self._bar = tqdm(
            total=total,
            initial=initial,
            desc=desc,
            unit=unit,
            file=self._stream,
            dynamic_ncols=True,
            mininterval=0.5,
            smoothing=0.1,
            disable=not _is_terminal(self._stream),
            bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]",
        )
        self._count = initial

    @property
    def count(self) -> int:
        return self._count

    def update(self, n: int = 1) -> None:
        self._count += n
        self._bar.update(n)

    def set_postfix_str(self, text: str) -> None:
        self._bar.set_postfix_str(text, refresh=False)

    def summary(self) -> str:
        """`<desc>: n/total <unit>s in s (rate)`: the line a log gets (rate over the units done here)."""
        seconds = time.perf_counter() - self._started
        done = self._count - self._initial
        rate = f"{done / seconds:,.1f} {self.unit}s/s" if seconds > 0 and done else "nothing to do"
        return f"{self.desc}: {self._count:,}/{self.total:,} {self.unit}s in {seconds:.1f} s ({rate})"

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._bar.disable:
            print(self.summary(), file=self._stream, flush=True)
        self._bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


def _is_terminal(stream: IO[str]) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
