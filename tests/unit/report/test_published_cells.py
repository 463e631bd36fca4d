"""The published values' loader (report.published) and hook (Benchmark.published_cells): every
built-in benchmark ships its file, each cell's keys are the project's own (so a later step can
join them to a run's cells), a plugin without a file has none, and a bad file is one DataError
naming the file and its line. The values against the papers: test_published_cells_text.py."""

from __future__ import annotations

import functools
import re
import types
from pathlib import Path
from typing import Any

import pytest

from idiombench.benchmarks.base import Benchmark
from idiombench.benchmarks.registry import get_benchmark
from idiombench.core.errors import DataError
from idiombench.pipeline.config import load_params
from idiombench.report.published import PublishedCells, load_published_cells, parse_published_cells

BENCHMARKS = ("orderprobe", "g-idiomalign", "semanticqa", "chengyu-bench")
HEAD = """format: 1
benchmark: toy
paper: "A paper"
tables:
  - {table: "Table 1", title: "Results", report: [toy_table1]}
cells:
"""
GOOD = '  - {table: "Table 1", model: "M", model_id: "m", setting: "s", metric: "acc", value: "12.5", unit: "percent", row: ["M"], label: "Acc", col: 1}\n'  # noqa: E501


def parse(text: str) -> PublishedCells:
    return parse_published_cells(text, "toy/published_cells.yaml", "toy")


@pytest.mark.parametrize("name", BENCHMARKS)
def test_every_builtin_benchmark_ships_its_papers_values(name: str) -> None:
    published = get_benchmark(name).published_cells()
    assert published.benchmark == name and published.paper and len(published) > 50
    assert published is get_benchmark(name).published_cells()  # read once
    for cell in published:
        assert cell.benchmark == name and cell.paper == published.paper
        assert cell.value == float(cell.printed.replace(",", "."))
    reported = {t.table for t in published.tables}
    assert {c.table for c in published} == reported


def test_a_benchmark_without_a_file_has_none() -> None:
    """The hook's default (a plugin's, the toy benchmark's): no cells."""
    plugin = types.SimpleNamespace(name="plain")
    assert Benchmark.published_cells(plugin) == PublishedCells.none("plain")  # type: ignore[arg-type]
    assert len(PublishedCells.none("plain")) == 0


def test_the_semanticqa_lookup_and_its_errata() -> None:
    published = get_benchmark("semanticqa").published_cells()
    (o3,) = published.find(
        table="Table 3", model_id="openai-o3", setting="0-shot", metric="collocation_categorization/ACC"
    )
    assert (o3.printed, o3.value, o3.unit, o3.ref) == ("72.1", 72.1, "percent", "0-shot/collocation_categorization/ACC")
    assert o3.row == ("OPENAI o3: zero-shot",) and o3.col == 4 and published.erratum(o3) is None
    (qwen,) = published.find(table="Table 12", model_id="qwen3-235b", metric="idiom_extraction/ACC_s")
    erratum = published.erratum(qwen)
    assert erratum is not None and (erratum.printed, erratum.release) == ("53.6", "56.60")
    (std,) = published.find(table="Table 13", model_id="deepseek-r1", setting="0-shot", metric="lcc_scaling/2/std")
    assert (std.printed, std.value, std.num) == ("11,9", 11.9, 2)


@functools.cache
def paper_params() -> Any:
    return load_params(Path(__file__).resolve().parents[3] / "overlays" / "paper.yaml")


def settings_of(name: str) -> set[str]:
    """The settings the paper profile renders (SemanticQA's sequential ones too)."""
    settings = set(paper_params().benchmark(name).render.settings)
    if name == "semanticqa":
        settings |= {f"multi_step_{k}" for k in settings}
    return settings


def metric_patterns(name: str) -> list[str]:
    """The metric keys each benchmark's metrics body (and report cells) use, as regexes."""
    if name == "orderprobe":
        from idiombench.benchmarks.orderprobe.build import CATEGORIES
        from idiombench.benchmarks.orderprobe.report import LANGUAGE_LABELS, METRIC_NAMES

        metric = "|".join(METRIC_NAMES)
        part = "|".join(re.escape(p) for p in [*LANGUAGE_LABELS, *CATEGORIES, "canonical"])
        return [f"(?:{metric})", f"(?:{part})/(?:{metric})"]
    if name == "g-idiomalign":
        from idiombench.benchmarks.g_idiomalign.attention import CONDITIONS, ERROR_TYPES, METRICS, SUBSETS
        from idiombench.benchmarks.g_idiomalign.task1 import DISTRACTOR_TYPES, GROUPS

        groups = "|".join([*GROUPS, "overall"])
        thresholds = "|".join(re.escape(f"Acc@{t:.2f}") for t in paper_params().benchmark(name).score.thresholds)
        attention = "|".join(METRICS)
        assert CONDITIONS == ("with_gloss", "no_gloss")
        return [
            f"accuracy\\.(?:macro|micro)\\.(?:{groups})",
            f"outcome\\.(?:{groups})\\.(?:Correct|{'|'.join(DISTRACTOR_TYPES)})",
            f"(?:delta\\.)?(?:MeanSim|EM|BLEU|chrF|{thresholds})",
            f"table6/(?:{'|'.join(SUBSETS)})/J_(?:heads|layers)",
            f"table7/(?:{attention})/(?:(?:Correct|Wrong)/(?:median|iqr)|delta|q)",
            f"table8/(?:{attention})/(?:(?:{'|'.join(ERROR_TYPES)})/(?:median|iqr)|q)",
        ]
    if name == "semanticqa":
        from idiombench.benchmarks.semanticqa.adapters import ADAPTERS

        tasks = "|".join(ADAPTERS)
        return [
            f"(?:{tasks})/(?:ACC|ACC_s|METEOR|ROUGE-L|BERTScore|Ext|Cond|Overall)",
            "lcc_scaling/(?:1|2|4|8|16)/(?:mean|std)",
        ]
    from idiombench.benchmarks.chengyu_bench.metrics import KS

    return ["accuracy", "valid_idiom", *[f"acc_at_{k}" for k in KS]]


