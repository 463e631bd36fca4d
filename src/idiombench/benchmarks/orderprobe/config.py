"""params.yaml section `benchmarks.orderprobe`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ...core.schema import Name, StrictModel
from ...generation.config import GenerateConfig, SamplingConfig
from ...params.sections import BenchmarkSection, RenderSection, sample_field, settings_field

Language = Literal["zh-CN", "zh-TW", "ja", "ko"]
ALL_LANGUAGES: list[Language] = ["zh-CN", "zh-TW", "ja", "ko"]


class OrderProbeBuild(StrictModel):
    languages: list[Language] = Field(default_factory=lambda: list(ALL_LANGUAGES))
    dedupe: bool = Field(
        False,
        description="Merge repeated expressions of a language (references united). Default keeps the "
        "released rows, matching the paper's 3,543 expressions.",
    )
    placeholder_references: list[str] = Field(
        default_factory=lambda: ["zdic解释"],
        description="Reference cells that are placeholders, not glosses; removed from the reference list.",
    )


RenderSetting = Literal["zero_shot", "cot", "three_shot"]
RENDER_SETTINGS: list[RenderSetting] = ["zero_shot", "cot", "three_shot"]


class OrderProbeSample(StrictModel):
    """Which items are rendered: whole expressions (all 24 inputs each, or the canonical form and a
    seeded subset of the permutations), drawn per language."""

    seed: int = Field(0, description="Seed of the draw (sha256-derived per language; independent of Python's hash).")
    expressions_per_language: int | None = Field(
        None,
        ge=1,
        description="Expressions drawn per language, each with all its inputs (23 permutations + "
        "the canonical form). null: every expression.",
    )
    permutations_per_expression: int | None = Field(
        None,
        ge=1,
        le=23,
        description="Of each drawn expression's 23 permutations, this many (seeded per "
        "expression); the canonical form is always kept. null: all 23. Per-expression metrics are then means "
        "over fewer permutations, and figure 4 shows the patterns drawn.",
    )


class OrderProbeRender(RenderSection):
    """`idiombench render orderprobe`: the paper's prompt settings (appendix C, tables 8-10)."""

    settings: list[RenderSetting] = settings_field(
        RENDER_SETTINGS,
        "zero_shot (table 8), cot (table 10), three_shot (table 9); one prompts file each.",
    )
    join_system_messages: bool = Field(
        False,
        description="three_shot has two system messages (table 9); true joins them with a newline into one, for "
        "chat templates that accept a single system message. Default keeps the table's two messages.",
    )
    sample: OrderProbeSample | None = sample_field()


class RecoveryScore(StrictModel):
    """Recovery (docs/METRICS.md#12-recovery): both modes and both identity treatments are always reported;
    these choose the headline number of table 3 / table 4 / figure 5."""

    headline_mode: Literal["default", "strict"] = Field(
        "default",
        description="default: the canonical expression occurs in the NFKC-normalised, whitespace-free output; "
        "strict: the explanation's first CJK/kana/Hangul run of 4+ characters starts with it.",
    )
    headline_identity_inputs: Literal["include", "exclude"] = Field(
        "include",
        description="Perturbed inputs equal to the canonical form (expressions with a repeated character): include "
        "(the paper's 3,543 x 23 inputs) or exclude them from the headline Recovery.",
    )


class SAccScore(StrictModel):
    """S_Acc = w_ce*CE + w_rep*mean(BERT, STS, LEX) + w_fbeta*Fβ (paper eq. 8)."""

    weight_ce: float = Field(0.5, ge=0)
    weight_representation: float = Field(0.3, ge=0)
    weight_f_beta: float = Field(0.2, ge=0)
    beta: float = Field(2.0, gt=0, description="Fβ over content tokens; β > 1 weighs recall more.")
    reference_aggregation: Literal["max", "mean"] = Field(
        "max", description="How each term is aggregated over an item's references."
    )
    polarity_halving: bool = Field(
        False,
        description="The released code's rule and word lists (polarity.py): halve Fβ when the explanation's "
        "polarity conflicts with every reference. Always on under compatibility: released.",
    )

    @model_validator(mode="after")
    def _some_weight(self) -> SAccScore:
        if self.weight_ce + self.weight_representation + self.weight_f_beta <= 0:
            raise ValueError("at least one S_Acc weight must be positive")
        return self


