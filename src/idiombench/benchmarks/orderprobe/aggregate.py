"""`idiombench aggregate orderprobe`: the score rows of one model -> the metrics JSON.

Per setting (paper table 3), over the main pass's PERTURBED inputs (the 23 permutations
of each expression). Identity inputs (π(x) = x) are left out of every metric over perturbed
inputs by default (paper eq. 3; score.identity_inputs), Recovery aside (its headline
follows score.recovery.headline_identity_inputs):

- recovery: the headline (score.recovery: default or strict test, identity inputs
  included or not); every variant is reported too: recovery_default, recovery_strict,
  their *_excl_identity forms, recovery_identity_inputs (over the identity inputs
  alone), recovery_canonical(_strict) (over the canonical inputs);
- s_acc_mean and its component means (ce_mean, bert_mean, sts_mean, lex_mean, f_beta_mean);
- s_logic, s_info: means over the inputs;
- s_cons (with e_perf, r_sens): per expression from the `consistency` pass's n samples of
  each permutation (gap = S_max − S_mean of their S_Acc), mean over expressions;
- s_rob = harmonic mean of s_seq and s_struct; s_seq per expression from MDR/MDA against
  the canonical input's S_Acc (expressions with S_orig = 0 excluded and counted); s_struct
  from the category means μ_k of the expressions' S_Acc^mean (mean over their perturbed
  inputs), population σ over the categories present, normalised by (max μ − min μ);
- format_failure_rate: main-pass outputs that did not follow the requested format.

Semantic aggregates leave out items without a reference gloss (the whole Japanese
release) unless score.no_reference_items is `zero`; the count is reported. A metric that
cannot be computed is None, with the reason under "not_computed".

Breakdowns: per_language (table 4), per_category (figure 5), per_pattern (figure 4:
Recovery per permutation pattern), canonical (table 11: the same diagnostics over the
canonical inputs; S_Rob needs perturbed inputs, so table 11 shows S_struct there).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from math import fsum
from typing import TYPE_CHECKING, Any, TypedDict

import pandas as pd

from ...core import paths
from ...core.io import read_json_object, sha256_file
from ...scoring.roles import all_role_infos
from . import metrics
from .build import CATEGORIES, permutation_patterns
from .config import OrderProbeScore
from .neural import NLI_ROLE, ROLES, roles_for_language
from .score import MAIN_PASS, SORT_KEY

if TYPE_CHECKING:
    from ..contexts import AggregateContext
    from .config import OrderProbeConfig

S_ACC_COMPONENTS = ("ce", "bert", "sts", "lex", "f_beta")


def mean(values: Sequence[float]) -> float:
    """Exactly rounded (math.fsum), so the result does not depend on the row order."""
    return fsum(values) / len(values)


def _mean(series: pd.Series) -> float | None:
    """Mean of the non-null values (None when there are none)."""
    values = [float(v) for v in series.tolist() if v is not None and not pd.isna(v)]
    return mean(values) if values else None


def _rate(flags: pd.Series) -> float | None:
    return float(flags.astype(bool).sum()) / len(flags) if len(flags) else None


def semantic_rows(frame: pd.DataFrame, cfg: OrderProbeScore) -> pd.DataFrame:
    """Rows that enter the semantic aggregates: with a reference (unless no_reference_items
    is zero) and, by default, not an identity input (paper eq. 3; canonical rows have
    is_identity false, so this never removes them)."""
    if cfg.no_reference_items == "exclude":
        frame = frame[frame["n_references"] > 0]
    # the released code knows no identity inputs: released mode keeps them
    if cfg.identity_inputs == "exclude" and cfg.compatibility != "released":
        frame = frame[~frame["is_identity"]]
    return frame


# ---------------------------------------------------------------------------- Recovery


def recovery_metrics(perturbed: pd.DataFrame, canonical: pd.DataFrame, cfg: OrderProbeScore) -> dict[str, float | None]:
    plain = perturbed[~perturbed["is_identity"]]
    identity = perturbed[perturbed["is_identity"]]
    out = {
        "recovery_default": _rate(perturbed["recovered"]),
        "recovery_strict": _rate(perturbed["recovered_strict"]),
        "recovery_default_excl_identity": _rate(plain["recovered"]),
        "recovery_strict_excl_identity": _rate(plain["recovered_strict"]),
        "recovery_identity_inputs": _rate(identity["recovered"]),
        "recovery_canonical": _rate(canonical["recovered"]),
        "recovery_canonical_strict": _rate(canonical["recovered_strict"]),
    }
    suffix = "" if cfg.recovery.headline_identity_inputs == "include" else "_excl_identity"
    out["recovery"] = out[f"recovery_{cfg.recovery.headline_mode}{suffix}"]
    return out


def per_pattern(perturbed: pd.DataFrame) -> dict[str, dict[str, float | int | None]]:
    """Figure 4: Recovery per permutation pattern (the 23 patterns, in itertools order)."""
    out = {}
    for pattern in permutation_patterns():
        rows = perturbed[perturbed["pattern"] == pattern]
        plain = rows[~rows["is_identity"]]
        out[pattern] = {
            "inputs": len(rows),
            "identity_inputs": int(rows["is_identity"].sum()),
            "recovery_default": _rate(rows["recovered"]),
            "recovery_strict": _rate(rows["recovered_strict"]),
            "recovery_default_excl_identity": _rate(plain["recovered"]),
            "recovery_strict_excl_identity": _rate(plain["recovered_strict"]),
        }
    return out


# ---------------------------------------------------------------------------- S_Cons


def consistency_metrics(samples: pd.DataFrame) -> tuple[dict[str, float | None], int]:
    """S_Cons over expressions from the sampled rows (already restricted to the inputs in
    scope); returns (metrics, number of expressions)."""
    per_expression = []
    for _, rows in samples.groupby("expression_id", sort=True):
        gaps = [
            metrics.sample_gap([float(v) for v in group["s_acc"].tolist()])
            for _, group in rows.groupby("item_id", sort=True)
        ]
        per_expression.append(metrics.consistency(gaps))
    if not per_expression:
        return {"s_cons": None, "e_perf": None, "r_sens": None}, 0
    return {
        "s_cons": mean([c.s_cons for c in per_expression]),
        "e_perf": mean([c.e_perf for c in per_expression]),
        "r_sens": mean([c.r_sens for c in per_expression]),
    }, len(per_expression)


# ---------------------------------------------------------------------------- S_Rob


def expression_means(perturbed: pd.DataFrame) -> dict[str, float]:
    """S_Acc^mean per expression over its perturbed inputs."""
    return {
        key: mean([float(v) for v in rows["s_acc"].tolist()])
        for key, rows in perturbed.groupby("expression_id", sort=True)
    }


def structural(perturbed: pd.DataFrame) -> tuple[float | None, dict[str, float], int]:
    """S_struct from the category means μ_k; (value, μ per category, expressions without category)."""
    means = expression_means(perturbed)
    categories = perturbed.drop_duplicates("expression_id").set_index("expression_id")["category"]
    by_category: dict[str, list[float]] = {}
    uncategorised = 0
    for expression_id, value in sorted(means.items()):
        category = categories.get(expression_id)
        if category is None or pd.isna(category):
            uncategorised += 1
            continue
        by_category.setdefault(str(category), []).append(value)
    mu = {k: mean(v) for k, v in sorted(by_category.items(), key=lambda kv: _category_order(kv[0]))}
    return metrics.s_struct(list(mu.values())), mu, uncategorised


def _category_order(category: str) -> tuple[int, str]:
    return (CATEGORIES.index(category) if category in CATEGORIES else len(CATEGORIES), category)


def sequential(
    perturbed: pd.DataFrame, canonical: pd.DataFrame, cfg: OrderProbeScore
) -> tuple[dict[str, float | None], dict[str, int]]:
    """S_seq (and mean MDR, MDA) over expressions; counts of the expressions used, excluded,
    and whose own S_seq falls outside [0, 1] (paper eqs. 12-14 do not clip them; by default
    only the final value is clipped)."""
    if cfg.compatibility == "released":
        return released_sequential(perturbed, canonical, cfg)
    rob = cfg.s_rob
    s_orig = {row["expression_id"]: float(row["s_acc"]) for row in canonical.to_dict("records")}
    used: list[tuple[metrics.Degradation, float]] = []
    zero = missing = outside = 0
    for expression_id, rows in perturbed.groupby("expression_id", sort=True):
        if expression_id not in s_orig:
            missing += 1
            continue
        if s_orig[expression_id] <= 0:
            zero += 1
            continue
        d = metrics.degradation(s_orig[expression_id], [float(v) for v in rows["s_acc"].tolist()])
        value = metrics.s_seq(d, rob.weight_mdr, rob.weight_mda)
        outside += not 0.0 <= value <= 1.0
        used.append((d, metrics.clip01(value) if rob.s_seq_clip == "per_expression" else value))
    counts = {
        "s_rob_expressions": len(used),
        "s_rob_excluded_s_orig_zero": zero,
        "s_rob_excluded_no_canonical_input": missing,
        "s_seq_expressions_out_of_range": outside,
    }
    if not used:
        return {"s_seq": None, "mdr": None, "mda": None}, counts
    mean_seq = mean([v for _, v in used])
    return {
        "s_seq": mean_seq if rob.s_seq_clip == "per_expression" else metrics.clip01(mean_seq),
        "mdr": mean([d.mdr for d, _ in used]),
        "mda": mean([d.mda for d, _ in used]),
    }, counts


def released_sequential(
    perturbed: pd.DataFrame, canonical: pd.DataFrame, cfg: OrderProbeScore
) -> tuple[dict[str, float | None], dict[str, int]]:
    """The released Srobust arithmetic with S_orig = the canonical input's S_Acc (the code's
    random S_orig cannot be reproduced meaningfully): per permutation pattern ("sheet"),
    MDR_p = mean over expressions of (S_orig − S)/S_orig and MDA_p = max over expressions of
    the ABSOLUTE drop S_orig − S; MDR, MDA = means over patterns; S_seq = 1 − (α·MDR + β·MDA),
    not clipped."""
    rob = cfg.s_rob
    s_orig = {row["expression_id"]: float(row["s_acc"]) for row in canonical.to_dict("records")}
    known = perturbed[perturbed["expression_id"].isin(list(s_orig))]
    zero = sum(1 for e in known["expression_id"].unique() if s_orig[e] <= 0)
    mdr_p: list[float] = []
    mda_p: list[float] = []
    for _, rows in known.groupby("pattern", sort=True):
        pairs = [(s_orig[r["expression_id"]], float(r["s_acc"])) for r in rows.to_dict("records")]
        relative = [(o - v) / o for o, v in pairs if o > 0]  # the code skips S_orig <= 0 in MDR only
        if relative:
            mdr_p.append(mean(relative))
        if pairs:
            mda_p.append(max(o - v for o, v in pairs))
    counts = {
        "s_rob_expressions": int(known["expression_id"].nunique()),
        "s_rob_excluded_s_orig_zero": zero,
        "s_rob_excluded_no_canonical_input": int(
            perturbed["expression_id"].nunique() - known["expression_id"].nunique()
        ),
        "s_seq_expressions_out_of_range": 0,
    }
    if not mdr_p or not mda_p:
        return {"s_seq": None, "mdr": None, "mda": None}, counts
    mdr, mda = mean(mdr_p), mean(mda_p)
    return {"s_seq": 1.0 - (rob.weight_mdr * mdr + rob.weight_mda * mda), "mdr": mdr, "mda": mda}, counts


# ---------------------------------------------------------------------------- one group of rows


def explain_missing(out: dict[str, Any], not_computed: dict[str, str], semantic: pd.DataFrame, inputs: str) -> None:
    """A reason for every mean that is None and has none yet."""
    for name in ("s_acc_mean", "s_info", "s_logic", *(f"{c}_mean" for c in S_ACC_COMPONENTS)):
        if name not in out or out[name] is not None or name in not_computed:
            continue
        if semantic.empty:
            not_computed[name] = f"no {inputs} input with a reference gloss"
        else:
            not_computed[name] = "the scorer role of this term is not computed in this profile"


class PassOptions(TypedDict):
    """What group_metrics and canonical_metrics are told of a setting's passes."""

    nli_computed: bool
    consistency_present: bool
    missing_pass: str


