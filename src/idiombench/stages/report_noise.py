"""The report's serving-noise, disagreement and summary tables (docs/METRICS.md#8-serving-noise).

- "Serving noise" per benchmark: each model's figures from results/noise/<model>/figures.json.
- The noise floor of a (model, benchmark, setting): the largest |headline difference| any
  perturbation of its serving settings produced on the sample; the comparisons tables print both
  models' floors beside every paired test and mark a difference within the larger one.
- Disagreement per benchmark and setting: for each pair of models, the items one gets right and
  the other wrong (both ways), McNemar's exact p beside the paired bootstrap p; the first items
  in the PDF, every one in reports/tables/<benchmark>_disagreement_items.csv.
(The summary page, which prints the floors beside each headline: stages/report_summary.py.)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import pandas as pd

from ..benchmarks.registry import get_benchmark
from ..core import paths
from ..core.io import read_parquet
from ..params.schema import Params
from ..report.tables import Cell, Table
from ..statistics import compare, mean
from ..statistics.agreement import disagreement
from .noise import MEASURED, read_figures

EXAMPLES = 5  # disagreeing items printed per benchmark in the PDF (all of them in the CSV)
WITHIN = "within"  # a model difference within the two models' noise floor
TEXT_CHARS = 80  # of an output printed in the PDF's examples


def noise_figures(params: Params) -> list[dict[str, object]]:
    """Every model's figures rows, in params order."""
    rows: list[dict[str, object]] = []
    for model in params.models:
        body = read_figures(model)
        if body is not None:
            rows += body.get("figures", [])
    return rows


@dataclass(frozen=True)
class NoiseFloors:
    """(model, benchmark, setting) -> the largest |difference| a perturbation produced."""

    floors: Mapping[tuple[str, str, str], float]

    @classmethod
    def of(cls, figures: list[dict[str, Any]]) -> NoiseFloors:
        floors: dict[tuple[str, str, str], float] = {}
        for row in figures:
            if row["status"] == MEASURED and row.get("difference") is not None:
                key = (row["model"], row["benchmark"], row["setting"])
                floors[key] = max(floors.get(key, 0.0), abs(float(row["difference"])))
        return cls(floors)

    def get(self, model: str, benchmark: str, setting: str) -> float | None:
        return self.floors.get((model, benchmark, setting))


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def _signed(value: float | None) -> str:
    return "—" if value is None else f"{value:+.3f}"


def noise_table(benchmark: str, figures: list[dict[str, Any]], display_name: Callable[[str], str]) -> Table | None:
    """The "Serving noise" table of a benchmark (None: no model has figures on it)."""
    mine = [row for row in figures if row["benchmark"] == benchmark]
    if not mine:
        return None
    rows = []
    for row in mine:
        if row["status"] != MEASURED:
            rows.append(
                [Cell(display_name(row["model"])), Cell("—"), Cell("—"), Cell(row["perturbation"])]
                + [Cell("—")] * 6
                + [Cell(f"{row['status']}: {row.get('reason', '')}")]
            )
            continue
        low, high = row.get("low"), row.get("high")
        rows.append(
            [
                Cell(display_name(row["model"])),
                Cell(row["setting"]),
                Cell(row["metric"]),
                Cell(row["perturbation"]),
                Cell(str(row["items"])),
                Cell(_pct(row["changed_share"])),
                Cell(_pct(row["flipped_share"])),
                Cell(f"{row['configured']:.3f}" if row.get("configured") is not None else "—"),
                Cell(f"{row['perturbed']:.3f}" if row.get("perturbed") is not None else "—"),
                Cell(_signed(row.get("difference")), low=low, high=high),
                Cell(f"{row['units']} units"),
            ]
        )
    return Table(
        f"{benchmark.replace('-', '_')}_serving_noise",
        f"{benchmark}: serving noise",
        [
            "Model",
            "Setting",
            "Metric",
            "Perturbation",
            "Items",
            "Changed %",
            "Flipped %",
            "Configured",
            "Perturbed",
            "Δ",
            "Resampled",
        ],
        rows,
        footnotes=[
            "The same seeded sample of items for every model, generated again under each perturbation of the "
            "configured serving settings (params serving_noise) and scored by the benchmark's own scorer. Changed: "
            "share of items whose output text differs; Flipped: share whose headline per-item outcome differs "
            "(right/wrong, or a graded score that moved); Δ = perturbed − configured mean outcome on the sample, its "
            "95% paired bootstrap interval (clustered as the benchmark's unit) in the CSV's Δ_lo / Δ_hi. A difference "
            "between models smaller than their noise floor (the largest |Δ| here) is not evidence "
            "(docs/METRICS.md#8-serving-noise)."
        ],
    )


