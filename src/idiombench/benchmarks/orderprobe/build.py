"""OrderProbe: expressions, references, syntactic categories and the 24 inputs per expression.

Release quirks handled here (all counted in build_stats.json, see docs/METRICS.md#11-items-identity-inputs-and-parsing):
- UTF-8 with BOM, CRLF; some expressions carry a trailing space (stripped).
- 3 rows are not four characters long: dropped by default (the paper's 3,543).
- repeated expressions inside a language: kept as released rows (or merged with dedupe).
- placeholder reference cells (e.g. `zdic解释`): removed from the reference list.
- Japanese.csv carries no references at all: its items are flagged `no_references`.
- the permutation files label their columns ABCD..DCAB although each row holds the
  canonical form plus the 23 non-identity permutations; the permutations are
  regenerated here (itertools order) and the file is only a cross-check.
- the structure files may list an expression twice with different categories:
  the first listing wins and the conflict is reported.

The build also extracts the released S_Acc word lists from the acquired Sacc/*.py scripts
(lexicon.py) into released_lexicon.json: score reads them from the build output.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path

from ...core.errors import DataError
from ...core.items import Item
from ...data.readers import read_csv_rows
from ..base import BuildResult, BuildStats
from . import lexicon
from .config import OrderProbeBuild

BENCHMARK = "orderprobe"
TASK = "restore"
CANONICAL_PATTERN = "ABCD"
# The six syntactic categories of the release's structure files.
CATEGORIES = (
    "Parallel (Coordinate)",
    "Modifier-Head",
    "Subject-Predicate",
    "Complementary",
    "Serial Verb",
    "Verb-Object",
)
LANGUAGE_FILES = {
    "zh-CN": "Simplified Chinese",
    "zh-TW": "Traditional Chinese",
    "ja": "Japanese",
    "ko": "Korean",
}
# Languages whose expression file may lack the reference column (the Japanese release has none).
REFERENCES_OPTIONAL = {"ja"}


def permutation_patterns() -> list[str]:
    """The 23 non-identity patterns in itertools order: ABDC, ACBD, ..., DCBA."""
    return ["".join(p) for p in itertools.permutations("ABCD")][1:]


def permute(expression: str, pattern: str) -> str:
    return "".join(expression["ABCD".index(letter)] for letter in pattern)


@dataclass
class Expression:
    language: str
    row: int
    expression: str
    references: list[str]
    duplicate_of: int | None = None  # row of the first occurrence, when repeated
    merged_rows: list[int] = field(default_factory=list)


def read_expressions(path: Path, language: str, cfg: OrderProbeBuild, stats: BuildStats) -> list[Expression]:
    optional = language in REFERENCES_OPTIONAL
    rows = read_csv_rows(
        path,
        min_columns=1 if optional else 2,
        max_columns=2,
        column_names=("expression", "references"),
    )
    placeholders = set(cfg.placeholder_references)
    first_row: dict[str, int] = {}
    kept: list[Expression] = []
    by_expression: dict[str, Expression] = {}
    for row, cells in rows:
        stats.read(language)
        raw_expression = cells[0]
        expression = raw_expression.strip()
        if expression != raw_expression:
            stats.flag("expression_whitespace_stripped", {"language": language, "row": row, "expression": expression})
        references: list[str] = []
        for reference in cells[1].split("||") if len(cells) > 1 else []:
            reference = reference.strip()
            if not reference:
                continue
            if reference in placeholders:
                stats.flag("placeholder_reference_removed", {"language": language, "row": row, "reference": reference})
                continue
            references.append(reference)
        if len(expression) != 4:
            stats.drop(
                "not_four_characters",
                {"language": language, "row": row, "expression": expression, "length": len(expression)},
            )
            continue
        if not references:
            stats.flag("no_references", {"language": language, "row": row, "expression": expression})
        if expression in first_row:
            example = {"language": language, "row": row, "expression": expression, "first_row": first_row[expression]}
            if cfg.dedupe:
                target = by_expression[expression]
                target.references.extend(r for r in references if r not in target.references)
                target.merged_rows.append(row)
                stats.merge("duplicate_expression", example)
                continue
            stats.flag("duplicate_expression", example)
            entry = Expression(language, row, expression, references, duplicate_of=first_row[expression])
        else:
            first_row[expression] = row
            entry = Expression(language, row, expression, references)
            by_expression[expression] = entry
        kept.append(entry)
        stats.kept(language)
    return kept


def cross_check_permutations(
    path: Path, language: str, expressions: list[Expression], stats: BuildStats
) -> dict[str, int | list[str]]:
    """Compare the release's permutation file with the regenerated permutations."""
    rows = read_csv_rows(path, min_columns=24, header=True, column_names=("canonical", "23 permutations"))
    header = rows[0][1] if rows else []
    patterns = permutation_patterns()
    known = {e.expression for e in expressions}
    checked = cells = 0
    not_in_expressions: list[str] = []
    covered: set[str] = set()
    for row, values in rows[1:]:
        canonical = values[0].strip()
        permutations = [v.strip() for v in values[1:] if v.strip()]
        if canonical not in known:
            not_in_expressions.append(canonical)
            continue
        expected = [permute(canonical, p) for p in patterns]
        if permutations != expected[: len(permutations)] or len(permutations) != len(patterns):
            raise DataError(
                path,
                f"permutations of {canonical} do not match the regenerated ones: {permutations}",
                row=row,
                expected=f"23 cells in itertools order {expected}",
            )
        covered.add(canonical)
        checked += 1
        cells += len(permutations)
    missing = sorted(known - covered)
    if missing:
        stats.flag(
            "no_permutation_row_in_release",
            {"language": language, "expressions": missing},
        )
    return {
        "rows": len(rows) - 1,
        "rows_checked": checked,
        "cells_checked": cells,
        "header_first_labels": header[:3],
        "canonical_rows_not_in_expression_file": not_in_expressions,
        "expressions_without_permutation_row": missing,
    }


