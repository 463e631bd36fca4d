"""OrderProbe's metrics (paper tables 3, 4 and 11, figures 4 and 5), each declared once, and
where they are evaluated.

Over a scope's main-pass PERTURBED inputs (the up to 23 permutations of each expression),
resampled over EXPRESSIONS (the cluster: a model that knows an idiom restores most of its
permutations, so an expression's inputs are drawn together):

- Recovery (a share; table 3 prints it × 100): the headline follows score.recovery (the default
  or strict test, identity inputs included or not); every variant is a metric too (both tests,
  with and without identity inputs, over the identity inputs alone, over the canonical inputs);
- S_Acc^mean and its components' means, S_Info, S_Logic (scores in [0, 1]): means over the
  inputs with a reference gloss (no_reference_items) that are not identity inputs (identity_inputs;
  the released code knows none);
- S_Cons, E_perf, R_sens: means over expressions of each expression's eqs. 9-11, from the
  `consistency` pass's samples of its inputs (expressions.consistency);
- S_seq, MDR, MDA: means over the expressions whose canonical input scores S_orig > 0 of each
  one's eqs. 12-14 (expressions.expressions); S_struct from the category means of the
  expressions' S_Acc^mean; S_Rob = 2·S_seq·S_struct / (S_seq + S_struct): one formula over the
  per-expression sums, which calls the paper's scalar formulas (metrics.s_struct,
  metrics.harmonic_mean, metrics.clip01) for the value and for every bootstrap replicate. The
  released code's S_seq (compatibility: released) is per permutation pattern, not per
  expression: it, MDR, MDA and S_Rob then have no interval;
- the format-failure rate over every main-pass output.

Every mean adds with math.fsum (Summation.EXACT), as the aggregate always has.

Scopes: each setting (settings.<s>.metrics: table 3), its languages (breakdowns.per_language:
table 4) and syntactic categories (breakdowns.per_category: figure 5) with the same metrics; its
permutation patterns (breakdowns.per_pattern: figure 4, the Recovery variants); and its canonical
inputs (breakdowns.canonical: table 11, the same diagnostics over the canonical inputs, declared
by the same factories: `canonical_specs`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ...core.generation_types import MAIN_PASS
from ...metrics import SCORE, SHARE, MetricSpec, Resampling, Rows, Scope, Unit
from ...statistics.formulas import Custom, Features, Mean, Statistic, Summation, divide
from . import metrics
from .build import permutation_patterns
from .expressions import Expressions, category_order, consistency, expressions, released

if TYPE_CHECKING:
    from .config import OrderProbeScore

TASK = "restore"
EXPRESSION = Resampling("expression", "expression_id")
# scope kinds: a group of inputs (a setting, a language, a category), a permutation pattern,
# the canonical inputs
INPUTS, PATTERN, CANONICAL = "inputs", "pattern", "canonical"
SETTING_KINDS = frozenset({INPUTS})
RECOVERY_KINDS = frozenset({INPUTS, PATTERN})
CANONICAL_KINDS = frozenset({CANONICAL})
S_ACC_COMPONENTS = ("ce", "bert", "sts", "lex", "f_beta")

Predicate = Callable[[pd.DataFrame], "pd.Series[bool]"]


def _flag(column: str) -> Predicate:
    return lambda rows: rows[column].astype(bool)


def _not(predicate: Predicate) -> Predicate:
    return lambda rows: ~predicate(rows)


def _all(*predicates: Predicate) -> Predicate:
    def both(rows: pd.DataFrame) -> pd.Series[bool]:
        keep = pd.Series(True, index=rows.index)
        for predicate in predicates:
            keep &= predicate(rows)
        return keep

    return both


IS_CANONICAL = _flag("is_canonical")
IS_PERTURBED = _not(IS_CANONICAL)
IS_IDENTITY = _flag("is_identity")


def semantic(cfg: OrderProbeScore) -> Predicate:
    """The rows that enter the semantic aggregates: with a reference (unless no_reference_items
    is zero) and, by default, not an identity input (paper eq. 3; canonical rows are never
    identity inputs; the released code knows none, so released mode keeps them)."""
    parts: list[Predicate] = []
    if cfg.no_reference_items == "exclude":
        parts.append(lambda rows: rows["n_references"] > 0)
    if cfg.identity_inputs == "exclude" and cfg.compatibility != "released":
        parts.append(_not(IS_IDENTITY))
    return _all(*parts)


@dataclass(frozen=True)
class Inputs:
    """Which inputs a family of specs measures: the perturbed ones (tables 3 and 4, figure 5) or
    the canonical ones (table 11)."""

    name: str
    select: Predicate
    kinds: frozenset[str]


PERTURBED = Inputs("perturbed", IS_PERTURBED, SETTING_KINDS)
CANONICAL_INPUTS = Inputs("canonical", IS_CANONICAL, CANONICAL_KINDS)


# ---------------------------------------------------------------------------- per-expression statistics


def _per_expression(ids: list[str], values: list[float | None], kind: str = "mean") -> Features:
    """Features of a mean over expressions: (value, 1) per expression that has a value, (0, 0)
    per one without; the value's sums with math.fsum."""
    used = [v for v in values if v is not None]
    features = np.array([[v, 1.0] if v is not None else [0.0, 0.0] for v in values], dtype=np.float64)
    return Features(features.reshape(len(values), 2), np.array([math.fsum(used), float(len(used))]), kind, list(ids))


