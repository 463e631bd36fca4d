"""Aligned idiom pairs (`<Source>_<Target>.json`) and the items built from them:
one `aligned_pairs` item per pair and one `gloss_generation` item per pair and direction.

Row numbers are 0-based indices into the file's JSON array; item ids use them too.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

from ...core.errors import DataError
from ...core.items import Item
from ...data.readers import read_json_file, require_keys
from ..base import BuildStats
from .config import GIdiomAlignBuild
from .languages import canonical_name, direction, direction_id, language_code
from .text import repair_mojibake

BENCHMARK = "g-idiomalign"
PAIR_FIELDS = ("source_idiom", "target_idiom", "source_meaning", "target_meaning")
IDIOM_FIELDS = ("source_idiom", "target_idiom")


@dataclass(frozen=True)
class AlignedPair:
    group: str  # release folder: Gloss_pivoted_Original or Additional_language pairs
    pair: str  # file stem as released, e.g. Chinese_English, Arabic_Spain
    row: int
    source_language: str  # canonical English name (Spanish, not Spain)
    target_language: str
    source_code: str
    target_code: str
    source_idiom: str
    target_idiom: str
    source_meaning: str
    target_meaning: str
    mojibake_repaired: tuple[str, ...] = ()
    whitespace_stripped: tuple[str, ...] = ()
    empty_glosses: tuple[str, ...] = ()
    duplicate_of_row: int | None = None

    def key(self) -> tuple[str, str, str, str]:
        return (self.source_idiom, self.target_idiom, self.source_meaning, self.target_meaning)


def pair_languages(path: Path) -> tuple[str, str]:
    """`Chinese_English.json` -> ("Chinese", "English"): the source is named first."""
    parts = path.stem.split("_")
    if len(parts) != 2:
        raise DataError(path, f"file name {path.name!r} does not name two languages", expected="<Source>_<Target>.json")
    return canonical_name(parts[0], path), canonical_name(parts[1], path)


def json_records(path: Path) -> list[dict[str, object]]:
    """The file's top-level JSON array; every element must be an object."""
    data = read_json_file(path)
    if not isinstance(data, list):
        raise DataError(path, f"top-level JSON {type(data).__name__}", expected="a JSON array of objects")
    for row, record in enumerate(data):
        if not isinstance(record, dict):
            raise DataError(path, f"element is a {type(record).__name__}", row=row, expected="a JSON object")
    return data


def string_field(path: Path, row: int, record: dict[str, object], key: str) -> str:
    value = record[key]
    if not isinstance(value, str):
        raise DataError(path, f"field {key} is a {type(value).__name__}: {value!r}", row=row, expected="a string")
    return value


def read_pair_file(path: Path, group: str, cfg: GIdiomAlignBuild, stats: BuildStats) -> list[AlignedPair]:
    source_language, target_language = pair_languages(path)
    source_code, target_code = language_code(source_language, path), language_code(target_language, path)
    pairs: list[AlignedPair] = []
    first_row: dict[tuple[str, str, str, str], int] = {}
    for row, record in enumerate(json_records(path)):
        stats.read(group)
        require_keys(path, row, record, PAIR_FIELDS)
        values: dict[str, str] = {}
        repaired: list[str] = []
        stripped: list[str] = []
        for key in PAIR_FIELDS:
            value = string_field(path, row, record, key)
            if cfg.repair_mojibake:
                fixed = repair_mojibake(value)
                if fixed != value:
                    repaired.append(key)
                    stats.flag(
                        "mojibake_repaired",
                        {
                            "group": group,
                            "file": path.name,
                            "row": row,
                            "field": key,
                            "released": value,
                            "repaired": fixed,
                        },
                    )
                    value = fixed
            # After the repair: a released `Ã\xa0` is an `à`, not a trailing no-break space.
            if value != value.strip():
                stripped.append(key)
                stats.flag(
                    "whitespace_stripped",
                    {"group": group, "file": path.name, "row": row, "field": key, "released": value},
                )
                value = value.strip()
            values[key] = value
        empty_idioms = [k for k in IDIOM_FIELDS if not values[k]]
        if empty_idioms:
            stats.drop("empty_idiom", {"group": group, "file": path.name, "row": row, "fields": empty_idioms})
            continue
        empty_glosses = tuple(k for k in ("source_meaning", "target_meaning") if not values[k])
        if empty_glosses:
            stats.flag("empty_gloss", {"group": group, "file": path.name, "row": row, "fields": list(empty_glosses)})
        entry = AlignedPair(
            group=group,
            pair=path.stem,
            row=row,
            source_language=source_language,
            target_language=target_language,
            source_code=source_code,
            target_code=target_code,
            source_idiom=values["source_idiom"],
            target_idiom=values["target_idiom"],
            source_meaning=values["source_meaning"],
            target_meaning=values["target_meaning"],
            mojibake_repaired=tuple(repaired),
            whitespace_stripped=tuple(stripped),
            empty_glosses=empty_glosses,
        )
        if entry.key() in first_row:
            entry = replace(entry, duplicate_of_row=first_row[entry.key()])
            stats.flag(
                "duplicate_row", {"group": group, "file": path.name, "row": row, "first_row": entry.duplicate_of_row}
            )
        else:
            first_row[entry.key()] = row
        pairs.append(entry)
        stats.kept(group)
    flag_repeated_idioms(pairs, stats)
    return pairs


