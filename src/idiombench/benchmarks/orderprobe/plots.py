"""OrderProbe's `dvc plots` curves: Recovery by scrambling pattern, per setting."""

from __future__ import annotations

from typing import Any

from ..contexts import PlotSpec

# the settings dvc.yaml plots (columns); a setting not run is null in every record
SETTINGS = ("zero_shot", "cot", "three_shot")


def recovery_by_pattern(body: dict[str, Any]) -> list[dict[str, Any]]:
    """One record per scrambling pattern: Recovery (default definition, %) per setting."""
    per_pattern: dict[str, dict[str, Any]] = body.get("breakdowns", {}).get("per_pattern", {})
    patterns = sorted({p for setting in per_pattern.values() for p in setting})
    rows = []
    for pattern in patterns:
        row: dict[str, Any] = {"pattern": pattern}
        for setting in SETTINGS:
            value = per_pattern.get(setting, {}).get(pattern, {}).get("recovery_default")
            row[setting] = None if value is None else round(100.0 * value, 4)
        rows.append(row)
    return rows


PLOTS = (
    PlotSpec(
        "orderprobe-recovery-by-pattern",
        "OrderProbe Recovery by scrambling pattern (%)",
        "pattern",
        SETTINGS,
        recovery_by_pattern,
    ),
)
