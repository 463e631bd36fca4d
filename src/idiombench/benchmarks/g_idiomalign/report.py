"""`report_section` hook: G-IdiomAlign's tables and figure in the shape of the paper's.

- table 3: Task 1 accuracy (macro / micro) per target group and overall; a companion table
  with and without the duplicate_option items;
- table 12 and figure 3: Task 1 outcome decomposition (Correct / LT / LC / CA, plus invalid
  answers, which the paper does not have) per target group;
- table 4: Task 2 MeanSim and Acc@t at the headline thresholds per condition, and the With -
  No-gloss delta at the last headline threshold; table 14: every threshold, two panels;
- table 16: EM, BLEU, chrF with gloss, without, and the delta;
- every metric cell carries its stored number and its spec's unit (report.tables.metric_cell);
  the cells of tables 3, 4 and 16 name their spec's cell (CellRef: "<scope>/<key>"), from which
  the report draws their intervals (tables 12 and 14 print without: a decomposition summing to
  100, and a sensitivity panel whose With-gloss cells also print the gain);
- the additional language pairs in their own table when they were scored;
- the construction table (results/construction/g-idiomalign/construction.json) when the
  construction stage has run.
Marks: the similarity role's mark (`†` substitute, `‡` not computed) on every cell that
depends on it, `§` on cells computed from a sample of the items; footnotes explain both.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ...core import paths
from ...core.io import read_json_object
from ...metrics import MetricSpec
from ...report import option_order
from ...report.cells import Marks
from ...report.tables import Cell, CellRef, Figure, Section, Table, cell, metric_cell
from ..contexts import ReportContext
from .aggregate import DELTA_PREFIX
from .results import ADDITIONAL_SUFFIX, DIRECTIONS, GENERATION_CONDITIONS, GIdiomAlignBody
from .specs import OVERALL, PERCENT10, by_key, threshold_name
from .task1 import CORRECT, DISTRACTOR_TYPES, GROUPS, INVALID, TARGET_COPY

BENCHMARK = "g-idiomalign"
PREFIX = "g_idiomalign"
SAMPLE_MARK = "§"
CONDITION_NAMES = {"no_gloss": "No-gloss", "with_gloss": "With-gloss"}
OUTCOME_COLOURS = {
    CORRECT: "#4c9a2a",
    "LT": "#d62728",
    "LC": "#ff7f0e",
    "CA": "#9467bd",
    INVALID: "#7f7f7f",
    TARGET_COPY: "#17becf",
}
FMT = "{:.2f}"
DECIMALS = 2
Shares = list[tuple[str, str, dict[str, float]]]  # figure 3's bars: (model, target group, outcome -> percent)


def sample_mark(body: GIdiomAlignBody, setting: str, marks: Marks) -> str:
    """§ when the setting's answers cover only part of the built items (a rendered sample)."""
    coverage = body.provenance.coverage.get(setting) if body.provenance is not None else None
    partial = {task: c for task, c in coverage.parts.items() if not c.complete} if coverage is not None else {}
    if not partial:
        return ""
    parts = [
        f"{task}: {c.scored:,} of {c.available:,} items in {c.parts[DIRECTIONS].scored} of "
        f"{c.parts[DIRECTIONS].available} directions"
        for task, c in sorted(partial.items())
    ]
    return marks.add(
        SAMPLE_MARK,
        "computed on a sample (benchmarks.g-idiomalign.render.sample: a seeded draw per "
        "direction), not on the full set the paper evaluates: " + "; ".join(parts),
    )


def similarity_mark(body: GIdiomAlignBody, marks: Marks) -> str:
    roles = body.provenance.roles if body.provenance is not None else {}
    for role in roles.values():
        if role.mark:
            note = role.footnote or ""
            if role.status == "substitute":
                note += (
                    " (Paper appendix E: on the same pairs, Qwen3-Embedding-8B cosines are on average 0.11 higher "
                    "than text-embedding-3-large's.)"
                )
            return marks.add(role.mark, note.strip())
    return ""


