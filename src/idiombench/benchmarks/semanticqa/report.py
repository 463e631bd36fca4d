"""SemanticQA's report section: paper table 3 (tasks x settings per model), table 4's ROUGE-L
and BERTScore columns, LCC F1s, read/parse counts, and, when scored, the sequential
compositions (tables 5-6) and LCC category scaling (figure 6).

Marks: the BERTScore role's own mark († substitute, * assumed paper model, ‡ not
computed); ‡ on METEOR when it could not run; § on a cell computed on a sample of the
task's items. Every mark used is explained in the table's footnotes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pydantic import JsonValue

from ...metrics import PERCENT
from ...report import option_order
from ...report.cells import Marks
from ...report.tables import Cell, CellRef, Figure, Section, Table, metric_cell
from ..contexts import ReportContext
from .adapters import ADAPTERS
from .results import SemanticQABody
from .sequential import COMPOSITIONS
from .specs import PRIMARY, setting_order

Body = SemanticQABody  # a model's metrics body

NOT_COMPUTED = "‡"
SAMPLE = "§"
FIGURE_ID = "semanticqa_table3"
INTERPRETATION_TASKS = ("idiom_paraphrase", "collocation_interpretation", "noun_compound_interpretation")
# the paper's column order (tables 3 and 12): IE, LC, NC, then VPE, LVE, VIE
TASKS = (
    "idiom_detection",
    "idiom_extraction",
    "idiom_paraphrase",
    "collocation_categorization",
    "collocation_extraction",
    "collocation_interpretation",
    "noun_compound_compositionality",
    "noun_compound_extraction",
    "noun_compound_interpretation",
    "vmwe_extraction_VPC",
    "vmwe_extraction_LVC",
    "vmwe_extraction_VID",
)
METRIC_LABELS = {"ACC": "ACC", "ACC_s": "ACC_s", "METEOR": "MTR"}
DECIMALS = 1  # every metric cell: percent, one decimal


def sample_mark(body: Body, setting: str, task: str, marks: Marks) -> str:
    coverage = body.provenance.coverage.get(setting) if body.provenance is not None else None
    part = coverage.parts.get(task) if coverage is not None else None
    if part is not None and not part.complete:
        return marks.add(
            SAMPLE,
            "computed on a sample of the task's items (render.sample); the count of items "
            "scored per task is in the counts table; not comparable with the paper's full sets.",
        )
    return ""


def bertscore_mark(body: Body, value: float | None, marks: Marks) -> str:
    """The bertscore_en role's mark on a value (substitute †, assumed paper model *); ‡ when not computed."""
    if value is None:
        return marks.add(NOT_COMPUTED, "not computed: the bertscore_en scoring role has no model in this profile.")
    info = body.provenance.roles.get("bertscore_en") if body.provenance is not None else None
    if info is None or not info.mark:
        return ""
    return marks.add(info.mark, f"BERTScore F1: {info.footnote}")


def meteor_mark(body: Body, value: float | None, marks: Marks) -> str:
    if value is not None:
        return ""
    reason = body.provenance.meteor.reason if body.provenance is not None else None
    return marks.add(NOT_COMPUTED, reason or "METEOR not computed (see the scoring notes).")


def rows_by_model(ctx: ReportContext, keep: Callable[[str, Body], bool]) -> list[tuple[str, str, Body]]:
    out = []
    bodies = ctx.bodies(SemanticQABody)
    for model in sorted(bodies):
        body = bodies[model]
        for setting in sorted(body.settings, key=setting_order):
            if keep(setting, body):
                out.append((model, setting, body))
    return out


def is_atomic(setting: str, body: Body) -> bool:
    kinds = body.provenance.setting_kinds if body.provenance is not None else {}
    return kinds.get(setting, "atomic") == "atomic"


def task_metrics(body: Body, setting: str) -> dict[str, dict[str, float | None]]:
    """A setting's metrics: task -> metric -> value."""
    return {task: values for task, values in body.settings[setting].metrics.items() if isinstance(values, dict)}


