"""Chengyu-Bench's report section: the paper's table 7 for the scored models, ChID asked as
an open cloze, the parse counts, and an Acc@k figure.

Marks: § = not the full official data (the project's own SAMPLE, or a seeded sample of
the official items); the column header then says "sample" too. ‡ = not run (the
official release, which holds the Open Cloze data, is not available). Every mark used
is explained in the table's footnotes.
"""

from __future__ import annotations

from ...report import option_order
from ...report.cells import Marks
from ...report.tables import Cell, CellRef, Figure, Section, Table, cell, metric_cell
from ..contexts import ReportContext
from .metrics import KS, TOP_K
from .results import ChengyuBody, ChengyuSetting
from .specs import PERCENT6

BENCH_ID = "chengyu_bench"
SAMPLE_MARK = "§"
NOT_RUN_MARK = "‡"
FMT = "{:.2f}"
DECIMALS = 2
SETTING_NAMES = {
    "connotation": "Connotation",
    "appropriateness": "Appropriateness",
    "open_cloze": "Open Cloze",
    "chid_open_cloze": "ChID as open cloze",
    "chid_candidates": "ChID (7 candidates)",
}
NOT_RUN_NOTE = (
    f"{NOT_RUN_MARK} not run: the Open Cloze data is part of the official Chengyu-Bench release, "
    "which is not available (benchmarks.chengyu-bench.build.release_dir is null); see the table "
    "of ChID passages asked as an open cloze."
)


def _setting(body: ChengyuBody, setting: str) -> ChengyuSetting | None:
    entry = body.settings.get(setting)
    return entry if entry is not None and entry.task is not None else None


def _is_sample(body: ChengyuBody, setting: str) -> bool:
    """Scored on the project's own sample, or on a seeded sample of the official items."""
    assert body.provenance is not None
    data, covered = body.provenance.data.get(setting), body.provenance.coverage.get(setting)
    return data is not None and (data.source == "sample" or (covered is not None and not covered.complete))


def _metric(entry: ChengyuSetting | None, key: str) -> float | None:
    found = entry.metrics.get(key) if entry is not None else None
    return found if not isinstance(found, dict) else None


def sample_mark(marks: Marks, body: ChengyuBody, setting: str) -> str:
    """§ with its footnote (one per distinct data description) where the setting ran on a sample."""
    if not _is_sample(body, setting):
        return ""
    assert body.provenance is not None
    data, covered = body.provenance.data[setting], body.provenance.coverage[setting]
    name = SETTING_NAMES[setting]
    if data.source == "sample":
        scored = f"{covered.scored:,} of its {covered.available:,} items scored"
        line = (
            f"{name}: the idiombench project's own SAMPLE ({data.task}; {scored}), written by the project, "
            "not the official Chengyu-Bench data: not comparable with the paper's table 7."
        )
    else:
        line = (
            f"{name}: a seeded sample of the official data ({data.task}: {covered.scored:,} of "
            f"{covered.available:,} items; render.sample.items_per_task)."
        )
    return marks.add(SAMPLE_MARK, line)


def _header(name: str, sampled: bool) -> str:
    return f"{name} (sample {SAMPLE_MARK})" if sampled else name


def _idiom_footnote(bodies: dict[str, ChengyuBody]) -> str | None:
    for body in bodies.values():
        idioms = body.provenance.idiom_list if body.provenance is not None else None
        if idioms:
            return (
                f"Valid Idiom: share of the distinct predicted idioms (first {TOP_K} of each answer) found in "
                f"{idioms['description']}, a stand-in for {idioms['stand_in_for']} that the paper used."
            )
    return None


def _released(body: ChengyuBody) -> bool:
    return body.provenance is not None and body.provenance.release == "available"


