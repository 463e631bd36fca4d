"""params.yaml's schema, every section but the benchmarks' own: the run's seed and profile,
data, models, scoring, report, and the cross-key rules (`consistency_problems`).

The benchmarks' sections come from the registry, which sits above this layer: config.py
composes this `Params` with one section per registered benchmark (`benchmarks.<name>`, its
`config_model`). Stages type their params as this `Params`; they read a benchmark's section
with `params.benchmark(name)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, Field, ValidationError
from pydantic_core import ErrorDetails

from ..core.redact import credential_in, scrub_message
from ..core.schema import INVALID_NAME, INVALID_VARIABLE, Key, StrictModel
from ..generation.config import GenerateConfig, ModelConfig, backend_names
from ..scoring.config import ScoringConfig
from ..statistics.config import ReportConfig
from .sections import BenchmarkSection

BACKENDS = backend_names()
OPENAI_KEY_DEFAULT = "OPENAI_API_KEY"  # generation.config.OpenAIModel.api_key_env's default


class DataConfig(StrictModel):
    mirror: str | list[str] | None = Field(
        default_factory=list,
        description="Local directories holding copies of the upstream files (each laid out <benchmark>/<path>), "
        "searched in order before downloading; IDIOMBENCH_MIRROR (directories separated by ':') overrides it. "
        "Empty: every file is downloaded from its pinned upstream commit.",
    )
    download: bool = Field(True, description="Fall back to the pinned upstream URL when the mirror lacks a file.")
    timeout_s: float = Field(60.0, gt=0)


class TracesConfig(StrictModel):
    """`tracking.traces`: the scored items `track` logs as MLflow traces (stages/track_traces.py)."""

    enabled: bool = Field(
        True,
        description="Log one MLflow trace per scored row (inputs, outputs, reference, one "
        "assessment per item-level metric) into its setting's run.",
    )
    sample: int | None = Field(
        None,
        ge=1,
        description="At most this many items per (model, benchmark, setting) run get a trace: a seeded draw "
        "stratified by the benchmark's strata (the same items for every model); every item is still in the run's item "
        "table artifact. null: every item.",
    )
    seed: int = Field(0, description="Seed of the sample draw.")


class TrackingConfig(StrictModel):
    traces: TracesConfig = TracesConfig()


# The serving settings the noise pass varies by default: each a change of the model's own config
# (docs/METRICS.md#8-serving-noise). A value equal to what the run resolved to is no change and is
# recorded as such (e.g. float32 where dtype auto already resolves to float32).
DEFAULT_PERTURBATIONS: dict[str, dict[str, int | str]] = {
    "batch_size_1": {"batch_size": 1},
    "float32": {"dtype": "float32"},
    "eager_attention": {"attn_implementation": "eager"},
}


class ServingNoiseConfig(StrictModel):
    """`serving_noise`: how much of a score is the serving setup (stages/noise.py)."""

    enabled: bool = Field(True, description="Run the serving-noise pass for every model with weights (hf, vllm).")
    sample_size: int = Field(
        8,
        ge=1,
        description="Items per benchmark, a seeded draw spread over its (task, setting) strata in proportion "
        "to their sizes (the same items for every model).",
    )
    seed: int = Field(0, description="Seed of the sample draw.")
    perturbations: dict[Key, dict[Key, Any]] = Field(
        default_factory=lambda: {name: dict(change) for name, change in DEFAULT_PERTURBATIONS.items()},
        description="name -> the model config keys it changes (e.g. batch_size_1: {batch_size: 1}); a key the "
        "model's backend lacks makes the perturbation not applicable to that model.",
    )


class BenchmarksSections(StrictModel):
    """`benchmarks:`, one section per registered benchmark (config.BenchmarksConfig adds the fields)."""

    def names(self) -> tuple[str, ...]:
        """The benchmarks' names (the sections' keys in params.yaml), in registry order."""
        return tuple(info.alias or name for name, info in type(self).model_fields.items())

    def get(self, name: str) -> object:
        for field_name, info in type(self).model_fields.items():
            if name in (field_name, info.alias):
                return getattr(self, field_name)
        raise KeyError(f"unknown benchmark {name!r} (known: {', '.join(self.names())})")


class Params(StrictModel):
    profile: str = Field(description="Name of this configuration, printed on the report's title page.")
    seed: int = 0
    data: DataConfig = DataConfig()
    benchmarks: BenchmarksSections
    generate_defaults: GenerateConfig | None = Field(
        None,
        description="This profile's generation passes for a benchmark whose section sets no `generate` (a plugin "
        "without a params section): merged key by key onto the benchmark's own default (pipeline/config.py). "
        "null: the benchmark's own default (SamplingConfig: 256 new tokens).",
    )
    models: dict[Key, ModelConfig] = Field(
        default_factory=dict, description="Keyed by the model's name in paths, wildcards and commands (a Key)."
    )
    scoring: ScoringConfig = Field(description="Neural scorer roles: which model each metric term runs with.")
    report: ReportConfig = Field(default_factory=ReportConfig, description="What the report prints beside each number.")
    tracking: TrackingConfig = Field(
        default_factory=TrackingConfig, description="What `track` logs to MLflow besides runs."
    )
    serving_noise: ServingNoiseConfig = Field(
        default_factory=ServingNoiseConfig,
        description="The serving-noise pass: outputs under perturbed serving settings.",
    )

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


def _user_loc(loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    """The key path as written in params.yaml: pydantic puts the backend (the union's tag) after
    the model name, `models.m.oracle.batch_size`, where the file says `models.m.batch_size`."""
    if len(loc) > 2 and loc[0] == "models" and loc[2] in BACKENDS:
        return loc[:2] + loc[3:]
    return loc


SHOWN_CHARS = 120  # of a value quoted in an error


def _shown(value: object) -> str:
    """A value for an error line: a scalar quoted (scrubbed, shortened), a mapping or list only
    named (its entries are other keys' business, and may hold what must not be echoed)."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value)}"
    text = repr(scrub_message(value) if isinstance(value, str) else value)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "..."


def _format_error(error: ErrorDetails, model: type[BaseModel]) -> str:
    return scrub_message(_format_error_unscrubbed(error, model))


def _format_error_unscrubbed(error: ErrorDetails, model: type[BaseModel]) -> str:
    loc = _user_loc(error["loc"])
    kind = error["type"]
    if kind in ("union_tag_invalid", "union_tag_not_found"):  # a model entry's `backend:`
        where = ".".join(str(part) for part in (*loc, "backend"))
        expected = f"expected one of: {', '.join(sorted(BACKENDS))}"
        if kind == "union_tag_not_found":
            return f"{where}: missing ({expected})"
        return f"{where}: unknown backend {_shown(error.get('ctx', {}).get('tag'))} ({expected})"
    if loc and loc[-1] == "[key]":  # a mapping's key (a model key): pydantic puts the key itself before "[key]"
        where = ".".join(str(part) for part in loc[:-2])
        if kind == INVALID_NAME:
            return f"{where}: the key {error['msg']}"
        return f"{where}: the key {loc[-2]!r}: {_TYPE_WORDS.get(kind) or error['msg']}"
    key = ".".join(str(part) for part in loc) or "(top level)"
    if kind in (INVALID_NAME, INVALID_VARIABLE):  # the message says what is wrong (an invalid variable is never quoted)
        return f"{key}: {error['msg']}"
    message = _TYPE_WORDS.get(kind) or error["msg"]
    if kind == "extra_forbidden":
        parent = _model_at(model, error["loc"][:-1])
        if parent is not None:
            allowed = sorted(info.alias or name for name, info in parent.model_fields.items())
            message += f" (allowed here: {', '.join(allowed)})"
    elif kind != "missing":
        message += f", got {_shown(error.get('input'))}"
    return f"{key}: {message}"


def _model_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    current: object = model
    for part in loc:
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        field = next((info for name, info in current.model_fields.items() if part in (name, info.alias)), None)
        if field is None:
            return None
        current = field.annotation
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


CREDENTIAL_HINT = (
    "credentials never go in params (DVC copies them into dvc.lock, Snakemake into .snakemake/): "
    "put the key in an environment variable and name it in the model's api_key_env"
)


def credential_problems(raw: object, where: str = "") -> list[str]:
    """Every string of a raw params mapping (keys included, at any depth) that carries a
    credential (redact.credential_in), as `key.path: problem` lines that never repeat it."""
    problems = []
    if isinstance(raw, dict):
        for key, value in raw.items():
            path = f"{where}.{key}" if where else str(key)
            what = credential_in(key) if isinstance(key, str) else None
            if what:
                problems.append(f"{where or '(top level)'}: a key holds {what}; {CREDENTIAL_HINT}")
                path = f"{where}.[key]" if where else "[key]"
            problems += credential_problems(value, path)
    elif isinstance(raw, list):
        for index, value in enumerate(raw):
            problems += credential_problems(value, f"{where}.{index}" if where else str(index))
    elif isinstance(raw, str) and (what := credential_in(raw)):
        problems.append(f"{where}: holds {what}; {CREDENTIAL_HINT}")
    return [scrub_message(problem) for problem in problems]


def key_variables(raw: object) -> list[str]:
    """The environment variables a raw params mapping names as holding keys (`api_key_env`
    of its models; an openai model's default when it names none), valid or not."""
    models = raw.get("models") if isinstance(raw, dict) else None
    names = []
    for entry in (models or {}).values() if isinstance(models, dict) else ():
        if isinstance(entry, dict):
            value = entry.get("api_key_env", OPENAI_KEY_DEFAULT if entry.get("backend") == "openai" else None)
            if isinstance(value, str):
                names.append(value)
    return names


def validation_problems(exc: ValidationError, model: type[BaseModel]) -> list[str]:
    """A pydantic error as one `key.path: problem` line per bad key, as written in params.yaml."""
    return [_format_error(e, model) for e in exc.errors()]


def consistency_problems(params: Params) -> list[str]:
    """Rules across keys that the per-field schema cannot state, each as `field.path: problem`,
    so that check-params catches what generate would otherwise refuse minutes later."""
    names = params.benchmarks.names()
    problems = []
    for name in names:
        problems += _generate_problems(f"benchmarks.{name}", params.benchmark(name))
        attention = getattr(params.benchmark(name), "attention", None)  # benchmarks with attention diagnostics
        for index, model in enumerate(getattr(attention, "models", None) or []):
            if model not in params.models:
                problems.append(
                    f"benchmarks.{name}.attention.models.{index}: unknown model {model!r} "
                    f"(models: {', '.join(params.models) or 'none'})"
                )
    for model_name, model in params.models.items():
        where = f"models.{model_name}"
        for index, benchmark in enumerate(model.benchmarks or []):
            if benchmark not in names:
                problems.append(
                    f"{where}.benchmarks.{index}: unknown benchmark {benchmark!r} (known: {', '.join(names)})"
                )
        if model.backend == "replay" and not model.sources and model.published is None:
            problems.append(f"{where}: a replay model needs `sources`, `published` or both")
        for index, source in enumerate(getattr(model, "sources", [])):
            if source.benchmark not in names:
                problems.append(
                    f"{where}.sources.{index}.benchmark: unknown benchmark {source.benchmark!r} "
                    f"(known: {', '.join(names)})"
                )
        problems += _device_problems(where, model)
    problems += noise_problems(params)
    for model_name in params.report.published.reproduces:
        if model_name not in params.models:
            problems.append(
                f"report.published.reproduces.{model_name}: unknown model {model_name!r} "
                f"(models: {', '.join(params.models) or 'none'})"
            )
    return problems


# What a perturbation may not change: which model runs and under which name it is reported.
FIXED_MODEL_KEYS = frozenset({"backend", "model", "revision", "gguf_file", "display_name", "benchmarks", "gpus"})
ConfigT = TypeVar("ConfigT", bound=BaseModel)
NOISE_BACKENDS = ("hf", "vllm")  # the models with weights, whose serving settings can vary


def perturbed_config(model: ConfigT, change: Mapping[str, object]) -> ConfigT | None:
    """The model's config with `change` applied, or None when its backend has no such key (the
    perturbation does not apply to it). Raises pydantic's ValidationError on a bad value."""
    fields = type(model).model_fields
    if any(key not in fields for key in change):
        return None
    return type(model).model_validate({**model.model_dump(), **change})


def noise_problems(params: Params) -> list[str]:
    """Each perturbation changes serving settings only, of keys some weights backend has, to
    values every model it applies to accepts."""
    from ..generation.config import HFModel, VLLMModel

    known = (set(HFModel.model_fields) | set(VLLMModel.model_fields)) - FIXED_MODEL_KEYS
    problems = []
    for name, change in params.serving_noise.perturbations.items():
        where = f"serving_noise.perturbations.{name}"
        if not change:
            problems.append(f"{where}: changes nothing (name at least one model config key)")
        for key in change:
            if key not in known:
                problems.append(
                    f"{where}.{key}: not a serving setting of the hf or vllm backend "
                    f"(one of {', '.join(sorted(known))})"
                )
        if any(key not in known for key in change):
            continue
        for model_name, model in params.models.items():
            if model.backend not in NOISE_BACKENDS:
                continue
            try:
                perturbed_config(model, change)
            except ValidationError as exc:
                first = exc.errors()[0]
                problems.append(f"{where}: models.{model_name}: {'.'.join(map(str, first['loc']))}: {first['msg']}")
    return problems


def _generate_problems(where: str, config: BenchmarkSection) -> list[str]:
    """The main pass runs on every rendered setting; an extra pass is not called main. (An extra
    pass naming a setting not rendered is allowed: narrowing render.settings must not force an
    edit of every pass; that pass just has no prompts there.)"""
    generate = config.generate
    problems = []
    if generate.main.settings is not None:
        problems.append(
            f"{where}.generate.main.settings: must be null (the main pass runs on every setting; "
            f"restrict settings in {where}.render.settings)"
        )
    for name in generate.extra:
        if name == "main":
            problems.append(f"{where}.generate.extra.main: an extra pass may not be called 'main'")
    return problems


def _device_problems(where: str, model: ModelConfig) -> list[str]:
    """Device and GPU count agree: the job claims exactly the GPUs its backend uses."""
    backend, gpus = model.backend, model.gpus
    device = getattr(model, "device", None)
    if backend == "hf" and device == "cuda" and gpus == 0:
        return [f"{where}.gpus: device cuda needs gpus >= 1 (the job claims its GPUs), got 0"]
    if backend == "hf" and device == "cpu" and gpus > 0:
        return [f"{where}.gpus: device cpu uses no GPU (expected 0), got {gpus}"]
    if backend == "hf" and gpus > 1:
        return [
            f"{where}.gpus: the hf backend runs on one GPU (expected 0 or 1; the vllm backend spreads "
            f"a model over several), got {gpus}"
        ]
    if backend == "vllm" and gpus > 0 and getattr(model, "cpu_kv_cache_gib", None) is not None:
        return [f"{where}.cpu_kv_cache_gib: applies to gpus 0 (vLLM's CPU build) only, got gpus {gpus}"]
    return []
