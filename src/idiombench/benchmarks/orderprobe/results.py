"""OrderProbe's metrics body (metrics.body.MetricsBody with its settings, breakdowns and
provenance), and the migration of the schema-1 records it replaced.

A group of score rows (a setting, one of its languages or syntactic categories) carries its
table-3 metrics, its counts, the reason for each metric not computed, the scorer roles each
metric depends on and its categories' mean S_Acc; the canonical inputs (table 11) the same
without the category means; a permutation pattern (figure 4) its Recovery variants and counts.
Parts the report can do without default to empty, so that a body written by hand (or by an
earlier version) renders what it has, with dashes and footnotes for the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, JsonValue, SerializerFunctionWrapHandler, model_serializer

from ...metrics.body import (
    BodyModel,
    Metrics,
    MetricsBody,
    Provenance,
    RoleRecord,
    SampleCoverage,
    SettingResult,
)
from ...scoring.roles import MARKS
from .config import OrderProbeScore
from .roles import SCORER_ROLES
from .specs import TASK

UNIT = "expression"  # what provenance.coverage counts: expressions (all their inputs enter)
# the render sample's selection when every item was rendered
ALL = "all"


class Diagnosed(SettingResult):
    """A group's metrics (the specs' values), counts, why a metric is None, and which scorer
    roles each metric depends on."""

    metrics: Metrics = Field(default_factory=dict)
    counts: dict[str, JsonValue] = Field(default_factory=dict)
    not_computed: dict[str, str] = Field(default_factory=dict)
    depends_on: dict[str, list[str]] = Field(default_factory=dict)

    def metric(self, key: str) -> float | None:
        value = self.metrics.get(key)
        return None if value is None or isinstance(value, dict) else float(value)

    def count(self, key: str) -> int | None:
        value = self.counts.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None


class Group(Diagnosed):
    """A setting's, language's or category's perturbed inputs (tables 3, 4, figure 5)."""

    category_means: dict[str, float] = Field(default_factory=dict)  # category -> mean S_Acc


class OrderProbeSetting(Group):
    task: str  # the task its rows are of (restore): `track` logs the task's items as the run's dataset
    languages: list[str] = Field(default_factory=list)


class PatternResult(BodyModel):
    """Figure 4: one permutation pattern's Recovery variants (shares) over its perturbed inputs."""

    inputs: int
    identity_inputs: int
    recovery_default: float | None
    recovery_default_excl_identity: float | None
    recovery_strict: float | None
    recovery_strict_excl_identity: float | None

    def recovery(self, key: str) -> float | None:
        """The variant `key` (figures.pattern_key: the one the headline Recovery follows)."""
        value = getattr(self, key)
        return None if value is None else float(value)


class OrderProbeBreakdowns(BodyModel):
    per_language: dict[str, dict[str, Group]] = Field(default_factory=dict)  # setting -> language -> group
    per_category: dict[str, dict[str, Group]] = Field(default_factory=dict)  # setting -> category -> group
    per_pattern: dict[str, dict[str, PatternResult]] = Field(default_factory=dict)  # setting -> pattern -> values
    canonical: dict[str, Diagnosed] = Field(default_factory=dict)  # setting -> its canonical inputs (table 11)


class TemplateHashes(BodyModel):
    templates: dict[str, str]  # template id -> hash
    rows_without_template: int


class DataHashes(BodyModel):
    acquired_record: str
    acquired_sha256: str | None
    items_sha256: str | None
    build_stats_sha256: str | None


class RenderSample(BodyModel):
    """The render stage's record of the sample it drew (render_stats.json's sample.restore):
    how, and how many items (and, for a sample of expressions, which) of how many."""

    selection: str
    items: int
    items_available: int | None = None
    expressions: dict[str, list[str]] | None = None  # language -> the expressions drawn
    expressions_available: dict[str, int] | None = None

    @model_serializer(mode="wrap")
    def _recorded_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, JsonValue]:
        data: dict[str, JsonValue] = handler(self)
        return {key: value for key, value in data.items() if value is not None}


class OrderProbeProvenance(Provenance):
    roles: dict[str, RoleRecord] = Field(default_factory=dict)
    roles_source: str | None = None
    scoring_notes: list[str] = Field(default_factory=list)
    score_params: OrderProbeScore | None = None  # the score section the numbers were computed under
    template_hashes: dict[str, TemplateHashes] = Field(default_factory=dict)
    data: DataHashes | None = None
    render_sample: RenderSample | None = None  # None: render_stats.json was not there