def missing_pass_reason(pass_name: str, setting: str, generate: Any = None) -> str:
    """Why a setting's generations hold no samples of the consistency pass."""
    extra = getattr(generate, "extra", {}) if generate is not None else {}
    if generate is not None and pass_name not in extra:
        return f"no `{pass_name}` pass is configured (benchmarks.orderprobe.generate.extra)"
    restricted = getattr(extra.get(pass_name), "settings", None) if generate is not None else None
    if restricted is not None and setting not in restricted:
        return (
            f"the `{pass_name}` pass runs on {', '.join(restricted)} only "
            f"(benchmarks.orderprobe.generate.extra.{pass_name}.settings)"
        )
    return f"no `{pass_name}` pass in this setting's generations"


def group_metrics(
    rows: pd.DataFrame,
    cfg: OrderProbeScore,
    *,
    nli_computed: bool,
    consistency_present: bool,
    missing_pass: str = "no `consistency` pass in this setting's generations",
) -> dict[str, Any]:
    """Every table-3 metric over one group of score rows (a setting, a language, a category)."""
    main = rows[rows["pass"] == MAIN_PASS]
    perturbed = main[~main["is_canonical"]]
    canonical = main[main["is_canonical"]]
    semantic = semantic_rows(perturbed, cfg)
    semantic_canonical = semantic_rows(canonical, cfg)
    not_computed: dict[str, str] = {}
    out: dict[str, float | None] = recovery_metrics(perturbed, canonical, cfg)

    out["s_acc_mean"] = _mean(semantic["s_acc"])
    for component in S_ACC_COMPONENTS:
        out[f"{component}_mean"] = _mean(semantic[component])
    out["s_info"] = _mean(semantic["s_info"])
    out["s_logic"] = _mean(semantic["s_logic"]) if nli_computed else None
    if not nli_computed:
        not_computed["s_logic"] = f"scorer role {NLI_ROLE} is not computed in this profile"

    samples = rows[rows["pass"] == cfg.s_cons.pass_name]
    samples = semantic_rows(samples[~samples["is_canonical"]], cfg)
    cons, cons_expressions = consistency_metrics(samples)
    out.update(cons)
    if not consistency_present:
        not_computed["s_cons"] = missing_pass
    elif cons_expressions == 0:
        not_computed["s_cons"] = "no sampled explanation of a perturbed input with a reference"

    seq, rob_counts = sequential(semantic, semantic_canonical, cfg)
    out.update(seq)
    struct, mu, uncategorised = structural(semantic)
    out["s_struct"] = struct
    out["s_rob"] = metrics.harmonic_mean(out["s_seq"], struct)
    if out["s_seq"] is None:
        not_computed["s_seq"] = "no expression with a canonical input scoring S_orig > 0"
    if struct is None:
        not_computed["s_struct"] = f"needs two or more syntactic categories; {len(mu)} present"
    if out["s_rob"] is None:
        not_computed["s_rob"] = "; ".join(not_computed[k] for k in ("s_seq", "s_struct") if k in not_computed)

    explain_missing(out, not_computed, semantic, "perturbed")
    out["format_failure_rate"] = _rate(~main["format_ok"])
    counts = {
        "main_rows": len(main),
        "perturbed_inputs": len(perturbed),
        "identity_inputs": int(perturbed["is_identity"].sum()),
        "canonical_inputs": len(canonical),
        "expressions": int(main["expression_id"].nunique()),
        "semantic_rows": len(semantic),
        "no_reference_rows": int((perturbed["n_references"] == 0).sum()),
        "consistency_samples": int((rows["pass"] == cfg.s_cons.pass_name).sum()),
        "s_cons_expressions": cons_expressions,
        "categories": len(mu),
        "expressions_without_category": uncategorised,
        "format_failures": int((~main["format_ok"]).sum()),
        "format_failures_all_passes": int((~rows["format_ok"]).sum()),
        "empty_explanations": int(main["explanation"].isna().sum()),
        "generation_errors": int(main["generation_error"].notna().sum()),
        "f_beta_halved": int(semantic["f_beta_halved"].sum()),
        **rob_counts,
    }
    return {"metrics": out, "counts": counts, "not_computed": not_computed, "category_means": mu}


