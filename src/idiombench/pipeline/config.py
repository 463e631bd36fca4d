"""params.yaml: the single definition of the experiment grid, validated by a schema.

Unknown keys, wrong types and missing sections are reported together in one
message that names each key (`benchmarks.<name>.build.<key>: ...`).

This module composes the schema: the generic sections (params/schema.py) and one section per
registered benchmark (its `config_model`, from the registry), and attaches what the lower
layers need from the benchmarks (the scorer roles' paper facts). It sits above both, so the
generic schema knows no benchmark and no benchmark knows this module.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field, ValidationError, create_model, field_validator, model_validator

from ..benchmarks.registry import (
    BUILTIN,
    DECLARED,
    NAMES,
    declaration_problems,
    get_benchmark,
    paper_roles,
    prediction_formats,
)
from ..core.errors import ConfigError
from ..core.redact import note_key_variables
from ..generation.backends.replay import known_formats
from ..generation.config import GenerateConfig, ReplayModel, ReplaySource
from ..params import schema as params_schema
from ..params.overlay import merge, read_params_raw
from ..params.schema import (
    BenchmarksSections,
    consistency_problems,
    credential_problems,
    key_variables,
    validation_problems,
)
from ..scoring.config import ScoringConfig

DEFAULT_PARAMS = Path("params.yaml")


def _section(name: str) -> tuple[type[object], object]:
    """A benchmark's section: required for the built-in benchmarks (dvc.yaml reads their keys
    from params.yaml); a benchmark a package registers or a declaration makes runs with its
    config_model's defaults until params name it (when every key has a default). An invalid
    declaration's section is anything: parse_params reports the declaration's problems first."""
    if name in DECLARED:
        try:
            get_benchmark(name)
        except ConfigError:
            return Any, Field(None, alias=name)
    model = get_benchmark(name).config_model
    if name in BUILTIN:
        return model, Field(alias=name)
    try:
        model()
    except ValidationError:
        return model, Field(alias=name)
    return model, Field(default_factory=model, alias=name)


def _benchmarks_model() -> type[BenchmarksSections]:
    """`benchmarks:` of params.yaml, one section per registered benchmark (its
    `config_model`), keyed by the benchmark's name: the schema comes from the registry."""
    fields: dict[str, Any] = {name.replace("-", "_"): _section(name) for name in NAMES}
    return create_model("BenchmarksConfig", __base__=BenchmarksSections, **fields)


BenchmarksConfig = _benchmarks_model()


class Params(params_schema.Params):
    """The whole params file: the generic sections and the registered benchmarks' own."""

    if TYPE_CHECKING:  # a class built at import (from the registry): mypy sees its base
        benchmarks: BenchmarksSections
    else:
        benchmarks: BenchmarksConfig

    @model_validator(mode="before")
    @classmethod
    def _generate_defaults(cls, raw: object) -> object:
        return with_generate_defaults(raw)

    @field_validator("scoring")
    @classmethod
    def _attach_paper_roles(cls, scoring: ScoringConfig) -> ScoringConfig:
        return scoring.with_paper_roles(paper_roles())


def _own_generate(name: str) -> dict[str, object] | None:
    """The `generate` default of a benchmark's section model (None: it declares none)."""
    field = get_benchmark(name).config_model.model_fields.get("generate")
    if field is None:
        return None
    default = field.get_default(call_default_factory=True)
    return default.model_dump(mode="json") if hasattr(default, "model_dump") else None


def with_generate_defaults(raw: object) -> object:
    """`raw` params where every registered benchmark whose section sets no `generate` (a plugin
    without a section, or a section without the key) gets the benchmark's own `generate` with
    params' `generate_defaults` merged onto it key by key: the profile's decoding (the embedded
    default's short outputs, the paper's 512 tokens) rather than SamplingConfig's 256 tokens.
    A section that sets `generate` is taken as written. `raw` itself is not modified."""
    if not isinstance(raw, dict) or not isinstance(raw.get("generate_defaults"), dict):
        return raw
    try:  # invalid defaults are reported once, at their own key, not again in every section
        GenerateConfig.model_validate(raw["generate_defaults"])
    except ValidationError:
        return raw
    sections = raw.get("benchmarks")
    if sections is not None and not isinstance(sections, dict):
        return raw  # the schema reports it
    sections = dict(sections or {})
    for name in NAMES:
        section = sections.get(name, {})
        if not isinstance(section, dict) or "generate" in section:
            continue
        own = _own_generate(name)
        if own is None or (name in BUILTIN and name not in sections):
            continue  # a built-in benchmark's missing section is reported as missing
        sections[name] = {**section, "generate": merge(own, raw["generate_defaults"], set())}
    return {**raw, "benchmarks": sections}


