"""params.yaml `report.uncertainty`: the intervals and tests the report prints per cell."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..core.schema import StrictModel


class UncertaintyConfig(StrictModel):
    enabled: bool = Field(True, description="Print bootstrap intervals and significance marks in the report's tables.")
    resamples: int = Field(1000, ge=100, le=100_000, description="Bootstrap resamples (and permutations) per unit set.")
    confidence: float = Field(0.95, gt=0.5, lt=1.0, description="Coverage of the percentile intervals.")
    seed: int = Field(0, ge=0, description="Seed of every resample draw: the same params give byte-identical tables.")
    test: Literal["paired-bootstrap", "paired-permutation"] = Field(
        "paired-bootstrap", description="The paired test between two models on the same units."
    )
    alpha: float = Field(0.05, gt=0.0, lt=1.0, description="FDR level of the Benjamini-Hochberg correction per table.")
    min_units: int = Field(
        10,
        ge=2,
        description="A cell resampled over fewer units (items or expressions) gets no interval and takes "
        "part in no test: a bootstrap over so few units cannot estimate the spread (one item gives ±0).",
    )


class ReportConfig(StrictModel):
    uncertainty: UncertaintyConfig = UncertaintyConfig()
