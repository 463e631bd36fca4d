"""G-IdiomAlign: aligned pairs, Task 1 (MCQ) and Task 2 (gloss-contrastive generation) items.

Tasks (each a Parquet file):
- aligned_pairs: the 36 files of Gloss_pivoted_Original, one item per pair.
- mcq: Task 1, the 30 directions of Multiple-Choice_Idiom_Equivalence; the released
  `instruction` is the prompt; option types decoded from `original_positions`.
- gloss_generation: Task 2, every aligned pair in both directions; No-gloss / With-gloss
  are prompt conditions chosen at render time.
- additional_pairs, gloss_generation_additional: the same for the Additional_language pairs
  (Ar, Ko, Th, Vi), kept apart from the main tasks as the paper reports them separately.

Release quirks handled here (all counted in build_stats.json, see docs/METRICS.md#21-data-and-build):
- every French idiom is mojibake (UTF-8 read as Latin-1): repaired when `repair_mojibake`.
- glosses and a few idioms carry surrounding whitespace: stripped in pair files; MCQ texts
  are kept as released since the released instruction shows them that way.
- an idiom may be aligned to several idioms in one file (different glosses, same text):
  kept, one item per pair, flagged; generation items list the other golds.
- 48 MCQ items hold the target idiom twice and name the copy at a distractor slot.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path, PurePosixPath
from typing import Any

from ...core.errors import DataError
from ...core.items import Item
from ..base import BuildResult, BuildStats
from .config import GIdiomAlignBuild
from .mcq import mcq_languages, read_mcq_file
from .pairs import (
    BENCHMARK,
    AlignedPair,
    aligned_pair_item,
    generation_items,
    pair_languages,
    read_pair_file,
    repeated_counts,
)

PAIRS_GROUP = "Gloss_pivoted_Original"
MCQ_GROUP = "Multiple-Choice_Idiom_Equivalence"
ADDITIONAL_GROUP = "Additional_language pairs"
GROUPS = (PAIRS_GROUP, MCQ_GROUP, ADDITIONAL_GROUP)


def declared_files(files: list[str], raw_dir: Path) -> dict[str, list[str]]:
    """Declared relative paths per release folder, sorted; every declared file must be present."""
    by_group: dict[str, list[str]] = {group: [] for group in GROUPS}
    for name in sorted(files):
        group = PurePosixPath(name).parts[0]
        if group not in by_group:
            raise DataError(name, f"declared file outside the known release folders {', '.join(GROUPS)}")
        if not (raw_dir / name).is_file():
            raise DataError(raw_dir / name, "declared file is missing: run `idiombench acquire g-idiomalign`")
        by_group[group].append(name)
    return by_group


def read_pair_group(
    raw_dir: Path, names: list[str], group: str, cfg: GIdiomAlignBuild, stats: BuildStats
) -> dict[str, list[AlignedPair]]:
    """File stem -> its pairs, for the files of one release folder."""
    files: dict[str, list[AlignedPair]] = {}
    seen: dict[frozenset[str], str] = {}
    for name in names:
        path = raw_dir / name
        languages = frozenset(pair_languages(path))
        if languages in seen:  # both orders of one pair would give two items per direction
            raise DataError(
                path, f"the language pair is also released as {seen[languages]}", expected="one file per unordered pair"
            )
        seen[languages] = name
        files[path.stem] = read_pair_file(path, group, cfg, stats)
    return files


def pair_group_tasks(
    files: dict[str, list[AlignedPair]], pairs_task: str, generation_task: str
) -> tuple[dict[str, list[Item]], dict[str, Any]]:
    pair_items = [aligned_pair_item(p, pairs_task) for pairs in files.values() for p in pairs]
    gen_items = [item for pairs in files.values() for item in generation_items(pairs, generation_task)]
    per_direction = Counter(item.meta["direction"] for item in gen_items)
    details = {
        pairs_task: {
            "files": len(files),
            "pairs": len(pair_items),
            "per_pair": {stem: len(pairs) for stem, pairs in files.items()},
            "repeated_idioms_per_pair": {
                stem: counts for stem, pairs in files.items() if any((counts := repeated_counts(pairs)).values())
            },
            "duplicate_rows": sum(1 for pairs in files.values() for p in pairs if p.duplicate_of_row is not None),
        },
        generation_task: {
            "directions": len(per_direction),
            "items": len(gen_items),
            "per_direction": dict(sorted(per_direction.items())),
            "items_with_other_references": sum(1 for item in gen_items if item.meta["other_references"]),
        },
    }
    return {pairs_task: pair_items, generation_task: gen_items}, details


def text_repair_details(stats: BuildStats) -> dict[str, Any]:
    """Repaired / stripped field counts per release folder and field."""
    repaired: Counter[str] = Counter()
    for example in stats.flagged.get("mojibake_repaired", []):
        for field in example.get("fields") or [example["field"]]:
            repaired[f"{example['group']}/{field}"] += 1
    stripped = Counter(f"{e['group']}/{e['field']}" for e in stats.flagged.get("whitespace_stripped", []))
    return {"mojibake_repaired": dict(sorted(repaired.items())), "whitespace_stripped": dict(sorted(stripped.items()))}


def build(raw_dir: Path, cfg: GIdiomAlignBuild, files: list[str]) -> BuildResult:
    """`files`: the declared release files (paths relative to raw_dir)."""
    stats = BuildStats(BENCHMARK)
    by_group = declared_files(files, raw_dir)
    main_pairs = read_pair_group(raw_dir, by_group[PAIRS_GROUP], PAIRS_GROUP, cfg, stats)
    additional_pairs = read_pair_group(raw_dir, by_group[ADDITIONAL_GROUP], ADDITIONAL_GROUP, cfg, stats)
    tasks, details = pair_group_tasks(main_pairs, "aligned_pairs", "gloss_generation")
    extra_tasks, extra_details = pair_group_tasks(additional_pairs, "additional_pairs", "gloss_generation_additional")
    tasks.update(extra_tasks)
    details.update(extra_details)

    # MCQ items join the aligned pair they were made from (same normalisation of both sides).
    pair_rows: dict[tuple[str, str, str, str], tuple[str, int]] = {}
    for pairs in main_pairs.values():
        for p in pairs:
            pair_rows.setdefault((p.source_code, p.target_code, p.source_idiom, p.target_idiom), (p.pair, p.row))
            pair_rows.setdefault((p.target_code, p.source_code, p.target_idiom, p.source_idiom), (p.pair, p.row))
    mcq_items: list[Item] = []
    mcq_directions: dict[tuple[str, str], str] = {}
    for name in by_group[MCQ_GROUP]:
        path = raw_dir / name
        languages = mcq_languages(path)
        if languages in mcq_directions:  # the same direction twice would give clashing item ids
            raise DataError(
                path,
                f"the direction is also released as {mcq_directions[languages]}",
                expected="one file per direction",
            )
        mcq_directions[languages] = name
        mcq_items.extend(read_mcq_file(path, path.parent.name, cfg, stats, pair_rows))
    tasks["mcq"] = mcq_items
    per_direction = Counter(item.meta["direction"] for item in mcq_items)
    per_group = Counter(item.meta["group"] for item in mcq_items)
    directions_per_group = Counter(g for g, _ in {(i.meta["group"], i.meta["direction"]) for i in mcq_items})
    details["mcq"] = {
        "files": len(by_group[MCQ_GROUP]),
        "directions": len(per_direction),
        "items": len(mcq_items),
        "per_direction": dict(sorted(per_direction.items())),
        "per_group": dict(sorted(per_group.items())),
        "directions_per_group": dict(sorted(directions_per_group.items())),
        "option_decoding": {
            "agrees_with_correct_position": sum(1 for i in mcq_items if not i.meta["duplicate_option"]),
            "duplicate_option": sum(1 for i in mcq_items if i.meta["duplicate_option"]),
        },
        "target_text_in_several_options": sum(1 for i in mcq_items if len(i.meta["target_letters"]) > 1),
        "answer_type_counts": dict(sorted(Counter(i.meta["option_types"][i.answer] for i in mcq_items).items())),
        "joined_to_aligned_pairs": sum(1 for i in mcq_items if i.meta["pair"] is not None),
    }
    details["text"] = text_repair_details(stats)
    details["repair_mojibake"] = cfg.repair_mojibake

    stats.details = details
    stats.notes.extend(
        [
            "MCQ option types: original_positions[i] is the pre-shuffle slot of option i+1 "
            "(1 reference, 2 LT, 3 LC, 4 CA); verified against correct_position on every item.",
            "MCQ items whose target text fills two options carry target_letters; with "
            "score.duplicate_option_target_correct an answer at any of them counts as correct.",
            "The MCQ schema lists target_meaning, but no released MCQ item has it.",
            "Row numbers in ids, meta and errors are 0-based indices into each file's JSON array.",
        ]
    )
    for task in tasks:
        tasks[task] = sorted(tasks[task], key=lambda item: item.item_id)
    return BuildResult(tasks=tasks, stats=stats)
