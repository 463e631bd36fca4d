"""Rows per second of `idiombench score orderprobe` on realistic outputs (the lexical terms).

    python bench/score_speed.py                      # issue 29's measurement: 9,600 rows, both modes
    python bench/score_speed.py --samples 5 --expressions 200        # 115,200 rows (main + 5 samples)
    python bench/score_speed.py --workers 1 --cpu    # CPU time per row of one process (a busy machine)

Sets up a project in --project (default: a temporary folder) with OrderProbe built from the mirror
(IDIOMBENCH_MIRROR) and one model's outputs of ~--chars characters made of the release's own
glosses (bench/orderprobe_corpus.py: --expressions per language, all 24 inputs, the main pass
plus --samples consistency samples, in --settings), the neural roles off; then runs the real CLI,
`idiombench score orderprobe --model bench`, in a fresh process per --modes x --workers value
(IDIOMBENCH_SCORE_WORKERS; default: every usable core), and prints the wall time and rows/s.
--cpu also prints the CPU time (user + sys) per row, which is meaningful on a busy machine only
for --workers 1 (everything in one process; worker processes of a pool are not the CLI's
children and are not counted). The last line is JSON. A project folder given with --project is
reused when it already holds the same corpus (its corpus.json).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

import orderprobe_corpus as corpus  # noqa: E402

from idiombench.core.yamlfile import load_yaml_file  # noqa: E402

MODES = {"paper": {"compatibility": "paper"}, "released": {"compatibility": "released"}}


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def prepare(project: Path, spec: dict) -> int:
    marker = project / "corpus.json"
    if marker.exists() and json.loads(marker.read_text(encoding="utf-8"))["spec"] == spec:
        return int(json.loads(marker.read_text(encoding="utf-8"))["rows"])
    project.mkdir(parents=True, exist_ok=True)
    rows = corpus.write_project(project, spec["expressions"], spec["samples"], spec["settings"], spec["chars"])
    marker.write_text(json.dumps({"spec": spec, "rows": rows}) + "\n", encoding="utf-8")
    return rows


def set_mode(project: Path, mode: str) -> None:
    raw = load_yaml_file(project / "params.yaml")
    corpus.merge(raw["benchmarks"]["orderprobe"]["score"], MODES[mode])
    (project / "params.yaml").write_text(yaml.safe_dump(raw, allow_unicode=True, sort_keys=False), encoding="utf-8")


def run(project: Path, workers: int | None) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the CLI process) of one `idiombench score orderprobe`."""
    subprocess.run(["rm", "-rf", str(project / "results" / "scores")], check=True)
    env = corpus.cli_env()
    if workers is not None:
        env["IDIOMBENCH_SCORE_WORKERS"] = str(workers)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "idiombench.cli", "score", "orderprobe", "--model", corpus.MODEL],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(done.stdout[-2000:] + done.stderr[-3000:])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", type=Path, help="project folder (reused when it holds the same corpus)")
    parser.add_argument("--expressions", type=int, default=100, help="expressions per language")
    parser.add_argument("--samples", type=int, default=0, help="consistency samples per input")
    parser.add_argument("--settings", nargs="+", default=["zero_shot"])
    parser.add_argument("--chars", type=int, default=700)
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    parser.add_argument("--workers", type=int, nargs="+", help="IDIOMBENCH_SCORE_WORKERS values (default: unset)")
    parser.add_argument("--cpu", action="store_true", help="print CPU time per row (meaningful with --workers 1)")
    args = parser.parse_args()
    spec = {"expressions": args.expressions, "samples": args.samples, "settings": args.settings, "chars": args.chars}
    with tempfile.TemporaryDirectory(prefix="idiombench-score-speed-") as scratch:
        project = args.project or Path(scratch)
        rows = prepare(project, spec)
        print(f"bench/score_speed.py: {rows:,} rows ({spec}); {os.cpu_count()} CPUs; load {load()}", flush=True)
        results = []
        for mode in args.modes:
            set_mode(project, mode)
            for workers in args.workers or [None]:
                wall, cpu = run(project, workers)
                entry = {
                    "mode": mode,
                    "workers": "default" if workers is None else workers,
                    "rows": rows,
                    "wall_s": round(wall, 2),
                    "rows_per_s": round(rows / wall, 1),
                    "load": load(),
                }
                line = f"{mode}, workers {entry['workers']}: {rows:,} rows in {wall:.1f} s = {rows / wall:,.0f} rows/s"
                if args.cpu:
                    entry["cpu_ms_per_row"] = round(cpu / rows * 1000, 3)
                    line += f"; CPU {cpu:.1f} s = {cpu / rows * 1000:.2f} ms/row (the CLI process)"
                print(f"{line}; load {load()}", flush=True)
                results.append(entry)
        print(json.dumps(results))


if __name__ == "__main__":
    main()
