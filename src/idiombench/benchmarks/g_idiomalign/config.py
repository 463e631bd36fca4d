"""params.yaml section `benchmarks.g-idiomalign`."""

from __future__ import annotations

from pydantic import Field

from ...generation.config import GenerateConfig
from ...schema import StrictModel


class GIdiomAlignBuild(StrictModel):
    duplicate_option_target_correct: bool = Field(
        True,
        description="On the 48 MCQ items whose options contain the target idiom twice, count an answer "
        "whose option text equals the target idiom as correct.",
    )


class GIdiomAlignConfig(StrictModel):
    enabled: bool = True
    build: GIdiomAlignBuild = GIdiomAlignBuild()
    generate: GenerateConfig = GenerateConfig()
