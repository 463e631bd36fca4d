"""G-IdiomAlign's attention diagnostics (paper section 5.3, appendices L-M): which Task 2
generations are measured, their spans, their groups, and the statistics of tables 6-8.

- Sample: `attention.items` Task 2 items (task gloss_generation; seeded) among those with a
  generation in every rendered condition, each measured in No-gloss and With-gloss (paired).
- Spans (appendix M): the source idiom and, With-gloss, the gloss, placed by the template
  (`ChatTemplate.render_spans`: the character offsets of the {source_idiom} and {gloss}
  fields), checked against the prompt the model was sent (results/prompts).
- Content segment (appendix M "generation positions"): the characters of the idiom that
  parse.py reads from the output (think blocks, a leading label, other lines and wrapping
  quotes excluded); an output with none (Type 0, invalid) is not measured.
- Groups: Correct / Wrong from the Task 2 similarity (>= `correct_threshold`; invalid or
  failed generations are Type 0 and excluded), or from human labels (`annotations`, the
  paper's Types 0-4), which alone give the error types T2 / T3 / T4 of table 8.
- Metrics: IAR = A(idiom span), GAR = A(gloss span) (0 No-gloss), DR = 1 - IAR - GAR (so it
  includes the mass on the output's own earlier tokens), OtherTop1 = the largest share of
  one prompt token outside the spans within the off-span prompt mass.
- Table 7: median (IQR) per group, Cliff's delta (Correct vs Wrong), two-sided Mann-Whitney
  U, BH-FDR over the metrics within each condition. Table 8: Kruskal-Wallis across the error
  types, BH-FDR within each condition. Table 6: salient heads and layers from the idiom-span
  head scores (the span both conditions have) and their With/No-gloss Jaccard overlap.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...analysis.attention import jaccard, salient_sets
from ...analysis.stats import bh_fdr, cliffs_delta, kruskal, mann_whitney, spread
from ...core.errors import DataError, IdiombenchError
from ...core.sampling import seeded_subset
from ...templating.templates import load_package_templates
from ..contexts import AttentionContext, AttentionPrompt
from .config import GIdiomAlignConfig
from .parse import parse_idiom
from .task2 import clean_idiom

PACKAGE = __package__ or "idiombench.benchmarks.g_idiomalign"
TASK = "gloss_generation"
CONDITIONS = ("with_gloss", "no_gloss")  # the paper's column order
METRICS = ("IAR", "GAR", "DR", "OtherTop1")
CORRECT, WRONG = "Correct", "Wrong"
ERROR_TYPES = ("T2", "T3", "T4")
SUBSETS = {"All": None, "Correct-only": CORRECT, "Wrong-only": WRONG}
LABEL_GROUPS = {0: None, 1: CORRECT, 2: WRONG, 3: WRONG, 4: WRONG}


def content_span(text: str, target_language: str | None) -> tuple[int, int] | None:
    """Characters of the idiom read from the output: parse.py's reading (after any think block,
    label and other lines removed), cleaned as task2.py cleans it for scoring (wrapping quotes and
    trailing punctuation removed); None when nothing is left."""
    parsed = parse_idiom(text, target_language)
    idiom = clean_idiom(parsed.value)
    if not idiom:
        return None
    after = text.rfind("</think>")
    begin = after + len("</think>") if after >= 0 else 0
    line = text.find(parsed.value or "", begin)
    start = text.find(idiom, max(line, begin))
    if start < 0:  # cleaning rewrote it (collapsed whitespace): the parsed line, else the stripped output
        if line >= 0:
            return line, line + len(parsed.value or "")
        stripped = text.strip()
        start = text.find(stripped)
        return start, start + len(stripped)
    return start, start + len(idiom)


def read_annotations(path: str, model: str | None = None) -> dict[str, int]:
    """prompt_id -> the paper's label (0-4) from a CSV with columns prompt_id,label and, optionally,
    model (a row naming another model is not this model's label; an empty one is every model's).
    A prompt labelled twice for the same model is an error."""
    try:
        with Path(path).open(encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle)
            if not reader.fieldnames or not {"prompt_id", "label"} <= set(reader.fieldnames):
                raise DataError(path, "missing columns", expected="columns prompt_id,label")
            labels: dict[str, int] = {}
            for number, row in enumerate(reader):
                label = (row["label"] or "").strip()
                if label not in {"0", "1", "2", "3", "4"}:
                    raise DataError(path, f"label {label!r}", row=number, expected="0, 1, 2, 3 or 4")
                if not row["prompt_id"]:
                    raise DataError(path, "empty prompt_id", row=number, expected="a prompt id of the generations")
                owner = (row.get("model") or "").strip()
                if model is not None and owner and owner != model:
                    continue
                if row["prompt_id"] in labels:
                    raise DataError(
                        path,
                        f"prompt {row['prompt_id']} labelled twice",
                        row=number,
                        expected="one label per prompt (and model)",
                    )
                labels[row["prompt_id"]] = int(label)
            return labels
    except FileNotFoundError:
        raise DataError(path, "file not found", expected="benchmarks.g-idiomalign.attention.annotations") from None


def threshold(ctx: AttentionContext[GIdiomAlignConfig]) -> float:
    cfg = ctx.config.attention
    return cfg.correct_threshold if cfg.correct_threshold is not None else ctx.config.score.headline_thresholds[-1]


def labels_for(
    ctx: AttentionContext[GIdiomAlignConfig], setting: str, prompt_id: str, annotations: dict[str, int] | None
) -> dict[str, object]:
    scores = ctx.scores.get(setting)
    match = scores[scores["prompt_id"] == prompt_id] if scores is not None else None
    if match is None or match.empty:
        raise IdiombenchError(
            f"g-idiomalign attention: {prompt_id} has no score row: rerun `idiombench score g-idiomalign`"
        )
    row = match.iloc[0]
    similarity = None if pd.isna(row["similarity"]) else float(row["similarity"])
    labels = {
        "condition": setting,
        "direction": row["direction"],
        "prediction": row["prediction_clean"],
        "similarity": similarity,
        "group": None,
        "error_type": None,
        "label": None,
    }
    if annotations is not None:
        label = annotations.get(prompt_id)
        labels["label"] = label
        if label is not None:
            labels["group"] = LABEL_GROUPS[label]
            labels["error_type"] = f"T{label}" if label >= 2 else None
        return labels
    if bool(row["invalid"]) or bool(row["generation_failed"]):
        labels["label"] = 0  # the paper's Type 0: no interpretable output
    elif similarity is not None:
        labels["group"] = CORRECT if similarity >= threshold(ctx) else WRONG
    return labels


def attention_prompts(ctx: AttentionContext[GIdiomAlignConfig]) -> list[AttentionPrompt]:
    cfg = ctx.config.attention
    conditions = [s for s in CONDITIONS if s in ctx.generations]
    if not conditions:
        raise IdiombenchError("g-idiomalign attention: no Task 2 generations (render no_gloss / with_gloss)")
    rows: dict[str, dict[str, dict[str, Any]]] = {}
    for setting in conditions:
        frame = ctx.generations[setting]
        frame = frame[(frame["task"] == TASK) & (frame["pass"] == "main") & (frame["sample_index"] == 0)]
        rows[setting] = {r["item_id"]: r for r in frame.to_dict("records")}
    common = set.intersection(*(set(r) for r in rows.values()))
    chosen = seeded_subset(common, cfg.items, cfg.seed, "g-idiomalign", "attention")
    annotations = read_annotations(cfg.annotations, ctx.model) if cfg.annotations else None
    templates = load_package_templates(PACKAGE, "gloss_generation")
    items = ctx.items.get(TASK, {})
    missing = sorted(set(chosen) - set(items))
    if missing:
        raise IdiombenchError(
            f"g-idiomalign attention: generated item(s) {', '.join(missing[:3])} are not in "
            f"data/processed/g-idiomalign/{TASK}.parquet (rebuild, rerender and regenerate)"
        )
    out = []
    for setting in conditions:
        template = templates.get(setting)
        for item_id in chosen:
            item, generation = items[item_id], rows[setting][item_id]
            values = {
                "target_language": item.fields["target_language"],
                "source_idiom": item.fields["source_idiom"],
                "gloss": item.fields.get("gloss") or "",
            }
            messages, fields = template.render_spans(values)
            sent = ctx.prompts.get(setting, {}).get(generation["prompt_id"])
            if sent is None or sent.messages != messages:
                raise IdiombenchError(
                    f"g-idiomalign attention: {generation['prompt_id']} differs from the template "
                    "rendering (rerender and regenerate)"
                )
            spans = {"idiom": fields["source_idiom"][0]}
            if setting == "with_gloss":
                spans["gloss"] = fields["gloss"][0]
            text = generation["text"] if isinstance(generation["text"], str) else ""
            out.append(
                AttentionPrompt(
                    prompt_id=generation["prompt_id"],
                    setting=setting,
                    item_id=item_id,
                    messages=messages,
                    spans={name: (s.message, s.start, s.end) for name, s in spans.items()},
                    output=text,
                    content=content_span(text, item.fields.get("target_language")),
                    labels=labels_for(ctx, setting, generation["prompt_id"], annotations),
                )
            )
    ctx.notes.append(
        f"{len(chosen)} Task 2 item(s) drawn (seed {cfg.seed}) of {len(common)} generated in {' and '.join(conditions)}"
    )
    return out


# --------------------------------------------------------------------------- statistics


def add_ratios(frame: pd.DataFrame) -> pd.DataFrame:
    """IAR, GAR (0 No-gloss), DR = 1 - IAR - GAR and OtherTop1 as columns (NaN where not measured)."""
    measured = frame["status"] == "measured"
    idiom = frame.get("mass_idiom", pd.Series(np.nan, index=frame.index)).astype(float)
    gloss = frame.get("mass_gloss", pd.Series(np.nan, index=frame.index)).astype(float)
    frame["IAR"] = idiom.where(measured)
    frame["GAR"] = gloss.where(frame["condition"] == "with_gloss", 0.0).where(measured)
    frame["DR"] = (1.0 - frame["IAR"] - frame["GAR"]).where(measured)
    frame["OtherTop1"] = frame.get("other_top1", pd.Series(np.nan, index=frame.index)).astype(float).where(measured)
    return frame


def spread_json(values: Any) -> dict[str, Any]:
    s = spread(list(values))
    return {"n": s.n, "median": s.median, "iqr": s.iqr}


def metrics_of(condition: str) -> tuple[str, ...]:
    return METRICS if condition == "with_gloss" else tuple(m for m in METRICS if m != "GAR")  # GAR is 0 by definition


def table7(frame: pd.DataFrame, condition: str, min_n: int) -> dict[str, Any]:
    rows = frame[frame["condition"] == condition]
    body, pvalues = {}, []
    for metric in metrics_of(condition):
        correct, wrong = rows.loc[rows["group"] == CORRECT, metric], rows.loc[rows["group"] == WRONG, metric]
        test = mann_whitney(correct, wrong, min_n)
        body[metric] = {
            CORRECT: spread_json(correct),
            WRONG: spread_json(wrong),
            "delta": cliffs_delta(correct, wrong),
            "U": test.statistic,
            "p": test.p,
            "note": test.note,
        }
        pvalues.append(test.p)
    for metric, q in zip(body, bh_fdr(pvalues), strict=True):
        body[metric]["q"] = q
    return body


def table8(frame: pd.DataFrame, condition: str, min_n: int) -> dict[str, Any]:
    rows = frame[(frame["condition"] == condition) & (frame["group"] == WRONG)]
    body, pvalues = {}, []
    for metric in metrics_of(condition):
        groups = {t: rows.loc[rows["error_type"] == t, metric] for t in ERROR_TYPES}
        test, used = kruskal(groups, min_n)
        body[metric] = {
            **{t: spread_json(v) for t, v in groups.items()},
            "H": test.statistic,
            "p": test.p,
            "note": test.note,
            "types_tested": used,
        }
        pvalues.append(test.p)
    for metric, q in zip(body, bh_fdr(pvalues), strict=True):
        body[metric]["q"] = q
    return body


def table6(frame: pd.DataFrame, cfg: Any) -> dict[str, Any]:
    out: dict[str, object] = {}
    for subset, group in SUBSETS.items():
        entry: dict[str, Any] = {"n": {}, "heads": {}, "layers": {}}
        for condition in CONDITIONS:
            rows = frame[(frame["condition"] == condition) & (frame["status"] == "measured")]
            rows = rows[rows["group"].notna()] if group is None else rows[rows["group"] == group]
            scores = [
                np.asarray(v, dtype=float).reshape(int(n_layers), int(n_heads))
                for v, n_layers, n_heads in zip(rows["heads_idiom"], rows["layers"], rows["heads"], strict=True)
            ]
            heads, layers = salient_sets(scores, cfg.top_k_heads, cfg.salient_heads, cfg.salient_layers)
            entry["n"][condition] = len(scores)
            entry["heads"][condition] = [list(h) for h in heads]
            entry["layers"][condition] = layers
        both = all(entry["n"].get(c) for c in CONDITIONS)
        entry["J_heads"] = (
            jaccard([tuple(h) for h in entry["heads"]["with_gloss"]], [tuple(h) for h in entry["heads"]["no_gloss"]])
            if both
            else None
        )
        entry["J_layers"] = jaccard(entry["layers"]["with_gloss"], entry["layers"]["no_gloss"]) if both else None
        out[subset] = entry
    return out


def attention_summary(ctx: AttentionContext[GIdiomAlignConfig], frame: pd.DataFrame) -> dict[str, object]:
    cfg = ctx.config.attention
    add_ratios(frame)
    measured = frame[frame["status"] == "measured"]
    conditions = [c for c in CONDITIONS if c in set(frame["condition"])]
    counts = {}
    for condition in conditions:
        rows = frame[frame["condition"] == condition]
        done = rows[rows["status"] == "measured"]
        counts[condition] = {
            "prompts": len(rows),
            "measured": len(done),
            "type0_or_unlabelled": int(done["group"].isna().sum() + (rows["status"] != "measured").sum()),
            CORRECT: int((done["group"] == CORRECT).sum()),
            WRONG: int((done["group"] == WRONG).sum()),
            **{t: int((done["error_type"] == t).sum()) for t in ERROR_TYPES},
        }
    means = {
        c: {
            m: _mean(measured.loc[measured["condition"] == c, m])
            for m in (*METRICS, "prompt_other", "generated", "greedy_agreement")
        }
        for c in conditions
    }
    shape = (
        {"layers": int(measured["layers"].iloc[0]), "heads": int(measured["heads"].iloc[0])}
        if not measured.empty
        else {}
    )
    labelled = cfg.annotations is not None
    return {
        "conditions": conditions,
        "sample": {"items": int(frame["item_id"].nunique()), "seed": cfg.seed, "requested": cfg.items},
        "groups": (
            {"source": "annotations", "file": cfg.annotations}
            if labelled
            else {
                "source": "similarity",
                "threshold": threshold(ctx),
                "note": "Correct = Task 2 similarity >= threshold (automatic stand-in for the paper's human Type 1); "
                "invalid outputs are Type 0 and excluded",
            }
        ),
        "shape": shape,
        "salient": {
            "top_k_heads": cfg.top_k_heads,
            "salient_heads": cfg.salient_heads,
            "salient_layers": cfg.salient_layers,
            "span": "idiom",
        },
        "min_group": cfg.min_group,
        "counts": counts,
        "means": means,
        "table6": table6(frame, cfg) if not measured.empty else {},
        "table7": {c: table7(frame, c, cfg.min_group) for c in conditions},
        "table8": (
            {c: table8(frame, c, cfg.min_group) for c in conditions}
            if labelled
            else {
                "status": "not computed",
                "reason": "error types need human labels "
                "(benchmarks.g-idiomalign.attention.annotations: the paper's Types 2-4)",
            }
        ),
    }


def _mean(values: pd.Series) -> float | None:
    values = values.dropna()
    return float(values.mean()) if len(values) else None
