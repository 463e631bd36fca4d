"""OrderProbe's section of the report: the shapes of paper tables 3, 4 and 11 and figures 4
and 5 for the models that were scored, plus the Recovery variants and format failures.

Marks: a cell whose value depends on a scorer role that ran a substitute model (†), a
paper model the paper does not name (*), or a role that is not computed (‡) carries
the role's mark; the footnotes name the models (scoring.roles). `—` is a value that could
not be computed; a footnote gives each reason. § marks table 11's robustness column (S_struct
stands in for S_Rob over canonical inputs). Every table's footnotes say which sample of
the benchmark was scored.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from ...core import paths
from ...core.io import read_parquet, read_parquet_schema
from ...metrics import SHARE, Unit
from ...metrics.body import RoleRecord
from ...report.cells import count_text
from ...report.tables import Cell, CellRef, Section, Table, metric_cell
from ..contexts import ReportContext
from . import figures
from .build import CATEGORIES, permutation_patterns
from .config import OrderProbeScore
from .results import Diagnosed, Group, OrderProbeBody
from .scored import Scored
from .specs import canonical_specs, specs

BENCH = "orderprobe"
SETTING_LABELS = {"zero_shot": "Zero-shot", "cot": "+CoT", "three_shot": "Three-shot"}
LANGUAGE_LABELS = {"zh-CN": "Simplified Chinese", "zh-TW": "Traditional Chinese", "ja": "Japanese", "ko": "Korean"}
# table 3's diagnostic columns, in the paper's order: (metric key, header)
DIAGNOSTICS = (
    ("s_acc_mean", "S_Acc^mean"),
    ("s_cons", "S_Cons"),
    ("s_logic", "S_Logic"),
    ("s_rob", "S_Rob"),
    ("s_info", "S_Info"),
)
METRIC_NAMES = {
    "s_acc_mean": "S_Acc^mean",
    "s_cons": "S_Cons",
    "s_logic": "S_Logic",
    "s_rob": "S_Rob",
    "s_seq": "S_seq",
    "s_struct": "S_struct",
    "s_info": "S_Info",
    "recovery": "Recovery",
}
STRUCT_MARK = "§"
S_ACC_METRICS = {"s_acc_mean", "s_cons", "s_rob", "s_seq", "s_struct"}
# each metric's unit (specs.py; the same whatever the score options): Recovery and the rates are
# shares, printed as a percent; the diagnostics are scores in [0, 1], printed as they are
UNITS: dict[str, Unit] = {
    spec.key: spec.unit for spec in (*specs(OrderProbeScore()), *canonical_specs(OrderProbeScore()))
}


def setting_label(setting: str) -> str:
    return SETTING_LABELS.get(setting, setting)


class Notes:
    """Collects the footnotes a table's marks and dashes need, in first-use order."""

    def __init__(self) -> None:
        self.role_lines: dict[str, str] = {}
        self.missing: dict[str, list[str]] = {}
        self.s_acc_without: set[str] = set()

    def marks(self, roles: Mapping[str, RoleRecord], depends: Iterable[str], metric: str = "") -> str:
        marks = []
        for role in depends:
            info = roles.get(role)
            if info is None or not info.mark:
                continue
            if metric in S_ACC_METRICS and info.status == "not_computed":
                self.s_acc_without.add(role)
            if info.mark not in marks:
                marks.append(info.mark)
            footnote = info.footnote or f"{role}: status {info.status}"
            self.role_lines.setdefault(role, f"{info.mark} {footnote}")
        return "".join(sorted(marks, key="*†‡".index))

    def missing_value(self, metric: str, reason: str | None, where: str) -> None:
        key = f"{METRIC_NAMES.get(metric, metric)}: {reason or 'not computed'}"
        self.missing.setdefault(key, []).append(where)

    def lines(self) -> list[str]:
        out = list(self.role_lines.values())
        if self.s_acc_without:
            out.append(
                f"‡ on S_Acc^mean, S_Cons and S_Rob: S_Acc is formed without {', '.join(sorted(self.s_acc_without))}: "
                "the representation ensemble averages the terms among BERT, STS and LEX that were computed, and the "
                "weights (CE 0.5, ensemble 0.3, Fβ 0.2) are renormalised over the computed terms "
                "(benchmarks/orderprobe/metrics.py)."
            )
        for reason, where in self.missing.items():
            shown = ", ".join(where[:6]) + (f" and {len(where) - 6} more" if len(where) > 6 else "")
            out.append(f"— {reason} ({shown}).")
        return out