def canonical_metrics(
    rows: pd.DataFrame,
    cfg: OrderProbeScore,
    *,
    nli_computed: bool,
    consistency_present: bool,
    missing_pass: str = "no `consistency` pass in this setting's generations",
) -> dict[str, Any]:
    """Table 11: the diagnostics over the canonical (unperturbed) inputs."""
    main = rows[(rows["pass"] == MAIN_PASS) & rows["is_canonical"]]
    semantic = semantic_rows(main, cfg)
    samples = rows[(rows["pass"] == cfg.s_cons.pass_name) & rows["is_canonical"]]
    cons, cons_expressions = consistency_metrics(semantic_rows(samples, cfg))
    struct, mu, _ = structural(semantic)
    out = {
        "recovery": _rate(main["recovered"])
        if cfg.recovery.headline_mode == "default"
        else _rate(main["recovered_strict"]),
        "recovery_default": _rate(main["recovered"]),
        "recovery_strict": _rate(main["recovered_strict"]),
        "s_acc_mean": _mean(semantic["s_acc"]),
        "s_logic": _mean(semantic["s_logic"]) if nli_computed else None,
        "s_info": _mean(semantic["s_info"]),
        "s_struct": struct,
        **cons,
    }
    not_computed = {
        "s_rob": "S_Rob measures degradation from the canonical input; over canonical inputs only S_struct is defined"
    }
    if not nli_computed:
        not_computed["s_logic"] = f"scorer role {NLI_ROLE} is not computed in this profile"
    if not consistency_present:
        not_computed["s_cons"] = missing_pass
    if struct is None:
        not_computed["s_struct"] = f"needs two or more syntactic categories; {len(mu)} present"
    explain_missing(out, not_computed, semantic, "canonical")
    counts = {"canonical_inputs": len(main), "semantic_rows": len(semantic), "s_cons_expressions": cons_expressions}
    return {"metrics": out, "counts": counts, "not_computed": not_computed}


