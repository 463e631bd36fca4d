"""SemanticQA's metrics body (metrics.body.MetricsBody with its settings, breakdowns and
provenance), and the migration of the schema-1 records it replaced.

A setting's metrics and counts are per task (task -> metric -> value; task -> counts, plus
`other_passes_not_aggregated` when other passes ran). Coverage (provenance.coverage, one
SampleCoverage per setting): the setting's items scored of the items its tasks have, its tasks as
parts (the same numbers as counts.<task>.items / items_in_task, which the counts table prints),
and how the sample was drawn (render.sample) where a part is not complete.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, JsonValue

from ...metrics.body import BodyModel, Metric, MetricsBody, Provenance, RoleRecord, SampleCoverage, SettingResult

ITEM = "item"
BREAKDOWNS = ("extraction_released_code", "vmwe_subtypes", "lcc_labels", "lcc_scaling")


class SemanticQASetting(SettingResult):
    pass


class ExtractionMatch(BodyModel):
    """ACC_s of an extraction task under the released code's match rule and the strict one."""

    ACC_s: Metric
    ACC_s_strict: Metric


class SubtypeAccuracy(BodyModel):
    ACC_s: Metric
    n: int


class LccLabels(BodyModel):
    accuracy_by_gold: dict[str, Metric]
    confusion: dict[str, dict[str, int]]  # gold -> prediction ((unread): none read) -> rows


class ScalingEntry(BodyModel):
    mean: float
    std: float
    runs: dict[str, float]  # class combination -> ACC


class SemanticQABreakdowns(BodyModel):
    """Every breakdown, each {} when nothing fed it (schema 1 left such a key out)."""

    extraction_released_code: dict[str, dict[str, ExtractionMatch]] = Field(default_factory=dict)  # setting -> task
    vmwe_subtypes: dict[str, dict[str, dict[str, SubtypeAccuracy]]] = Field(default_factory=dict)  # setting -> task
    lcc_labels: dict[str, LccLabels] = Field(default_factory=dict)  # setting
    lcc_scaling: dict[str, dict[str, ScalingEntry]] = Field(default_factory=dict)  # shots -> classes (figure 6)


class MeteorStatus(BodyModel):
    status: Literal["computed", "not_computed", "no interpretation rows"]
    reason: str | None
    implementation: str


class RenderSample(BodyModel):
    """benchmarks.semanticqa.render.sample as the aggregate ran."""

    seed: int
    items_per_task: int | None


class SemanticQAProvenance(Provenance):
    roles: dict[str, RoleRecord]  # bertscore_en (scoring.roles.role_records)
    bertscore_computed: bool
    meteor: MeteorStatus
    template_hashes: dict[str, dict[str, str]]  # setting -> template -> hash(es)
    exemplar_seed: int
    lce_exemplars: str
    render_sample: RenderSample | None
    score_options: dict[str, JsonValue]  # benchmarks.semanticqa.score as the aggregate ran it
    setting_kinds: dict[str, Literal["atomic", "sequential"]]
    scoring_notes: list[str]


class SemanticQABody(MetricsBody[SemanticQASetting, SemanticQABreakdowns, SemanticQAProvenance]):
    pass


def selection(render_sample: Mapping[str, object] | None) -> str | None:
    """How render.sample draws a task's items (None: every item)."""
    if render_sample is None or render_sample.get("items_per_task") is None:
        return None
    return f"{render_sample['items_per_task']} item(s) per task (seed {render_sample['seed']})"


def coverage(tasks: Mapping[str, tuple[int, int]], drawn: str | None) -> SampleCoverage:
    """A setting's coverage from its tasks' (items scored, items in the task)."""
    parts = {
        task: SampleCoverage(
            unit=ITEM,
            scored=scored,
            available=available,
            complete=scored >= available,
            selection=drawn if scored < available else None,
        )
        for task, (scored, available) in sorted(tasks.items())
    }
    complete = all(part.complete for part in parts.values())
    return SampleCoverage(
        unit=ITEM,
        scored=sum(part.scored for part in parts.values()),
        available=sum(part.available for part in parts.values()),
        complete=complete,
        selection=None if complete else drawn,
        parts=parts,
    )


def task_items(counts: Mapping[str, object]) -> dict[str, tuple[int, int]]:
    """A setting's counts -> task -> (items, items_in_task) (the counts that are not a task's left out)."""
    return {
        task: (entry["items"], entry["items_in_task"]) for task, entry in counts.items() if isinstance(entry, Mapping)
    }


def migrate_body(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 1 -> 2: provenance.coverage from counts.<task>.items / items_in_task (kept: the
    counts table prints them) and render_sample; every breakdown key present ({} when empty);
    each provenance.roles record as metrics.body.RoleRecord (the score stage's extra keys, e.g.
    where the weights were loaded from, stay in scoring_meta.json)."""
    if body.get("provenance") is None:
        return body
    provenance = dict(body["provenance"])  # the caller's body unchanged
    drawn = selection(provenance.get("render_sample"))
    provenance["coverage"] = {
        setting: coverage(task_items(entry["counts"]), drawn).model_dump(mode="json")
        for setting, entry in (body.get("settings") or {}).items()
    }
    provenance["roles"] = {
        name: {key: record[key] for key in RoleRecord.model_fields} for name, record in provenance["roles"].items()
    }
    breakdowns: dict[str, Any] = {key: {} for key in BREAKDOWNS} | dict(body.get("breakdowns") or {})
    return {**body, "breakdowns": breakdowns, "provenance": provenance}
