"""A finished project's score tables, metrics JSON and report tables, made again with other code
and compared byte for byte: the check that a refactor of scoring, aggregation or the report
keeps every number.

    python bench/metrics_identity.py --project DIR                  # this checkout's code against DIR's outputs
    python bench/metrics_identity.py --project DIR --src OTHER/src  # another checkout's code
    python bench/metrics_identity.py --project DIR --score           # score again too (default: aggregate + report)
    python bench/metrics_identity.py --project DIR --keep OUT        # keep the remade project in OUT

DIR is a project that ran to its report (e.g. a `make run`, or bench/full_grid.py's --workdir
with --until report). Its data, prompts, generations and scores are copied into a scratch
project; there `idiombench score` (with --score), `aggregate` for every scored (benchmark,
model) and `report` run with the code in --src, and every file under results/scores,
results/metrics and reports/tables is compared with DIR's. A metrics file is compared as JSON
after metrics.body.migrate brings DIR's to the current schema (the migration is part of what
is checked: it must reproduce the new file exactly); the PDF and figures are not compared (the
title page names the commit and the date). Prints one line per differing file and a summary;
exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COPIED = ("params.yaml", "data", "results", "reports", ".models", ".nltk_data")
COMPARED = ("results/scores", "results/metrics", "reports/tables")
IGNORED = (".snakemake_timestamp",)  # Snakemake's marker of a directory output, not a stage's file


def run(command: list[str], project: Path, src: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(src)}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "idiombench.cli", *command], cwd=project, env=env, capture_output=True, text=True
    )
    if done.returncode:
        raise SystemExit(f"idiombench {' '.join(command)} failed:\n{done.stdout[-2000:]}{done.stderr[-4000:]}")
    return time.perf_counter() - started


def scored_pairs(project: Path) -> list[tuple[str, str]]:
    """(benchmark, model) of every metrics file the project has."""
    return sorted(
        (path.parent.name, path.stem) for path in (project / "results" / "metrics").glob("*/*.json") if path.is_file()
    )


def same_metrics(before: Path, after: Path, src: Path) -> bool:
    """Whether the metrics file `after` is `before` brought to the current schema (the migration
    of the code in `src`, its benchmark's part included)."""
    check = (
        "import json, sys\n"
        "from idiombench.benchmarks.registry import get_benchmark\n"
        "from idiombench.metrics import body\n"
        "old, new = (json.load(open(p, encoding='utf-8')) for p in sys.argv[1:3])\n"
        "part = get_benchmark(sys.argv[3]).migrate_body\n"
        "sys.exit(0 if body.comparable(body.migrate(old, part)) == body.comparable(new) else 1)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", check, str(before), str(after), after.parent.name],
        env={**os.environ, "PYTHONPATH": str(src)},
        capture_output=True,
        text=True,
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"comparing {after}: {done.stderr[-2000:]}")
    return done.returncode == 0


def compare(before: Path, after: Path, src: Path) -> list[str]:
    differing = []
    for folder in COMPARED:
        names = sorted(
            {p.relative_to(before).as_posix() for p in (before / folder).rglob("*") if p.is_file()}
            | {p.relative_to(after).as_posix() for p in (after / folder).rglob("*") if p.is_file()}
        )
        names = [name for name in names if Path(name).name not in IGNORED]
        for name in names:
            a, b = before / name, after / name
            if not (a.is_file() and b.is_file()):
                same = False
            elif name.startswith("results/metrics/") and name.endswith(".json"):
                same = same_metrics(a, b, src)
            else:
                same = filecmp.cmp(a, b, shallow=False)
            if not same:
                print(f"  DIFFERENT  {name}")
                differing.append(name)
        print(
            f"  {folder}: {len(names) - sum(d.startswith(folder) for d in differing)} of {len(names)} files identical"
        )
    return differing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", type=Path, required=True, help="a project that ran to its report")
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the code to remake it with")
    parser.add_argument("--score", action="store_true", help="run the score stage again too")
    parser.add_argument("--keep", type=Path, help="remake the project here (kept), not in a scratch folder")
    args = parser.parse_args()
    project, src = args.project.resolve(), args.src.resolve()
    with tempfile.TemporaryDirectory(prefix="idiombench-metrics-identity-") as scratch:
        work = (args.keep or Path(scratch) / "project").resolve()
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        for name in COPIED:
            source = project / name
            if source.is_dir():
                shutil.copytree(source, work / name, symlinks=True)
            elif source.is_file():
                shutil.copy2(source, work / name)
        pairs = scored_pairs(project)
        seconds = 0.0
        for benchmark, model in pairs:
            if args.score:
                seconds += run(["score", benchmark, "--model", model], work, src)
            seconds += run(["aggregate", benchmark, "--model", model], work, src)
        seconds += run(["report"], work, src)
        print(f"bench/metrics_identity.py: {len(pairs)} (benchmark, model) pairs remade in {seconds:.1f} s with {src}")
        differing = compare(project, work, src)
    print(f"summary: {'every file identical' if not differing else f'{len(differing)} files DIFFERENT'}")
    sys.exit(1 if differing else 0)


if __name__ == "__main__":
    main()
