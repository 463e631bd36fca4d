"""Base class of every params.yaml section."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """Unknown keys are errors and values are not coerced silently (a string is not a bool)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=True)
