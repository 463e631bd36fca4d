"""The metrics body (results/metrics/<benchmark>/<model>.json) as typed models: written by the
aggregate stage, read through the model by every stage that reads it (report, track, plots,
evaluate-predictions), validated on read; its schema version and the migration of bodies an
earlier version wrote are here, in one place.

Every benchmark's body has the same frame (`MetricsBody`): who and what (benchmark, model,
status), the model's identity, and per setting its metrics and counts; a benchmark declares the
models of its settings, breakdowns and provenance (`Benchmark.results_model`). What every
benchmark records the same way has one shape here: the scorer roles behind its numbers
(`RoleRecord`, under provenance.roles) and how much of the data its scores cover
(`SampleCoverage`, under provenance.coverage, one per setting).

Schema history: 1 (no `schema_version` key): each benchmark recorded its coverage in its own
shape (Chengyu-Bench provenance.data, G-IdiomAlign and OrderProbe provenance.sample, SemanticQA
counts only); 2: `schema_version`, provenance.coverage. A benchmark's part of the migration
(its old shapes) is `Benchmark.migrate_body`, beside its results model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from ..core.ownership import STAMP

SCHEMA_VERSION: Literal[2] = 2
Metric = float | None
# a setting's metrics: name -> value, or (SemanticQA) task -> name -> value
Metrics = dict[str, Metric | dict[str, Metric]]


class BodyModel(BaseModel):
    """A part of a metrics body: every key known (a typo or a stale key is an error on read)."""

    model_config = ConfigDict(extra="forbid")


class RoleRecord(BodyModel):
    """The scorer role behind a benchmark's numbers as the score stage ran it
    (scoring.roles.RoleInfo)."""

    role: str
    kind: str
    model: str | None
    paper_model: str
    paper_model_stated: bool
    status: str
    mark: str
    footnote: str | None


class SampleCoverage(BodyModel):
    """How much of the data a setting's scores cover: `scored` of `available` units (items,
    expressions ...), whether that is all of it (`complete`; a seeded sample is not), how the
    units were drawn (`selection`, None: all of them), and the same per part (task, language,
    direction) where a benchmark has parts."""

    unit: str
    scored: int
    available: int
    complete: bool
    selection: str | None = None
    parts: dict[str, SampleCoverage] = Field(default_factory=dict)


class ModelInfo(BodyModel):
    """The model as params and its generate stage describe it (credentials scrubbed)."""

    name: str
    display_name: str
    config: dict[str, JsonValue]
    identity: dict[str, JsonValue] | None = None


class SettingResult(BodyModel):
    """One setting: its metrics (the values of its specs) and its counts; a benchmark's subclass
    adds what else it records per setting."""

    metrics: Metrics
    counts: dict[str, JsonValue]


class Provenance(BodyModel):
    """What produced the numbers; a benchmark's subclass adds its own records."""

    coverage: dict[str, SampleCoverage] = Field(default_factory=dict)


SettingT = TypeVar("SettingT", bound=SettingResult)
BreakdownsT = TypeVar("BreakdownsT", bound=BaseModel)
ProvenanceT = TypeVar("ProvenanceT", bound=Provenance)


class MetricsBody(BodyModel, Generic[SettingT, BreakdownsT, ProvenanceT]):
    schema_version: Literal[2] = SCHEMA_VERSION
    benchmark: str
    model: str
    status: Literal["scored", "skipped"]
    reason: str | None = None  # why it was skipped
    model_info: ModelInfo | None = None
    settings: dict[str, SettingT] = Field(default_factory=dict)
    breakdowns: BreakdownsT | None = None
    provenance: ProvenanceT | None = None

    def dump(self) -> dict[str, object]:
        """The body as the metrics JSON holds it (a key that does not apply is absent, not null)."""
        data = self.model_dump(mode="json")
        for key in ("reason", "model_info", "breakdowns", "provenance"):
            if data[key] is None:
                del data[key]
        if self.status == "skipped":
            del data["settings"]
        return data


class OpenSetting(SettingResult):
    """A setting of a benchmark without a results model: its metrics and counts, and whatever
    else its aggregate records (kept as it is)."""

    model_config = ConfigDict(extra="allow")


class OpenRecords(BaseModel):
    """Breakdowns of a benchmark without a results model, kept as they are."""

    model_config = ConfigDict(extra="allow")


class OpenProvenance(Provenance):
    """Provenance of a benchmark without a results model: coverage where it records one, the
    rest kept as it is."""

    model_config = ConfigDict(extra="allow")


class FrameBody(MetricsBody[OpenSetting, OpenRecords, OpenProvenance]):
    """The frame every benchmark's body shares (who, what, the model, each setting's metrics and
    counts), with a benchmark's own keys kept as they are: how a body of a benchmark without a
    results model (a plugin's, a declared one's) is checked on read and read by generic code."""

    model_config = ConfigDict(extra="allow")


# a benchmark's part of the migration (Benchmark.migrate_body): a schema-1 body's own records moved
BodyMigration = Callable[[dict[str, Any]], dict[str, Any]]


def migrate(body: Mapping[str, object], benchmark_part: BodyMigration | None = None) -> dict[str, object]:
    """A body of any earlier schema as the current schema writes it: `benchmark_part(body)` moves
    a benchmark's own schema-1 records (Benchmark.migrate_body)."""
    data = {key: value for key, value in body.items() if key != STAMP}
    if data.get("schema_version") == SCHEMA_VERSION:
        return data
    data["schema_version"] = SCHEMA_VERSION
    if data.get("status") == "scored" and benchmark_part is not None:
        data = benchmark_part(data)
    return data


AnyBody = MetricsBody[Any, Any, Any]


def read_body(data: Mapping[str, object], model: type[AnyBody], benchmark_part: BodyMigration | None = None) -> AnyBody:
    """A metrics file's content (any schema) as the benchmark's typed body; a body that does not fit
    the model is a ValueError naming the key (pydantic's message)."""
    return model.model_validate(migrate(data, benchmark_part))


def framed(body: AnyBody | Mapping[str, object]) -> AnyBody:
    """A body as a typed model: a typed body as it is, a plain one (a benchmark without a results
    model; read_metrics has checked it) read as its frame."""
    return body if isinstance(body, MetricsBody) else FrameBody.model_validate(migrate(body))


def off_model(error: ValidationError) -> str:
    """A body's first misfit as one line: "key <dotted key>: <pydantic's message>"."""
    first = error.errors()[0]
    return f"key {'.'.join(str(part) for part in first['loc'])}: {first['msg']}"


def plain(body: AnyBody | Mapping[str, Any]) -> dict[str, Any]:
    """A body as plain JSON data (what generic code flattens: MLflow params and metrics)."""
    return body.dump() if isinstance(body, MetricsBody) else dict(body)


def comparable(body: Mapping[str, object]) -> dict[str, object]:
    """A body's content without its ownership record (two bodies with equal content compare equal)."""
    return {key: value for key, value in body.items() if key != STAMP}
