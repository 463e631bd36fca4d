"""G-IdiomAlign's `dvc plots` curves: Task 2 Acc@t by similarity threshold, per condition."""

from __future__ import annotations

import re
from typing import Any

from ..contexts import PlotSpec

# the settings dvc.yaml plots (columns); a setting not run is null in every record
SETTINGS = ("no_gloss", "with_gloss")
ACC_AT = re.compile(r"Acc@(\d+(?:\.\d+)?)")


def acc_at_t(body: dict[str, Any]) -> list[dict[str, Any]]:
    """One record per threshold t: Acc@t (macro over directions, %) per Task 2 setting."""
    settings = body.get("settings", {})
    thresholds = sorted(
        {float(m.group(1)) for s in settings.values() for name in s.get("metrics", {}) if (m := ACC_AT.fullmatch(name))}
    )
    rows = []
    for t in thresholds:
        row: dict[str, Any] = {"threshold": t}
        for setting in SETTINGS:
            metrics = settings.get(setting, {}).get("metrics", {})
            row[setting] = next(
                (v for name, v in metrics.items() if (m := ACC_AT.fullmatch(name)) and float(m.group(1)) == t), None
            )
        rows.append(row)
    return rows


PLOTS = (
    PlotSpec(
        "g-idiomalign-acc-at-t",
        "G-IdiomAlign Task 2 Acc@t by similarity threshold t (%)",
        "threshold",
        SETTINGS,
        acc_at_t,
    ),
)
