"""The attention diagnostics' part of the G-IdiomAlign report section (paper tables 6-8 and a
figure), read from the attention stage's outputs (results/analysis/g-idiomalign/attention/)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...core import paths
from ...core.io import read_json_object, read_parquet
from ...report.tables import Cell, Figure, Table, cell
from ..contexts import ReportContext
from .attention import CONDITIONS, CORRECT, ERROR_TYPES, METRICS, SUBSETS, WRONG

BENCHMARK = "g-idiomalign"
PREFIX = "g_idiomalign_attention"
CONDITION_NAMES = {"no_gloss": "No-gloss", "with_gloss": "With-gloss"}
NO_TEST = "¶"
FMT = "{:.3f}"


def summaries(ctx: ReportContext) -> tuple[dict[str, dict[str, object]], dict[str, str]]:
    """model -> summary of the measured models, and model -> reason of the skipped ones."""
    measured, skipped = {}, {}
    for model in ctx.params.models:
        path = paths.attention_dir(benchmark=BENCHMARK, model=model) / "summary.json"
        if not path.is_file():
            continue
        body = read_json_object(path)
        if body.get("status") == "measured":
            measured[model] = body
        else:
            skipped[model] = body.get("reason", "skipped")
    return measured, skipped


def median_iqr(entry: dict[str, object] | None) -> Cell:
    if not entry or entry.get("median") is None:
        return Cell("— (n=0)")
    return Cell(f"{entry['median']:.3f} ({entry['iqr']:.3f}) n={entry['n']}")


def q_cell(entry: dict[str, Any], notes: dict[str, str]) -> Cell:
    if entry.get("q") is None:
        notes[NO_TEST] = entry.get("note") or "no test"
        return Cell("—", NO_TEST)
    return Cell("< 0.001" if entry["q"] < 0.001 else f"{entry['q']:.3f}")


def overview(ctx: ReportContext, bodies: dict[str, dict[str, Any]]) -> Table:
    rows = []
    for model, body in bodies.items():
        for condition in body["conditions"]:
            counts, means = body["counts"][condition], body["means"][condition]
            rows.append(
                [
                    Cell(ctx.display_name(model)),
                    Cell(CONDITION_NAMES[condition]),
                    Cell(f"{counts['measured']} of {counts['prompts']}"),
                    Cell(str(counts[CORRECT])),
                    Cell(str(counts[WRONG])),
                    *[cell(means.get(m), FMT) for m in METRICS],
                    cell(means.get("generated"), FMT),
                    cell(means.get("greedy_agreement"), "{:.2f}"),
                ]
            )
    groups = next(iter(bodies.values()))["groups"]
    how = (
        f"human labels ({groups['file']}; the paper's Types 0-4)"
        if groups["source"] == "annotations"
        else f"Correct = Task 2 similarity >= {groups['threshold']:.2f} to the gold idiom, an automatic stand-in "
        "for the paper's human labels; empty outputs (Type 0) are excluded"
    )
    return Table(
        f"{PREFIX}_overview",
        "G-IdiomAlign Task 2 attention diagnostics: mean attention ratios per condition (paper section 5.3)",
        [
            "Model",
            "Condition",
            "Measured",
            "Correct",
            "Wrong",
            "IAR",
            "GAR",
            "DR",
            "OtherTop1",
            "Output keys",
            "Greedy agr.",
        ],
        rows,
        [],
        caption="Post-softmax attention (eager) from the decoding steps of the output's idiom, averaged over layers, "
        "heads and those steps: IAR on the source-idiom tokens, GAR on the gloss tokens (0 No-gloss), DR = 1 - IAR - "
        "GAR; OtherTop1 is the largest share of one prompt token outside both spans. Output keys: the part of DR on "
        "the output's own earlier tokens. Greedy agr.: share of the recorded output tokens that are the model's argmax "
        f"when teacher-forced. Groups: {how}. "
        "Computed on a seeded sample of Task 2 items (benchmarks.g-idiomalign.attention.items: "
        + ", ".join(f"{ctx.display_name(m)} {b['sample']['items']}" for m, b in bodies.items())
        + " items, each in both conditions), not on the paper's 200 annotated generations per condition. "
        "Fractions, not percentages.",
    )


def table6(ctx: ReportContext, bodies: dict[str, dict[str, Any]]) -> Table:
    rows = []
    for model, body in bodies.items():
        for subset in SUBSETS:
            entry = body["table6"].get(subset, {})
            n = entry.get("n", {})
            rows.append(
                [
                    Cell(ctx.display_name(model)),
                    Cell(subset),
                    *[Cell(str(n.get(c, 0))) for c in CONDITIONS],
                    cell(entry.get("J_heads"), "{:.2f}"),
                    cell(entry.get("J_layers"), "{:.2f}"),
                ]
            )
    first = next(iter(bodies.values()))
    salient, shape = first["salient"], first.get("shape", {})
    return Table(
        f"{PREFIX}_table6",
        "G-IdiomAlign attention: With- vs No-gloss overlap of salient heads and layers (paper table 6)",
        ["Model", "Subset", "n With-gloss", "n No-gloss", "J heads", "J layers"],
        rows,
        [],
        caption=f"Per sample, the top-{salient['top_k_heads']} heads by idiom-span head score (mean over the output's "
        f"decoding steps of a head's attention mass on the source-idiom tokens; the idiom is the span both conditions "
        f"have); salient heads: the {salient['salient_heads']} heads most often among them; salient layers: the "
        f"{salient['salient_layers']} layers holding most of those entries (paper appendix L); Jaccard overlap of the "
        f"With-gloss and No-gloss sets. A model with few heads or layers (here {shape.get('layers', '?')} layers x "
        f"{shape.get('heads', '?')} heads) or few samples makes the sets large relative to the model and the "
        "overlap high.",
    )


def table7(ctx: ReportContext, bodies: dict[str, dict[str, Any]]) -> Table:
    notes: dict[str, str] = {}
    rows = []
    for model, body in bodies.items():
        for metric in METRICS:
            row = [Cell(ctx.display_name(model)), Cell(metric)]
            for condition in CONDITIONS:
                entry = body["table7"].get(condition, {}).get(metric)
                if entry is None:  # GAR No-gloss, or a condition not rendered
                    row += [Cell("–")] * 4
                    continue
                row += [
                    median_iqr(entry[CORRECT]),
                    median_iqr(entry[WRONG]),
                    cell(entry["delta"], "{:+.2f}"),
                    q_cell(entry, notes),
                ]
            rows.append(row)
    minimum = next(iter(bodies.values()))["min_group"]
    footnotes = (
        [
            f"{NO_TEST} no test: a group has fewer than {minimum} items (benchmarks.g-idiomalign.attention.min_group); "
            "the medians and n are still shown."
        ]
        if notes
        else []
    )
    columns = ["Model", "Metric"] + [
        f"{CONDITION_NAMES[c]} {part}" for c in CONDITIONS for part in (CORRECT, WRONG, "δ", "q")
    ]
    return Table(
        f"{PREFIX}_table7",
        "G-IdiomAlign attention: Correct vs Wrong (paper table 7)",
        columns,
        rows,
        footnotes,
        caption="Median (IQR) per group with its n; Cliff's δ = P(Correct > Wrong) - P(Correct < Wrong); q: two-sided "
        "Mann-Whitney U p-values adjusted with Benjamini-Hochberg FDR over the metrics within each condition. GAR is "
        "not defined No-gloss (–).",
    )


def table8(ctx: ReportContext, bodies: dict[str, dict[str, Any]]) -> Table:
    notes: dict[str, str] = {}
    rows, reasons = [], []
    for model, body in bodies.items():
        t8 = body["table8"]
        if t8.get("status") == "not computed":
            reasons.append(f"{ctx.display_name(model)}: {t8['reason']}")
            rows.append([Cell(ctx.display_name(model)), Cell("all"), *[Cell("—")] * (2 * (len(ERROR_TYPES) + 1))])
            continue
        for metric in METRICS:
            row = [Cell(ctx.display_name(model)), Cell(metric)]
            for condition in CONDITIONS:
                entry = t8.get(condition, {}).get(metric)
                if entry is None:
                    row += [Cell("–")] * (len(ERROR_TYPES) + 1)
                    continue
                row += [*[median_iqr(entry[t]) for t in ERROR_TYPES], q_cell(entry, notes)]
            rows.append(row)
    minimum = next(iter(bodies.values()))["min_group"]
    footnotes = [f"Not computed: {r}." for r in reasons]
    if notes:
        footnotes.append(f"{NO_TEST} no test: fewer than two error types with at least {minimum} items.")
    columns = ["Model", "Metric"] + [f"{CONDITION_NAMES[c]} {part}" for c in CONDITIONS for part in (*ERROR_TYPES, "q")]
    return Table(
        f"{PREFIX}_table8",
        "G-IdiomAlign attention: across error types of the wrong outputs (paper table 8)",
        columns,
        rows,
        footnotes,
        caption="T2 literal translation, T3 meaning-correct but non-idiomatic, T4 other wrong (the paper's human "
        "taxonomy); median (IQR) per type with its n; q: Kruskal-Wallis p-values adjusted with Benjamini-Hochberg FDR "
        "over the metrics within each condition.",
    )


def figure(ctx: ReportContext, bodies: dict[str, dict[str, object]]) -> Figure | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    frames = []
    for model in bodies:
        path = paths.attention_dir(benchmark=BENCHMARK, model=model) / "items.parquet"
        if path.is_file():
            frame = read_parquet(path, what="attention items table").to_pandas()
            frames.append(frame[frame["status"] == "measured"].assign(model=ctx.display_name(model)))
    if not frames:
        return None
    data = pd.concat(frames, ignore_index=True)
    models = list(dict.fromkeys(data["model"]))
    colours = {CORRECT: "#4c9a2a", WRONG: "#d62728", None: "#7f7f7f"}
    fig, axes = plt.subplots(len(models), len(METRICS), figsize=(3.0 * len(METRICS), 2.6 * len(models)), squeeze=False)
    for r, model in enumerate(models):
        rows = data[data["model"] == model]
        for c, metric in enumerate(METRICS):
            ax = axes[r][c]
            for x, condition in enumerate(CONDITIONS):
                for offset, group in ((-0.12, CORRECT), (0.12, WRONG)):
                    values = rows.loc[(rows["condition"] == condition) & (rows["group"] == group), metric].dropna()
                    if metric == "GAR" and condition == "no_gloss":
                        continue
                    ax.scatter(
                        [x + offset] * len(values),
                        values,
                        s=14,
                        color=colours[group],
                        alpha=0.8,
                        label=group if (x == 0 and r == 0 and c == 0) else None,
                    )
                    if len(values):
                        ax.hlines(values.median(), x + offset - 0.1, x + offset + 0.1, color="black", linewidth=1)
            ax.set_xticks(range(len(CONDITIONS)))
            ax.set_xticklabels([CONDITION_NAMES[c] for c in CONDITIONS], fontsize=8)
            ax.set_title(metric if len(models) == 1 else f"{model}: {metric}", fontsize=9)
            ax.tick_params(axis="y", labelsize=7)
    fig.legend(loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    path = Path(ctx.figures_dir) / f"{PREFIX}.png"
    fig.savefig(path, dpi=150, metadata={"Software": None})
    plt.close(fig)
    return Figure(
        PREFIX,
        "G-IdiomAlign attention: IAR, GAR, DR and OtherTop1 per item (paper section 5.3)",
        path,
        caption="One point per measured generation, by condition and group (Correct green, Wrong red); black "
        "bars: group medians. GAR is not defined No-gloss.",
    )


def attention_part(ctx: ReportContext) -> tuple[list[Table], list[Figure], list[str]]:
    """The tables, figure and notes the section adds (nothing measured: only a note)."""
    bodies, skipped = summaries(ctx)
    notes = [f"Attention diagnostics skipped for {ctx.display_name(m)}: {reason}." for m, reason in skipped.items()]
    if not bodies:
        if not skipped:
            notes.append("The attention stage (`idiombench attention g-idiomalign --model <m>`) has not been run.")
        return [], [], notes
    figures = [f for f in [figure(ctx, bodies)] if f is not None]
    return [overview(ctx, bodies), table6(ctx, bodies), table7(ctx, bodies), table8(ctx, bodies)], figures, notes