def group_cell(
    group: Diagnosed,
    metric: str,
    roles: Mapping[str, RoleRecord],
    notes: Notes,
    where: str,
    decimals: int = 3,
    depends_metric: str | None = None,
    ref: tuple[str, str] | None = None,
) -> Cell:
    """A metric of a group of the metrics body (a setting or a breakdown's entry), in its unit
    (UNITS) with `decimals`, with its roles' marks; `ref`: (model, scope name) where the cell
    gets an interval (report.uncertainty: the cell "<scope name>/<metric>" of specs.scopes)."""
    value = group.metric(metric)
    depends = group.depends_on.get(depends_metric or metric, [])
    marks = notes.marks(roles, depends, metric)
    if value is None:
        reason = group.not_computed.get(metric)
        if metric not in group.metrics:
            reason = "not in the metrics file (written by another version of the aggregate stage?)"
        notes.missing_value(metric, reason, where)
        return metric_cell(None, UNITS[metric], decimals, marks)
    return metric_cell(value, UNITS[metric], decimals, marks, CellRef(ref[0], f"{ref[1]}/{metric}") if ref else None)


def sample_footnote(bodies: Mapping[str, OrderProbeBody]) -> list[str]:
    """What was scored: one line per distinct sample among the models."""
    lines = []
    for model, body in bodies.items():
        recorded = body.provenance_or_empty()
        coverage = recorded.coverage
        if not coverage:
            line = f"The sample scored for {model} is not recorded in its metrics file."
        elif all(setting.complete for setting in coverage.values()):
            line = "Scored on the full benchmark (every expression of every configured language)."
        else:
            counts: dict[str, int] = {}
            available: dict[str, int] = {}
            for setting in coverage.values():
                for language, part in setting.parts.items():
                    counts[language] = max(counts.get(language, 0), part.scored)
                    if part.available:
                        available[language] = part.available
            parts = [f"{lang} {counts.get(lang, 0):,} of {available[lang]:,}" for lang in sorted(available)]
            render = recorded.render_sample
            selection = (render.selection if render is not None else None) or "a subset of the expressions"
            line = (
                f"Sample, not the full benchmark: {selection}; expressions scored per language: {', '.join(parts)} "
                f"(the paper's tables use all 3,543). "
                + (
                    "Each expression contributes the permutations drawn and its canonical input."
                    if "seeded permutation" in selection
                    else "Each expression contributes its 23 permutations and its canonical input."
                )
            )
        if line not in lines:
            lines.append(line)
    return [f"Sample: {line}" if not line.startswith("Sample") else line for line in lines]


def recovery_caption(body: OrderProbeBody) -> str:
    params = body.provenance_or_empty().score_params or OrderProbeScore()
    mode = params.recovery.headline_mode
    identity = params.recovery.headline_identity_inputs
    test = (
        "the canonical expression occurs in the NFKC-normalised, whitespace-free output"
        if mode == "default"
        else "the explanation's first CJK/kana/Hangul run of 4+ characters starts with the canonical expression"
    )
    inputs = "including" if identity == "include" else "excluding"
    return (
        f"Recovery (%): {mode} test ({test}), over the perturbed inputs, {inputs} inputs identical to the "
        "canonical form (repeated characters)."
    )


def ordered_settings(ctx: Scored) -> list[str]:
    configured = list(ctx.params.benchmark(BENCH).render.settings)
    present = {s for body in ctx.metrics.values() for s in body.settings}
    return [s for s in configured if s in present] + sorted(present - set(configured))