def task_cell(
    model: str,
    body: Body,
    setting: str,
    task: str,
    metric: str,
    marks: Marks,
    scorer_mark: Callable[[float | None], str] | None = None,
) -> Cell:
    """One metric cell (cell name "<setting>/<task>/<metric>", the spec's scope and key): the
    value, the mark of the scorer behind it, § for a sample; — when not scored."""
    metrics = task_metrics(body, setting)
    if task not in metrics:
        return Cell("—")
    value = metrics[task].get(metric)
    scorer = scorer_mark(value) if scorer_mark is not None else ""
    if value is None and not scorer:
        scorer = marks.add(NOT_COMPUTED, "not computed (see the scoring notes).")
    mark = scorer + sample_mark(body, setting, task, marks)
    return metric_cell(value, PERCENT, DECIMALS, mark, CellRef(model, f"{setting}/{task}/{metric}"))


def setting_table(
    ctx: ReportContext,
    table_id: str,
    title: str,
    columns: list[str],
    cells: Callable[[str, str, Body], list[Cell] | None],
    caption: str,
) -> Table:
    """A row per model and (atomic) setting: its name, the setting, then `cells(model, setting,
    body)` (None: no row)."""
    rows = []
    for model, setting, body in rows_by_model(ctx, is_atomic):
        row = cells(model, setting, body)
        if row is not None:
            rows.append([Cell(ctx.display_name(model)), Cell(setting), *row])
    return Table(table_id, title, columns, rows, caption=caption)


def table3(ctx: ReportContext, marks: Marks) -> Table:
    def cells(model: str, setting: str, body: Body) -> list[Cell]:
        row = []
        for task in TASKS:
            kind = ADAPTERS[task].kind
            scorer = (lambda v: meteor_mark(body, v, marks)) if kind == "interpretation" else None
            row.append(task_cell(model, body, setting, task, PRIMARY[kind].key, marks, scorer))
        return row

    return setting_table(
        ctx,
        "semanticqa_table3",
        "SemanticQA: main results (paper table 3 / 12)",
        ["Model", "Setting"] + [f"{ADAPTERS[t].code} ({METRIC_LABELS[PRIMARY[ADAPTERS[t].kind].key]})" for t in TASKS],
        cells,
        caption="ACC: accuracy; ACC_s: sequence-level exact match (partial spans do not count); MTR: METEOR "
        "(NLTK, WordNet 3.0, max over references). Percent.",
    )


def table4(ctx: ReportContext, marks: Marks) -> Table:
    def cells(model: str, setting: str, body: Body) -> list[Cell]:
        def bertscore(value: float | None) -> str:
            return bertscore_mark(body, value, marks)

        return [
            task_cell(model, body, setting, task, metric, marks, bertscore if metric == "BERTScore" else None)
            for task in INTERPRETATION_TASKS
            for metric in ("ROUGE-L", "BERTScore")
        ]

    return setting_table(
        ctx,
        "semanticqa_table4",
        "SemanticQA: interpretation, ROUGE-L and BERTScore F1 (paper table 4)",
        ["Model", "Setting"] + [f"{ADAPTERS[t].code} {m}" for t in INTERPRETATION_TASKS for m in ("R-L", "B-S")],
        cells,
        caption="R-L: ROUGE-L F (rouge-score); B-S: BERTScore F1 (no idf, no baseline rescaling); both the max "
        "over the item's references. Percent.",
    )


def lcc_table(ctx: ReportContext, marks: Marks) -> Table:
    task = "collocation_categorization"
    metrics = ["ACC", "macro-F1", "micro-F1", "weighted-F1"]

    def cells(model: str, setting: str, body: Body) -> list[Cell] | None:
        if task not in task_metrics(body, setting):
            return None
        return [task_cell(model, body, setting, task, m, marks) for m in metrics]

    return setting_table(
        ctx,
        "semanticqa_lcc_f1",
        "SemanticQA: LCC accuracy and F1 (lexical-function labels)",
        ["Model", "Setting", *metrics],
        cells,
        caption="F1 over the gold labels and the recognised predicted labels; an unreadable prediction is "
        "a miss for its gold label. Percent.",
    )


