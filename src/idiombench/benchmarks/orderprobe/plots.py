"""OrderProbe's `dvc plots` curves: Recovery by scrambling pattern, per setting."""

from __future__ import annotations

from ..contexts import PlotSpec
from .results import OrderProbeBody

# the settings dvc.yaml plots (columns); a setting not run is null in every record
SETTINGS = ("zero_shot", "cot", "three_shot")


def recovery_by_pattern(body: object) -> list[dict[str, str | float | None]]:
    """One record per scrambling pattern: Recovery (default definition, %) per setting. `body`:
    the typed body the plots stage reads, or its JSON."""
    typed = body if isinstance(body, OrderProbeBody) else OrderProbeBody.model_validate(body)
    per_pattern = typed.breakdowns_or_empty().per_pattern
    patterns = sorted({p for setting in per_pattern.values() for p in setting})
    rows = []
    for pattern in patterns:
        row: dict[str, str | float | None] = {"pattern": pattern}
        for setting in SETTINGS:
            found = per_pattern.get(setting, {}).get(pattern)
            value = found.recovery_default if found is not None else None
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