@dataclasses.dataclass(frozen=True)
class GroupRow:
    """One row of a model x setting table: a group of the metrics body (a setting, or one of its
    breakdown's entries), its name in the footnotes and its first cells."""

    model: str
    setting: str
    part: str | None  # the breakdown's key (a language, a category), None for a whole setting
    group: Diagnosed
    roles: Mapping[str, RoleRecord]
    where: str
    head: list[Cell]


# a setting's groups in a table: (name in the footnotes, first-column text) or None, the group
Groups = Callable[[OrderProbeBody, str], Iterable[tuple[tuple[str, str] | None, Diagnosed]]]


def whole_setting(body: OrderProbeBody, setting: str) -> list[tuple[None, Diagnosed]]:
    group = body.settings.get(setting)
    return [] if group is None else [(None, group)]


def canonical_inputs(body: OrderProbeBody, setting: str) -> list[tuple[None, Diagnosed]]:
    group = body.breakdowns_or_empty().canonical.get(setting)
    return [] if group is None else [(None, group)]


def per_language(body: OrderProbeBody, setting: str) -> list[tuple[tuple[str, str], Group]]:
    languages = body.breakdowns_or_empty().per_language.get(setting, {})
    ordered = sorted(languages, key=lambda code: list(LANGUAGE_LABELS).index(code) if code in LANGUAGE_LABELS else 99)
    return [((language, LANGUAGE_LABELS.get(language, language)), languages[language]) for language in ordered]


def per_category(body: OrderProbeBody, setting: str) -> list[tuple[tuple[str, str], Group]]:
    categories = body.breakdowns_or_empty().per_category.get(setting, {})
    ordered = sorted(categories, key=lambda c: CATEGORIES.index(c) if c in CATEGORIES else 99)
    return [((category, category), categories[category]) for category in ordered]


def group_rows(
    ctx: Scored, models: list[str], settings: list[str], groups: Groups = whole_setting
) -> Iterator[GroupRow]:
    """The rows of a table, model by model, setting by setting, group by group."""
    for model in models:
        body = ctx.metrics[model]
        for setting in settings:
            for part, group in groups(body, setting):
                where = f"{ctx.display_name(model)} {setting_label(setting)}"
                head = [Cell(ctx.display_name(model)), Cell(setting_label(setting))]
                if part is not None:
                    where += f" {part[0]}"
                    head.append(Cell(part[1]))
                key = None if part is None else part[0]
                yield GroupRow(model, setting, key, group, body.provenance_or_empty().roles, where, head)


def section_table(
    ctx: Scored,
    name: str,
    title: str,
    columns: list[str],
    rows: list[list[Cell]],
    footnotes: list[str],
    caption: str = "",
) -> Table:
    """`orderprobe_<name>`, its footnotes followed by what sample was scored."""
    return Table(
        table_id=f"{BENCH}_{name}",
        title=title,
        columns=columns,
        rows=rows,
        footnotes=footnotes + sample_footnote(ctx.metrics),
        caption=caption,
    )


def diagnostics_row(
    r: GroupRow,
    notes: Notes,
    columns: Iterable[tuple[str, str]],
    decimals: int,
    recovery_decimals: int,
    ref: tuple[str, str] | None = None,
    depends: Mapping[str, str] | None = None,
) -> list[Cell]:
    """The row's first cells, a cell per diagnostic of `columns` (its roles' marks from the metric
    `depends` names, else its own) and Recovery in percent."""
    cells = [
        group_cell(r.group, key, r.roles, notes, r.where, decimals, depends_metric=(depends or {}).get(key), ref=ref)
        for key, _ in columns
    ]
    return r.head + cells + [group_cell(r.group, "recovery", r.roles, notes, r.where, recovery_decimals, ref=ref)]


def diagnostics_table(
    ctx: Scored,
    models: list[str],
    name: str,
    title: str,
    columns: list[str],
    rows: list[list[Cell]],
    footnotes: list[str],
    caption: str = "",
) -> Table:
    """A table of diagnostics and Recovery, captioned with the Recovery test the first model's scores used."""
    return section_table(
        ctx, name, title, columns, rows, footnotes, caption=recovery_caption(ctx.metrics[models[0]]) + caption
    )