def table7(ctx: ReportContext) -> Table:
    marks = Marks()
    not_run = False
    rows = []
    sampled = {s: False for s in SETTING_NAMES}
    for model, body in ctx.bodies(ChengyuBody).items():
        row = [Cell(ctx.display_name(model))]
        for setting in ("connotation", "appropriateness"):
            entry = _setting(body, setting)
            mark = sample_mark(marks, body, setting) if entry else ""
            sampled[setting] |= bool(mark)
            row.append(
                metric_cell(
                    _metric(entry, "accuracy"),
                    PERCENT6,
                    DECIMALS,
                    mark,
                    CellRef(model, f"{setting}/accuracy"),
                )
            )
        entry = _setting(body, "open_cloze")
        if entry is None:
            release = _released(body)
            not_run |= not release
            mark = "" if release else NOT_RUN_MARK
            row += [
                metric_cell(None, PERCENT6, DECIMALS, mark, CellRef(model, f"open_cloze/{key}"))
                for key in (*(f"acc_at_{k}" for k in KS), "valid_idiom")
            ]
        else:
            mark = sample_mark(marks, body, "open_cloze")
            sampled["open_cloze"] |= bool(mark)
            row += [
                metric_cell(
                    _metric(entry, f"acc_at_{k}"),
                    PERCENT6,
                    DECIMALS,
                    mark,
                    CellRef(model, f"open_cloze/acc_at_{k}"),
                )
                for k in KS
            ]
            row.append(
                metric_cell(
                    _metric(entry, "valid_idiom"),
                    PERCENT6,
                    DECIMALS,
                    mark,
                    CellRef(model, "open_cloze/valid_idiom"),
                )
            )
        entry = _setting(body, "chid_candidates")
        mark = sample_mark(marks, body, "chid_candidates") if entry else ""
        sampled["chid_candidates"] |= bool(mark)
        row.append(
            metric_cell(
                _metric(entry, "accuracy"),
                PERCENT6,
                DECIMALS,
                mark,
                CellRef(model, "chid_candidates/accuracy"),
            )
        )
        rows.append(row)
    columns = [
        "Model",
        _header("Connotation", sampled["connotation"]),
        _header("Appropriateness", sampled["appropriateness"]),
    ]
    columns += [_header(f"Open Cloze Acc.@{k}", sampled["open_cloze"]) for k in KS]
    columns += [_header("Valid Idiom", sampled["open_cloze"]), _header("ChID Acc.", sampled["chid_candidates"])]
    footnotes = marks.footnotes() + ([NOT_RUN_NOTE] if not_run else [])
    if any(c.text == "—" and not c.marks.startswith(NOT_RUN_MARK) for row in rows for c in row[1:]):
        footnotes.append(
            "—: not computed (the setting was not scored for the model, or no idiom was read from "
            "any answer for Valid Idiom)."
        )
    idiom_note = _idiom_footnote({m: b for m, b in ctx.bodies(ChengyuBody).items() if _setting(b, "open_cloze")})
    if idiom_note:
        footnotes.append(idiom_note)
    footnotes.append(
        "ChID Acc.: FewCLUE ChID passages with their 7 candidates (the prompt is the project's: the "
        "paper does not print its ChID prompt). Unparseable answers count as wrong."
    )
    return Table(
        table_id=f"{BENCH_ID}_table7",
        title="Chengyu-Bench table 7: Connotation, Appropriateness, Open Cloze and ChID (%)",
        columns=columns,
        rows=rows,
        footnotes=footnotes,
        caption="Acc.@k: an acceptable idiom among the first k of the five ranked predictions. "
        "Valid Idiom: share of predicted idioms listed in the idiom dictionary.",
    )


def chid_open_cloze_table(ctx: ReportContext, models: list[str]) -> Table:
    marks = Marks()
    rows = []
    sampled = False
    bodies = ctx.bodies(ChengyuBody)
    for model in models:
        body = bodies[model]
        entry = _setting(body, "chid_open_cloze")
        assert entry is not None  # models: those that ran the setting (report_section)
        mark = sample_mark(marks, body, "chid_open_cloze")
        sampled |= bool(mark)
        rows.append(
            [Cell(ctx.display_name(model))]
            + [
                metric_cell(
                    _metric(entry, f"acc_at_{k}"),
                    PERCENT6,
                    DECIMALS,
                    mark,
                    CellRef(model, f"chid_open_cloze/acc_at_{k}"),
                )
                for k in KS
            ]
            + [
                metric_cell(
                    _metric(entry, "valid_idiom"),
                    PERCENT6,
                    DECIMALS,
                    mark,
                    CellRef(model, "chid_open_cloze/valid_idiom"),
                ),
                cell(entry.counts["items"]),
            ]
        )
    columns = [("Model")] + [_header(f"Acc.@{k}", sampled) for k in KS] + [_header("Valid Idiom", sampled), "Passages"]
    footnotes = marks.footnotes()
    idiom_note = _idiom_footnote({m: bodies[m] for m in models})
    if idiom_note:
        footnotes.append(idiom_note)
    if any(row[len(KS) + 1].text == "—" for row in rows):
        footnotes.append("— Valid Idiom: not computable, no idiom was read from any answer (all unparseable).")
    return Table(
        table_id=f"{BENCH_ID}_chid_open_cloze",
        title="ChID passages asked as an open cloze (candidates hidden): not the paper's Open Cloze data (%)",
        columns=columns,
        rows=rows,
        footnotes=footnotes,
        caption="The paper's Open Cloze prompt on FewCLUE ChID test_public passages; the gold is ChID's answer idiom.",
    )