def _mean_of_sums(sums: np.ndarray, scale: float) -> np.ndarray:
    return divide(sums[:, 0], sums[:, 1]) * scale


def _seq_of(total: float, count: float, clip_mean: bool) -> float | None:
    """S_seq from the summed per-expression values: their mean, clipped to [0, 1] where the paper
    clips the mean (s_seq_clip: mean); None without an expression."""
    if count <= 0:
        return None
    value = total / count
    return metrics.clip01(value) if clip_mean else value


def _struct_of(sums: list[float], counts: list[float]) -> float | None:
    """S_struct (metrics.s_struct) of the category means present (count > 0), in category order."""
    return metrics.s_struct([sums[k] / counts[k] for k in range(len(counts)) if counts[k] > 0])


def _rows(values: np.ndarray, formula: Callable[[list[float]], float | None]) -> np.ndarray:
    """A scalar formula on each row of summed features (NaN where it is None)."""
    out = np.full(len(values), np.nan)
    for row, sums in enumerate(values.tolist()):
        found = formula(sums)
        out[row] = math.nan if found is None else found
    return out


@dataclass(frozen=True)
class Robustness:
    """S_seq, MDR, MDA, S_struct and S_Rob over a scope's main-pass rows with a reference gloss:
    the measured inputs' per-expression table (expressions.expressions, S_orig from the
    canonical inputs), or the released code's arithmetic (no per-expression form)."""

    inputs: Inputs
    cfg: OrderProbeScore

    @property
    def is_released(self) -> bool:
        return self.cfg.compatibility == "released"

    @property
    def clip_mean(self) -> bool:
        return not self.is_released and self.cfg.s_rob.s_seq_clip == "mean"

    def table(self, rows: pd.DataFrame) -> Expressions:
        measured = rows[self.inputs.select(rows)]
        reference = rows[IS_CANONICAL(rows) & ~self.inputs.select(rows)] if self.inputs is PERTURBED else None
        return expressions(measured, reference, self.cfg.s_rob)

    def released(self, rows: pd.DataFrame) -> tuple[float | None, float | None, float | None]:
        found = released(rows[IS_PERTURBED(rows)], rows[IS_CANONICAL(rows)], self.cfg.s_rob)
        return found.s_seq, found.mdr, found.mda

    def part(self, which: str) -> Custom:
        """S_seq ("seq"), MDR ("mdr") or MDA ("mda"): a mean over the expressions used."""

        def build(rows: pd.DataFrame) -> Features:
            table = self.table(rows)
            if self.is_released:
                value = dict(zip(("seq", "mdr", "mda"), self.released(rows), strict=True))[which]
                features = _per_expression(table.ids, [None] * len(table.ids))
                point = np.array([0.0, 0.0] if value is None else [value, 1.0])
                return Features(features.values, point, "released", features.units)
            if which == "seq":
                return _per_expression(table.ids, table.seq)
            parts = [None if d is None else (d.mdr if which == "mdr" else d.mda) for d in table.degradation]
            return _per_expression(table.ids, parts)

        if which != "seq":
            return Custom(build, _mean_of_sums)
        clip_mean = self.clip_mean
        return Custom(build, lambda sums, scale: _rows(sums, lambda s: _scaled(_seq_of(s[0], s[1], clip_mean), scale)))

    def _categories(self, table: Expressions) -> tuple[list[str], np.ndarray, np.ndarray]:
        """The categories present, (n, 2K) features (S_Acc^mean x membership, membership) and
        the value's sums (math.fsum per category, members)."""
        present, member = table.category_members()
        means = np.asarray(table.means, dtype=np.float64).reshape(-1, 1)
        features = np.hstack([member * means, member])
        sums = [
            math.fsum(v for v, m in zip(table.means, member[:, k].tolist(), strict=True) if m)
            for k in range(len(present))
        ]
        return present, features, np.array(sums + member.sum(axis=0).tolist(), dtype=np.float64)

    def struct(self) -> Custom:
        """S_struct from the category means μ_k (eq. 16, released normalisation)."""

        def build(rows: pd.DataFrame) -> Features:
            table = self.table(rows)
            present, features, point = self._categories(table)
            return Features(features, point, f"s_struct:{'|'.join(present)}", table.ids)

        def formula(sums: np.ndarray, scale: float) -> np.ndarray:
            k = sums.shape[1] // 2
            return _rows(sums, lambda s: _scaled(_struct_of(s[:k], s[k:]), scale))

        return Custom(build, formula)

    def rob(self) -> Custom:
        """S_Rob = harmonic mean of S_seq and S_struct (eq. 17), one formula of the sums
        (S_seq's sum and count, then the K category sums and K counts)."""
        clip_mean = self.clip_mean

        def build(rows: pd.DataFrame) -> Features:
            table = self.table(rows)
            present, categories, category_sums = self._categories(table)
            seq = _per_expression(table.ids, [None] * len(table.ids) if self.is_released else table.seq)
            point = seq.point
            if self.is_released:
                value = self.released(rows)[0]
                point = np.array([0.0, 0.0] if value is None else [value, 1.0])
            return Features(
                np.hstack([seq.values, categories]),
                np.concatenate([point, category_sums]),
                f"s_rob:{'|'.join(present)}",
                table.ids,
            )

        def formula(sums: np.ndarray, scale: float) -> np.ndarray:
            k = (sums.shape[1] - 2) // 2

            def s_rob(s: list[float]) -> float | None:
                value = metrics.harmonic_mean(_seq_of(s[0], s[1], clip_mean), _struct_of(s[2 : 2 + k], s[2 + k :]))
                return _scaled(value, scale)

            return _rows(sums, s_rob)

        return Custom(build, formula)