def read_categories(path: Path, language: str, stats: BuildStats) -> dict[str, str]:
    rows = read_csv_rows(path, min_columns=2, max_columns=2, column_names=("expression", "category"))
    categories: dict[str, str] = {}
    for row, (expression, category) in rows:
        expression, category = expression.strip(), category.strip()
        if category not in CATEGORIES:
            raise DataError(path, f"unknown syntactic category {category!r}", row=row, expected=" / ".join(CATEGORIES))
        if expression in categories and categories[expression] != category:
            stats.flag(
                "category_conflict_first_kept",
                {
                    "language": language,
                    "row": row,
                    "expression": expression,
                    "kept": categories[expression],
                    "ignored": category,
                },
            )
            continue
        categories.setdefault(expression, category)
    return categories


def expression_items(entry: Expression, category: str | None) -> list[Item]:
    """The canonical control input plus the 23 permutations of one expression."""
    expression_id = f"{entry.language}/{entry.row:04d}"
    items = []
    for pattern in [CANONICAL_PATTERN, *permutation_patterns()]:
        scrambled = permute(entry.expression, pattern)
        is_canonical = pattern == CANONICAL_PATTERN
        meta = {
            "expression_id": expression_id,
            "expression": entry.expression,
            "pattern": pattern,
            "is_canonical": is_canonical,
            # A repeated character makes some permutations equal to the canonical form.
            "is_identity": (not is_canonical) and scrambled == entry.expression,
            "category": category,
            "source_row": entry.row,
            "duplicate_of_row": entry.duplicate_of,
            "merged_rows": entry.merged_rows,
            "no_references": not entry.references,
        }
        items.append(
            Item(
                item_id=f"{expression_id}/{pattern}",
                benchmark=BENCHMARK,
                task=TASK,
                language=entry.language,
                input=scrambled,
                answer=entry.expression,
                references=tuple(entry.references),
                fields={"idiom": scrambled},
                meta=meta,
            )
        )
    return items


def build(raw_dir: Path, cfg: OrderProbeBuild) -> BuildResult:
    stats = BuildStats(BENCHMARK)
    items: list[Item] = []
    per_language: dict[str, dict[str, object]] = {}
    for language in cfg.languages:
        name = LANGUAGE_FILES[language]
        expressions = read_expressions(raw_dir / "data" / f"{name}.csv", language, cfg, stats)
        permutation_check = cross_check_permutations(
            raw_dir / "data" / f"Full permutation in {name}.csv", language, expressions, stats
        )
        categories = read_categories(raw_dir / "data" / "Structure" / name / f"{name}.csv", language, stats)
        joined = 0
        language_items: list[Item] = []
        for entry in expressions:
            category = categories.get(entry.expression)
            if category is None:
                stats.flag(
                    "no_syntactic_category", {"language": language, "row": entry.row, "expression": entry.expression}
                )
            else:
                joined += 1
            language_items.extend(expression_items(entry, category))
        items.extend(language_items)
        per_language[language] = {
            "expressions": len(expressions),
            "inputs": len(language_items),
            "perturbed_inputs": sum(1 for i in language_items if not i.meta["is_canonical"]),
            "identity_inputs": sum(1 for i in language_items if i.meta["is_identity"]),
            "category_join": {
                "joined": joined,
                "expressions": len(expressions),
                "rate": round(joined / len(expressions), 4) if expressions else None,
            },
            "permutation_file": permutation_check,
        }
    stats.details = {
        "languages": per_language,
        "expressions": sum(v["expressions"] for v in per_language.values()),
        "inputs": len(items),
        "perturbed_inputs": sum(1 for i in items if not i.meta["is_canonical"]),
        "identity_inputs": sum(1 for i in items if i.meta["is_identity"]),
        "expressions_with_repeated_character": len({i.meta["expression_id"] for i in items if i.meta["is_identity"]}),
        "dedupe": cfg.dedupe,
    }
    lexicons = lexicon.extract_languages(raw_dir, list(cfg.languages))
    stats.details["released_word_lists"] = {
        language: {
            "file": lexicon.SACC_FILES[language],
            **{f: len(getattr(lex, f)) for f in lexicon.WORD_LIST_VARIABLES},
            "idiom_overrides": len(lex.overrides),
        }
        for language, lex in sorted(lexicons.items())
    }
    stats.notes.append(
        "The permutation files' header names 24 patterns starting with ABCD, but each row holds the canonical "
        "form followed by the 23 non-identity permutations in itertools order (ABDC ... DCBA); labels here "
        "follow the cells, not the header."
    )
    return BuildResult(tasks={TASK: items}, stats=stats, files={lexicon.LEXICON_FILE: lexicon.to_json(lexicons)})
