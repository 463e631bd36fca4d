"""params.yaml section `benchmarks.g-idiomalign`."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Literal

from pydantic import Field, field_validator, model_validator

from ...core.paths import ANNOTATIONS
from ...core.schema import Key, Name, StrictModel, no_repeats
from ...params.sections import BenchmarkSection, RenderSection, sample_field, settings_field


class GIdiomAlignBuild(StrictModel):
    repair_mojibake: bool = Field(
        True,
        description="Every French idiom in the release is UTF-8 decoded as Latin-1 (`Ã©` for `é`); re-decode "
        "those byte sequences in idioms, glosses, options and MCQ instructions. false keeps the released text.",
    )


RenderSetting = Literal["mcq", "no_gloss", "with_gloss"]
RENDER_SETTINGS: list[RenderSetting] = ["mcq", "no_gloss", "with_gloss"]


class GIdiomAlignSample(StrictModel):
    """Which items are rendered: a seeded draw per translation direction (the same Task 2 items
    in no_gloss and with_gloss, so the two conditions stay paired)."""

    seed: int = Field(0, description="Seed of the draw (sha256-derived per task and direction).")
    mcq_per_direction: int | None = Field(None, ge=1, description="Task 1 items per direction; null: all.")
    generation_per_direction: int | None = Field(
        None, ge=1, description="Task 2 items per direction (both conditions); null: all."
    )


class GIdiomAlignRender(RenderSection):
    """`idiombench render g-idiomalign`: Task 1 with the released instruction, Task 2 with the
    paper's appendix G prompts."""

    settings: list[RenderSetting] = settings_field(
        RENDER_SETTINGS,
        "mcq (Task 1, task `mcq`), no_gloss and with_gloss (Task 2, task `gloss_generation`).",
    )
    additional_pairs: bool = Field(
        False,
        description="Also render Task 2 over the 42 additional language pairs (task gloss_generation_additional, "
        "reported separately, never mixed into the main tables).",
    )
    sample: GIdiomAlignSample | None = sample_field()


class GIdiomAlignScore(StrictModel):
    """`idiombench score/aggregate g-idiomalign` (docs/METRICS.md#2-g-idiomalign; score.py, aggregate.py)."""

    duplicate_option_target_correct: bool = Field(
        True,
        description="Task 1: on the MCQ items whose options contain the target idiom twice (48 of them name the "
        "copy at a distractor slot), count an answer whose option text equals the target idiom as correct. "
        "false: only the released correct_option counts.",
    )
    similarity_role: str = Field(
        "embedder_multilingual",
        description="Task 2: the scoring role (kind embedder) whose cosine of output and gold target idiom gives "
        "MeanSim and Acc@t (paper: Qwen3-Embedding-8B).",
    )
    thresholds: list[float] = Field(
        default_factory=lambda: [0.65, 0.70, 0.75, 0.80],
        description="Task 2 Acc@t thresholds: a prediction counts when cosine >= t (paper table 14).",
    )
    headline_thresholds: list[float] = Field(
        default_factory=lambda: [0.70, 0.80],
        description="The thresholds of the paper's table 4 (a subset of `thresholds`); the last one also gives "
        "table 4's With - No-gloss delta column.",
    )
    exact_match_casefold: bool = Field(
        True, description="Task 2 EM compares the cleaned idioms after NFKC and case folding (false: NFKC only)."
    )
    bleu_tokenize: dict[str, str] = Field(
        default_factory=lambda: {"zh": "zh", "ja": "ja-mecab", "th": "char"},
        description="sacrebleu BLEU tokenizer per target language code; a tokenizer whose dependencies are not "
        "installed (ja-mecab needs mecab-python3 + ipadic) falls back to `char`, recorded in the provenance.",
    )
    bleu_tokenize_default: str = Field("13a", description="sacrebleu tokenizer for the other target languages.")
    surface_aggregation: Literal["sentence", "corpus"] = Field(
        "sentence",
        description="Task 2 BLEU / chrF per direction: sentence = mean of the items' sentence scores (BLEU with "
        "effective n-gram order, so a correct idiom shorter than 4 tokens scores 100); corpus = sacrebleu corpus "
        "score of the direction's outputs. Either way macro-averaged over directions.",
    )

    @model_validator(mode="after")
    def _check_thresholds(self) -> GIdiomAlignScore:
        if not self.thresholds or any(not 0.0 < t <= 1.0 for t in self.thresholds):
            raise ValueError("thresholds must be a non-empty list of values in (0, 1]")
        if len(set(self.thresholds)) != len(self.thresholds):
            raise ValueError("thresholds: listed more than once")
        missing = [t for t in self.headline_thresholds if t not in self.thresholds]
        if missing or not self.headline_thresholds:
            raise ValueError(f"headline_thresholds must be a non-empty subset of thresholds (not in it: {missing})")
        return self