class OrderProbeBody(MetricsBody[OrderProbeSetting, OrderProbeBreakdowns, OrderProbeProvenance]):
    def breakdowns_or_empty(self) -> OrderProbeBreakdowns:
        """Its breakdowns (empty where a body written by hand has none)."""
        return self.breakdowns if self.breakdowns is not None else OrderProbeBreakdowns()

    def provenance_or_empty(self) -> OrderProbeProvenance:
        """Its provenance (empty where a body written by hand has none)."""
        return self.provenance if self.provenance is not None else OrderProbeProvenance()


def expression_coverage(
    scored: Mapping[str, Mapping[str, int]], available: Mapping[str, int], selection: str | None
) -> dict[str, SampleCoverage]:
    """Per setting: the expressions scored of those available, per language (parts). A language
    is complete where every expression was scored and, where only some permutations of each
    were drawn (`selection`, the render sample's), never; a setting where all its languages are."""
    some_permutations = bool(selection) and "seeded permutation" in str(selection)
    drawn = None if selection in (None, ALL) else selection
    out: dict[str, SampleCoverage] = {}
    for setting, languages in sorted(scored.items()):
        parts = {
            language: SampleCoverage(
                unit=UNIT,
                scored=languages.get(language, 0),
                available=available.get(language, 0),
                complete=languages.get(language, 0) == available.get(language, 0) and not some_permutations,
            )
            for language in sorted(set(available) | set(languages))
        }
        for language, part in parts.items():
            parts[language] = part if part.complete else part.model_copy(update={"selection": drawn})
        complete = all(p.complete for p in parts.values()) and not some_permutations
        out[setting] = SampleCoverage(
            unit=UNIT,
            scored=sum(p.scored for p in parts.values()),
            available=sum(p.available for p in parts.values()),
            complete=complete,
            selection=None if complete else drawn,
            parts=parts,
        )
    return out


def role_record(role: str, record: object) -> object:
    """A role as the current schema records it (metrics.body.RoleRecord: the score stage's extra
    keys, e.g. where the weights were loaded from, stay in scoring_meta.json). A record that is a
    bare status (an early schema 1, or a body written by hand) becomes the paper's role with that
    status and no model; anything else is left for the model to reject, naming the key."""
    if isinstance(record, Mapping):
        return {key: value for key, value in record.items() if key in RoleRecord.model_fields}
    paper = next((p for p in SCORER_ROLES if p.name == role), None)
    if not isinstance(record, str) or paper is None:
        return record
    return RoleRecord(
        role=role,
        kind=paper.kind,
        model=None,
        paper_model=paper.paper_model,
        paper_model_stated=paper.paper_model_stated,
        status=record,
        mark=MARKS.get(record, ""),
        footnote=None,
    ).model_dump(mode="json")


def with_task(entry: object) -> object:
    return {"task": TASK, **entry} if isinstance(entry, Mapping) and "task" not in entry else entry


def migrate_body(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 1 -> 2: provenance.sample (expressions_scored per setting and language,
    expressions_available, full_benchmark, selection, render_sample) becomes provenance.coverage
    (per setting, its languages as parts) and provenance.render_sample; each role record takes
    RoleRecord's shape (role_record); each setting names its task (restore)."""
    settings = body.get("settings")
    if isinstance(settings, dict):
        body = {**body, "settings": {s: with_task(entry) for s, entry in settings.items()}}
    provenance = body.get("provenance")
    if not isinstance(provenance, dict):
        return body
    provenance = dict(provenance)
    sample = provenance.pop("sample", None)
    if isinstance(sample, dict):
        render = sample.get("render_sample")
        found = expression_coverage(
            sample.get("expressions_scored") or {}, sample.get("expressions_available") or {}, sample.get("selection")
        )
        provenance["coverage"] = {setting: c.model_dump(mode="json") for setting, c in found.items()}
        provenance["render_sample"] = render
    roles = provenance.get("roles")
    if isinstance(roles, dict):
        provenance["roles"] = {role: role_record(role, record) for role, record in roles.items()}
    return {**body, "provenance": provenance}
