"""G-IdiomAlign's `dvc plots` curves: Task 2 Acc@t by similarity threshold, per condition."""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import JsonValue

from ..contexts import PlotSpec
from .results import GIdiomAlignBody

# the settings dvc.yaml plots (columns); a setting not run is null in every record
SETTINGS = ("no_gloss", "with_gloss")
ACC_AT = re.compile(r"Acc@(\d+(?:\.\d+)?)")


def acc_at_t(data: Mapping[str, object]) -> list[dict[str, JsonValue]]:
    """One record per threshold t: Acc@t (macro over directions, %) per Task 2 setting."""
    body = GIdiomAlignBody.model_validate(data)
    by_threshold: dict[str, dict[float, float | None]] = {}
    for setting, entry in body.settings.items():
        by_threshold[setting] = {
            float(m.group(1)): value
            for name, value in entry.metrics.items()
            if (m := ACC_AT.fullmatch(name)) and not isinstance(value, dict)
        }
    thresholds = sorted({t for values in by_threshold.values() for t in values})
    return [
        {"threshold": t, **{setting: by_threshold.get(setting, {}).get(t) for setting in SETTINGS}} for t in thresholds
    ]


PLOTS = (
    PlotSpec(
        "g-idiomalign-acc-at-t",
        "G-IdiomAlign Task 2 Acc@t by similarity threshold t (%)",
        "threshold",
        SETTINGS,
        acc_at_t,
    ),
)
