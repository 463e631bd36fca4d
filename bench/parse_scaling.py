"""How parsing time grows with the length of a model output: every benchmark's parser, on
adversarial texts built to make a backtracking regex or a copy-per-step loop quadratic.

For each (parser, family) it times one parse at N and at 4N characters (CPU time,
time.process_time) and prints the ratio: about 4 is linear; 16 is quadratic. Exits 1 when a
ratio exceeds --limit (default 8), naming the parser and the family.

    .venv/bin/python bench/parse_scaling.py            # N = 50,000
    .venv/bin/python bench/parse_scaling.py --size 250000 --limit 6
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests" / "support")]

from parser_contexts import PARSERS, adversarial_texts  # noqa: E402  (the parsers the unit test runs)


def cpu_seconds(parse: Callable[[str], object], text: str) -> float:
    best = float("inf")
    for _ in range(2):  # the smaller of two runs: less noise from a busy machine
        start = time.process_time()
        parse(text)
        best = min(best, time.process_time() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=50_000, help="N, characters of the shorter text")
    parser.add_argument("--limit", type=float, default=8.0, help="largest allowed ratio time(4N) / time(N)")
    args = parser.parse_args()
    worst: list[tuple[float, str]] = []
    print(f"{'parser':<44} {'family':<28} {'N s':>8} {'4N s':>8} {'ratio':>6}")
    for name, parse in PARSERS.items():
        small, large = adversarial_texts(args.size), adversarial_texts(4 * args.size)
        for family in small:
            a, b = cpu_seconds(parse, small[family]), cpu_seconds(parse, large[family])
            ratio = b / a if a > 1e-4 else float("nan") if b <= 1e-3 else b / 1e-4
            flag = "  <-- superlinear" if ratio > args.limit else ""
            print(f"{name:<44} {family:<28} {a:8.4f} {b:8.4f} {ratio:6.1f}{flag}")
            if ratio > args.limit:
                worst.append((ratio, f"{name} on {family}"))
    if worst:
        print(f"{len(worst)} superlinear: " + "; ".join(f"{w} ({r:.1f}x)" for r, w in sorted(worst, reverse=True)))
        return 1
    print(f"every parser within {args.limit:g}x for 4x the text")
    return 0


if __name__ == "__main__":
    sys.exit(main())
