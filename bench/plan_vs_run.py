"""`idiombench plan` against a measured run, stage by stage: does the plan predict what the run took?

    python bench/full_grid.py --workdir /tmp/grid --json /tmp/grid.json --write-rates /tmp/rates.json
    python bench/plan_vs_run.py --project /tmp/grid --run /tmp/grid.json --rates bench/rates.json [more.json ...]

For each rates file, the plan of the run's own params (the paper overlay, the stand-in model) is
built on the run's project (its built items: the plan renders and counts them as `plan` does) and
each stage's predicted seconds are set beside the run's measured ones: render per benchmark,
generate (the stage's own cost per row: the stand-in model's run), score and aggregate per
benchmark (rows / rows/s), track per benchmark (a job + rows + traces, CPU seconds as the costs
are measured) and report. It also checks that the plan counts the run's rows and traces.

A rates file written by the same run predicts that run by construction (the rates are its own
figures); the predictive check is a rates file measured elsewhere (another day, a fraction of the
grid). Deviations beyond +-25 % are marked.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src")]

from idiombench.core.yamlfile import load_yaml_file  # noqa: E402
from idiombench.pipeline.config import parse_params  # noqa: E402
from idiombench.stages.plan import Plan, build_plan  # noqa: E402

TOLERANCE = 0.25
ORDER = ("render", "generate", "score", "aggregate", "track", "report")


def measured_stages(run: dict[str, Any]) -> Measured:
    return {(stage["stage"], stage["benchmark"]): stage for stage in run["stages"]}


Measured = dict[tuple[str, str], dict[str, Any]]  # (stage, benchmark) -> the run's figures


def per_benchmark(plan: Plan) -> dict[str, tuple[int, int]]:
    """benchmark -> (rows, traced rows) the plan counts."""
    totals: dict[str, tuple[int, int]] = {}
    for r in plan.rows:
        rows, traces = totals.get(r.benchmark, (0, 0))
        totals[r.benchmark] = (rows + r.rows, traces + r.traces)
    return totals


def predicted_hours(plan: Plan, stage: str, benchmark: str, totals: dict[str, tuple[int, int]]) -> float | None:
    """The plan's hours of one stage the run measured (render and report: once; the rest per row)."""
    cpu = plan.cpu
    rows, traces = totals.get(benchmark, (0, 0))
    if stage in ("render", "report"):
        return plan.once.get(f"render {benchmark}" if stage == "render" else "report")
    if cpu is None:
        return None
    if stage == "generate":
        return cpu.hours("generate", "all", sum(r for r, _ in totals.values()))
    if stage == "track":
        return cpu.track_hours(benchmark, rows, traces, 1.0)
    return cpu.hours(stage, benchmark, rows)  # score, aggregate


def predictions(plan: Plan, measured: Measured) -> list[tuple[str, str, float | None, float, str]]:
    """(stage, benchmark, predicted s, measured s, what is compared) for every stage the run measured;
    track in CPU seconds (its costs are measured so), the rest in wall seconds."""
    totals = per_benchmark(plan)
    out: list[tuple[str, str, float | None, float, str]] = []
    for (stage, benchmark), m in sorted(measured.items(), key=lambda kv: ORDER.index(kv[0][0])):
        hours = predicted_hours(plan, stage, benchmark, totals)
        what = "CPU" if stage == "track" else "wall"
        out.append((stage, benchmark, None if hours is None else hours * 3600, m[f"{what.lower()}_s"], what))
    return out


def count_check(plan: Plan, measured: Measured) -> list[str]:
    problems = []
    for benchmark, (rows, traced) in sorted(per_benchmark(plan).items()):
        score = measured.get(("score", benchmark))
        track = measured.get(("track", benchmark))
        if score is not None and score["rows"] != rows:
            problems.append(f"{benchmark}: the plan counts {rows:,} rows, the run scored {score['rows']:,}")
        if track is not None and track.get("extra", {}).get("traces") not in (None, traced):
            written = track["extra"]["traces"]
            problems.append(f"{benchmark}: the plan counts {traced:,} traces, the run wrote {written:,}")
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--project", type=Path, required=True, help="a kept bench/full_grid.py folder")
    parser.add_argument("--run", type=Path, required=True, help="its --json file")
    parser.add_argument("--rates", type=Path, nargs="+", required=True, help="rates files to plan with")
    args = parser.parse_args()
    run = json.loads(args.run.read_text(encoding="utf-8"))
    measured = measured_stages(run)
    params = parse_params(load_yaml_file(args.project / "params.yaml"), str(args.project / "params.yaml"))
    data = args.project / "data"
    for rates in args.rates:
        plan = build_plan(params, "params.yaml", rates, data / "processed", data / "raw", args.project / "results")
        print(f"\nrates {rates}: {plan.cpu.source if plan.cpu else 'none'}")
        for problem in count_check(plan, measured):
            print(f"  COUNT MISMATCH {problem}")
        print(f"  {'stage':<10} {'benchmark':<14} {'plan s':>9} {'run s':>9} {'plan/run':>9}")
        total_plan = total_run = 0.0
        for stage, benchmark, predicted, actual, what in predictions(plan, measured):
            ratio = predicted / actual if predicted is not None and actual else None
            flag = "" if ratio is None or abs(ratio - 1) <= TOLERANCE else "  <- beyond 25 %"
            shown = "unmeasured" if predicted is None else f"{predicted:,.1f}"
            ratio_text = "" if ratio is None else f"{ratio:.2f}"
            print(f"  {stage:<10} {benchmark:<14} {shown:>9} {actual:>9,.1f} {ratio_text:>9} ({what}){flag}")
            if predicted is not None:
                total_plan += predicted
                total_run += actual
        if total_run:
            print(f"  {'total':<25} {total_plan:>9,.1f} {total_run:>9,.1f} {total_plan / total_run:>9.2f}")
        for note in plan.notes:
            print(f"  note: {note}")


if __name__ == "__main__":
    main()