def counts_table(ctx: ReportContext) -> Table:
    rows = []
    bodies = ctx.bodies(ChengyuBody)
    for model, body in bodies.items():
        for setting, entry in sorted(body.settings.items()):
            counts = entry.counts
            rows.append(
                [
                    Cell(ctx.display_name(model)),
                    Cell(setting),
                    Cell(entry.task or "—"),
                    cell(counts["rows"]),
                    cell(counts["parse_failures"]),
                    cell(counts["unformatted"]),
                    cell(_metric(entry, "format_ok"), FMT),
                    cell(counts["generation_errors"]),
                ]
            )
    settings = {s for body in bodies.values() for s in body.settings}
    accept = next((b.provenance.scoring.accept_unformatted for b in bodies.values() if b.provenance is not None), None)
    rule = (
        "counted as answers (score.accept_unformatted: true)"
        if accept
        else "scored as wrong (score.accept_unformatted: false)"
    )
    footnotes = [
        f"Parse failures: nothing could be read; scored as wrong. Unformatted: an answer read without the "
        f"requested format (e.g. 褒义 without <…>), {rule}."
    ]
    if any(s in settings for s in ("connotation", "appropriateness")) and any(
        b.provenance is not None and (data := b.provenance.data.get(s)) is not None and data.source == "sample"
        for b in bodies.values()
        for s in ("connotation", "appropriateness")
    ):
        footnotes.append("Tasks ending in _sample: the idiombench project's own sample, not the official data.")
    return Table(
        table_id=f"{BENCH_ID}_parse_counts",
        title="Chengyu-Bench: answers read per model and setting",
        columns=[
            "Model",
            "Setting",
            "Task",
            "Rows",
            "Parse failures",
            "Unformatted",
            "Format followed (%)",
            "Generation errors",
        ],
        rows=rows,
        footnotes=footnotes,
    )


def acc_at_k_figure(ctx: ReportContext) -> Figure | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bodies = ctx.bodies(ChengyuBody)
    settings = [
        s
        for s in ("open_cloze", "chid_open_cloze")
        if any(b.breakdowns is not None and s in b.breakdowns.acc_at_k and _setting(b, s) for b in bodies.values())
    ]
    if not settings:
        return None
    fig, axes = plt.subplots(1, len(settings), figsize=(4.2 * len(settings), 3.2), squeeze=False)
    for ax, setting in zip(axes[0], settings, strict=True):
        for model, body in bodies.items():
            curve = body.breakdowns.acc_at_k.get(setting) if body.breakdowns is not None else None
            if not curve or not _setting(body, setting):
                continue
            ks = sorted(int(k) for k in curve)
            values = [curve[str(k)] if curve[str(k)] is not None else float("nan") for k in ks]
            label = ctx.display_name(model) + (f" {SAMPLE_MARK}" if _is_sample(body, setting) else "")
            ax.plot(ks, values, marker="o", label=label)
        ax.set_title(SETTING_NAMES[setting])
        ax.set_xlabel("k")
        ax.set_ylabel("Acc.@k (%)")
        ax.set_xticks(range(1, TOP_K + 1))
        ax.set_ylim(0, 100)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    path = ctx.figures_dir / f"{BENCH_ID}_acc_at_k.png"
    fig.savefig(path, dpi=150, metadata={"Software": None})
    plt.close(fig)
    caption = "Share of passages whose gold idiom is among the first k predictions, k = 1…5."
    if any(_is_sample(b, s) for b in bodies.values() for s in settings):
        caption += f" {SAMPLE_MARK}: computed on a sample (see the tables' footnotes)."
    return Figure(f"{BENCH_ID}_acc_at_k", "Chengyu-Bench: Acc.@k by k", path, caption)


def option_order_entries(ctx: ReportContext) -> list[option_order.Entry]:
    entries = []
    bodies = ctx.bodies(ChengyuBody)
    for model in sorted(bodies):
        setting = _setting(bodies[model], "chid_candidates")
        label = f"ChID ({setting.task if setting is not None else None})"
        found = setting.model_dump(mode="json") if setting is not None else None
        entries.append(option_order.entry(model, ctx.display_name(model), label, found, "chid_candidates/"))
    return [e for e in entries if e is not None]


def report_section(ctx: ReportContext) -> Section | None:
    if not ctx.metrics:
        return None
    bodies = ctx.bodies(ChengyuBody)
    tables = [table7(ctx)]
    chid_models = [m for m, b in bodies.items() if _setting(b, "chid_open_cloze")]
    if chid_models:
        tables.append(chid_open_cloze_table(ctx, chid_models))
    tables.append(counts_table(ctx))
    figures = [f for f in [acc_at_k_figure(ctx)] if f is not None]
    order_table, order_figure = option_order.part(
        "chengyu_bench_option_order", "ChID with candidates", option_order_entries(ctx), ctx.figures_dir
    )
    tables += [order_table] if order_table is not None else []
    figures += [order_figure] if order_figure is not None else []
    intro = [
        "Chengyu-Bench (Evaluative Connotation, Appropriateness, Open Cloze) and ChID accuracy, as in the "
        "paper's table 7; percentages."
    ]
    if any(not _released(b) for b in bodies.values()):
        intro.append(
            "The official Chengyu-Bench release is not available: Connotation and Appropriateness are "
            "computed on the project's own SAMPLE (marked §, not comparable with the paper) and Open Cloze "
            "is not run; ChID passages asked as an open cloze stand in for it in a separate table."
        )
    notes = sorted({n for b in bodies.values() if b.provenance is not None for n in b.provenance.notes})
    return Section(
        benchmark="chengyu-bench", title="Chengyu-Bench", intro=intro, tables=tables, figures=figures, notes=notes
    )