def floor_columns(floors: NoiseFloors, benchmark: str) -> Callable[[str, str, str, float, float], list[Cell]]:
    """For the comparisons tables: (model A, model B, estimand name, A − B, printed scale) -> the two
    floors on the printed scale and the within mark (the estimand's setting: the name's first part)."""

    def cells(a: str, b: str, name: str, difference: float, scale: float = 1.0) -> list[Cell]:
        setting = name.split("/", 1)[0]
        fa, fb = floors.get(a, benchmark, setting), floors.get(b, benchmark, setting)
        known = [f for f in (fa, fb) if f is not None]
        within = bool(known) and not math.isnan(difference) and abs(difference) <= max(known)
        return [
            Cell("—" if fa is None else f"{fa * scale:.3f}"),
            Cell("—" if fb is None else f"{fb * scale:.3f}"),
            Cell(WITHIN if within else ("outside" if known else "—")),
        ]

    return cells


FLOOR_COLUMNS = ["Noise floor A", "Noise floor B", "Within floor"]
FLOOR_NOTE = (
    f"Noise floor: the largest |Δ| of the model's serving-noise pass in that setting (the Serving noise "
    f"table; — where the model has none); {WITHIN}: |A − B| is within the larger floor, so the difference "
    "may be the serving setup's, not the models' (docs/METRICS.md#8-serving-noise)."
)


# ------------------------------------------------------------------------------ per-item outcomes


def outcomes(params: Params, benchmark: str, models: list[str]) -> dict[str, dict[str, pd.DataFrame]]:
    """model -> setting -> the benchmark's item_outcomes of its score table (with the output text)."""
    bench, config = get_benchmark(benchmark), params.benchmark(benchmark)
    out: dict[str, dict[str, pd.DataFrame]] = {}
    for model in models:
        directory = paths.scores_dir(benchmark=benchmark, model=model)
        for path in sorted(directory.glob("*.parquet")):
            found = bench.item_outcomes(read_parquet(path).to_pandas(), path.stem, config)
            if found is None or found.empty:
                continue
            texts = _texts(benchmark, model, path.stem)
            found = found.assign(text=found["prompt_id"].map(texts))
            out.setdefault(model, {})[path.stem] = found
    return out


def _texts(benchmark: str, model: str, setting: str) -> dict[str, str]:
    path = paths.generations_file(benchmark=benchmark, model=model, setting=setting)
    if not path.is_file():
        return {}
    frame = read_parquet(path).to_pandas()
    main = frame[(frame["pass"] == "main") & (frame["sample_index"] == 0)]
    return dict(zip(main["prompt_id"], main["text"], strict=True))


def _clip(text: object) -> str:
    flat = " ".join(str(text if text is not None else "").split())
    return flat if len(flat) <= TEXT_CHARS else flat[: TEXT_CHARS - 1] + "…"


# (setting, metric, model A, model B, the two models' rows of that setting and metric)
Pair = tuple[str, str, str, str, pd.DataFrame]


def model_pairs(found: dict[str, dict[str, pd.DataFrame]]) -> Iterator[Pair]:
    """(setting, metric, model A, model B, their rows: outcomes both right/wrong) for each pair of
    models in each setting and headline metric, in the report's order (settings sorted, models in
    params order, metrics sorted)."""
    settings = sorted({s for frames in found.values() for s in frames})
    for setting in settings:
        for a, b in combinations([m for m in found if setting in found[m]], 2):
            keys = ["prompt_id", "sample_index", "metric"]  # a setting may have several headline metrics
            pair = found[a][setting].merge(found[b][setting], on=keys, suffixes=("_a", "_b"))
            pair = pair[pair["binary_a"].astype(bool) & pair["binary_b"].astype(bool)]
            for metric, group in pair.groupby("metric", sort=True):
                yield setting, str(metric), a, b, group


