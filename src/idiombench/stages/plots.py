"""Plot data for `dvc plots` (per-pattern Recovery, Acc@t) and the headline metrics for
`dvc exp show` (results/headline.json: one flat number per benchmark x model x setting,
where the per-benchmark metrics JSON holds thousands of nested values).

DVC plots read lists of records from JSON files; the metrics JSON nests its breakdowns,
so the `plots` stage flattens the curves each benchmark declares (`Benchmark.plots`) into
one file per model, e.g.

  results/plots/orderprobe-recovery-by-pattern/<model>.json  [{pattern, <setting>: Recovery %}, ...]
  results/plots/g-idiomalign-acc-at-t/<model>.json           [{threshold, <setting>: Acc@t %}, ...]

dvc.yaml's `plots:` names the setting columns, so every setting DVC expects is present in
every record (null where the setting was not run); a file per model makes each model a
series of its own in `dvc plots show` / `dvc plots diff`.
"""

from __future__ import annotations

from pathlib import Path

from ..benchmarks.registry import NAMES as BENCHMARKS
from ..benchmarks.registry import all_plots
from ..core import paths
from ..core.errors import IdiombenchError
from ..core.io import (
    check_output_file,
    check_output_folder,
    earlier_index,
    read_json,
    staged_directory,
    write_index,
    write_json,
)
from ..core.ownership import Output
from ..core.paths import PLOTS
from ..metrics.body import plain
from ..params.schema import Params
from .report import collect_metrics
from .track import headline_metrics

HEADLINE_FILE = Path("results/headline.json")


def headline(params: Params) -> dict[str, dict[str, dict[str, float]]]:
    """{benchmark: {model: {"<setting>/<metric>": value}}}: the MLflow parent runs' metrics."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for benchmark in BENCHMARKS:
        for model, body in sorted(collect_metrics(params, benchmark).items()):
            out.setdefault(benchmark, {})[model] = headline_metrics(params, benchmark, plain(body))
    return out


def _earlier_plots_folder(folder: Path) -> bool:
    """results/plots as an earlier version wrote it: with an index.json listing exactly its files,
    or (before index.json) holding only folders of JSON files named after the registered plots."""
    if earlier_index("plot-data")(folder):
        return True
    names = {plot.folder for _, plot in all_plots()}
    return all(
        entry.is_dir() and entry.name in names and all(f.suffix == ".json" for f in entry.iterdir())
        for entry in folder.iterdir()
    )


PLOTS_OUTPUT = Output("plot-data", "plot data", legacy_record=paths.INDEX, legacy=_earlier_plots_folder)


def _headline_record(path: Path) -> bool:
    """headline.json as plot-data writes it and nothing else: registered benchmark -> model ->
    {"<setting>/<metric>": a number or null}. It is DVC's flat metrics file for `dvc exp show`,
    so it carries no record of its own (that would add text columns): its whole content is the
    proof, and replacing it loses nothing but the numbers it would be rewritten with."""
    try:
        body = read_json(path)
    except IdiombenchError:
        return False
    if not isinstance(body, dict) or not set(body) <= set(BENCHMARKS):
        return False
    return all(
        isinstance(models, dict)
        and all(
            isinstance(metrics, dict)
            and all(isinstance(value, (int, float)) or value is None for value in metrics.values())
            for metrics in models.values()
        )
        for models in body.values()
    )


def check_plot_outputs(out: Path = PLOTS, headline_file: Path = HEADLINE_FILE) -> None:
    """Before any work: the outputs are absent or this stage's (it replaces only what it made)."""
    check_output_file(headline_file, _headline_record, "the headline metrics of `idiombench plot-data`")
    check_output_folder(out, PLOTS_OUTPUT)


def write_plot_data(params: Params, out: Path = PLOTS, headline_file: Path = HEADLINE_FILE) -> dict[str, int]:
    """Write every scored model's curves and the headline metrics; returns the number of
    files per plot."""
    check_plot_outputs(out, headline_file)
    write_json(headline_file, headline(params))
    plots = all_plots()
    counts = {plot.folder: 0 for _, plot in plots}
    with staged_directory(out, PLOTS_OUTPUT) as staging:
        for benchmark, plot in plots:
            (staging / plot.folder).mkdir(parents=True, exist_ok=True)
            for model, body in sorted(collect_metrics(params, benchmark).items()):
                rows = plot.rows_of(plain(body))  # the JSON a plot reads (PlotSpec.rows_of)
                if rows:
                    write_json(staging / plot.folder / f"{model}.json", rows)
                    counts[plot.folder] += 1
        write_index(staging / paths.INDEX, "plot-data")
    return counts
