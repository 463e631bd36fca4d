"""`idiombench aggregate orderprobe`: the score rows of one model -> the metrics JSON.

Every metric value is its spec's (specs.py, placed by metrics.evaluate.place); this module adds
what is not a metric: the counts, the reason for each value not computed, the category means,
the scorer roles each metric depends on, and the provenance.

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
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypedDict

import pandas as pd

from ...core import paths
from ...core.io import read_json_object, sha256_file
from ...metrics import evaluate
from ...metrics.body import RoleRecord, SampleCoverage
from ...scoring.roles import role_records
from . import expressions
from .build import permutation_patterns
from .config import OrderProbeScore
from .neural import NLI_ROLE, ROLES, roles_for_language
from .results import DataHashes, RenderSample, TemplateHashes, expression_coverage
from .score import MAIN_PASS, SORT_KEY
from .specs import (
    CANONICAL_INPUTS,
    IS_CANONICAL,
    PERTURBED,
    S_ACC_COMPONENTS,
    TASK,
    Inputs,
    categories,
    scopes,
    semantic,
)

if TYPE_CHECKING:
    from ...core.items import Item
    from ...generation.config import GenerateConfig
    from ..contexts import AggregateContext
    from .config import OrderProbeConfig

Metrics = dict[str, float | None]  # a group's metrics in the body: key -> value (None: not computed)


def semantic_rows(frame: pd.DataFrame, cfg: OrderProbeScore) -> pd.DataFrame:
    """Rows that enter the semantic aggregates (specs.semantic): with a reference (unless
    no_reference_items is zero) and, by default, not an identity input (paper eq. 3)."""
    return frame[semantic(cfg)(frame)]


# ---------------------------------------------------------------------------- one group of rows


def explain_missing(out: Metrics, not_computed: dict[str, str], semantic: pd.DataFrame, inputs: str) -> None:
    """A reason for every mean that is None and has none yet."""
    for name in ("s_acc_mean", "s_info", "s_logic", *(f"{c}_mean" for c in S_ACC_COMPONENTS)):
        if name not in out or out[name] is not None or name in not_computed:
            continue
        if semantic.empty:
            not_computed[name] = f"no {inputs} input with a reference gloss"
        else:
            not_computed[name] = "the scorer role of this term is not computed in this profile"


class Described(TypedDict, total=False):
    """What describe_group (all three) and describe_canonical (no category_means) add to a group."""

    counts: dict[str, int]
    not_computed: dict[str, str]
    category_means: dict[str, float]


class PassOptions(TypedDict):
    """What describe_group and describe_canonical are told of a setting's passes."""

    nli_computed: bool
    consistency_present: bool
    missing_pass: str


def missing_pass_reason(pass_name: str, setting: str, generate: GenerateConfig | None = None) -> str:
    """Why a setting's generations hold no samples of the consistency pass."""
    if generate is not None and pass_name not in generate.extra:
        return f"no `{pass_name}` pass is configured (benchmarks.orderprobe.generate.extra)"
    restricted = generate.extra[pass_name].settings if generate is not None else None
    if restricted is not None and setting not in restricted:
        return (
            f"the `{pass_name}` pass runs on {', '.join(restricted)} only "
            f"(benchmarks.orderprobe.generate.extra.{pass_name}.settings)"
        )
    return f"no `{pass_name}` pass in this setting's generations"


def sampled(rows: pd.DataFrame, cfg: OrderProbeScore, inputs: Inputs) -> pd.DataFrame:
    """The consistency pass's rows of the measured inputs that enter S_Cons."""
    samples = rows[rows["pass"] == cfg.s_cons.pass_name]
    return semantic_rows(samples[inputs.select(samples)], cfg)


def not_computed_logic(out: Metrics, not_computed: dict[str, str], nli_computed: bool) -> None:
    """S_Logic is not computed where its scorer role is not (whatever the score rows hold)."""
    if not nli_computed:
        out["s_logic"] = None
        not_computed["s_logic"] = f"scorer role {NLI_ROLE} is not computed in this profile"