def count_cell(counts: Mapping[str, JsonValue], task: str) -> Cell:
    """`items scored/items in the task (unreadable or failed)`; — for a task not scored."""
    c = counts.get(task)
    if not isinstance(c, dict):
        return Cell("—")

    def number(key: str) -> int:
        value = c[key]
        assert isinstance(value, int), f"counts.{task}.{key}"
        return value

    unread = number("parse_failures") + number("generation_failures")
    return Cell(f"{number('items')}/{number('items_in_task')} ({unread})")


def counts_table(ctx: ReportContext) -> Table:
    return setting_table(
        ctx,
        "semanticqa_counts",
        "SemanticQA: items scored of the task's items (unreadable or failed outputs)",
        ["Model", "Setting"] + [ADAPTERS[t].code for t in TASKS],
        lambda _model, setting, body: [count_cell(body.settings[setting].counts, task) for task in TASKS],
        caption="Unreadable or failed outputs count as wrong (0); their flags are in the per-row scores.",
    )


def step_cell(model: str, ref: str, values: dict[str, float | None], key: str, mark: str) -> Cell:
    """A sequential composition's metric cell (Ext, Cond, Overall), named `<ref><key>`."""
    return metric_cell(values.get(key), PERCENT, DECIMALS, mark, CellRef(model, f"{ref}{key}"))


def sequential_tables(ctx: ReportContext, marks: Marks) -> list[Table]:
    interp_rows, judge_rows = [], []
    for model, setting, body in rows_by_model(ctx, lambda s, b: not is_atomic(s, b)):
        for task, values in sorted(task_metrics(body, setting).items()):
            comp = COMPOSITIONS.get(task)
            if comp is None:
                continue
            head = [Cell(comp.phrase_type), Cell(ctx.display_name(model)), Cell(setting)]
            sample = sample_mark(body, setting, task, marks)
            ref = f"{setting}/{task}/"  # the cell names: the spec's scope and key (specs.py)
            if comp.second == "interpretation":
                cond, overall = values.get("Cond"), values.get("Overall")
                interp_rows.append(
                    head
                    + [
                        step_cell(model, ref, values, "Ext", sample),
                        step_cell(model, ref, values, "Cond", meteor_mark(body, cond, marks) + sample),
                        step_cell(model, ref, values, "Overall", meteor_mark(body, overall, marks) + sample),
                    ]
                )
            else:
                steps = [step_cell(model, ref, values, key, sample) for key in ("Ext", "Cond", "Overall")]
                judge_rows.append(head + steps)
    tables = []
    if interp_rows:
        tables.append(
            Table(
                "semanticqa_table5",
                "SemanticQA: sequential extraction -> interpretation (paper table 5)",
                ["Type", "Model", "Setting", "Ext. (ACC)", "Cond. (MTR)", "Overall (MTR)"],
                interp_rows,
                caption="Cond.: METEOR over correctly extracted items; Overall: METEOR with 0 where the "
                "extraction failed, over all items. Percent.",
            )
        )
    if judge_rows:
        tables.append(
            Table(
                "semanticqa_table6",
                "SemanticQA: sequential extraction -> judgement (paper table 6)",
                ["Type", "Model", "Setting", "Ext. (ACC)", "Cond.", "Overall"],
                judge_rows,
                caption="Cond.: accuracy given a correct extraction; Overall: both steps correct, over all "
                "items (4 options: the paper's 4-class rows). LC rows need unreleased item sets.",
            )
        )
    return tables


def scaling_table(ctx: ReportContext) -> Table | None:
    rows = []
    bodies = ctx.bodies(SemanticQABody)
    for model in sorted(bodies):
        breakdowns = bodies[model].breakdowns
        scaling = breakdowns.lcc_scaling if breakdowns is not None else {}
        for shots, by_classes in scaling.items():
            for classes, entry in by_classes.items():
                rows.append(
                    [
                        Cell(ctx.display_name(model)),
                        Cell(shots),
                        Cell(classes),
                        Cell(f"{entry.mean:.1f} ± {entry.std:.1f}"),
                        Cell(str(len(entry.runs))),
                    ]
                )
    if not rows:
        return None
    return Table(
        "semanticqa_scaling",
        "SemanticQA: LCC category scaling (paper figure 6, table 13)",
        ["Model", "Setting", "Classes", "ACC (mean ± std)", "Runs"],
        rows,
        caption="Mean and population standard deviation over class combinations. Percent.",
    )


