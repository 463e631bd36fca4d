"""params.yaml section `benchmarks.g-idiomalign`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from ...generation.config import GenerateConfig
from ...schema import StrictModel
from ...schema import no_repeats


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


RenderSetting = Literal["mcq", "no_gloss", "with_gloss"]
RENDER_SETTINGS: list[RenderSetting] = ["mcq", "no_gloss", "with_gloss"]


class GIdiomAlignSample(StrictModel):
    """Which items are rendered: a seeded draw per translation direction (the same Task 2 items
    in no_gloss and with_gloss, so the two conditions stay paired)."""

    seed: int = Field(0, description="Seed of the draw (sha256-derived per task and direction).")
    mcq_per_direction: int | None = Field(None, ge=1, description="Task 1 items per direction; null: all.")
    generation_per_direction: int | None = Field(
        None, ge=1, description="Task 2 items per direction (both conditions); null: all."
    )


class GIdiomAlignRender(StrictModel):
    """`idiombench render g-idiomalign`: Task 1 with the released instruction, Task 2 with the
    paper's appendix G prompts."""

    settings: list[RenderSetting] = Field(
        default_factory=lambda: list(RENDER_SETTINGS),
        description="mcq (Task 1, task `mcq`), no_gloss and with_gloss (Task 2, task `gloss_generation`).",
    )
    additional_pairs: bool = Field(
        False,
        description="Also render Task 2 over the 42 additional language pairs (task gloss_generation_additional, "
        "reported separately, never mixed into the main tables).",
    )
    sample: GIdiomAlignSample | None = Field(None, description="null: every item.")

    @field_validator("settings")
    @classmethod
    def _unique_settings(cls, settings: list[str]) -> list[str]:
        return no_repeats(settings)


class GIdiomAlignConfig(StrictModel):
    enabled: bool = True
    render: GIdiomAlignRender = GIdiomAlignRender()
    build: GIdiomAlignBuild = GIdiomAlignBuild()
    generate: GenerateConfig = GenerateConfig()
