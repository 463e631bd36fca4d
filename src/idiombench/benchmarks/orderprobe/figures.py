"""OrderProbe's figures as PNGs (matplotlib, Agg): figure 4 (Recovery per permutation
pattern, as a line plot per model) and figure 5 (the diagnostics per syntactic category)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...report.tables import Figure
from .build import CATEGORIES, permutation_patterns
from .config import OrderProbeScore
from .results import OrderProbeBody
from .scored import Scored

BENCH = "orderprobe"
SETTING_LABELS = {"zero_shot": "Zero-shot (baseline)", "cot": "CoT", "three_shot": "Three-shot"}
LINE_STYLES = (
    {"linestyle": "-", "marker": "o"},
    {"linestyle": "--", "marker": "s"},
    {"linestyle": ":", "marker": "^"},
    {"linestyle": "-.", "marker": "D"},
)
CATEGORY_METRICS = (
    ("s_acc_mean", "S_Acc^mean"),
    ("s_cons", "S_Cons"),
    ("s_logic", "S_Logic"),
    ("s_seq", "S_seq (robustness)"),
    ("s_info", "S_Info"),
    ("recovery", "Recovery"),
)


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def pattern_key(body: OrderProbeBody) -> str:
    """The per-pattern value that matches the headline Recovery's test and identity rule (the
    score section's defaults where the body does not record its score section)."""
    recovery = (body.provenance_or_empty().score_params or OrderProbeScore()).recovery
    suffix = "" if recovery.headline_identity_inputs == "include" else "_excl_identity"
    return f"recovery_{recovery.headline_mode}{suffix}"


def _save(fig: Any, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # no date or software metadata: a rerun writes the same bytes
    fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})
    _pyplot().close(fig)


def pattern_figure(ctx: Scored, models: list[str], settings: list[str]) -> Figure:
    plt = _pyplot()
    patterns = permutation_patterns()
    key = pattern_key(ctx.metrics[models[0]])
    fig, axes = plt.subplots(len(models), 1, figsize=(10, 2.6 * len(models) + 0.6), squeeze=False, sharex=True)
    for ax, model in zip(axes[:, 0], models, strict=True):
        per_pattern = ctx.metrics[model].breakdowns_or_empty().per_pattern
        for setting in settings:
            if setting not in per_pattern:
                continue
            found = [per_pattern[setting].get(p) for p in patterns]
            values = [None if f is None else f.recovery(key) for f in found]
            ys = [float("nan") if v is None else 100.0 * v for v in values]
            style = LINE_STYLES[settings.index(setting) % len(LINE_STYLES)]
            # distinct line and marker styles: identical series (e.g. a reference system) stay visible
            ax.plot(
                range(len(patterns)),
                ys,
                linewidth=1.2,
                markersize=4,
                label=SETTING_LABELS.get(setting, setting),
                **style,
            )
        ax.set_title(ctx.display_name(model), fontsize=9)
        ax.set_ylabel("Recovery (%)", fontsize=8)
        ax.set_ylim(-5, 105)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper right")
    axes[-1, 0].set_xticks(range(len(patterns)))
    axes[-1, 0].set_xticklabels(patterns, rotation=60, fontsize=7)
    axes[-1, 0].set_xlabel("Permutation pattern (ABCD = canonical order)", fontsize=8)
    path = Path(ctx.figures_dir) / f"{BENCH}_figure4.png"
    _save(fig, path)
    return Figure(
        figure_id=f"{BENCH}_figure4",
        title="OrderProbe: Recovery per permutation pattern (paper figure 4)",
        path=path,
        caption=f"Recovery ({key.replace('_', ' ')}) per pattern of the 23 non-identity permutations; one line per "
        "prompt setting. Gaps: no input of that pattern in the sample.",
    )


def category_figure(ctx: Scored, models: list[str], settings: list[str]) -> Figure:
    plt = _pyplot()
    series = []
    for model in models:
        per_category = ctx.metrics[model].breakdowns_or_empty().per_category
        for setting in settings:
            if setting in per_category:
                series.append(
                    (f"{ctx.display_name(model)} {SETTING_LABELS.get(setting, setting)}", per_category[setting])
                )
    present = sorted(
        {c for _, groups in series for c in groups}, key=lambda c: CATEGORIES.index(c) if c in CATEGORIES else 99
    )
    fig, axes = plt.subplots(2, 3, figsize=(12, 6.5), squeeze=False)
    width = 0.8 / max(1, len(series))
    for ax, (metric, label) in zip(axes.flat, CATEGORY_METRICS, strict=False):
        for index, (name, groups) in enumerate(series):
            heights = []
            for category in present:
                group = groups.get(category)
                value = group.metric(metric) if group is not None else None
                heights.append(float("nan") if value is None else value * (100.0 if metric == "recovery" else 1.0))
            ax.bar([i + index * width - 0.4 + width / 2 for i in range(len(present))], heights, width=width, label=name)
        if not any(groups[c].metric(metric) is not None for _, groups in series for c in present if c in groups):
            ax.text(
                0.5,
                0.5,
                "not computed\n(see the per-category table)",
                ha="center",
                va="center",
                transform=ax.transAxes,
                fontsize=8,
                color="0.4",
            )
        ax.set_xlim(-0.6, len(present) - 0.4)
        ax.set_title(label + (" (%)" if metric == "recovery" else ""), fontsize=9)
        ax.set_xticks(range(len(present)))
        ax.set_xticklabels(present, rotation=35, ha="right", fontsize=7)
        ax.set_ylim(0, 105 if metric == "recovery" else 1.05)
        ax.grid(axis="y", alpha=0.3)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(4, max(1, len(series))), fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    path = Path(ctx.figures_dir) / f"{BENCH}_figure5.png"
    _save(fig, path)
    return Figure(
        figure_id=f"{BENCH}_figure5",
        title="OrderProbe: diagnostics per syntactic category (paper figure 5)",
        path=path,
        caption="Per category: S_Acc^mean, S_Cons, S_Logic, S_seq (S_struct compares categories, so robustness within "
        "one category is S_seq), S_Info and Recovery. Missing bars: not computed (see the per-category table).",
    )