def table3(ctx: Scored, models: list[str], settings: list[str]) -> Table:
    notes = Notes()
    rows = [
        diagnostics_row(r, notes, DIAGNOSTICS, 3, 3, ref=(r.model, r.setting))
        for r in group_rows(ctx, models, settings)
    ]
    return diagnostics_table(
        ctx,
        models,
        "table3",
        "OrderProbe: model × setting (paper table 3)",
        ["Model", "Setting", *[h for _, h in DIAGNOSTICS], "Recovery (%)"],
        rows,
        notes.lines(),
        " Diagnostics are means over the perturbed inputs with a reference gloss.",
    )


def table4(ctx: Scored, models: list[str], settings: list[str]) -> Table:
    notes = Notes()
    rows = [
        diagnostics_row(r, notes, DIAGNOSTICS, 4, 2, ref=(r.model, f"{r.setting}/{r.part}"))
        for r in group_rows(ctx, models, settings, per_language)
    ]
    japanese = (
        "The Japanese release ships no reference glosses: its semantic diagnostics cannot be computed "
        "(Recovery needs none)."
    )
    return diagnostics_table(
        ctx,
        models,
        "table4",
        "OrderProbe: per script setting (paper table 4)",
        ["Model", "Setting", "Language", *[h for _, h in DIAGNOSTICS], "Recovery (%)"],
        rows,
        notes.lines() + [japanese],
    )


def category_table(ctx: Scored, models: list[str], settings: list[str]) -> Table:
    notes = Notes()
    columns = (
        ("s_acc_mean", "S_SEM"),
        ("s_cons", "S_CON"),
        ("s_logic", "S_LOG"),
        ("s_seq", "S_ROB (S_seq)"),
        ("s_info", "S_INFO"),
    )
    rows = [
        diagnostics_row(r, notes, columns, 3, 1, depends={"s_seq": "s_rob"})
        for r in group_rows(ctx, models, settings, per_category)
    ]
    robustness = "Robustness per category is S_seq: S_struct (and so S_Rob) compares the categories with each other."
    return diagnostics_table(
        ctx,
        models,
        "figure5",
        "OrderProbe: per syntactic category (paper figure 5)",
        ["Model", "Setting", "Category", *[h for _, h in columns], "Recov (%)"],
        rows,
        notes.lines() + [robustness],
    )


def table11(ctx: Scored, models: list[str], settings: list[str]) -> Table:
    notes = Notes()
    rows = []
    for r in group_rows(ctx, models, settings, canonical_inputs):
        row = list(r.head)
        for key, _ in DIAGNOSTICS:
            if key == "s_rob":
                struct = group_cell(r.group, "s_struct", r.roles, notes, r.where, depends_metric="s_rob")
                row.append(dataclasses.replace(struct, marks=struct.marks + STRUCT_MARK))
            else:
                row.append(group_cell(r.group, key, r.roles, notes, r.where))
        row.append(group_cell(r.group, "recovery", r.roles, notes, r.where, 1))
        rows.append(row)
    return section_table(
        ctx,
        "table11",
        "OrderProbe: canonical (unperturbed) inputs (paper table 11)",
        ["Model", "Setting", *[h for _, h in DIAGNOSTICS], "Recovery (%)"],
        rows,
        notes.lines()
        + [
            f"{STRUCT_MARK} S_Rob measures degradation from the canonical input, so over canonical inputs only its "
            "structural part S_struct is defined; the column shows S_struct.",
            "Recovery is measured on the canonical inputs (the paper sets it to 100%): a model that echoes its input "
            "scores 100% here.",
        ],
        caption="The same diagnostics over each expression's canonical input; "
        "S_Cons from the samples of the canonical input.",
    )


