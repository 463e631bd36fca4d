"""A declared benchmark's params section (`benchmarks.<name>`), built from its declaration: the
sections every benchmark has (enabled, build, render, generate, score), every key with a default,
so params.yaml needs no section for it (pipeline/records.py writes the section DVC reads, with
these defaults; `generate` is params' `generate_defaults`, as for a plugin). A section written in
params.yaml overrides them key by key.

(No `from __future__ import annotations` here: the models are built inside a function, and
pydantic resolves their annotations there.)
"""

from pydantic import Field, field_validator

from ...core.schema import Name, StrictModel
from ...params.sections import BenchmarkSection, RenderSection, sample_field, settings_field
from .schema import Declaration


class DeclaredSample(StrictModel):
    """Which items are rendered: a seeded draw per split."""

    seed: int = Field(0, description="Seed of the draw (sha256-derived per split).")
    items_per_task: int | None = Field(None, ge=1, description="Items per split; null: all.")


class DeclaredRender(RenderSection):
    settings: list[Name] = settings_field(())
    exemplar_seed: int = Field(0, description="Seed of the k-shot exemplars' draw (per setting and item).")
    sample: DeclaredSample | None = sample_field()


class DeclaredScore(StrictModel):
    accept_unformatted: bool = Field(
        True,
        description="Count an answer read without the requested format (a bare label where a <label> tag "
        "was asked for, a letter inside a sentence); flagged either way (metric format_ok); false: it "
        "scores as wrong.",
    )


class DeclaredSection(BenchmarkSection):
    render: DeclaredRender = DeclaredRender()
    build: StrictModel = StrictModel()
    score: DeclaredScore = DeclaredScore()


def config_model(name: str, decl: Declaration) -> type[DeclaredSection]:
    """The params section of the benchmark `name` declared by `decl`: its settings by default,
    and only those."""
    declared = tuple(decl.settings)

    class Render(DeclaredRender):
        settings: list[Name] = settings_field(declared)

        @field_validator("settings")
        @classmethod
        def _declared(cls, value: list[str]) -> list[str]:
            unknown = [s for s in value if s not in declared]
            if unknown:
                raise ValueError(f"setting(s) {', '.join(unknown)} not declared (declared: {', '.join(declared)})")
            return value

    class Section(DeclaredSection):
        render: Render = Render()

    Render.__name__ = Render.__qualname__ = f"DeclaredRender[{name}]"
    Section.__name__ = Section.__qualname__ = f"DeclaredSection[{name}]"
    return Section