def metric(body: GIdiomAlignBody, setting: str, name: str) -> float | None:
    """A setting's stored metric (None: not computed, or the setting not scored)."""
    entry = body.settings.get(setting)
    found = entry.metrics.get(name) if entry is not None else None
    return found if not isinstance(found, dict) else None


def models_with(ctx: ReportContext, setting: str) -> list[str]:
    bodies = ctx.bodies(GIdiomAlignBody)
    return [m for m in sorted(bodies) if setting in bodies[m].settings]


def specs_of(ctx: ReportContext) -> dict[str, MetricSpec]:
    """The benchmark's specs under the report's params, by key."""
    return by_key(ctx.params.benchmark(BENCHMARK).score)


def value_cell(
    specs: dict[str, MetricSpec], model: str, body: GIdiomAlignBody, setting: str, key: str, marks: str, ref: bool
) -> Cell:
    """A metric's cell: its stored value in its spec's unit, naming the spec's cell where `ref`
    (the cell of scope `setting`: its interval in the report)."""
    name = CellRef(model, f"{setting}/{key}") if ref else None
    return metric_cell(metric(body, setting, key), specs[key].unit, DECIMALS, marks, name)


# --------------------------------------------------------------------------- Task 1


def mcq_rows(ctx: ReportContext, models: list[str], marks: Marks) -> Iterator[tuple[str, GIdiomAlignBody, str]]:
    """Per model: its metrics body and the sample mark of its Task 1 cells."""
    bodies = ctx.bodies(GIdiomAlignBody)
    for model in models:
        body = bodies[model]
        yield model, body, sample_mark(body, "mcq", marks)


def table3(ctx: ReportContext) -> list[Table]:
    models = models_with(ctx, "mcq")
    if not models:
        return []
    specs = specs_of(ctx)
    marks = Marks()
    rows = []
    dup_rows = []
    for model, body, m in mcq_rows(ctx, models, marks):
        row = [Cell(ctx.display_name(model))]
        for scope in (*GROUPS, OVERALL):
            for kind in ("macro", "micro"):
                row.append(value_cell(specs, model, body, "mcq", f"accuracy.{kind}.{scope}", m, True))
        rows.append(row)
        dup = [Cell(ctx.display_name(model))]
        for prefix in ("accuracy", "accuracy_without_duplicate_option"):
            for kind in ("macro", "micro"):
                dup.append(value_cell(specs, model, body, "mcq", f"{prefix}.{kind}.{OVERALL}", m, True))
        counts = body.settings["mcq"].counts
        dup.append(Cell(f"{counts['duplicate_option_answers']:,} of {counts['answers']:,}"))
        dup_rows.append(dup)
    columns = ["Model"] + [
        f"{scope.replace('Other targets', 'Other')} {kind.capitalize()}"
        for scope in (*GROUPS, "Overall")
        for kind in ("macro", "micro")
    ]
    main = Table(
        f"{PREFIX}_table3",
        "G-IdiomAlign Task 1: multiple-choice accuracy by target group (paper table 3)",
        columns,
        rows,
        marks.footnotes(),
        caption="Micro is instance-weighted within each target group; Macro averages over directions (Overall Macro: "
        "over all directions). Unparseable answers count as wrong. Duplicate-option items: an answer whose option "
        "text is the target idiom counts as correct (benchmarks.g-idiomalign.score.duplicate_option_target_correct). "
        "All numbers are percentages.",
    )
    companion = Table(
        f"{PREFIX}_table3_duplicates",
        "G-IdiomAlign Task 1: overall accuracy with and without the duplicate-option items",
        ["Model", "All Macro", "All Micro", "Without dup. Macro", "Without dup. Micro", "Dup.-option answers"],
        dup_rows,
        marks.footnotes(),
        caption="48 released items hold the target idiom twice and name the copy at a distractor slot as correct "
        "(docs/METRICS.md §2.1); the right columns leave those items out.",
    )
    return [main, companion]