# ---------------------------------------------------------------------------- provenance


def role_records(scoring_meta: Mapping[str, Any], params: Any) -> tuple[dict[str, dict[str, Any]], str]:
    """The OrderProbe roles as the score stage recorded them (scoring_meta.json), else as
    the current params derive them."""
    recorded = scoring_meta.get("roles") or {}
    if all(role in recorded for role in ROLES):
        return {role: dict(recorded[role]) for role in ROLES}, "score stage (scoring_meta.json)"
    infos = all_role_infos(params.scoring)
    return {role: infos[role].as_dict() for role in ROLES}, "params at aggregation time (the score stage recorded none)"


def depends_on(rows: pd.DataFrame, cfg: OrderProbeScore) -> dict[str, list[str]]:
    """Which scorer roles each metric of a group of rows depends on: the S_Acc roles of the
    languages whose rows enter the semantic aggregates (none for Japanese, which has no
    references), and the NLI role for S_Logic."""
    languages = sorted(semantic_rows(rows, cfg)["language"].unique().tolist())
    s_acc = sorted({role for language in languages for role in roles_for_language(language)}, key=ROLES.index)
    return {"s_acc_mean": s_acc, "s_cons": s_acc, "s_rob": s_acc, "s_logic": [NLI_ROLE]}


def template_hashes(frame: pd.DataFrame) -> dict[str, Any]:
    known = frame.dropna(subset=["template_id"]).drop_duplicates(["template_id", "template_hash"])
    hashes = {str(r["template_id"]): str(r["template_hash"]) for r in known.to_dict("records")}
    return {"templates": dict(sorted(hashes.items())), "rows_without_template": int(frame["template_id"].isna().sum())}