def describe_group(
    rows: pd.DataFrame,
    out: Metrics,
    cfg: OrderProbeScore,
    *,
    nli_computed: bool,
    consistency_present: bool,
    missing_pass: str = "no `consistency` pass in this setting's generations",
) -> Described:
    """The counts, the reasons for what is not computed and the category means of one group of
    score rows (a setting, a language, a category) whose table-3 metrics `out` holds (the specs'
    values, evaluate.place)."""
    main = rows[rows["pass"] == MAIN_PASS]
    perturbed = main[~main["is_canonical"]]
    canonical = main[main["is_canonical"]]
    semantic = semantic_rows(perturbed, cfg)
    not_computed: dict[str, str] = {}
    not_computed_logic(out, not_computed, nli_computed)

    cons_expressions = int(sampled(rows, cfg, PERTURBED)["expression_id"].nunique())
    if not consistency_present:
        not_computed["s_cons"] = missing_pass
    elif cons_expressions == 0:
        not_computed["s_cons"] = "no sampled explanation of a perturbed input with a reference"

    if cfg.compatibility == "released":
        rob_counts = expressions.released(semantic, semantic_rows(canonical, cfg), cfg.s_rob).counts
    else:
        rob_counts = expressions.expressions(semantic, semantic_rows(canonical, cfg), cfg.s_rob).counts()
    mu, uncategorised = expressions.expressions(semantic, None, cfg.s_rob).category_means()
    if out["s_seq"] is None:
        not_computed["s_seq"] = "no expression with a canonical input scoring S_orig > 0"
    if out["s_struct"] is None:
        not_computed["s_struct"] = f"needs two or more syntactic categories; {len(mu)} present"
    if out["s_rob"] is None:
        not_computed["s_rob"] = "; ".join(not_computed[k] for k in ("s_seq", "s_struct") if k in not_computed)

    explain_missing(out, not_computed, semantic, "perturbed")
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
    return {"counts": counts, "not_computed": not_computed, "category_means": mu}


def describe_canonical(
    rows: pd.DataFrame,
    out: Metrics,
    cfg: OrderProbeScore,
    *,
    nli_computed: bool,
    consistency_present: bool,
    missing_pass: str = "no `consistency` pass in this setting's generations",
) -> Described:
    """Table 11's counts and reasons (its metrics `out`: the canonical specs' values)."""
    main = rows[(rows["pass"] == MAIN_PASS) & rows["is_canonical"]]
    semantic = semantic_rows(main, cfg)
    not_computed = {
        "s_rob": "S_Rob measures degradation from the canonical input; over canonical inputs only S_struct is defined"
    }
    not_computed_logic(out, not_computed, nli_computed)
    if not consistency_present:
        not_computed["s_cons"] = missing_pass
    if out["s_struct"] is None:
        mu, _ = expressions.expressions(semantic, None, cfg.s_rob).category_means()
        not_computed["s_struct"] = f"needs two or more syntactic categories; {len(mu)} present"
    explain_missing(out, not_computed, semantic, "canonical")
    cons_expressions = int(sampled(rows, cfg, CANONICAL_INPUTS)["expression_id"].nunique())
    counts = {"canonical_inputs": len(main), "semantic_rows": len(semantic), "s_cons_expressions": cons_expressions}
    return {"counts": counts, "not_computed": not_computed}


def pattern_counts(rows: pd.DataFrame) -> dict[str, int]:
    """Figure 4's counts of one permutation pattern's perturbed inputs (its Recovery: the specs')."""
    inputs = rows[(rows["pass"] == MAIN_PASS) & ~IS_CANONICAL(rows)]
    return {"inputs": len(inputs), "identity_inputs": int(inputs["is_identity"].sum())}


# ---------------------------------------------------------------------------- provenance


def depends_on(rows: pd.DataFrame, cfg: OrderProbeScore) -> dict[str, list[str]]:
    """Which scorer roles each metric of a group of rows depends on: the S_Acc roles of the
    languages whose rows enter the semantic aggregates (none for Japanese, which has no
    references), and the NLI role for S_Logic."""
    languages = sorted(semantic_rows(rows, cfg)["language"].unique().tolist())
    s_acc = sorted({role for language in languages for role in roles_for_language(language)}, key=ROLES.index)
    return {"s_acc_mean": s_acc, "s_cons": s_acc, "s_rob": s_acc, "s_logic": [NLI_ROLE]}


def template_hashes(frame: pd.DataFrame) -> TemplateHashes:
    known = frame.dropna(subset=["template_id"]).drop_duplicates(["template_id", "template_hash"])
    hashes = {str(r["template_id"]): str(r["template_hash"]) for r in known.to_dict("records")}
    return TemplateHashes(
        templates=dict(sorted(hashes.items())), rows_without_template=int(frame["template_id"].isna().sum())
    )


def data_hashes() -> DataHashes:
    record = paths.acquired_record("orderprobe")
    items = paths.task_items("orderprobe", "restore")
    stats = paths.build_stats("orderprobe")
    return DataHashes(
        acquired_record=str(record),
        acquired_sha256=sha256_file(record) if record.exists() else None,
        items_sha256=sha256_file(items) if items.exists() else None,
        build_stats_sha256=sha256_file(stats) if stats.exists() else None,
    )


def render_sample() -> RenderSample | None:
    """The render stage's record of the sample it drew (None: render_stats.json is not there)."""
    render_stats = paths.prompts_dir("orderprobe") / "render_stats.json"
    if not render_stats.exists():
        return None
    recorded = read_json_object(render_stats).get("sample") or {}
    return RenderSample.model_validate(recorded["restore"]) if recorded.get("restore") else None


