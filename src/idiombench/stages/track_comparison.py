"""Where the models disagree on one benchmark, in MLflow (docs/report-and-mlflow.md,
"Disagreement in MLflow").

After every model's `track` of the benchmark, `track-comparison` takes the report's disagreement
(stages/report_noise.py: the same pairs of models, item outcomes and disagreeing items) and
- logs it to one run of the benchmark's experiment, keyed "<benchmark>/comparison", whose
  parameter is the models compared: the counts table and the full list of disagreeing items
  as artifacts (`disagreement/`, the tables the report writes), and for each pair, setting and
  headline metric the counts and McNemar's p as metrics;
- tags the traces of each disagreeing item (the main pass, every model's trace of it where the
  item is traced): `disagreement` = "true", and `disagrees_with.<other model>` = "right" or
  "wrong" (this trace's outcome; the other model's is the opposite; "mixed" where metrics
  differ), so the experiment's Traces view filters to them (`tags.disagreement = 'true'`,
  ``tags.`disagrees_with.smollm2` = 'wrong'``). A trace that no longer disagrees loses these
  tags: after a run exactly the current disagreement is tagged.
A rerun on the same scores changes no tag, updates the same run and writes the same artifacts.
"""

from __future__ import annotations

import tempfile
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..benchmarks.contexts import ReportContext
from ..core import paths
from ..core.io import write_json
from ..core.ownership import stamp, stamped_by
from ..core.progress import Progress
from ..params.schema import Params
from ..statistics.agreement import disagreement
from .report import collect_metrics
from .report_noise import Pair, disagreement_tables, model_pairs, outcomes, split_rows
from .track import (
    KEY_TAG,
    ensure_experiment,
    find_or_create_run,
    log_to_run,
    metric_name,
    source_tags,
    store_errors,
    store_lock,
    tracking_uri,
    ui_url,
)
from .track_traces import existing_traces

if TYPE_CHECKING:
    from mlflow import MlflowClient

DISAGREEMENT_TAG = "disagreement"
PARTNER_PREFIX = "disagrees_with."
MAIN_PASS = "main"
RUN_NAME = "model comparison"

# (model, setting) -> (prompt_id, sample) -> the disagreement tags its trace should carry
WantedTags = dict[tuple[str, str], dict[tuple[str, str], dict[str, str]]]


