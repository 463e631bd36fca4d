"""Base class of every params.yaml section."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """Unknown keys are errors and values are not coerced silently (a string is not a bool)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=True)


def no_repeats(values: list[str]) -> list[str]:
    """Validator body for list params whose entries must be unique (settings, tasks)."""
    repeated = sorted({v for v in values if values.count(v) > 1})
    if repeated:
        raise ValueError(f"listed more than once: {', '.join(repeated)}")
    return values
