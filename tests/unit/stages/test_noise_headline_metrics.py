"""A setting with several headline metrics (G-IdiomAlign Task 2: Acc@t and EM): the serving-noise
comparison and the disagreement tables keep each item's outcomes apart per metric, and an outcome
that was not scored (NaN: the similarity role not computed) is never a disagreement."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd

from idiombench.metrics.evaluate import OUTCOME_COLUMNS
from idiombench.stages import noise
from idiombench.stages.report_noise import disagreement_tables
from idiombench.statistics.config import UncertaintyConfig


def outcomes(em: list[float], acc: list[float]) -> pd.DataFrame:
    """Two headline metrics' outcomes of the same answers, one frame (as evaluate.headline_outcomes)."""
    frames = []
    for metric, values in (("Acc@0.80", acc), ("EM", em)):
        frames.append(
            pd.DataFrame(
                {
                    "prompt_id": [f"p{i}" for i in range(len(values))],
                    "sample_index": 0,
                    "unit": [f"u{i}" for i in range(len(values))],
                    "outcome": values,
                    "metric": metric,
                    "binary": True,
                }
            )[list(OUTCOME_COLUMNS)]
        )
    return pd.concat(frames, ignore_index=True)


def test_the_noise_comparison_pairs_each_metric_with_itself(monkeypatch) -> None:
    configured = outcomes([1.0, 0.0, 1.0], [1.0, 1.0, 0.0])
    perturbed = outcomes([1.0, 1.0, 1.0], [1.0, 1.0, 0.0])
    by_frame = {"configured": configured, "perturbed": perturbed}
    bench = SimpleNamespace(item_outcomes=lambda frame, setting, config: by_frame[frame.attrs["run"]])
    monkeypatch.setattr(noise, "get_benchmark", lambda name: bench)
    scores = pd.DataFrame({"prompt_id": ["p0", "p1", "p2"]})
    scores.attrs["run"] = "configured"
    monkeypatch.setattr(noise, "configured_rows", lambda *args: (scores, {f"p{i}": "same" for i in range(3)}))
    params = SimpleNamespace(benchmark=lambda name: None)
    perturbed_scores = scores.copy()
    perturbed_scores.attrs["run"] = "perturbed"
    joined = noise.compare_setting(params, "b", "m", "s", perturbed_scores, {f"p{i}": "same" for i in range(3)})
    assert joined is not None and len(joined) == 6  # 3 answers x 2 metrics, each with its own outcome
    assert joined[["prompt_id", "metric"]].values.tolist() == [
        [p, m] for p in ("p0", "p1", "p2") for m in ("Acc@0.80", "EM")
    ]
    flipped = joined[joined["flipped"]]
    assert flipped[["prompt_id", "metric"]].values.tolist() == [["p1", "EM"]]


def test_disagreements_are_per_metric_and_never_on_unscored_outcomes() -> None:
    nan = float("nan")
    found = {
        "a": {"no_gloss": outcomes([1.0, 0.0, 1.0], [nan, nan, nan]).assign(text="x")},
        "b": {"no_gloss": outcomes([0.0, 0.0, 1.0], [nan, nan, nan]).assign(text="y")},
    }
    params = SimpleNamespace(report=SimpleNamespace(uncertainty=UncertaintyConfig()))
    counts, shown, items = disagreement_tables(params, "g-idiomalign", found, str)
    # both footnotes name the file the full list is written to, by its table id
    for table in (counts, shown):
        assert f"{items.table_id}.csv" in table.footnotes[-1] and "{" not in table.footnotes[-1], table.footnotes
    assert [[c.text for c in row[:7]] for row in counts.rows] == [
        ["no_gloss", "Acc@0.80", "a", "b", "0", "0", "0"],
        ["no_gloss", "EM", "a", "b", "3", "1", "0"],
    ]
    assert items.columns[:3] == ["Setting", "Metric", "Prompt"]
    assert [[c.text for c in row[:6]] for row in items.rows] == [["no_gloss", "EM", "p0", "a", "b", "a"]]
    assert not np.isnan(float(counts.rows[1][7].text))
