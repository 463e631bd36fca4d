"""G-IdiomAlign's metrics body (metrics.body.MetricsBody with its settings, breakdowns and
provenance), and the migration of the schema-1 records it replaced.

Coverage (provenance.coverage, one SampleCoverage per setting of the body, the additional
pairs' `<condition>_additional` their own): the setting's items, its tasks as parts, and each
task's directions as that task's one part `directions` (unit direction: how many translation
directions the scored items reach of those the built task has; a sample draws items per
direction, so a complete direction count with a partial item count is the usual sample).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import Discriminator, JsonValue, RootModel, Tag, model_validator

from ...metrics.body import BodyModel, Metric, MetricsBody, Provenance, RoleRecord, SampleCoverage, SettingResult

GENERATION_CONDITIONS = ("no_gloss", "with_gloss")  # the Task 2 settings (score tables)
ADDITIONAL_SUFFIX = "_additional"  # a condition's additional language pairs: the body's setting <condition>_additional
ITEM = "item"
DIRECTION = "direction"
DIRECTIONS = "directions"  # a task's part that counts its directions
ACC_AT = re.compile(r"Acc@\d+(?:\.\d+)?")


class GIdiomAlignSetting(SettingResult):
    pass


class McqDirection(BodyModel):
    """One Task 1 direction: its target group, answers, accuracy (%) and outcome counts."""

    group: str
    answers: int
    accuracy: Metric
    outcomes: dict[str, int]


class GenerationDirection(BodyModel):
    """One Task 2 direction: its answers, invalid answers and metrics (%), Acc@t per threshold
    (the keys `Acc@<t>`, as many as score.thresholds has)."""

    model_config = BodyModel.model_config | {"extra": "allow"}
    __pydantic_extra__: dict[str, Metric]

    answers: int
    invalid: int
    MeanSim: Metric
    EM: Metric
    BLEU: Metric
    chrF: Metric

    @model_validator(mode="after")
    def _thresholds_only(self) -> GenerationDirection:
        unknown = [key for key in self.__pydantic_extra__ if not ACC_AT.fullmatch(key)]
        if unknown:
            raise ValueError(f"unknown key {unknown[0]!r} (a direction's keys: its counts, metrics and Acc@<t>)")
        return self

    def acc_at(self) -> dict[str, Metric]:
        return dict(self.__pydantic_extra__)


def _direction_kind(value: object) -> str:
    """Which directions a breakdown holds: Task 1's (they name their target group) or Task 2's."""
    first = next(iter(value.values()), None) if isinstance(value, dict) else None
    return "mcq" if isinstance(first, McqDirection) or (isinstance(first, dict) and "group" in first) else "generation"


PerDirection = Annotated[
    Annotated[dict[str, McqDirection], Tag("mcq")] | Annotated[dict[str, GenerationDirection], Tag("generation")],
    Discriminator(_direction_kind),
]


class SettingBreakdown(BodyModel):
    per_direction: PerDirection


class GIdiomAlignBreakdowns(RootModel[dict[str, SettingBreakdown]]):
    """setting -> its per-direction breakdown."""


class GIdiomAlignProvenance(Provenance):
    roles: dict[str, RoleRecord]  # the similarity role (scoring.roles.role_records); none when unknown
    score: dict[str, JsonValue]  # benchmarks.g-idiomalign.score as the aggregate ran it
    bleu_tokenizers_used: dict[str, str]  # target language -> sacrebleu tokenizer
    bleu_tokenizer_fallbacks: dict[str, str]  # target language -> why the configured one was not used
    template_hashes: dict[str, dict[str, str]]  # setting -> template id -> hash
    notes: list[str]


class GIdiomAlignBody(MetricsBody[GIdiomAlignSetting, GIdiomAlignBreakdowns, GIdiomAlignProvenance]):
    pass


def task_coverage(
    items_scored: int, items_available: int, directions_scored: int, directions_available: int
) -> SampleCoverage:
    """A task's items scored of those built, with its directions as its one part."""
    directions = SampleCoverage(
        unit=DIRECTION,
        scored=directions_scored,
        available=directions_available,
        complete=directions_scored >= directions_available,
    )
    return SampleCoverage(
        unit=ITEM,
        scored=items_scored,
        available=items_available,
        complete=items_scored >= items_available,
        parts={DIRECTIONS: directions},
    )


def setting_coverage(tasks: dict[str, SampleCoverage]) -> SampleCoverage:
    """A setting's items: the sum over its tasks (complete when every task is)."""
    return SampleCoverage(
        unit=ITEM,
        scored=sum(c.scored for c in tasks.values()),
        available=sum(c.available for c in tasks.values()),
        complete=all(c.complete for c in tasks.values()),
        parts=dict(sorted(tasks.items())),
    )


def body_setting(setting: str, task: str) -> str:
    """The body's setting of a score table's task: a Task 2 condition's additional pairs are
    `<condition>_additional`."""
    return setting + ADDITIONAL_SUFFIX if setting in GENERATION_CONDITIONS and task.endswith("additional") else setting


def migrate_body(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 1 -> 2: provenance.sample (score-table setting -> task -> items_scored /
    items_available / directions_scored / directions_available / complete) becomes
    provenance.coverage (per body setting, its tasks as parts, each task's directions its part)."""
    if body.get("provenance") is None:
        return body
    provenance = dict(body["provenance"])  # the caller's body unchanged
    found: dict[str, dict[str, SampleCoverage]] = {}
    for setting, tasks in (provenance.pop("sample", None) or {}).items():
        for task, record in tasks.items():
            found.setdefault(body_setting(setting, task), {})[task] = task_coverage(
                record["items_scored"],
                record["items_available"],
                record["directions_scored"],
                record["directions_available"],
            )
    provenance["coverage"] = {
        setting: setting_coverage(tasks).model_dump(mode="json") for setting, tasks in sorted(found.items())
    }
    return {**body, "provenance": provenance}