def _scaled(value: float | None, scale: float) -> float | None:
    return None if value is None else value * scale


def consistency_mean(which: str) -> Custom:
    """S_Cons, E_perf or R_sens: a mean over expressions of eqs. 9-11 (expressions.consistency)."""

    def build(rows: pd.DataFrame) -> Features:
        found = consistency(rows)
        return _per_expression(found.ids, [float(getattr(c, which)) for c in found.values])

    return Custom(build, _mean_of_sums)


# ---------------------------------------------------------------------------- the specs


def _spec(
    key: str,
    label: str,
    statistic: Statistic,
    unit: Unit,
    rows: Rows,
    kinds: frozenset[str],
    *,
    higher_is_better: bool = True,
    headline: bool = False,
    paper: bool = False,
    binary: bool = False,
    no_interval: str | None = None,
) -> MetricSpec:
    return MetricSpec(
        key,
        label,
        statistic,
        unit,
        higher_is_better=higher_is_better,
        rows=rows,
        kinds=kinds,
        resampling=EXPRESSION,
        binary=binary,
        headline=headline,
        paper=paper,
        no_interval=no_interval,
    )


def _main(*predicates: Predicate) -> Rows:
    return Rows((MAIN_PASS,), where=_all(*predicates))


def recovery_column(mode: str) -> str:
    return "recovered" if mode == "default" else "recovered_strict"