def table12(ctx: ReportContext) -> tuple[Table | None, Shares]:
    models = models_with(ctx, "mcq")
    if not models:
        return None, []
    marks = Marks()
    outcomes = [CORRECT, *DISTRACTOR_TYPES, INVALID]
    bodies = ctx.bodies(GIdiomAlignBody)
    if any(metric(bodies[m], "mcq", f"outcome.{OVERALL}.{TARGET_COPY}") is not None for m in models):
        outcomes.append(TARGET_COPY)
    short = {CORRECT: "Corr", INVALID: "Inv", TARGET_COPY: "TgtCopy"}
    rows = []
    shares: Shares = []
    for model, body, m in mcq_rows(ctx, models, marks):
        row = [Cell(ctx.display_name(model))]
        for group in GROUPS:
            values = {o: metric(body, "mcq", f"outcome.{group}.{o}") for o in outcomes}
            row += [metric_cell(values[o], PERCENT10, DECIMALS, m) for o in outcomes]  # outcome.<group>.<o>
            shares.append((ctx.display_name(model), group, {o: v or 0.0 for o, v in values.items()}))
        rows.append(row)
    group_short = {"Zh-target": "Zh", "En-target": "En", "Other targets": "Oth"}
    columns = ["Model"] + [f"{group_short.get(group, group)} {short.get(o, o)}" for group in GROUPS for o in outcomes]
    table = Table(
        f"{PREFIX}_table12",
        "G-IdiomAlign Task 1: outcome proportions by target group (paper table 12)",
        columns,
        rows,
        marks.footnotes(),
        caption="Zh / En / Oth: Zh-target, En-target and Other-target directions. "
        "Micro shares (%) of answers that are correct or pick the Literal Translation (LT), Lexical Cue (LC) or "
        "Contextual Association (CA) distractor; Inv = no option letter could be read (the paper has no such column). "
        "Each group's shares sum to 100.",
    )
    return table, shares


def figure3(ctx: ReportContext, shares: Shares, sample_note: str = "") -> Figure | None:
    if not shares:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = list(dict.fromkeys(model for model, _, _ in shares))
    outcomes = list(shares[0][2])
    fig, axes = plt.subplots(1, len(GROUPS), figsize=(3.2 * len(GROUPS), 0.55 * len(models) + 2.0), sharey=True)
    for ax, group in zip(axes, GROUPS, strict=True):
        values = {model: s for model, g, s in shares if g == group}
        left = [0.0] * len(models)
        for outcome in outcomes:
            widths = [values[model].get(outcome, 0.0) for model in models]
            ax.barh(range(len(models)), widths, left=left, color=OUTCOME_COLOURS[outcome], label=outcome, height=0.6)
            left = [a + b for a, b in zip(left, widths, strict=True)]
        ax.set_title(group, fontsize=10)
        ax.set_xlim(0, 100)
        ax.set_xlabel("% of answers")
        ax.set_yticks(range(len(models)))
        ax.set_yticklabels(models, fontsize=8)
        ax.invert_yaxis()
    handles, labels = axes[0].get_legend_handles_labels()
    fig.suptitle("Task 1 outcomes by target-language group", fontsize=11)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.legend(handles, labels, loc="lower center", ncol=len(outcomes), fontsize=8, frameon=False)
    path = Path(ctx.figures_dir) / f"{PREFIX}_figure3.png"
    fig.savefig(path, dpi=150, metadata={"Software": None})
    plt.close(fig)
    return Figure(
        f"{PREFIX}_figure3",
        "G-IdiomAlign Task 1: outcome decomposition (paper figure 3)",
        path,
        caption="Stacked bars, normalised within each target group: Correct, the three typed distractors "
        "(LT, LC, CA) and invalid answers." + (f" {sample_note}" if sample_note else ""),
    )


