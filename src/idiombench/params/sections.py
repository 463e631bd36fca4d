"""What every benchmark's params section (`benchmarks.<name>` in params.yaml) is built from, so the
benchmark packages declare only their own knobs: the section's base (`enabled`, `render`, `build`,
`generate`, `score`, in that order), the `render` section's base (its `settings`, each listed once)
and the fields every render section has."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import Field, field_validator

from ..core.schema import StrictModel, no_repeats
from ..generation.config import GenerateConfig


class RenderSection(StrictModel):
    """Base of a benchmark's `render` section. The subclass declares `settings` (its prompt
    settings, with `settings_field`), its own knobs and `sample` (with `sample_field`), in the
    order params.yaml shows them; this base checks that no setting is listed twice."""

    @field_validator("settings", check_fields=False)
    @classmethod
    def _unique_settings(cls, settings: list[str]) -> list[str]:
        return no_repeats(settings)


def settings_field(defaults: Sequence[str], description: str | None = None) -> Any:
    """The `settings` field: every setting of `defaults` unless params.yaml lists fewer."""
    return Field(default_factory=lambda: list(defaults), description=description)


def sample_field() -> Any:
    """The `sample` field: which items are rendered (the benchmark's sample model), null for all."""
    return Field(None, description="null: every item.")


class BenchmarkSection(StrictModel):
    """Base of a benchmark's params section (its `config_model`). The subclass re-declares `render`,
    `build` and `score` with its own models (and `generate` where its defaults differ); a field
    re-declared keeps its place here, so params.yaml and `idiombench params` show every section in
    this order, the benchmark's own sections after."""

    enabled: bool = True
    render: RenderSection = RenderSection()
    build: StrictModel = StrictModel()
    generate: GenerateConfig = GenerateConfig()
    score: StrictModel = StrictModel()
