"""params.yaml: the single definition of the experiment grid, validated by a schema.

Unknown keys, wrong types and missing sections are reported together in one
message that names each key (`benchmarks.orderprobe.build.dedupe: ...`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, create_model

from .benchmarks import MODULES, NAMES, get_benchmark
from .errors import ConfigError
from .generation.config import ModelConfig
from .schema import StrictModel
from .scoring.config import ScoringConfig

DEFAULT_PARAMS = Path("params.yaml")


class DataConfig(StrictModel):
    mirror: str | list[str] | None = Field(
        ["../shared/benchmarks", "../shared/reference-code"],
        description="Directories mirroring the upstream files (each laid out <benchmark>/<path>), searched in "
        "order; IDIOMBENCH_MIRROR (directories separated by ':') overrides it.",
    )
    download: bool = Field(True, description="Fall back to the pinned upstream URL when the mirror lacks a file.")
    timeout_s: float = Field(60.0, gt=0)



class _BenchmarksBase(StrictModel):
    def get(self, name: str) -> Any:
        for field_name, info in type(self).model_fields.items():
            if name in (field_name, info.alias):
                return getattr(self, field_name)
        raise KeyError(f"unknown benchmark {name!r} (known: {', '.join(NAMES)})")


def _benchmarks_model() -> type[_BenchmarksBase]:
    """`benchmarks:` of params.yaml, one section per registered benchmark (its
    `config_model`), keyed by the benchmark's name: the schema comes from the registry."""
    fields: dict[str, Any] = {
        MODULES[name]: (get_benchmark(name).config_model, Field(alias=name)) for name in NAMES
    }
    return create_model("BenchmarksConfig", __base__=_BenchmarksBase, **fields)


BenchmarksConfig = _benchmarks_model()


class Params(StrictModel):
    profile: str = Field(description="Name of this configuration, printed on the report's title page.")
    seed: int = 0
    data: DataConfig = DataConfig()
    benchmarks: BenchmarksConfig
    models: dict[str, ModelConfig] = Field(default_factory=dict)
    scoring: ScoringConfig = Field(description="Neural scorer roles: which model each metric term runs with.")

    def benchmark(self, name: str) -> Any:
        return self.benchmarks.get(name)


_TYPE_WORDS = {
    "bool_type": "expected true or false",
    "int_type": "expected an integer",
    "float_type": "expected a number",
    "string_type": "expected a string",
    "list_type": "expected a list",
    "dict_type": "expected a mapping",
    "model_type": "expected a mapping",
    "literal_error": None,
    "missing": "missing (this key is required)",
    "extra_forbidden": "unknown key",
}


def _format_error(error: dict[str, Any], model: type[BaseModel]) -> str:
    key = ".".join(str(part) for part in error["loc"]) or "(top level)"
    kind = error["type"]
    message = _TYPE_WORDS.get(kind) or error["msg"]
    if kind == "extra_forbidden":
        parent = _model_at(model, error["loc"][:-1])
        if parent is not None:
            allowed = sorted(info.alias or name for name, info in parent.model_fields.items())
            message += f" (allowed here: {', '.join(allowed)})"
    elif kind != "missing":
        message += f", got {error.get('input')!r}"
    return f"{key}: {message}"


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    current: Any = model
    for part in loc:
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        field = next(
            (info for name, info in current.model_fields.items() if part in (name, info.alias)), None
        )
        if field is None:
            return None
        current = field.annotation
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def parse_params(raw: Any, source: str = "params.yaml") -> Params:
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: expected a mapping at the top level, got {type(raw).__name__}")
    try:
        return Params.model_validate(raw)
    except ValidationError as exc:
        lines = [_format_error(e, Params) for e in exc.errors()]  # type: ignore[arg-type]
        raise ConfigError(f"{source}: invalid parameters\n" + "\n".join(f"  {line}" for line in lines)) from None


def load_params(path: str | Path = DEFAULT_PARAMS) -> Params:
    """A params file (or an overlay on one: see overlay.py), validated and defaulted."""
    from .overlay import read_params_raw

    return parse_params(read_params_raw(path), str(path))