# --------------------------------------------------------------------------- Task 2


def thresholds_of(ctx: ReportContext) -> tuple[list[float], list[float]]:
    score = ctx.params.benchmark(BENCHMARK).score
    return list(score.thresholds), list(score.headline_thresholds)


def signed(value: float | None) -> str:
    return "—" if value is None else f"{value:+.2f}"


def table4_and_14(ctx: ReportContext, suffix: str = "") -> list[Table]:
    settings = [c + suffix for c in GENERATION_CONDITIONS]
    models = sorted({m for s in settings for m in models_with(ctx, s)})
    if not models:
        return []
    thresholds, headline = thresholds_of(ctx)
    specs = specs_of(ctx)
    marks = Marks()
    bodies = ctx.bodies(GIdiomAlignBody)
    rows4 = []
    for model in models:
        body = bodies[model]
        sim = similarity_mark(body, marks)
        row = [Cell(ctx.display_name(model))]
        for setting in settings:
            m = sim + sample_mark(body, setting, marks)
            row.append(value_cell(specs, model, body, setting, "MeanSim", m, True))
            row += [value_cell(specs, model, body, setting, threshold_name(t), m, True) for t in headline]
        last = threshold_name(headline[-1])
        row.append(
            cell(metric(body, settings[1], DELTA_PREFIX + last), FMT, sim + sample_mark(body, settings[1], marks))
        )
        rows4.append(row)
    columns4 = ["Model"]
    for setting in GENERATION_CONDITIONS:
        columns4 += [f"{CONDITION_NAMES[setting]} MeanSim"] + [
            f"{CONDITION_NAMES[setting]} {threshold_name(t)}" for t in headline
        ]
    columns4.append(f"Δ{threshold_name(headline[-1])}")
    name = "additional language pairs" if suffix else "72 directions"
    ids = "_additional" if suffix else ""
    table4 = Table(
        f"{PREFIX}_table4{ids}",
        f"G-IdiomAlign Task 2: gloss-contrastive generation ({name}; paper table 4)",
        columns4,
        rows4,
        marks.footnotes(),
        caption="MeanSim (100 x cosine of output and gold target idiom) and Acc@t (cosine >= t) are macro-averaged "
        "over directions; Δ is With-gloss minus No-gloss (percentage points). An empty or unparseable output has "
        "similarity 0.",
    )
    marks14 = Marks()
    rows14 = []
    blank = [Cell("")] * (1 + len(thresholds))
    for setting in settings:
        label = CONDITION_NAMES[setting.removesuffix(ADDITIONAL_SUFFIX)]
        rows14.append([Cell(label + (" (absolute; Δ vs. No-gloss)" if setting.startswith("with") else "")), *blank])
        for model in models:
            body = bodies[model]
            if setting not in body.settings:
                continue
            m = similarity_mark(body, marks14) + sample_mark(body, setting, marks14)
            row = [Cell(ctx.display_name(model)), value_cell(specs, model, body, setting, "MeanSim", m, False)]
            for t in thresholds:
                value = metric(body, setting, threshold_name(t))
                if setting.startswith("with") and value is not None:
                    delta = metric(body, setting, DELTA_PREFIX + threshold_name(t))
                    row.append(Cell(f"{value:.2f} ({signed(delta)})", m))
                else:
                    row.append(value_cell(specs, model, body, setting, threshold_name(t), m, False))
            rows14.append(row)
    table14 = Table(
        f"{PREFIX}_table14{ids}",
        f"G-IdiomAlign Task 2: threshold sensitivity ({name}; paper table 14)",
        ["Model", "MeanSim", *[threshold_name(t) for t in thresholds]],
        rows14,
        marks14.footnotes(),
        caption="Macro over directions. In the With-gloss panel each Acc@t cell gives the absolute accuracy and, in "
        "parentheses, the gain over No-gloss (percentage points).",
    )
    return [table4, table14]


