"""OrderProbe's estimands (report.uncertainty): tables 3 and 4 (per setting, per language).

Mirrors aggregate.group_metrics on the main pass. Every cell is resampled over EXPRESSIONS
(the cluster): the up to 23 permuted inputs of one expression are not independent (a model
that knows the idiom restores most of its permutations), so they are drawn together.
- Recovery, S_Acc^mean, S_Logic, S_Info: means over the perturbed inputs in scope (a ratio of
  the drawn expressions' sums over their inputs, as the aggregate's mean over inputs);
- S_Cons: mean over expressions of each expression's S_Cons (eqs. 9-11);
- S_Rob: 2·S_seq·S_struct / (S_seq + S_struct), both from per-expression values (S_seq from
  MDR/MDA against the canonical input, S_struct from the category means μ_k of the
  expressions' S_Acc^mean); the released code's S_seq (compatibility: released) has none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ... import statistics as st
from . import metrics
from .aggregate import semantic_rows
from .build import CATEGORIES
from .config import OrderProbeScore
from .score import MAIN_PASS

if TYPE_CHECKING:
    from ..contexts import UncertaintyContext
    from .config import OrderProbeConfig

EXPRESSION = "expression"


def recovery_estimand(perturbed: pd.DataFrame, cfg: OrderProbeScore) -> st.Estimand:
    rows = perturbed if cfg.recovery.headline_identity_inputs == "include" else perturbed[~perturbed["is_identity"]]
    column = "recovered" if cfg.recovery.headline_mode == "default" else "recovered_strict"
    return st.mean(rows["expression_id"].astype(str).tolist(), rows[column].astype(float), unit=EXPRESSION)


def consistency_estimand(samples: pd.DataFrame) -> st.Estimand | None:
    """Per expression, eqs. 9-11 from the per-input gaps S_max − S_mean (vectorised with
    pandas; the aggregate's loop gives the same values up to float rounding)."""
    if samples.empty:
        return None
    per_input = samples.groupby(["expression_id", "item_id"], sort=True)["s_acc"].agg(["max", "mean"])
    gaps = (per_input["max"] - per_input["mean"]).clip(lower=0.0)
    per_expression = gaps.groupby(level=0, sort=True).agg(["mean", "max"])
    s_cons = (1.0 - per_expression["mean"]) * (1.0 - per_expression["max"])
    return st.mean(per_expression.index.astype(str).tolist(), s_cons.to_numpy(), unit=EXPRESSION)


def _s_struct(mu: np.ndarray, present: np.ndarray) -> np.ndarray:
    """metrics.s_struct on each row's present category means (vectorised)."""
    count = present.sum(1)
    safe = np.where(present, mu, 0.0)
    mean = safe.sum(1) / np.maximum(count, 1)
    std = np.sqrt((np.where(present, (mu - mean[:, None]) ** 2, 0.0)).sum(1) / np.maximum(count, 1))
    spread = np.where(present, mu, -np.inf).max(1) - np.where(present, mu, np.inf).min(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = 1.0 - np.clip(std / spread, 0.0, 1.0)
    value = np.where(spread <= metrics.EQUAL_MEANS_TOLERANCE, 1.0, value)
    return np.where(count >= 2, value, np.nan)


def robustness_estimand(
    semantic: pd.DataFrame, semantic_canonical: pd.DataFrame, cfg: OrderProbeScore
) -> st.Estimand | None:
    if cfg.compatibility == "released" or semantic.empty:
        return None
    s_orig = semantic_canonical.drop_duplicates("expression_id").set_index("expression_id")["s_acc"].astype(float)
    categories = sorted(
        {str(c) for c in semantic["category"].dropna().unique()},
        key=lambda c: (CATEGORIES.index(c) if c in CATEGORIES else len(CATEGORIES), c),
    )
    k = len(categories)
    frame = semantic[["expression_id", "s_acc", "category"]].copy()
    frame["orig"] = frame["expression_id"].map(s_orig)
    frame["drop"] = (frame["orig"] - frame["s_acc"]) / frame["orig"].where(frame["orig"] > 0)
    per = frame.groupby("expression_id", sort=True).agg(
        mean=("s_acc", "mean"),
        mdr=("drop", "mean"),
        mda=("drop", "max"),
        orig=("orig", "first"),
        category=("category", "first"),
    )
    used = (per["orig"] > 0).to_numpy()  # a canonical input scoring S_orig > 0 (NaN: none)
    seq = (1.0 - (cfg.s_rob.weight_mdr * per["mdr"] + cfg.s_rob.weight_mda * per["mda"])).to_numpy()
    seq = np.clip(seq, 0.0, 1.0) if cfg.s_rob.s_seq_clip == "per_expression" else seq
    features = np.zeros((len(per), 2 + 2 * k))
    features[:, 0], features[:, 1] = np.where(used, seq, 0.0), used
    for index, category in enumerate(categories):
        member = (per["category"].astype(str) == category).to_numpy() & per["category"].notna().to_numpy()
        features[:, 2 + index], features[:, 2 + k + index] = np.where(member, per["mean"], 0.0), member
    ids = per.index.astype(str).tolist()
    clip_mean = cfg.s_rob.s_seq_clip != "per_expression"

    def reduce(s: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            seq = np.where(s[:, 1] > 0, s[:, 0] / np.where(s[:, 1] > 0, s[:, 1], 1.0), np.nan)
            seq = np.clip(seq, 0.0, 1.0) if clip_mean else seq
            present = s[:, 2 + k :] > 0
            struct = _s_struct(np.where(present, s[:, 2 : 2 + k] / np.where(present, s[:, 2 + k :], 1.0), 0.0), present)
            total = seq + struct
            return np.where(total == 0, 0.0, 2.0 * seq * struct / np.where(total == 0, 1.0, total))

    return st.custom(ids, features, reduce, f"s_rob:{'|'.join(categories)}", unit=EXPRESSION)


def group_estimands(rows: pd.DataFrame, cfg: OrderProbeScore, prefix: str) -> dict[str, st.Estimand]:
    main = rows[rows["pass"] == MAIN_PASS]
    perturbed = main[~main["is_canonical"]]
    if perturbed.empty:
        return {}
    semantic = semantic_rows(perturbed, cfg)
    out = {f"{prefix}/recovery": recovery_estimand(perturbed, cfg)}
    ids = semantic["expression_id"].astype(str).tolist()
    for name, column in (("s_acc_mean", "s_acc"), ("s_info", "s_info"), ("s_logic", "s_logic")):
        values = semantic[column].astype(float)
        if values.notna().any():
            out[f"{prefix}/{name}"] = st.mean(ids, values, unit=EXPRESSION)
    samples = rows[(rows["pass"] == cfg.s_cons.pass_name) & ~rows["is_canonical"]]
    cons = consistency_estimand(semantic_rows(samples, cfg))
    if cons is not None:
        out[f"{prefix}/s_cons"] = cons
    rob = robustness_estimand(semantic, semantic_rows(main[main["is_canonical"]], cfg), cfg)
    if rob is not None:
        out[f"{prefix}/s_rob"] = rob
    return out


def estimands(ctx: UncertaintyContext[OrderProbeConfig]) -> dict[str, dict[str, st.Estimand]]:
    """The Benchmark.estimands hook: model -> "<setting>[/<language>]/<metric>" -> estimand
    (Recovery as a share; the report prints it x 100)."""
    cfg: OrderProbeScore = ctx.config.score

    def of_setting(setting: str, frame: pd.DataFrame) -> dict[str, st.Estimand]:
        out = group_estimands(frame, cfg, setting)
        for language, subset in frame.groupby("language", sort=True):
            out.update(group_estimands(subset, cfg, f"{setting}/{language}"))
        return out

    return st.by_model(ctx.scores, of_setting)
