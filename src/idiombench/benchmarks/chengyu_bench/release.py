"""The three Chengyu-Bench tasks read through a field mapping.

The official release's layout is an ASSUMPTION (see config.py): these adapters read
whatever file and field names params.yaml maps, and normalise each task to items:

- connotation: input = the idiom, answer = `positive` / `negative`.
- appropriateness: input = the passage with the judged idiom marked `##…##`,
  answer = `correct` / `wrong`.
- open_cloze: input = the passage with the blank's placeholder, answer = the gold
  idiom, references = every acceptable idiom given.

The project's own sample (sample/*.jsonl) goes through the same adapters.
Records are never dropped: malformed ones are DataErrors, odd ones are flagged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ...core.errors import DataError
from ...core.items import Item
from ..base import BuildStats
from .config import AppropriatenessRelease, ConnotationRelease, OpenClozeRelease, ReleaseFile
from .records import is_four_cjk, label_field, optional_id, read_records, text_field, texts_field

BENCHMARK = "chengyu-bench"
LANGUAGE = "zh-CN"
MARK = "##"
_MARKED = re.compile(r"##(.+?)##")
CONNOTATION_LABELS = ("positive", "negative")
APPROPRIATENESS_LABELS = ("correct", "wrong")


@dataclass(frozen=True)
class Source:
    """One mapped file: where it is, how stats name it, which params key maps it."""

    path: Path
    name: str  # key in build_stats rows_read / rows_kept
    param: str  # e.g. benchmarks.chengyu-bench.build.release.connotation
    sample: bool = False
    keep_fields: tuple[str, ...] = ()  # copied into meta (the sample's notes and source)

    def example(self, row: int, **extra: object) -> dict[str, object]:
        return {"file": self.name, "row": row, **extra}


def _meta(source: Source, row: int, record: dict[str, object], mapping: ReleaseFile) -> dict[str, object]:
    """Where the item came from: row, the release's own id (when mapped), sample or not."""
    source_id = optional_id(source.path, row, record, mapping.id_field, f"{source.param}.id_field")
    meta: dict[str, object] = {"source_row": row, "source_id": source_id, "sample": source.sample}
    for name in source.keep_fields:
        meta[name] = record.get(name)
    return meta


def _flag_if_not_chengyu(source: Source, stats: BuildStats, row: int, idiom: str, meta: dict[str, object]) -> None:
    meta["idiom_is_four_cjk"] = is_four_cjk(idiom)
    if not meta["idiom_is_four_cjk"]:
        stats.flag("idiom_not_four_cjk_characters", source.example(row, idiom=idiom))


def read_connotation(source: Source, mapping: ConnotationRelease, task: str, stats: BuildStats) -> list[Item]:
    labels = {label: getattr(mapping.labels, label) for label in CONNOTATION_LABELS}
    items: list[Item] = []
    first_row: dict[str, int] = {}
    for row, record in read_records(source.path, mapping.format):
        stats.read(source.name)
        idiom = text_field(source.path, row, record, mapping.idiom_field, f"{source.param}.idiom_field")
        label = label_field(source.path, row, record, mapping.label_field, f"{source.param}.label_field", labels)
        meta = _meta(source, row, record, mapping)
        _flag_if_not_chengyu(source, stats, row, idiom, meta)
        if idiom in first_row:
            stats.flag("repeated_idiom", source.example(row, idiom=idiom, first_row=first_row[idiom]))
        first_row.setdefault(idiom, row)
        meta["duplicate_of_row"] = first_row[idiom] if first_row[idiom] != row else None
        items.append(
            Item(
                item_id=f"{row:05d}",
                benchmark=BENCHMARK,
                task=task,
                language=LANGUAGE,
                input=idiom,
                answer=label,
                fields={"idiom": idiom},
                meta=meta,
            )
        )
        stats.kept(source.name)
    return items


def marked_idiom(
    source: Source, row: int, passage: str, named: str | None, param: str, stats: BuildStats
) -> tuple[str, str]:
    """(passage with exactly one ##idiom## mark, the idiom). A passage without a mark gets one
    around the named idiom's only occurrence (flagged); anything else is a DataError."""
    marks = _MARKED.findall(passage)
    if len(marks) == 1:
        idiom = marks[0].strip()
        if named is not None and named != idiom:
            raise DataError(
                source.path,
                f"the idiom field says {named!r} but the passage marks {idiom!r}",
                row=row,
                expected="the same idiom in both",
            )
        return passage, idiom
    if not marks and named is not None and passage.count(named) == 1:
        stats.flag("appropriateness_mark_added", source.example(row, idiom=named))
        return passage.replace(named, f"{MARK}{named}{MARK}"), named
    found = f"{len(marks)} ##…## marks" if marks else "no ##…## mark"
    hint = " and the idiom field's idiom does not occur exactly once" if not marks and named is not None else ""
    raise DataError(
        source.path,
        f"the passage has {found}{hint}",
        row=row,
        expected=f"exactly one idiom marked ##like this## in the field named by {param}",
    )


def read_appropriateness(source: Source, mapping: AppropriatenessRelease, task: str, stats: BuildStats) -> list[Item]:
    labels = {label: getattr(mapping.labels, label) for label in APPROPRIATENESS_LABELS}
    items: list[Item] = []
    for row, record in read_records(source.path, mapping.format):
        stats.read(source.name)
        passage_param = f"{source.param}.passage_field"
        passage = text_field(source.path, row, record, mapping.passage_field, passage_param)
        named = None
        if mapping.idiom_field is not None:
            named = text_field(source.path, row, record, mapping.idiom_field, f"{source.param}.idiom_field")
        passage, idiom = marked_idiom(source, row, passage, named, passage_param, stats)
        label = label_field(source.path, row, record, mapping.label_field, f"{source.param}.label_field", labels)
        meta = _meta(source, row, record, mapping)
        meta["idiom"] = idiom
        _flag_if_not_chengyu(source, stats, row, idiom, meta)
        items.append(
            Item(
                item_id=f"{row:05d}",
                benchmark=BENCHMARK,
                task=task,
                language=LANGUAGE,
                input=passage,
                answer=label,
                fields={"sentence": passage, "idiom": idiom},
                meta=meta,
            )
        )
        stats.kept(source.name)
    return items


def read_open_cloze(source: Source, mapping: OpenClozeRelease, task: str, stats: BuildStats) -> list[Item]:
    items: list[Item] = []
    for row, record in read_records(source.path, mapping.format):
        stats.read(source.name)
        passage = text_field(source.path, row, record, mapping.passage_field, f"{source.param}.passage_field")
        answers = texts_field(source.path, row, record, mapping.answer_field, f"{source.param}.answer_field")
        blanks = passage.count(mapping.placeholder)
        if blanks == 0:
            raise DataError(
                source.path,
                f"the passage has no placeholder {mapping.placeholder!r}",
                row=row,
                expected=f"the blank marked as in {source.param}.placeholder",
            )
        meta = _meta(source, row, record, mapping)
        meta["blanks"] = blanks
        if blanks > 1:
            # One answer per record: it fills every blank (as for ChID).
            stats.flag("open_cloze_several_blanks", source.example(row, blanks=blanks))
        _flag_if_not_chengyu(source, stats, row, answers[0], meta)
        items.append(
            Item(
                item_id=f"{row:05d}",
                benchmark=BENCHMARK,
                task=task,
                language=LANGUAGE,
                input=passage,
                answer=answers[0],
                references=tuple(answers),
                fields={"paragraph": passage, "placeholder": mapping.placeholder},
                meta=meta,
            )
        )
        stats.kept(source.name)
    return items