def rows_by_idiom(pairs: list[AlignedPair], side: str) -> dict[str, list[int]]:
    rows: dict[str, list[int]] = defaultdict(list)
    for p in pairs:
        rows[p.source_idiom if side == "source" else p.target_idiom].append(p.row)
    return rows


def flag_repeated_idioms(pairs: list[AlignedPair], stats: BuildStats) -> None:
    """An idiom aligned to several idioms in one file (different glosses of the same text):
    kept, one item per pair, and reported."""
    for side in ("source", "target"):
        for idiom, rows in rows_by_idiom(pairs, side).items():
            if len(rows) > 1:
                stats.flag(
                    f"repeated_{side}_idiom",
                    {"group": pairs[0].group, "file": f"{pairs[0].pair}.json", "idiom": idiom, "rows": rows},
                )


def repeated_counts(pairs: list[AlignedPair]) -> dict[str, int]:
    """Rows whose source (target) idiom appears in another row of the same file."""
    return {
        f"rows_with_repeated_{side}_idiom": sum(len(r) for r in rows_by_idiom(pairs, side).values() if len(r) > 1)
        for side in ("source", "target")
    }


def text_meta(p: AlignedPair) -> dict[str, object]:
    return {
        "mojibake_repaired": list(p.mojibake_repaired),
        "whitespace_stripped": list(p.whitespace_stripped),
        "empty_glosses": list(p.empty_glosses),
        "duplicate_of_row": p.duplicate_of_row,
    }


def aligned_pair_item(p: AlignedPair, task: str) -> Item:
    return Item(
        item_id=f"pairs/{p.pair}/{p.row:05d}",
        benchmark=BENCHMARK,
        task=task,
        language=p.target_code,
        input=p.source_idiom,
        references=(p.target_idiom,),
        fields={
            "source_idiom": p.source_idiom,
            "target_idiom": p.target_idiom,
            "source_meaning": p.source_meaning,
            "target_meaning": p.target_meaning,
            "source_language": p.source_language,
            "target_language": p.target_language,
        },
        meta={
            "pair": p.pair,
            "source_lang": p.source_code,
            "target_lang": p.target_code,
            "row": p.row,
            **text_meta(p),
        },
    )


def generation_items(pairs: list[AlignedPair], task: str) -> list[Item]:
    """Both directions of every pair of one file. The No-gloss and With-gloss conditions are
    prompt settings applied at render time; each item carries what both need."""
    items: list[Item] = []
    for reverse in (False, True):
        # Other gold idioms the same source idiom is aligned to in this direction (repeated idioms).
        golds: dict[str, list[str]] = defaultdict(list)
        for p in pairs:
            source, target = (p.target_idiom, p.source_idiom) if reverse else (p.source_idiom, p.target_idiom)
            if target not in golds[source]:
                golds[source].append(target)
        for p in pairs:
            if reverse:
                source, target, gloss = p.target_idiom, p.source_idiom, p.target_meaning
                source_language, target_language = p.target_language, p.source_language
                source_code, target_code = p.target_code, p.source_code
            else:
                source, target, gloss = p.source_idiom, p.target_idiom, p.source_meaning
                source_language, target_language = p.source_language, p.target_language
                source_code, target_code = p.source_code, p.target_code
            items.append(
                Item(
                    item_id=f"gen/{direction_id(source_code, target_code)}/{p.row:05d}",
                    benchmark=BENCHMARK,
                    task=task,
                    language=target_code,
                    input=source,
                    references=(target,),
                    fields={
                        "source_idiom": source,
                        "source_language": source_language,
                        "target_language": target_language,
                        "gloss": gloss,
                    },
                    meta={
                        "direction": direction(source_code, target_code),
                        "pair": p.pair,
                        "source_lang": source_code,
                        "target_lang": target_code,
                        "row": p.row,
                        "reversed": reverse,
                        "no_gloss_available": not gloss,
                        "other_references": [t for t in golds[source] if t != target],
                        **text_meta(p),
                    },
                )
            )
    return items
