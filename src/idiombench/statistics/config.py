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


class PublishedConfig(StrictModel):
    """The papers' published values in the report (docs/papers.md#published-values)."""

    reference_rows: bool = Field(
        True,
        description="Print the papers' models the run does not include as reference rows of the paper tables "
        "(their published values, marked; never the best mark).",
    )
    reproduces: dict[str, str] = Field(
        default_factory=dict,
        description="Model key -> the paper model it reproduces (the model_id of the benchmarks' published values, "
        "e.g. qwen3-8b): its cells are shown beside the paper's, with the difference and whether the paper's value "
        "lies within the cell's interval and the model's serving-noise floor.",
    )


class ReportConfig(StrictModel):
    uncertainty: UncertaintyConfig = UncertaintyConfig()
    published: PublishedConfig = PublishedConfig()