def coverage(
    frames: Mapping[str, pd.DataFrame], items: Mapping[str, Mapping[str, Item]], sample: RenderSample | None
) -> dict[str, SampleCoverage]:
    """What was scored against what exists: expressions per setting, per language (parts)."""
    available: dict[str, set[str]] = {}
    for item in items.get("restore", {}).values():
        available.setdefault(item.language, set()).add(item.meta["expression_id"])
    scored = {
        setting: {
            str(lang): int(n) for lang, n in frame.groupby("language")["expression_id"].nunique().sort_index().items()
        }
        for setting, frame in frames.items()
    }
    totals = {lang: len(ids) for lang, ids in sorted(available.items())}
    return expression_coverage(scored, totals, sample.selection if sample is not None else None)


# ---------------------------------------------------------------------------- the hook


def aggregate_scores(
    scores: Mapping[str, pd.DataFrame],
    items: Mapping[str, Mapping[str, Item]],
    cfg: OrderProbeScore,
    roles: Mapping[str, RoleRecord],
    roles_source: str,
    scoring_notes: list[str] | None = None,
    generate: GenerateConfig | None = None,
) -> dict[str, object]:
    """The metrics body: every metric value from the specs (specs.py, evaluate.place), the
    counts, reasons, category means, role dependencies and provenance from here."""
    nli = roles.get(NLI_ROLE)
    nli_computed = nli is not None and nli.status != "not_computed"
    frames = {s: f.sort_values(SORT_KEY, kind="stable").reset_index(drop=True) for s, f in sorted(scores.items())}
    settings: dict[str, Any] = {s: {"task": TASK, "metrics": {}} for s in frames}
    breakdowns: dict[str, dict[str, Any]] = {
        "per_language": {s: {} for s in frames},
        "per_category": {s: {} for s in frames},
        "per_pattern": {s: {} for s in frames},
        "canonical": {s: {"metrics": {}} for s in frames},
    }
    evaluate.place({"settings": settings, "breakdowns": breakdowns}, scopes(frames, cfg))
    templates: dict[str, TemplateHashes] = {}
    sample = render_sample()
    for setting, frame in frames.items():
        options: PassOptions = {
            "nli_computed": nli_computed,
            "consistency_present": bool((frame["pass"] == cfg.s_cons.pass_name).any()),
            "missing_pass": missing_pass_reason(cfg.s_cons.pass_name, setting, generate),
        }
        whole = settings[setting]
        whole.update(describe_group(frame, whole["metrics"], cfg, **options))
        whole["depends_on"] = depends_on(frame, cfg)
        whole["languages"] = sorted(frame["language"].unique().tolist())
        for language, part in breakdowns["per_language"][setting].items():
            subset = frame[frame["language"] == language]
            part.update(describe_group(subset, part["metrics"], cfg, **options), depends_on=depends_on(subset, cfg))
        for category in categories(frame):
            part = breakdowns["per_category"][setting][category]
            subset = frame[frame["category"] == category]
            part.update(describe_group(subset, part["metrics"], cfg, **options), depends_on=depends_on(subset, cfg))
        for pattern in permutation_patterns():
            breakdowns["per_pattern"][setting][pattern].update(pattern_counts(frame[frame["pattern"] == pattern]))
        canon = breakdowns["canonical"][setting]
        canon.update(describe_canonical(frame, canon["metrics"], cfg, **options), depends_on=depends_on(frame, cfg))
        templates[setting] = template_hashes(frame)
    return {
        "settings": settings,
        "breakdowns": breakdowns,
        "provenance": {
            "roles": {role: record.model_dump(mode="json") for role, record in roles.items()},
            "roles_source": roles_source,
            "scoring_notes": list(scoring_notes or []),
            "score_params": json.loads(cfg.model_dump_json()),
            "template_hashes": {s: t.model_dump(mode="json") for s, t in templates.items()},
            "data": data_hashes().model_dump(mode="json"),
            "coverage": {s: c.model_dump(mode="json") for s, c in coverage(scores, items, sample).items()},
            "render_sample": sample.model_dump(mode="json") if sample is not None else None,
        },
    }


def aggregate(ctx: AggregateContext[OrderProbeConfig]) -> dict[str, object]:
    """The BENCHMARK.aggregate hook (stages.aggregate.run_aggregate)."""
    roles, source = role_records(ctx.scoring_meta, ctx.params.scoring, ROLES)
    return aggregate_scores(
        ctx.scores, ctx.items, ctx.config.score, roles, source, ctx.scoring_meta.get("notes"), ctx.config.generate
    )