def data_hashes() -> dict[str, Any]:
    record = paths.acquired_record("orderprobe")
    items = paths.task_items("orderprobe", "restore")
    stats = paths.build_stats("orderprobe")
    return {
        "acquired_record": str(record),
        "acquired_sha256": sha256_file(record) if record.exists() else None,
        "items_sha256": sha256_file(items) if items.exists() else None,
        "build_stats_sha256": sha256_file(stats) if stats.exists() else None,
    }


def sample_record(frames: Mapping[str, pd.DataFrame], items: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """What was scored against what exists: expressions per language, per setting."""
    available: dict[str, set[str]] = {}
    for item in items.get("restore", {}).values():
        available.setdefault(item.language, set()).add(item.meta["expression_id"])
    scored = {
        setting: {
            str(lang): int(n) for lang, n in frame.groupby("language")["expression_id"].nunique().sort_index().items()
        }
        for setting, frame in sorted(frames.items())
    }
    totals = {lang: len(ids) for lang, ids in sorted(available.items())}
    render_stats = paths.prompts_dir("orderprobe") / "render_stats.json"
    render_sample = read_json_object(render_stats).get("sample", {}).get("restore") if render_stats.exists() else None
    selection = render_sample.get("selection") if isinstance(render_sample, dict) else None
    # every expression scored is not the full benchmark when only some permutations were drawn
    some_permutations = bool(selection) and "seeded permutation" in str(selection)
    full = all(scored_langs == totals for scored_langs in scored.values()) and not some_permutations
    return {
        "expressions_scored": scored,
        "expressions_available": totals,
        "full_benchmark": full,
        "selection": selection,
        "render_sample": render_sample,
    }


# ---------------------------------------------------------------------------- the hook


def aggregate_scores(
    scores: Mapping[str, pd.DataFrame],
    items: Mapping[str, Mapping[str, Any]],
    cfg: OrderProbeScore,
    roles: dict[str, dict[str, Any]],
    roles_source: str,
    scoring_notes: list[str] | None = None,
    generate: Any = None,
) -> dict[str, Any]:
    nli_computed = roles[NLI_ROLE].get("status") != "not_computed"
    settings: dict[str, Any] = {}
    per_language: dict[str, Any] = {}
    per_category: dict[str, Any] = {}
    patterns: dict[str, Any] = {}
    canonical: dict[str, Any] = {}
    templates: dict[str, Any] = {}
    for setting, unsorted in sorted(scores.items()):
        frame = unsorted.sort_values(SORT_KEY, kind="stable").reset_index(drop=True)
        present = bool((frame["pass"] == cfg.s_cons.pass_name).any())
        options: PassOptions = {
            "nli_computed": nli_computed,
            "consistency_present": present,
            "missing_pass": missing_pass_reason(cfg.s_cons.pass_name, setting, generate),
        }
        languages = sorted(frame["language"].unique().tolist())
        whole = group_metrics(frame, cfg, **options)
        whole["depends_on"] = depends_on(frame, cfg)
        whole["languages"] = languages
        settings[setting] = whole
        per_language[setting] = {}
        for language in languages:
            subset = frame[frame["language"] == language]
            part = group_metrics(subset, cfg, **options)
            part["depends_on"] = depends_on(subset, cfg)
            per_language[setting][language] = part
        per_category[setting] = {}
        categories = sorted({str(c) for c in frame["category"].dropna().unique()}, key=_category_order)
        for category in categories:
            subset = frame[frame["category"] == category]
            part = group_metrics(subset, cfg, **options)
            part["depends_on"] = depends_on(subset, cfg)
            per_category[setting][category] = part
        main = frame[frame["pass"] == MAIN_PASS]
        patterns[setting] = per_pattern(main[~main["is_canonical"]])
        canon = canonical_metrics(frame, cfg, **options)
        canon["depends_on"] = depends_on(frame, cfg)
        canonical[setting] = canon
        templates[setting] = template_hashes(frame)
    return {
        "settings": settings,
        "breakdowns": {
            "per_language": per_language,
            "per_category": per_category,
            "per_pattern": patterns,
            "canonical": canonical,
        },
        "provenance": {
            "roles": roles,
            "roles_source": roles_source,
            "scoring_notes": list(scoring_notes or []),
            "score_params": json.loads(cfg.model_dump_json()),
            "template_hashes": templates,
            "data": data_hashes(),
            "sample": sample_record(scores, items),
        },
    }


def aggregate(ctx: AggregateContext[OrderProbeConfig]) -> dict[str, Any]:
    """The BENCHMARK.aggregate hook (stages.aggregate.run_aggregate)."""
    roles, source = role_records(ctx.scoring_meta, ctx.params)
    return aggregate_scores(
        ctx.scores, ctx.items, ctx.config.score, roles, source, ctx.scoring_meta.get("notes"), ctx.config.generate
    )