@pytest.mark.parametrize("name", BENCHMARKS)
def test_cells_name_the_projects_settings_and_metrics(name: str) -> None:
    """A cell's setting is one the paper profile renders, its metric a key of the benchmark's
    metrics (or attention summary): never a name only the data file knows."""
    settings = settings_of(name)
    patterns = [re.compile(p) for p in metric_patterns(name)]
    for cell in get_benchmark(name).published_cells():
        assert cell.setting is None or cell.setting in settings, cell.place()
        assert cell.metric is None or any(p.fullmatch(cell.metric) for p in patterns), (cell.place(), cell.metric)
        if cell.metric is None:
            assert name == "semanticqa" and cell.table == "Table 6" and cell.row[0] == "LC", cell.place()


def test_a_good_file_reads() -> None:
    published = parse(HEAD + GOOD + "errata: []\nomitted:\n  - {table: Figure 1, reason: a chart}\n")
    (cell,) = published.cells
    assert (cell.line, cell.value, cell.num, cell.source, cell.ref) == (7, 12.5, 1, "text", "s/acc")
    assert published.omitted[0].reason == "a chart"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda g: g.replace('"percent"', '"percentage"'), r"row 7: unit: Input should be 'percent'"),
        (lambda g: g.replace('"12.5"', '"12.5%"'), r"row 7: value: Value error, value '12.5%' is not a number"),
        (lambda g: g.replace('"12.5"', "12.5"), r"row 7: value: Input should be a valid string"),
        (lambda g: g.replace('["M"]', "[]"), r"row 7: Value error, row: at least one label"),
        (lambda g: g.replace('"Table 1"', '"Table 2"'), r"row 7: table 'Table 2' is not in `tables`"),
        (lambda g: g.replace("col: 1", "col: 0"), r"row 7: col: Input should be greater than or equal to 1"),
        (lambda g: g.replace("col: 1", "col: 1, colour: 2"), r"row 7: colour: Extra inputs are not permitted"),
        (lambda g: g.replace("col: 1", 'col: 1, source: "figure"'), r"row 7: Value error, a cell not read"),
        (lambda g: g.replace("col: 1", "col: 1, line: 3"), r"row 7: a cell may not set line"),
        (lambda g: g + g, r"row 8: Table 1, row M, column 1 \(Acc\) is transcribed twice \(line 7\)"),
        (lambda g: g + g.replace("col: 1", "col: 2"), r"row 8: Table 1 m s acc: a second cell \(line 7\)"),
        (lambda g: g.replace("{table", "{table: [", 1), r"toy/published_cells.yaml, row 7: not YAML"),
    ],
)
def test_a_bad_cell_is_one_error_naming_the_file_and_line(change, message: str) -> None:
    with pytest.raises(DataError, match=message) as caught:
        parse(HEAD + change(GOOD))
    text = str(caught.value)
    assert text.startswith("toy/published_cells.yaml, row ") and "\n" not in text


@pytest.mark.parametrize(
    ("errata", "message"),
    [
        (
            '  - {table: "Table 1", row: ["M"], col: 1, printed: "12.6", release: "13", computed: c, reason: r}\n',
            "row 9: erratum printed '12.6', the cell '12.5'",
        ),  # noqa: E501
        (
            '  - {table: "Table 1", row: ["N"], col: 1, printed: "12.5", release: "13", computed: c, reason: r}\n',
            "row 9: erratum of a cell that is not transcribed",
        ),  # noqa: E501
        (
            '  - {table: "Table 1", row: ["M"], col: 1, printed: "12.5", release: "13", computed: c}\n',
            "row 9: reason: Field required",
        ),  # noqa: E501
    ],
)
def test_a_bad_erratum_is_one_error(errata: str, message: str) -> None:
    with pytest.raises(DataError, match=re.escape(message)):
        parse(HEAD + GOOD + "errata:\n" + errata)


@pytest.mark.parametrize(
    ("head", "message"),
    [
        (HEAD.replace("format: 1", "format: 2"), "format 2 (expected format: 1)"),
        (HEAD.replace("benchmark: toy", "benchmark: other"), "benchmark 'other' (expected benchmark: toy)"),
        (HEAD.replace('paper: "A paper"\n', ""), "`paper` must name the paper"),
        (HEAD + "extra: 1\n", "unknown keys: extra"),
        ("- 1\n", "not a mapping"),
    ],
)
def test_a_bad_file_is_one_error(head: str, message: str) -> None:
    text = head + (GOOD if head.endswith("cells:\n") else "")
    with pytest.raises(DataError, match=re.escape(f"toy/published_cells.yaml: {message}")):
        parse(text)


def test_a_package_without_its_file_is_an_error() -> None:
    with pytest.raises(DataError, match=r"idiombench/core/published_cells.yaml: missing"):
        load_published_cells("idiombench.core", "core")
