"""params.yaml section `benchmarks.semanticqa`."""

from __future__ import annotations

from pydantic import Field

from ...generation.config import GenerateConfig
from ...schema import StrictModel

TASKS = (
    "idiom_detection",
    "idiom_extraction",
    "idiom_paraphrase",
    "collocation_categorization",
    "collocation_extraction",
    "collocation_interpretation",
    "noun_compound_compositionality",
    "noun_compound_extraction",
    "noun_compound_interpretation",
    "vmwe_extraction_LVC",
    "vmwe_extraction_VID",
    "vmwe_extraction_VPC",
)


class SemanticQABuild(StrictModel):
    tasks: list[str] = Field(default_factory=lambda: list(TASKS))


class SemanticQAConfig(StrictModel):
    enabled: bool = True
    build: SemanticQABuild = SemanticQABuild()
    generate: GenerateConfig = GenerateConfig()