def recovery_specs(cfg: OrderProbeScore) -> tuple[MetricSpec, ...]:
    """Recovery: the headline (score.recovery) and every variant, shares of the inputs recovered."""

    def share(key: str, label: str, column: str, rows: Rows, kinds: frozenset[str] = SETTING_KINDS) -> MetricSpec:
        return _spec(key, label, Mean(column, summation=Summation.EXACT), SHARE, rows, kinds, binary=True)

    headline = [IS_PERTURBED] + ([_not(IS_IDENTITY)] if cfg.recovery.headline_identity_inputs == "exclude" else [])
    return (
        share("recovery_default", "Recovery (default)", "recovered", _main(IS_PERTURBED), RECOVERY_KINDS),
        share("recovery_strict", "Recovery (strict)", "recovered_strict", _main(IS_PERTURBED), RECOVERY_KINDS),
        share(
            "recovery_default_excl_identity",
            "Recovery (default, excl. identity)",
            "recovered",
            _main(IS_PERTURBED, _not(IS_IDENTITY)),
            RECOVERY_KINDS,
        ),
        share(
            "recovery_strict_excl_identity",
            "Recovery (strict, excl. identity)",
            "recovered_strict",
            _main(IS_PERTURBED, _not(IS_IDENTITY)),
            RECOVERY_KINDS,
        ),
        share("recovery_identity_inputs", "Recovery (identity inputs)", "recovered", _main(IS_PERTURBED, IS_IDENTITY)),
        share("recovery_canonical", "Recovery (canonical inputs)", "recovered", _main(IS_CANONICAL)),
        share("recovery_canonical_strict", "Recovery (canonical, strict)", "recovered_strict", _main(IS_CANONICAL)),
        MetricSpec(
            "recovery",
            "Recovery",
            Mean(recovery_column(cfg.recovery.headline_mode), summation=Summation.EXACT),
            SHARE,
            rows=_main(*headline),
            kinds=SETTING_KINDS,
            resampling=EXPRESSION,
            headline=True,
        ),
    )


def diagnostics(cfg: OrderProbeScore, inputs: Inputs) -> tuple[MetricSpec, ...]:
    """Table 3's diagnostics over `inputs` (table 11's over the canonical inputs, where S_Rob and
    its S_seq are not defined: S_struct stands in)."""
    measured = _main(inputs.select, semantic(cfg))
    samples = Rows((cfg.s_cons.pass_name,), where=_all(inputs.select, semantic(cfg)))
    paper = inputs is PERTURBED

    def mean(key: str, label: str, column: str, *, is_paper: bool = paper) -> MetricSpec:
        return _spec(key, label, Mean(column, summation=Summation.EXACT), SCORE, measured, inputs.kinds, paper=is_paper)

    def over_expressions(
        key: str, label: str, higher: bool, *, headline: bool = False, is_paper: bool = False
    ) -> MetricSpec:
        statistic = consistency_mean(key)
        return _spec(
            key,
            label,
            statistic,
            SCORE,
            samples,
            inputs.kinds,
            higher_is_better=higher,
            headline=headline,
            paper=is_paper,
        )

    out = [
        mean("s_acc_mean", "S_Acc^mean", "s_acc"),
        mean("s_info", "S_Info", "s_info"),
        mean("s_logic", "S_Logic", "s_logic"),
        over_expressions("s_cons", "S_Cons", True, is_paper=paper),
        # a headline since the first headline_metrics (r"e_perf"): the parent run, headline.json, the summary page
        over_expressions("e_perf", "E_perf", False, headline=paper),
        over_expressions("r_sens", "R_sens", False),
    ]
    if paper:
        out += [
            mean(f"{c}_mean", f"{c.upper() if c != 'f_beta' else 'Fβ'} (mean)", c, is_paper=False)
            for c in S_ACC_COMPONENTS
        ]
    robustness = Robustness(inputs, cfg)
    out.append(_spec("s_struct", "S_struct", robustness.struct(), SCORE, measured, inputs.kinds))
    if not paper:
        return tuple(out)

    def released_reason(label: str, what: str = "it") -> str | None:
        """Why a metric of released mode's S_seq has no interval (None: paper mode, it has one)."""
        if not robustness.is_released:
            return None
        return (
            f"{label}: the released code (compatibility: released) computes {what} per permutation pattern, "
            "not per expression, so it has no resampling unit"
        )

    with_reference = _main(semantic(cfg))  # the perturbed inputs and their canonical inputs (S_orig)
    for key, label, which, higher in (
        ("s_seq", "S_seq", "seq", True),
        ("mdr", "MDR", "mdr", False),
        ("mda", "MDA", "mda", False),
    ):
        out.append(
            _spec(
                key,
                label,
                robustness.part(which),
                SCORE,
                with_reference,
                inputs.kinds,
                higher_is_better=higher,
                no_interval=released_reason(label),
            )
        )
    out.append(
        _spec(
            "s_rob",
            "S_Rob",
            robustness.rob(),
            SCORE,
            with_reference,
            inputs.kinds,
            paper=True,
            no_interval=released_reason("S_Rob", "its S_seq"),
        )
    )
    return tuple(out)


def format_spec() -> MetricSpec:
    return _spec(
        "format_failure_rate",
        "Format failures",
        Mean(lambda rows: ~rows["format_ok"].astype(bool), summation=Summation.EXACT),
        SHARE,
        _main(),
        SETTING_KINDS,
        higher_is_better=False,
        binary=True,
    )


