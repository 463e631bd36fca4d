"""params.yaml section `benchmarks.orderprobe`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ...generation.config import GenerateConfig, SamplingConfig
from ...schema import StrictModel

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


class OrderProbeConfig(StrictModel):
    enabled: bool = True
    build: OrderProbeBuild = OrderProbeBuild()
    generate: GenerateConfig = GenerateConfig(extra={"consistency": SamplingConfig(n=5, temperature=0.7)})