def option_order_entries(ctx: ReportContext) -> list[option_order.Entry]:
    """Per model, setting and task whose option-order pass ran: its entry."""
    entries = []
    bodies = ctx.bodies(SemanticQABody)
    for model in sorted(bodies):
        for setting in sorted(bodies[model].settings, key=setting_order):
            metrics = task_metrics(bodies[model], setting)
            for task, counts in sorted(bodies[model].settings[setting].counts.items()):
                if not isinstance(counts, dict) or not counts.get("option_order"):
                    continue  # the pass did not run (or other_passes_not_aggregated)
                label = f"{ADAPTERS[task].code} {setting}"
                found = {"metrics": metrics.get(task), "counts": counts}  # the task's part, as entry reads it
                entry = option_order.entry(model, ctx.display_name(model), label, found, f"{setting}/{task}/")
                entries += [entry] if entry is not None else []
    return entries


def released_mode(ctx: ReportContext) -> bool:
    return any(
        body.provenance is not None and body.provenance.score_options.get("compatibility") == "released"
        for body in ctx.bodies(SemanticQABody).values()
    )


def figure(ctx: ReportContext) -> Figure | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = []
    for model, setting, body in rows_by_model(ctx, is_atomic):
        metrics = task_metrics(body, setting)
        primary = [metrics[t].get(PRIMARY[ADAPTERS[t].kind].key) if t in metrics else None for t in TASKS]
        series.append((f"{ctx.display_name(model)} {setting}", primary))
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(11, 4.2))
    width = 0.8 / len(series)
    for index, (label, values) in enumerate(series):
        xs = [x + index * width for x in range(len(TASKS))]
        ax.bar(xs, [v if v is not None else 0.0 for v in values], width, label=label)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(TASKS))])
    ax.set_xticklabels([ADAPTERS[t].code for t in TASKS])
    ax.set_ylabel("primary metric (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=7, ncol=2)
    ax.set_title("SemanticQA: ACC / ACC_s / METEOR per task")
    fig.tight_layout()
    path = ctx.figures_dir / f"{FIGURE_ID}.png"
    fig.savefig(path, dpi=120, metadata={"Software": None})
    plt.close(fig)
    return Figure(
        FIGURE_ID,
        "SemanticQA primary metric per task (not comparable across tasks)",
        path,
        caption="Bars at 0 with no value are not computed (see table 3).",
    )


def report_section(ctx: ReportContext) -> Section | None:
    if not ctx.metrics:
        return None
    tables: list[Table] = []
    for build in (table3, table4, lcc_table):
        marks = Marks(per_mark=True)  # each mark explained once
        table = build(ctx, marks)
        table.footnotes = marks.footnotes()
        if table.rows:
            tables.append(table)
    tables.append(counts_table(ctx))
    marks = Marks(per_mark=True)  # each mark explained once
    sequential = sequential_tables(ctx, marks)
    for table in sequential:
        table.footnotes = marks.footnotes()
    tables += sequential
    scaling = scaling_table(ctx)
    if scaling is not None:
        tables.append(scaling)
    order_table, order_figure = option_order.part(
        "semanticqa_option_order", "SemanticQA IED and NCC", option_order_entries(ctx), ctx.figures_dir
    )
    tables += [order_table] if order_table is not None else []
    tables = [t for t in tables if t.rows]
    fig = figure(ctx)
    notes = sorted(
        {
            note
            for body in ctx.bodies(SemanticQABody).values()
            if body.provenance is not None
            for note in body.provenance.scoring_notes
        }
    )
    return Section(
        benchmark="semanticqa",
        title="SemanticQA",
        intro=[
            "Twelve test sets (paper table 1), 0-, 3- and 5-shot with the released templates; metrics as in "
            "paper §3.4 (docs/METRICS.md §3.2)."
            + (
                " Scored with score.compatibility: released, the authors' released scorer's reading (the stored "
                "text; an empty response not scored; docs/METRICS.md §3.5)."
                if released_mode(ctx)
                else ""
            )
        ],
        tables=tables,
        figures=[f for f in (fig, order_figure) if f is not None],
        notes=notes,
    )
