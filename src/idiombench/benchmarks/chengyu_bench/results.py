"""Chengyu-Bench's metrics body (metrics.body.MetricsBody with its settings, breakdowns and
provenance), and the migration of the schema-1 records it replaced."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import JsonValue

from ...metrics.body import BodyModel, MetricsBody, Provenance, SampleCoverage, SettingResult

Source = Literal["release", "sample", "chid"]


class DataSource(BodyModel):
    """Where a task's items come from (None everywhere: the setting had no rows)."""

    task: str | None
    source: Source | None
    official: bool | None
    description: str


class ChengyuSetting(SettingResult):
    task: str | None  # the paper task the setting's metrics are over
    data: Source | None


class TaskResult(SettingResult):
    data: DataSource


class GoldAccuracy(BodyModel):
    n: int
    accuracy: float | None


class ByGold(BodyModel):
    accuracy: dict[str, GoldAccuracy]
    predictions: dict[str, int]


class ChengyuBreakdowns(BodyModel):
    tasks: dict[str, dict[str, TaskResult]]  # setting -> task -> its metrics (the paper task's too)
    by_gold: dict[str, ByGold]  # label settings
    acc_at_k: dict[str, dict[str, float | None]]  # ranked settings: k -> Acc.@k


class TemplateHash(BodyModel):
    template_id: str
    template_hash: str


class ScoringOptions(BodyModel):
    accept_unformatted: bool
    valid_idiom_four_character_only: bool


class ChengyuProvenance(Provenance):
    data: dict[str, DataSource]
    idiom_list: dict[str, JsonValue] | None  # the dictionary Valid Idiom looks predictions up in
    notes: list[str]
    release: Literal["available", "not available"]
    scoring: ScoringOptions
    template_hashes: dict[str, TemplateHash]


class ChengyuBody(MetricsBody[ChengyuSetting, ChengyuBreakdowns, ChengyuProvenance]):
    pass


ITEM = "item"


def coverage(scored: int, available: int) -> SampleCoverage:
    return SampleCoverage(unit=ITEM, scored=scored, available=available, complete=scored >= available)


def migrate_body(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 1 -> 2: each data record's items_scored / items_available / subset (provenance.data
    and every breakdowns.tasks entry) become provenance.coverage (per setting, its tasks as parts)."""
    provenance = body.get("provenance") or {}
    tasks = (body.get("breakdowns") or {}).get("tasks") or {}

    def split(record: dict[str, Any]) -> tuple[dict[str, Any], SampleCoverage]:
        scored, available = record.pop("items_scored", 0), record.pop("items_available", 0)
        record.pop("subset", None)
        return record, coverage(scored, available)

    found: dict[str, SampleCoverage] = {}
    for setting, record in (provenance.get("data") or {}).items():
        provenance["data"][setting], found[setting] = split(dict(record))
    for setting, per_task in tasks.items():
        parts = {}
        for task, entry in per_task.items():
            entry["data"], parts[task] = split(dict(entry["data"]))
        if setting in found:
            found[setting] = found[setting].model_copy(update={"parts": parts})
    provenance["coverage"] = {setting: c.model_dump(mode="json") for setting, c in found.items()}
    return body