def recovery_table(ctx: Scored, models: list[str], settings: list[str]) -> Table:
    notes = Notes()
    keys = (
        ("recovery_default", "Default"),
        ("recovery_default_excl_identity", "Default excl. identity"),
        ("recovery_strict", "Strict"),
        ("recovery_strict_excl_identity", "Strict excl. identity"),
        ("recovery_identity_inputs", "Identity inputs only"),
        ("recovery_canonical", "Canonical inputs"),
    )
    rows = []
    for r in group_rows(ctx, models, settings):
        row = list(r.head)
        for key, _ in keys:
            value = r.group.metric(key)
            if value is None:
                notes.missing_value(key, "no such inputs in the sample", r.where)
            row.append(metric_cell(value, UNITS[key], 1))
        counts = counts_of(r.group)
        row.append(Cell(f"{count_text(counts, 'perturbed_inputs')} / {count_text(counts, 'identity_inputs')}"))
        rows.append(row)
    return section_table(
        ctx,
        "recovery",
        "OrderProbe: Recovery (%) in both tests, with and without identity inputs",
        ["Model", "Setting", *[h for _, h in keys], "Perturbed / identity inputs"],
        rows,
        notes.lines()
        + [
            "Default: the canonical expression occurs in the NFKC-normalised, whitespace-free output (reasoning blocks "
            "removed). Strict: the explanation's first run of 4+ CJK/kana/Hangul characters starts with it; in CoT and "
            "three-shot the explanation is the Final Meaning line, which the prompts do not ask to name the expression "
            "(the oracle reference system restores it in the Thinking Process line, so it scores 100% only in the "
            "default test there). Identity inputs are permutations equal to the canonical form (expressions with a "
            "repeated character): echoing the input recovers them.",
        ],
    )


def format_table(ctx: Scored, models: list[str], settings: list[str]) -> Table:
    rows = []
    for r in group_rows(ctx, models, settings):
        counts, rate = counts_of(r.group), r.group.metric("format_failure_rate")
        every_pass, main = counts.get("format_failures_all_passes"), counts.get("format_failures")
        sampled = every_pass - main if every_pass is not None and main is not None else None
        rows.append(
            r.head
            + [
                Cell(count_text(counts, "main_rows")),
                Cell(count_text(counts, "format_failures")),
                metric_cell(rate, UNITS["format_failure_rate"], 1),
                Cell(count_text(counts, "empty_explanations")),
                Cell(count_text(counts, "generation_errors")),
                Cell(count_text({"sampled": sampled}, "sampled")),
            ]
        )
    return section_table(
        ctx,
        "format_failures",
        "OrderProbe: format failures per model and setting",
        [
            "Model",
            "Setting",
            "Main outputs",
            "Format failures",
            "Rate (%)",
            "Empty explanations",
            "Generation errors",
            "Format failures (sampled)",
        ],
        rows,
        [
            "A format failure is an output that does not follow the requested shape (zero-shot: one line; CoT and "
            "three-shot: a Thinking Process line then a Final Meaning line). Such outputs are still scored: their "
            "explanation is read leniently (parse.py); an empty explanation scores 0 on every semantic term.",
            "Sampled: the consistency pass's outputs (S_Cons).",
        ],
    )


def pattern_table(ctx: Scored, models: list[str], settings: list[str]) -> Table:
    columns, series = [], []
    for model in models:
        for setting in settings:
            per_pattern = ctx.metrics[model].breakdowns_or_empty().per_pattern
            if setting in per_pattern:
                columns.append(f"{ctx.display_name(model)} {setting_label(setting)}")
                series.append(per_pattern[setting])
    key = figures.pattern_key(ctx.metrics[models[0]])
    rows = []
    for pattern in permutation_patterns():
        row = [Cell(pattern)]
        for patterns in series:
            found = patterns.get(pattern)
            row.append(metric_cell(found.recovery(key) if found is not None else None, SHARE, 1))
        rows.append(row)
    return section_table(
        ctx,
        "figure4",
        "OrderProbe: Recovery (%) per permutation pattern (paper figure 4)",
        ["Pattern", *columns],
        rows,
        [
            f"Values: {key.replace('_', ' ')}. Pattern = the canonical positions read in order (ABCD is the "
            "canonical form), itertools order. — : no such input in the sample."
        ],
    )


def counts_of(group: Diagnosed) -> dict[str, int | None]:
    """The group's counts (a count the body lacks: None, a dash)."""
    return {key: group.count(key) for key in group.counts}


SAMPLE_OUTPUT_CHARS = 40