class SLogicScore(StrictModel):
    """S_Logic (paper appendix B.2): NLI entailment, contradiction-aware, max over references."""

    directions: Literal["both", "explanation_to_reference"] = Field(
        "both",
        description="both: max entailment of reference->explanation and explanation->reference (paper B.2); "
        "explanation_to_reference: P(e => r) alone. Neither is the released code, which computes P(r => e) "
        "without the contradiction penalty against the whole reference cell: compatibility: released.",
    )
    entailment_threshold: float = Field(
        0.05, ge=0, le=1, description="Above this entailment the contradiction penalty applies."
    )
    contradiction_weight: float = Field(
        0.5, ge=0, description="λ: score = max(0, entailment - λ * P(contradiction)) above the threshold."
    )
    reference_aggregation: Literal["max", "mean"] = "max"


class SInfoScore(StrictModel):
    """S_Info = BP * ROUGE-L precision (paper appendix A.7)."""

    bp_mode: Literal["paper", "bleu"] = Field(
        "paper",
        description="paper: penalise explanations longer than the reference; bleu: BLEU's penalty on shorter ones, "
        "in tokens per reference (the released code's direction only: it counts characters against the whole "
        "cell, which compatibility: released reproduces).",
    )
    reference_aggregation: Literal["max", "mean"] = "max"


class SConsScore(StrictModel):
    pass_name: Name = Field(
        "consistency",
        description="The generate pass whose n samples per input give S_max / S_mean (paper appendix A.3).",
    )


class SRobScore(StrictModel):
    """S_Rob (paper appendix A.4-A.5)."""

    weight_mdr: float = Field(0.5, ge=0, description="α in S_seq = 1 - (α*MDR + β*MDA).")
    weight_mda: float = Field(0.5, ge=0, description="β in S_seq = 1 - (α*MDR + β*MDA).")
    s_seq_clip: Literal["per_expression", "mean"] = Field(
        "mean",
        description="Where S_seq is clipped to [0, 1]: mean (default, paper eqs. 12-14): per-expression values "
        "unclipped, only the final value clipped, the expressions outside [0, 1] counted; per_expression: each "
        "expression's value clipped before averaging.",
    )


Compatibility = Literal["paper", "released"]


class OrderProbeScore(StrictModel):
    """`idiombench score orderprobe` and its aggregation (docs/METRICS.md#1-orderprobe)."""

    compatibility: Compatibility = Field(
        "paper",
        description="paper: the paper's equations with the options below; released: the authors' released code "
        "exactly (docs/METRICS.md#19-compatibility-modes: references split on || ; ； / 、, jieba words and the "
        "released stop words for LEX/Fβ in every language, polarity halving, S_Acc without renormalisation, S_Info in "
        "characters against the whole cell, S_Logic = P(reference => explanation), released MDA), which overrides "
        "s_acc.polarity_halving, s_logic.*, s_info.bp_mode and s_rob.s_seq_clip.",
    )
    identity_inputs: Literal["exclude", "include"] = Field(
        "exclude",
        description="Perturbed inputs equal to the canonical form (π(x) = x): exclude (paper eq. 3) or include them "
        "in MDR, MDA, S_seq, S_Acc^mean, S_Cons, S_Logic and S_Info. Recovery's headline is "
        "recovery.headline_identity_inputs.",
    )

    recovery: RecoveryScore = RecoveryScore()
    s_acc: SAccScore = SAccScore()
    s_logic: SLogicScore = SLogicScore()
    s_info: SInfoScore = SInfoScore()
    s_cons: SConsScore = SConsScore()
    s_rob: SRobScore = SRobScore()
    no_reference_items: Literal["exclude", "zero"] = Field(
        "exclude",
        description="Items without a reference gloss (the whole Japanese release) score 0 per row (flagged); "
        "exclude: the semantic aggregates (S_Acc, S_Cons, S_Logic, S_Rob, S_Info) leave them out and count them; "
        "zero: they enter the means as 0. Recovery needs no reference and always counts them.",
    )


class OrderProbeConfig(BenchmarkSection):
    render: OrderProbeRender = OrderProbeRender()
    build: OrderProbeBuild = OrderProbeBuild()
    generate: GenerateConfig = GenerateConfig(extra={"consistency": SamplingConfig(n=5, temperature=0.7)})
    score: OrderProbeScore = OrderProbeScore()
