"""Every published value the benchmarks ship (published_cells.yaml, report.published) held to the
paper's own text: the number at the cell's place (table, row labels, value column, which number
of the cell) must be the number the data file gives, character for character. A cell not read
from the text (source figure / not_in_text) is counted, with its reason; none is at present.
The papers' texts are found by the `papers` fixture (IDIOMBENCH_PAPERS, or beside the mirror).

Also: the checker catches a value changed by one digit (a mutated copy of a real file), every
cell's column holds one header and one kind of metric, and the counts per table are pinned (a
cell lost or added shows here). Run with `-s` for the counts.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import pytest

from idiombench.benchmarks.registry import get_benchmark
from idiombench.report.published import PublishedCells, parse_published_cells
from paper_tables import PAPER_FILES, clean, numbers, table

BENCHMARKS = ("orderprobe", "g-idiomalign", "semanticqa", "chengyu-bench")
# cells per paper table, as transcribed (docs/papers.md#published-values)
COUNTS = {
    "orderprobe": {"Table 3": 144, "Table 4": 24, "Figure 5": 36, "Table 11": 72},
    "g-idiomalign": {
        "Table 3": 56,
        "Table 4": 49,
        "Table 12": 84,
        "Table 14": 98,
        "Table 16": 63,
        "Table 6": 6,
        "Table 7": 42,
        "Table 8": 46,
    },
    "semanticqa": {"Table 3": 228, "Table 4": 72, "Table 5": 36, "Table 6": 60, "Table 12": 432, "Table 13": 150},
    "chengyu-bench": {"Table 7": 58},
}
ERRATA = {"orderprobe": 0, "g-idiomalign": 0, "semanticqa": 6, "chengyu-bench": 0}


def mismatches(published: PublishedCells, text: str) -> tuple[list[str], Counter[str]]:
    """(one line per cell whose value is not the text's at its place, cells checked per table)."""
    problems: list[str] = []
    checked: Counter[str] = Counter()
    tables = {}
    for cell in published:
        if cell.source != "text":
            continue
        if cell.table not in tables:
            tables[cell.table] = table(text, cell.table)
        paper = tables[cell.table]
        where = f"{published.source} line {cell.line}: {cell.place()}"
        try:
            row = paper.find(list(cell.row))
        except KeyError as error:
            problems.append(f"{where}: {error.args[0]}")
            continue
        if cell.col > len(row.values):
            problems.append(f"{where}: the paper's row (line {row.line}) has {len(row.values)} value columns")
            continue
        found = numbers(row.values[cell.col - 1])
        printed = found[cell.num - 1] if len(found) >= cell.num else None
        if printed != cell.printed:
            problems.append(
                f"{where}: the data file says {cell.printed}, the paper (line {row.line}) prints "
                f"{printed if printed is not None else 'no such number'} in {clean(row.values[cell.col - 1])!r}"
            )
            continue
        if not any(piece and piece in paper.header_text() for piece in (clean(p) for p in cell.label.split(" / "))):
            problems.append(f"{where}: no part of the label {cell.label!r} is in the table's header")
            continue
        checked[cell.table] += 1
    return problems, checked


@pytest.fixture(scope="module")
def texts(papers: Path) -> dict[str, str]:
    return {name: (papers / file).read_text(encoding="utf-8") for name, file in PAPER_FILES.items()}


@pytest.mark.parametrize("name", BENCHMARKS)
def test_every_published_value_is_the_papers(name: str, texts: dict[str, str]) -> None:
    published = get_benchmark(name).published_cells()
    problems, checked = mismatches(published, texts[name])
    assert not problems, f"{len(problems)} cells differ from the paper's text:\n" + "\n".join(problems[:20])
    elsewhere = [c for c in published if c.source != "text"]
    for cell in elsewhere:
        assert cell.reason, f"{cell.place()}: read from {cell.source} without a reason"
    print(
        f"\n{name}: {len(published)} cells, {sum(checked.values())} checked against the text "
        f"({', '.join(f'{t} {n}' for t, n in checked.items())}), {len(elsewhere)} not in the text, "
        f"{len(published.errata)} errata"
    )
    assert sum(checked.values()) + len(elsewhere) == len(published)
    assert dict(Counter(c.table for c in published)) == COUNTS[name]
    assert len(published.errata) == ERRATA[name]


def test_a_value_changed_by_one_digit_fails(texts: dict[str, str]) -> None:
    """The check is live: the SemanticQA file with one digit of one value changed (o3's zero-shot
    LCC, 72.1 -> 72.2) gives exactly that cell as a mismatch, and the real file none."""
    bench = get_benchmark("semanticqa")
    source = Path(bench.published_cells().source)
    path = Path(__file__).resolve().parents[3] / "src" / source
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    hits = [
        i
        for i, line in enumerate(lines)
        if all(f'"{part}"' in line for part in ("Table 3", "OPENAI o3", "0-shot", "collocation_categorization/ACC"))
    ]
    assert len(hits) == 1 and '"72.1"' in lines[hits[0]]
    lines[hits[0]] = lines[hits[0]].replace('"72.1"', '"72.2"')
    mutated = parse_published_cells("".join(lines), str(source), "semanticqa")
    problems, _ = mismatches(mutated, texts["semanticqa"])
    assert len(problems) == 1, problems
    assert (
        f"line {hits[0] + 1}" in problems[0] and "says 72.2, the paper" in problems[0] and "prints 72.1" in problems[0]
    )
    real, _ = mismatches(parse_published_cells(text, str(source), "semanticqa"), texts["semanticqa"])
    assert real == []


@pytest.mark.parametrize("name", BENCHMARKS)
def test_a_column_holds_one_header_and_one_metric(name: str) -> None:
    """Within a table, the cells of one value column (and number) share their header and the
    last part of their metric key: a cell given its neighbour's metric shows here."""
    labels: dict[tuple[str, int, int], set[str]] = defaultdict(set)
    metrics: dict[tuple[str, int, int], set[str]] = defaultdict(set)
    for cell in get_benchmark(name).published_cells():
        labels[(cell.table, cell.col, cell.num)].add(cell.label)
        if cell.metric is not None:
            metrics[(cell.table, cell.col, cell.num)].add(cell.metric.rsplit("/", 1)[-1])
    assert {k: v for k, v in labels.items() if len(v) > 1} == {}
    assert {k: v for k, v in metrics.items() if len(v) > 1} == {}