def sample_outputs_table(
    models: list[str], display_name: Callable[[str], str], scores_root: Path | None = None
) -> Table | None:
    """A few real outputs: per model and language, the first perturbed (non-identity) zero-shot
    input in item order, the model's greedy explanation (cut) and whether it was recovered.
    Read from the per-item scores, so the expressions appear as the model saw them."""

    columns = [
        "item_id",
        "pass",
        "language",
        "expression",
        "input",
        "is_canonical",
        "is_identity",
        "explanation",
        "recovered",
    ]
    rows, skipped = [], []
    for model in models:
        directory = (
            paths.scores_dir(benchmark=BENCH, model=model) if scores_root is None else scores_root / model / BENCH
        )
        path = directory / "zero_shot.parquet"
        if not path.is_file():
            continue
        missing = [c for c in columns if c not in read_parquet_schema(path, what="scores table").names]
        if missing:  # written by another version of the score stage: say so, show nothing made up
            skipped.append(f"{display_name(model)}: {path} lacks {', '.join(missing)}")
            continue
        frame = read_parquet(path, what="scores table", columns=columns).to_pandas()
        frame = frame[(frame["pass"] == "main") & ~frame["is_canonical"] & ~frame["is_identity"]]
        for language in LANGUAGE_LABELS:
            part = frame[frame["language"] == language].sort_values("item_id", kind="stable")
            if part.empty:
                continue
            first = part.iloc[0]
            text = " ".join(str(first["explanation"] or "").split())
            if len(text) > SAMPLE_OUTPUT_CHARS:
                text = text[:SAMPLE_OUTPUT_CHARS] + "…"
            rows.append(
                [
                    Cell(display_name(model)),
                    Cell(LANGUAGE_LABELS[language]),
                    Cell(str(first["expression"])),
                    Cell(str(first["input"])),
                    Cell(text or "(empty)"),
                    Cell("yes" if first["recovered"] else "no"),
                ]
            )
    if not rows and not skipped:
        return None
    return Table(
        table_id=f"{BENCH}_sample_outputs",
        title="OrderProbe: sample outputs (zero-shot, first perturbed input per language)",
        columns=["Model", "Language", "Expression", "Input", "Explanation (cut)", "Recovered"],
        rows=rows,
        footnotes=[
            f"Greedy main-pass explanations, whitespace collapsed and cut at {SAMPLE_OUTPUT_CHARS} characters; "
            "the full texts are in results/generations/ and the MLflow runs' artifacts."
        ]
        + [f"No sample outputs for {line}." for line in skipped],
    )


def report_section(context: ReportContext) -> Section | None:
    ctx = Scored.of(context)
    models = [m for m in ctx.params.models if m in ctx.metrics] + sorted(set(ctx.metrics) - set(ctx.params.models))
    if not models:
        return None
    settings = ordered_settings(ctx)
    section = Section(benchmark=BENCH, title="OrderProbe")
    section.intro.append(
        "Restoring scrambled four-character expressions (zh-CN, zh-TW, ja, ko). Recovery is the primary metric; "
        "S_Acc^mean, S_Cons, S_Logic, S_Rob and S_Info are the paper's diagnostics (docs/METRICS.md §1)."
    )
    section.intro += sample_footnote(ctx.metrics)
    section.tables = [
        table3(ctx, models, settings),
        table4(ctx, models, settings),
        category_table(ctx, models, settings),
        table11(ctx, models, settings),
        recovery_table(ctx, models, settings),
        pattern_table(ctx, models, settings),
        format_table(ctx, models, settings),
    ]
    samples = sample_outputs_table(models, ctx.display_name)
    if samples is not None:
        section.tables.append(samples)
    section.figures = [
        figures.pattern_figure(ctx, models, settings),
        figures.category_figure(ctx, models, settings),
    ]
    roles: dict[str, RoleRecord] = {}
    for model in models:
        for role, info in ctx.metrics[model].provenance_or_empty().roles.items():
            roles.setdefault(role, info)
    section.notes += [
        f"Scorer role {role}: {info.status}, model {info.model or 'none'} (paper: {info.paper_model})"
        for role, info in roles.items()
    ]
    return section