def table16(ctx: ReportContext, suffix: str = "") -> Table | None:
    settings = [c + suffix for c in GENERATION_CONDITIONS]
    models = sorted({m for s in settings for m in models_with(ctx, s)})
    if not models:
        return None
    specs = specs_of(ctx)
    marks = Marks()
    bodies = ctx.bodies(GIdiomAlignBody)
    rows = []
    for model in models:
        body = bodies[model]
        row = [Cell(ctx.display_name(model))]
        for name in ("EM", "BLEU", "chrF"):
            row += [
                value_cell(specs, model, body, settings[1], name, sample_mark(body, settings[1], marks), True),
                value_cell(specs, model, body, settings[0], name, sample_mark(body, settings[0], marks), True),
                cell(metric(body, settings[1], DELTA_PREFIX + name), FMT, sample_mark(body, settings[1], marks)),
            ]
        rows.append(row)
    tokenizers: dict[str, str] = {}
    fallbacks: dict[str, str] = {}
    for model in models:
        provenance = bodies[model].provenance
        if provenance is not None:
            tokenizers.update(provenance.bleu_tokenizers_used)
            fallbacks.update(provenance.bleu_tokenizer_fallbacks)
    aggregation = ctx.params.benchmark(BENCHMARK).score.surface_aggregation
    name = "additional language pairs" if suffix else "72 directions"
    return Table(
        f"{PREFIX}_table16{'_additional' if suffix else ''}",
        f"G-IdiomAlign Task 2: surface-form metrics ({name}; paper table 16)",
        ["Model", "EM with", "EM w/o", "EM Δ", "BLEU with", "BLEU w/o", "BLEU Δ", "chrF with", "chrF w/o", "chrF Δ"],
        rows,
        marks.footnotes() + [f"BLEU, target {lang}: {note}" for lang, note in sorted(fallbacks.items())],
        caption="Against the gold target idiom after the cleaning rule (first line, quotes and trailing punctuation "
        "stripped); EM after NFKC and case folding; sacrebleu BLEU (tokenizer per target language: "
        + ", ".join(f"{k} {v}" for k, v in sorted(tokenizers.items()))
        + ") and chrF, "
        + ("sentence scores averaged" if aggregation == "sentence" else "corpus scores")
        + " per direction, macro over directions.",
    )


# --------------------------------------------------------------------------- construction


def construction_table(ctx: ReportContext) -> Table | None:
    path = paths.construction_dir(BENCHMARK) / "construction.json"
    if not path.exists():
        return None
    body = read_json_object(path)
    if body.get("status") == "skipped":
        return None
    role = body.get("role", {})
    marks = Marks()
    mark = marks.add(role.get("mark", ""), role.get("footnote"))

    def pct(value: float | None) -> Cell:
        return cell(None if value is None else 100.0 * value, "{:.1f}", mark)

    rows = []
    for entry in [
        *body["pairs"],
        {**body["totals"], "pair": "All pairs (pooled)", "pool_source": None, "pool_target": None, "cutoff": None},
    ]:
        pools = "—" if entry.get("pool_source") is None else f"{entry['pool_source']} / {entry['pool_target']}"
        rows.append(
            [
                Cell(entry["pair"].replace("_", "-")),
                Cell(pools),
                Cell(f"{entry['released_pairs']:,}"),
                Cell(f"{entry['released_sharing_an_entry']:,}"),
                pct(entry["top_k_recall"]),
                Cell(f"{entry['mnn']:,}", mark),
                pct(entry["mnn_recall"]),
                cell(entry.get("cutoff"), "{:.3f}", mark if entry.get("cutoff") is not None else ""),
                Cell(f"{entry['rebuilt']:,}", mark),
                Cell(f"{entry['overlap']:,}", mark),
                pct(entry["precision"]),
                pct(entry["recall"]),
            ]
        )
    params = body["params"]
    footnotes = marks.footnotes() + [f"Candidate pool ({body['pool']}): {body['note']}"]
    return Table(
        f"{PREFIX}_construction",
        "G-IdiomAlign construction pipeline rebuilt from the released glosses (paper section 3.1, appendix C)",
        [
            "Pair",
            "Pool src / tgt",
            "Released",
            "Shared entry",
            f"Top-{params['k']} rec. %",
            "MNN",
            "MNN rec. %",
            "Cutoff",
            "Rebuilt",
            "Overlap",
            "Precision %",
            "Recall %",
        ],
        rows,
        footnotes,
        caption=f"Glosses embedded with scoring role {role.get('role')} ({role.get('model')}); top-{params['k']} "
        f"retrieval both ways, mutual nearest neighbours, {params['bins']}-bin modal cutoff per pair (first maximiser "
        "on ties). Shared entry: released pairs whose idiom entry is released in another pair too (MNN is one-to-one: "
        "at most one of them can be rebuilt). Top-k rec.: "
        "released pairs whose target is among the source's top-k; MNN rec.: released pairs that are mutual nearest "
        "neighbours; Precision / Recall: rebuilt set against the release. The release already passed the modal-bin "
        "filter once, so filtering again drops lower bins anew even when the MNN step agrees.",
    )