class GIdiomAlignConstruct(StrictModel):
    """`idiombench construct g-idiomalign` (construct.py): the paper's alignment pipeline (section 3.1,
    appendix C) rebuilt from the released glosses and compared with the release."""

    role: str = Field(
        "embedder_en",
        description="Scoring role (kind embedder) that embeds the glosses. The glosses are English, so the English "
        "role (paper: text-embedding-3-large) is the default.",
    )
    k: int = Field(10, ge=1, description="Top-k candidates retrieved per idiom in each direction (paper: 10).")
    bins: int = Field(10, ge=1, description="Equal-width bins over [min, max] of a pair's MNN scores (paper: 10).")
    batch_size: int = Field(
        1024, ge=1, description="Source rows per similarity-matrix product in the neighbour search."
    )
    pool: Literal["pair", "language"] = Field(
        "pair",
        description="Candidate pool of a language: pair = the entries of the pair file being rebuilt; language = "
        "the language's entries in every released pair file (larger, closer to the paper's Wiktionary pool).",
    )
    pairs: list[Name] | None = Field(
        None,
        description="Language pairs to rebuild, by release file stem (e.g. Chinese_English); null: every pair "
        "of aligned_pairs.",
    )

    @field_validator("pairs")
    @classmethod
    def _unique_pairs(cls, pairs: list[str] | None) -> list[str] | None:
        return None if pairs is None else no_repeats(pairs)


class GIdiomAlignAttention(StrictModel):
    """`idiombench attention g-idiomalign --model <m>` (attention.py; docs/METRICS.md#25-attention-diagnostics):
    the paper's attention diagnostics (section 5.3, appendices L-M) on a seeded sample of Task 2 items, each in
    both gloss conditions, for models on the hf backend (others are recorded as skipped)."""

    enabled: bool = Field(
        False, description="Run the attention stage (a model not on the hf backend is skipped, with the reason)."
    )
    models: list[Key] | None = Field(
        None,
        description="Models measured (names under `models:`); null: every model with weights transformers "
        "loads (hf backend; vllm on at most one GPU). The others are recorded as skipped.",
    )
    items: int | None = Field(
        8,
        ge=1,
        description="Task 2 items drawn (seeded) among those generated in every rendered condition; each is "
        "measured in both conditions (2 x items forward passes). null: every item (the paper annotated 200 per "
        "condition).",
    )
    seed: int = Field(0, description="Seed of the item draw.")
    correct_threshold: float | None = Field(
        None,
        gt=0.0,
        le=1.0,
        description="Correct = Task 2 similarity to the gold idiom >= this (an automatic stand-in "
        "for the paper's human label Type 1); null: the last of score.headline_thresholds.",
    )
    annotations: str | None = Field(
        None,
        description="Optional CSV of human labels with columns prompt_id,label (the paper's Types 0-4: 0 invalid, "
        "excluded; 1 correct; 2 literal; 3 meaning-correct but non-idiomatic; 4 other wrong), relative to the project "
        "root and inside data/annotations/ (a tracked input of the attention stage: editing the file reruns it). "
        "Given: it decides Correct / Wrong and the error types of table 8; without it table 8 is not computed.",
    )
    top_k_heads: int = Field(
        10, ge=1, description="Per-sample top-k heads by idiom-span head score (appendix L: k = 10)."
    )
    salient_heads: int = Field(
        50, ge=1, description="Salient head set: the m most frequent per-sample top-k heads (m = 50)."
    )
    salient_layers: int = Field(
        10, ge=1, description="Salient layer set: the n layers holding most per-sample top-k heads (n = 10)."
    )
    min_group: int = Field(
        3,
        ge=1,
        description="Smallest group size for a Mann-Whitney or Kruskal-Wallis test; smaller groups are reported "
        "with their n and no test.",
    )

    @field_validator("models")
    @classmethod
    def _unique_models(cls, models: list[str] | None) -> list[str] | None:
        return None if models is None else no_repeats(models)

    @field_validator("annotations")
    @classmethod
    def _tracked_annotations(cls, path: str | None) -> str | None:
        # Outside data/annotations/ neither DVC nor Snakemake would see the file change.
        if path is not None:
            posix = PurePosixPath(path)
            parts = posix.parts
            if posix.is_absolute() or ".." in parts or parts[:2] != ANNOTATIONS.parts or len(parts) < 3:
                raise ValueError(
                    f"{path!r} must be a file under {ANNOTATIONS.as_posix()}/, relative to the project "
                    "root (that directory is a tracked input of the attention stage)"
                )
        return path


class GIdiomAlignConfig(BenchmarkSection):
    render: GIdiomAlignRender = GIdiomAlignRender()
    build: GIdiomAlignBuild = GIdiomAlignBuild()
    score: GIdiomAlignScore = GIdiomAlignScore()
    # `construct` in params; the attribute has another name because pydantic models have a construct() method
    construction: GIdiomAlignConstruct = Field(default_factory=GIdiomAlignConstruct, alias="construct")
    attention: GIdiomAlignAttention = GIdiomAlignAttention()