def specs(cfg: OrderProbeScore) -> tuple[MetricSpec, ...]:
    """Table 3's metrics (settings.<s>.metrics; per language, per category and, for the Recovery
    variants, per pattern too)."""
    return (*recovery_specs(cfg), *diagnostics(cfg, PERTURBED), format_spec())


def canonical_specs(cfg: OrderProbeScore) -> tuple[MetricSpec, ...]:
    """Table 11's: Recovery (the headline test; both tests) and the diagnostics over the canonical
    inputs (breakdowns.canonical.<s>.metrics)."""
    share = Summation.EXACT

    def recovery(key: str, column: str) -> MetricSpec:
        return _spec(
            key, "Recovery", Mean(column, summation=share), SHARE, _main(IS_CANONICAL), CANONICAL_KINDS, binary=True
        )

    return (
        recovery("recovery", recovery_column(cfg.recovery.headline_mode)),
        recovery("recovery_default", "recovered"),
        recovery("recovery_strict", "recovered_strict"),
        *diagnostics(cfg, CANONICAL_INPUTS),
    )


# ---------------------------------------------------------------------------- the scopes


def categories(frame: pd.DataFrame) -> list[str]:
    return sorted({str(c) for c in frame["category"].dropna().unique()}, key=category_order)


def setting_scopes(
    setting: str, frame: pd.DataFrame, table3: tuple[MetricSpec, ...], table11: tuple[MetricSpec, ...]
) -> list[Scope]:
    """One setting's scopes: its rows (settings.<s>.metrics), each language's and category's
    (breakdowns.per_language / per_category.<s>.<part>.metrics), each permutation pattern's
    (breakdowns.per_pattern.<s>.<pattern>) and the canonical inputs' (breakdowns.canonical.<s>.metrics)."""

    def part(name: str, rows: pd.DataFrame, path: tuple[str, ...], kind: str = INPUTS) -> Scope:
        chosen = table11 if kind == CANONICAL else table3
        return Scope(f"{setting}/{name}", setting, rows, ("breakdowns", *path), kind, chosen, task=TASK, breakdown=True)

    out = [Scope(setting, setting, frame, ("settings", setting, "metrics"), INPUTS, table3, task=TASK)]
    for language in sorted(frame["language"].unique().tolist()):
        rows = frame[frame["language"] == language]
        out.append(part(language, rows, ("per_language", setting, language, "metrics")))
    for category in categories(frame):
        rows = frame[frame["category"] == category]
        out.append(part(f"category/{category}", rows, ("per_category", setting, category, "metrics")))
    for pattern in permutation_patterns():
        rows = frame[frame["pattern"] == pattern]
        out.append(part(f"pattern/{pattern}", rows, ("per_pattern", setting, pattern), PATTERN))
    out.append(part("canonical", frame[IS_CANONICAL(frame)], ("canonical", setting, "metrics"), CANONICAL))
    return out


# the score columns the specs, their outcomes and their resampling read
READ = (
    *("prompt_id", "sample_index", "pass", "item_id", "expression_id", "language", "category", "pattern"),
    *("is_canonical", "is_identity", "n_references", "recovered", "recovered_strict", "format_ok"),
    *("s_acc", *S_ACC_COMPONENTS, "s_info", "s_logic"),
)


def lean(frame: pd.DataFrame) -> pd.DataFrame:
    """The columns the specs read, as NumPy arrays (text as Python objects, None where missing) in
    one block per type: a scope's rows are selected once per metric, and a selection copies every
    column block (an arrow string's take is the slow part); the values are the score table's."""

    def column(values: pd.Series) -> pd.Series:
        if pd.api.types.is_bool_dtype(values) or pd.api.types.is_numeric_dtype(values):
            return pd.Series(values.to_numpy(), index=frame.index)
        # dtype object: pandas would infer its string dtype from Python strings again
        return pd.Series(values.to_numpy(dtype=object, na_value=None), index=frame.index, dtype=object)

    return pd.DataFrame({c: column(frame[c]) for c in READ if c in frame.columns}, index=frame.index)


def scopes(scores: Mapping[str, pd.DataFrame], cfg: OrderProbeScore) -> list[Scope]:
    """Every setting's scopes (setting_scopes), settings in name order."""
    table3, table11 = specs(cfg), canonical_specs(cfg)
    return [
        scope
        for setting, frame in sorted(scores.items())
        for scope in setting_scopes(setting, lean(frame), table3, table11)
    ]