# --------------------------------------------------------------------------- section


def option_order_entries(ctx: ReportContext) -> list[option_order.Entry]:
    bodies = ctx.bodies(GIdiomAlignBody)
    entries = [
        option_order.entry(
            model,
            ctx.display_name(model),
            "Task 1 (mcq)",
            bodies[model].settings["mcq"].model_dump(mode="json"),
            "mcq/",
        )
        for model in models_with(ctx, "mcq")
    ]
    return [e for e in entries if e is not None]


def report_section(ctx: ReportContext) -> Section | None:
    tables: list[Table] = []
    tables += table3(ctx)
    t12, shares = table12(ctx)
    if t12 is not None:
        tables.append(t12)
    tables += table4_and_14(ctx)
    t16 = table16(ctx)
    if t16 is not None:
        tables.append(t16)
    additional = table4_and_14(ctx, ADDITIONAL_SUFFIX)
    if additional:
        tables += additional
        t16a = table16(ctx, ADDITIONAL_SUFFIX)
        if t16a is not None:
            tables.append(t16a)
    construction = construction_table(ctx)
    if construction is not None:
        tables.append(construction)
    sample_notes = [n for n in (t12.footnotes if t12 is not None else []) if n.startswith(SAMPLE_MARK)]
    figures = [
        f
        for f in [figure3(ctx, shares, " ".join(sample_notes).removeprefix(SAMPLE_MARK).strip().capitalize())]
        if f is not None
    ]
    order_table, order_figure = option_order.part(
        f"{PREFIX}_option_order", "G-IdiomAlign Task 1", option_order_entries(ctx), ctx.figures_dir
    )
    tables += [order_table] if order_table is not None else []
    figures += [order_figure] if order_figure is not None else []
    from .attention_report import attention_part  # the attention stage's tables 6-8 and figure

    attention_tables, attention_figures, attention_notes = attention_part(ctx)
    tables += attention_tables
    figures += attention_figures
    if not tables and not figures:
        return None
    intro = [
        "Task 1 (multiple-choice idiom equivalence, 30 directions) and Task 2 (gloss-contrastive generation, 72 "
        "directions, No-gloss / With-gloss) of G-IdiomAlign; the additional language pairs (Ar, Ko, Th, Vi) are "
        "reported apart when they were rendered. All numbers are percentages.",
    ]
    notes = []
    if construction is None:
        notes.append(
            "The construction stage (`idiombench construct g-idiomalign`) has not been run: no construction table."
        )
    notes += attention_notes
    return Section(BENCHMARK, "G-IdiomAlign", intro=intro, tables=tables, figures=figures, notes=notes)