def parse_params(raw: object, source: str = "params.yaml") -> Params:
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: expected a mapping at the top level, got {type(raw).__name__}")
    # Before anything can quote them: the key variables' values are scrubbed from every error,
    # and a credential written into params is refused, naming its key, never quoted.
    note_key_variables(key_variables(raw))
    declarations = declaration_problems()  # each names its declaration file and key
    if declarations:
        raise ConfigError("; ".join(declarations))
    secrets = credential_problems(raw)
    try:
        params = Params.model_validate(raw)
    except ValidationError as exc:
        problems = secrets + validation_problems(exc, Params)
        raise ConfigError(f"{source}: invalid parameters: " + "; ".join(problems)) from None
    problems = secrets + consistency_problems(params) + registry_problems(params)
    if problems:
        raise ConfigError(f"{source}: invalid parameters: " + "; ".join(problems))
    return with_published_sources(params)


def released_runs(params: Params) -> dict[str, dict[str, list[ReplaySource]]]:
    """paper model id -> benchmark -> the replay sources of its released predictions (the
    enabled benchmarks' `published_runs`)."""
    runs: dict[str, dict[str, list[ReplaySource]]] = {}
    for name in NAMES:
        if params.benchmark(name).enabled:
            for paper_model, sources in get_benchmark(name).published_runs(params.benchmark(name)).items():
                if sources:
                    runs.setdefault(paper_model, {})[name] = sources
    return runs


def with_published_sources(params: Params) -> Params:
    """`params` where each replay model with `published` has its paper model's released files as
    sources (before its own) and, unless it selects benchmarks, runs only the benchmarks holding them."""
    wanted = {name: m for name, m in params.models.items() if isinstance(m, ReplayModel) and m.published}
    if not wanted:
        return params
    runs = released_runs(params)
    models = dict(params.models)
    for name, model in wanted.items():
        released = runs.get(str(model.published), {})
        models[name] = model.model_copy(
            update={
                "sources": [s for sources in released.values() for s in sources] + model.sources,
                "benchmarks": model.benchmarks if model.benchmarks is not None else sorted(released),
            }
        )
    return params.model_copy(update={"models": models})


def registry_problems(params: Params) -> list[str]:
    """Rules that need the registry: a replay source's format is one a benchmark registers; a
    reproduced paper model is one whose values a benchmark publishes."""
    formats = known_formats(prediction_formats())
    problems = []
    reproduced = params.report.published.reproduces
    papers = {c.model_id for name in NAMES if reproduced for c in get_benchmark(name).published_cells()} - {None}
    for model_name, paper_model in sorted(reproduced.items()):
        if paper_model not in papers:
            problems.append(
                f"report.published.reproduces.{model_name}: no benchmark publishes values of {paper_model!r} "
                f"(the papers' models: {', '.join(sorted(str(p) for p in papers))})"
            )
    released = released_runs(params) if any(getattr(m, "published", None) for m in params.models.values()) else {}
    for model_name, model in params.models.items():
        published = getattr(model, "published", None)
        if published is not None and published not in released:
            problems.append(
                f"models.{model_name}.published: no enabled benchmark releases per-item predictions of "
                f"{published!r} (released: {', '.join(sorted(released)) or 'none'})"
            )
        for index, source in enumerate(getattr(model, "sources", [])):
            if source.format not in formats:
                problems.append(
                    f"models.{model_name}.sources.{index}.format: unknown predictions format "
                    f"{source.format!r} (known: {', '.join(formats)})"
                )
    return problems


def load_params(path: str | Path = DEFAULT_PARAMS) -> Params:
    """A params file (or an overlay on one: see params/overlay.py), validated and defaulted."""
    return parse_params(read_params_raw(path), str(path))