def split_rows(group: pd.DataFrame) -> pd.DataFrame:
    """The rows of a pair one model gets right and the other wrong (graded outcomes left out), by prompt."""
    decided = group["outcome_a"].isin((0.0, 1.0)) & group["outcome_b"].isin((0.0, 1.0))
    return group[decided & (group["outcome_a"] != group["outcome_b"])].sort_values("prompt_id")


def disagreement_tables(
    params: Params, benchmark: str, found: dict[str, dict[str, pd.DataFrame]], display_name: Callable[[str], str]
) -> list[Table]:
    """The counts table and the items table (the PDF prints the first EXAMPLES items)."""
    uncertainty = params.report.uncertainty
    counts: list[list[Cell]] = []
    items: list[list[Cell]] = []
    for setting, metric, a, b, group in model_pairs(found):
        result = disagreement(group["outcome_a"].to_numpy(), group["outcome_b"].to_numpy())
        ea = mean(group["unit_a"].tolist(), group["outcome_a"].to_numpy())
        eb = mean(group["unit_a"].tolist(), group["outcome_b"].to_numpy())
        boot = (
            compare(a, ea, b, eb, "paired-bootstrap", uncertainty.resamples, uncertainty.seed)
            if ea.n >= uncertainty.min_units
            else None
        )  # too few units to estimate the spread
        counts.append(
            [
                Cell(setting),
                Cell(str(metric)),
                Cell(display_name(a)),
                Cell(display_name(b)),
                Cell(str(result.items)),
                Cell(str(result.only_a)),
                Cell(str(result.only_b)),
                Cell(f"{result.p:.4f}"),
                Cell("—" if boot is None or math.isnan(boot.p) else f"{boot.p:.4f}"),
            ]
        )
        for _, row in split_rows(group).iterrows():
            right = a if row["outcome_a"] == 1.0 else b
            items.append(
                [
                    Cell(setting),
                    Cell(str(metric)),
                    Cell(str(row["prompt_id"])),
                    Cell(display_name(a)),
                    Cell(display_name(b)),
                    Cell(display_name(right)),
                    Cell(str(row["text_a"])),
                    Cell(str(row["text_b"])),
                ]
            )
    if not counts:
        return []
    stem = benchmark.replace("-", "_")
    count_table = Table(
        f"{stem}_disagreement",
        f"{benchmark}: where two models disagree",
        [
            "Setting",
            "Metric",
            "Model A",
            "Model B",
            "Items",
            "A right, B wrong",
            "A wrong, B right",
            "McNemar p",
            "Bootstrap p",
        ],
        counts,
        footnotes=[
            "Items both models answer right/wrong (graded outcomes left out). McNemar p: exact two-sided "
            "test on the discordant items (binomial, 1/2); bootstrap p: paired bootstrap test of the mean "
            f"outcome, clustered as the benchmark's unit (— below report.uncertainty.min_units units). "
            f"The disagreeing items: {stem}_disagreement_items.csv "
            f"(the first {EXAMPLES} below)."
        ],
    )
    item_columns = ["Setting", "Metric", "Prompt", "Model A", "Model B", "Right", "Output A", "Output B"]
    full = Table(f"{stem}_disagreement_items", f"{benchmark}: disagreeing items", item_columns, items)
    shown = Table(
        f"{stem}_disagreement_examples",
        f"{benchmark}: the first {EXAMPLES} disagreeing items",
        item_columns,
        [row[:6] + [Cell(_clip(row[6].text)), Cell(_clip(row[7].text))] for row in items[:EXAMPLES]],
        footnotes=[f"{len(items)} disagreeing item(s) in all: {stem}_disagreement_items.csv."],
    )
    return [count_table, shown, full]


# ------------------------------------------------------------------------------ the summary page
