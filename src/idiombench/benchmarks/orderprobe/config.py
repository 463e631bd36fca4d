"""params.yaml section `benchmarks.orderprobe`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from ...generation.config import GenerateConfig, SamplingConfig
from ...schema import StrictModel
from ...schema import no_repeats

Language = Literal["zh-CN", "zh-TW", "ja", "ko"]
ALL_LANGUAGES: list[Language] = ["zh-CN", "zh-TW", "ja", "ko"]


class OrderProbeBuild(StrictModel):
    languages: list[Language] = Field(default_factory=lambda: list(ALL_LANGUAGES))
    dedupe: bool = Field(
        False,
        description="Merge repeated expressions of a language (references united). Default keeps the "
        "released rows, matching the paper's 3,543 expressions.",
    )
    placeholder_references: list[str] = Field(
        default_factory=lambda: ["zdic解释"],
        description="Reference cells that are placeholders, not glosses; removed from the reference list.",
    )


RenderSetting = Literal["zero_shot", "cot", "three_shot"]
RENDER_SETTINGS: list[RenderSetting] = ["zero_shot", "cot", "three_shot"]


class OrderProbeSample(StrictModel):
    """Which items are rendered: whole expressions (all 24 inputs each), drawn per language."""

    seed: int = Field(0, description="Seed of the draw (sha256-derived per language; independent of Python's hash).")
    expressions_per_language: int | None = Field(
        None, ge=1, description="Expressions drawn per language, each with all its inputs (23 permutations + "
        "the canonical form). null: every expression.",
    )


class OrderProbeRender(StrictModel):
    """`idiombench render orderprobe`: the paper's prompt settings (appendix C, tables 8-10)."""

    settings: list[RenderSetting] = Field(
        default_factory=lambda: list(RENDER_SETTINGS),
        description="zero_shot (table 8), cot (table 10), three_shot (table 9); one prompts file each.",
    )
    join_system_messages: bool = Field(
        False,
        description="three_shot has two system messages (table 9); true joins them with a newline into one, for "
        "chat templates that accept a single system message. Default keeps the table's two messages.",
    )
    sample: OrderProbeSample | None = Field(None, description="null: every item.")

    @field_validator("settings")
    @classmethod
    def _unique_settings(cls, settings: list[str]) -> list[str]:
        return no_repeats(settings)


class OrderProbeConfig(StrictModel):
    enabled: bool = True
    render: OrderProbeRender = OrderProbeRender()
    build: OrderProbeBuild = OrderProbeBuild()
    generate: GenerateConfig = GenerateConfig(extra={"consistency": SamplingConfig(n=5, temperature=0.7)})