def wanted_tags(pairs: Sequence[Pair]) -> WantedTags:
    """Every disagreeing item's tags, per model and setting."""
    outcome: dict[tuple[str, str], dict[tuple[str, str], dict[str, set[str]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(set))
    )
    for setting, _metric, a, b, group in pairs:
        for _, row in split_rows(group).iterrows():
            item = (str(row["prompt_id"]), str(int(row["sample_index"])))
            a_right = row["outcome_a"] == 1.0
            outcome[(a, setting)][item][b].add("right" if a_right else "wrong")
            outcome[(b, setting)][item][a].add("wrong" if a_right else "right")
    wanted: WantedTags = {}
    for scope, items in outcome.items():
        wanted[scope] = {
            item: {DISAGREEMENT_TAG: "true"}
            | {
                PARTNER_PREFIX + other: next(iter(seen)) if len(seen) == 1 else "mixed"
                for other, seen in partners.items()
            }
            for item, partners in items.items()
        }
    return wanted


def pair_metrics(pairs: Sequence[Pair]) -> dict[str, float]:
    """`disagreement/<setting>/<metric>/<A>_vs_<B>/<count>` for each pair: items both answer
    right or wrong, A right and B wrong, the reverse, McNemar's exact p."""
    metrics: dict[str, float] = {}
    for setting, metric, a, b, group in pairs:
        result = disagreement(group["outcome_a"].to_numpy(), group["outcome_b"].to_numpy())
        prefix = f"disagreement/{setting}/{metric}/{a}_vs_{b}"
        for name, value in (
            ("items", result.items),
            ("a_right_b_wrong", result.only_a),
            ("a_wrong_b_right", result.only_b),
            ("mcnemar_p", result.p),
        ):
            metrics[metric_name(f"{prefix}/{name}")] = float(value)
    return metrics


def sync_trace_tags(
    client: MlflowClient, experiment_id: str, benchmark: str, models: list[str], wanted: WantedTags
) -> dict[str, int]:
    """Set the wanted tags on the models' main-pass traces and remove the disagreement tags of the
    rest; counts of traces tagged, changed and cleared."""
    counts = {"tagged": 0, "changed": 0, "cleared": 0}
    scopes = [
        (model, path.stem)
        for model in models
        for path in sorted(paths.scores_dir(benchmark=benchmark, model=model).glob("*.parquet"))
    ]
    with Progress(len(scopes), f"track-comparison {benchmark}", unit="run") as progress:
        for model, setting in scopes:
            mine = wanted.get((model, setting), {})
            for trace_id, info in existing_traces(client, experiment_id, f"{benchmark}/{model}/{setting}").items():
                if info.tags.get("pass") != MAIN_PASS:
                    continue
                target = mine.get((info.tags.get("prompt_id", ""), info.tags.get("sample", "")), {})
                current = {k: v for k, v in info.tags.items() if k == DISAGREEMENT_TAG or k.startswith(PARTNER_PREFIX)}
                counts["tagged"] += bool(target)
                if current == target:
                    continue
                for key in sorted(set(current) - set(target)):
                    client.delete_trace_tag(trace_id, key)
                for key, value in sorted(target.items()):
                    if current.get(key) != value:
                        client.set_trace_tag(trace_id, key, value)
                counts["changed" if target else "cleared"] += 1
            progress.update(1)
    return counts


def is_comparison_record(path: Path) -> bool:
    return stamped_by(path, paths.COMPARISON_OUTPUT)


def track_comparison(params: Params, *, benchmark: str, out: Path | None = None) -> dict[str, Any]:
    """Log the benchmark's disagreement to its comparison run and tag the disagreeing traces."""
    from mlflow.tracking import MlflowClient

    out = out or paths.comparison_record(benchmark)
    models = list(collect_metrics(params, benchmark))  # the scored models, in params order
    found = outcomes(params, benchmark, models)
    context = ReportContext(params=params, benchmark=benchmark, metrics={}, figures_dir=Path("."))
    tables = disagreement_tables(params, benchmark, found, context.display_name)
    pairs = list(model_pairs(found))  # each pair's rows merged once, for the tags, metrics and counts
    wanted = wanted_tags(pairs)
    record: dict[str, Any] = {"benchmark": benchmark, "experiment": benchmark, "models": models}
    record["pairs"] = len(pairs)
    record["disagreeing_rows"] = sum(len(split_rows(group)) for *_, group in pairs)
    uri = tracking_uri()
    with store_lock(uri), store_errors(uri, f"idiombench track-comparison {benchmark}"):
        client = MlflowClient(tracking_uri=uri)
        experiment_id = ensure_experiment(client, benchmark)
        record["ui"] = ui_url(experiment_id)
        record["run"] = None
        key = f"{benchmark}/comparison"
        if not tables:  # nothing to compare (any more): an earlier comparison run would show stale items
            for run in client.search_runs([experiment_id], filter_string=f"tags.`{KEY_TAG}` = '{key}'"):
                client.delete_run(run.info.run_id)  # soft-deleted: recoverable, as re-tracking does
        else:  # two models or more, with right/wrong outcomes in a common setting
            counts = {"created": 0, "updated": 0, "replaced": 0}
            tags = {
                KEY_TAG: key,
                "idiombench.benchmark": benchmark,
                "idiombench.level": "comparison",
                "idiombench.profile": params.profile,
                **source_tags(benchmark),
                "mlflow.note.content": f"Where the models disagree on {benchmark}: artifacts disagreement/ "
                "(the counts and every disagreeing item); the items' traces carry the tag disagreement = true "
                "and disagrees_with.<other model> = right | wrong.",
            }
            run_id = find_or_create_run(
                client, experiment_id, key, {"models": ",".join(models)}, tags, RUN_NAME, counts
            )
            log_to_run(client, run_id, pair_metrics(pairs), tags)
            with tempfile.TemporaryDirectory() as staging:
                for table in (tables[0], tables[-1]):  # the counts and every disagreeing item
                    table.write(Path(staging))
                client.log_artifacts(run_id, staging, "disagreement")
            client.set_terminated(run_id)
            record["run"] = {"run_id": run_id, "counts": counts}
        record["traces"] = sync_trace_tags(client, experiment_id, benchmark, models, wanted)
    write_json(out, stamp(record, paths.COMPARISON_OUTPUT))
    return record
