"""Plot data for `dvc plots` (per-pattern Recovery, Acc@t) and the headline metrics for
`dvc exp show` (results/headline.json: one flat number per benchmark x model x setting,
where the per-benchmark metrics JSON holds thousands of nested values).

DVC plots read lists of records from JSON files; the metrics JSON nests its breakdowns,
so the `plots` stage flattens the two curves into one file per model:

  results/plots/orderprobe-recovery-by-pattern/<model>.json  [{pattern, <setting>: Recovery %}, ...]
  results/plots/g-idiomalign-acc-at-t/<model>.json           [{threshold, <setting>: Acc@t %}, ...]

dvc.yaml's `plots:` names the setting columns, so every setting DVC expects is present in
every record (null where the setting was not run); a file per model makes each model a
series of its own in `dvc plots show` / `dvc plots diff`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..benchmarks import NAMES as BENCHMARKS
from ..config import Params
from ..io import staged_directory, write_json
from ..report.build import collect_metrics
from .mlflow_runs import headline_metrics

OUT = Path("results/plots")
HEADLINE_FILE = Path("results/headline.json")
RECOVERY_DIR = "orderprobe-recovery-by-pattern"
ACC_AT_T_DIR = "g-idiomalign-acc-at-t"
# the settings dvc.yaml plots (columns); a setting not run is null in every record
ORDERPROBE_SETTINGS = ("zero_shot", "cot", "three_shot")
G_IDIOMALIGN_SETTINGS = ("no_gloss", "with_gloss")
ACC_AT = re.compile(r"Acc@(\d+(?:\.\d+)?)")


def recovery_by_pattern(body: dict[str, Any]) -> list[dict[str, Any]]:
    """One record per scrambling pattern: Recovery (default definition, %) per setting."""
    per_pattern: dict[str, dict[str, Any]] = body.get("breakdowns", {}).get("per_pattern", {})
    patterns = sorted({p for setting in per_pattern.values() for p in setting})
    rows = []
    for pattern in patterns:
        row: dict[str, Any] = {"pattern": pattern}
        for setting in ORDERPROBE_SETTINGS:
            value = per_pattern.get(setting, {}).get(pattern, {}).get("recovery_default")
            row[setting] = None if value is None else round(100.0 * value, 4)
        rows.append(row)
    return rows


def acc_at_t(body: dict[str, Any]) -> list[dict[str, Any]]:
    """One record per threshold t: Acc@t (macro over directions, %) per Task 2 setting."""
    settings = body.get("settings", {})
    thresholds = sorted({float(m.group(1)) for s in settings.values() for name in s.get("metrics", {})
                         if (m := ACC_AT.fullmatch(name))})
    rows = []
    for t in thresholds:
        row: dict[str, Any] = {"threshold": t}
        for setting in G_IDIOMALIGN_SETTINGS:
            metrics = settings.get(setting, {}).get("metrics", {})
            row[setting] = next((v for name, v in metrics.items()
                                 if (m := ACC_AT.fullmatch(name)) and float(m.group(1)) == t), None)
        rows.append(row)
    return rows


@dataclass(frozen=True)
class PlotSpec:
    """One `dvc plots` curve family: the benchmark whose metrics it reads, its folder under
    results/plots/, and what dvc.yaml's `plots:` declares for it (`idiombench dvc-yaml`)."""

    benchmark: str
    folder: str
    title: str
    x: str
    series: tuple[str, ...]
    rows_of: Callable[[dict[str, Any]], list[dict[str, Any]]]


PLOTS: tuple[PlotSpec, ...] = (
    PlotSpec("orderprobe", RECOVERY_DIR, "OrderProbe Recovery by scrambling pattern (%)", "pattern",
             ORDERPROBE_SETTINGS, recovery_by_pattern),
    PlotSpec("g-idiomalign", ACC_AT_T_DIR, "G-IdiomAlign Task 2 Acc@t by similarity threshold t (%)", "threshold",
             G_IDIOMALIGN_SETTINGS, acc_at_t),
)


def headline(params: Params) -> dict[str, dict[str, dict[str, float]]]:
    """{benchmark: {model: {"<setting>/<metric>": value}}}: the MLflow parent runs' metrics."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for benchmark in BENCHMARKS:
        for model, body in sorted(collect_metrics(params, benchmark).items()):
            out.setdefault(benchmark, {})[model] = headline_metrics(benchmark, body)
    return out


def write_plot_data(params: Params, out: Path = OUT, headline_file: Path = HEADLINE_FILE) -> dict[str, int]:
    """Write every scored model's curves and the headline metrics; returns the number of
    files per plot."""
    write_json(headline_file, headline(params))
    counts = {plot.folder: 0 for plot in PLOTS}
    with staged_directory(out) as staging:
        for plot in PLOTS:
            (staging / plot.folder).mkdir(parents=True, exist_ok=True)
            for model, body in sorted(collect_metrics(params, plot.benchmark).items()):
                rows = plot.rows_of(body)
                if rows:
                    write_json(staging / plot.folder / f"{model}.json", rows)
                    counts[plot.folder] += 1
    return counts
