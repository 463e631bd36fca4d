"""params.yaml section `benchmarks.g-idiomalign`."""

from __future__ import annotations

from pydantic import Field

from ...generation.config import GenerateConfig
from ...schema import StrictModel


class GIdiomAlignBuild(StrictModel):
    duplicate_option_target_correct: bool = Field(
        True,
        description="On the MCQ items whose options contain the target idiom twice (48 of them name the "
        "copy at a distractor slot), count an answer whose option text equals the target idiom as correct.",
    )
    repair_mojibake: bool = Field(
        True,
        description="Every French idiom in the release is UTF-8 decoded as Latin-1 (`Ã©` for `é`); re-decode "
        "those byte sequences in idioms, glosses, options and MCQ instructions. false keeps the released text.",
    )


class GIdiomAlignConfig(StrictModel):
    enabled: bool = True
    build: GIdiomAlignBuild = GIdiomAlignBuild()
    generate: GenerateConfig = GenerateConfig()
