"""params.yaml section `benchmarks.semanticqa`."""

from __future__ import annotations

import re
from typing import Literal, get_args

from pydantic import Field, field_validator

from ...core.schema import Name, StrictModel, no_repeats
from ...params.sections import BenchmarkSection, RenderSection, sample_field, settings_field

MainTask = Literal[
    "idiom_detection",
    "idiom_extraction",
    "idiom_paraphrase",
    "collocation_categorization",
    "collocation_extraction",
    "collocation_interpretation",
    "noun_compound_compositionality",
    "noun_compound_extraction",
    "noun_compound_interpretation",
    "vmwe_extraction_LVC",
    "vmwe_extraction_VID",
    "vmwe_extraction_VPC",
]
# The paper's table 1 test sets, one instance file each.
TASKS: tuple[MainTask, ...] = get_args(MainTask)
SHOT_KEY = re.compile(r"[0-9]+-shot")
# VMWE sets of the oracle-schema study (paper §4.6, table 7): optional extensions (docs/METRICS.md#31-data-and-build).
EXTENSION_TASKS: tuple[str, ...] = ("vmwe_extraction_oracle", "vmwe_extraction_wo-vmwe-definition")


class LCCTaxonomy(StrictModel):
    """Which release taxonomy files collocation categorization (LCC) and extraction (LCE) use."""

    labels: str = Field(
        "taxonomy/SEM_REL_CATEGORY_8.txt",
        description="The label set gold labels are validated against (its ID column must equal the records' "
        "label_id); its glosses fill LCE's {{relation}} and its examples LCE's label exemplars.",
    )
    prompt_by_shots: dict[str, str] = Field(
        default_factory=lambda: {
            "0-shot": "taxonomy/SEM_REL_CATEGORY_8_0-shots.txt",
            "3-shot": "taxonomy/SEM_REL_CATEGORY_8_3-shots.txt",
            "5-shot": "taxonomy/SEM_REL_CATEGORY_8_5-shots.txt",
        },
        description="Taxonomy text that fills {{taxonomy}} in a k-shot LCC prompt (item field `taxonomy` for "
        "0-shot, `taxonomy_<k>shot` otherwise), rendered as the authors' load_taxonomy does. Keys: `<k>-shot`.",
    )

    @field_validator("prompt_by_shots")
    @classmethod
    def _shot_keys(cls, mapping: dict[str, str]) -> dict[str, str]:
        bad = [key for key in mapping if not SHOT_KEY.fullmatch(key)]
        if bad:
            raise ValueError(f"keys must look like 0-shot, 3-shot: got {', '.join(map(repr, bad))}")
        return mapping

    def files_by_shots(self) -> dict[int, str]:
        return dict(sorted((int(key.split("-")[0]), path) for key, path in self.prompt_by_shots.items()))


class SemanticQABuild(StrictModel):
    tasks: list[MainTask] = Field(default_factory=lambda: list(TASKS))
    extensions: bool = Field(
        False,
        description="Also build the oracle-schema VMWE sets (vmwe_extraction_oracle, "
        "vmwe_extraction_wo-vmwe-definition) as their own tasks.",
    )
    lcc_taxonomy: LCCTaxonomy = LCCTaxonomy()

    @field_validator("tasks")
    @classmethod
    def _no_repeats(cls, tasks: list[str]) -> list[str]:
        repeated = sorted({t for t in tasks if tasks.count(t) > 1})
        if repeated:
            raise ValueError(f"tasks listed more than once: {', '.join(repeated)}")
        return tasks

    def selected_tasks(self) -> list[str]:
        return [*self.tasks, *(EXTENSION_TASKS if self.extensions else ())]


class SemanticQASample(StrictModel):
    """Which items are rendered: a seeded draw per task (the same items in every k-shot setting).
    Exemplars are always drawn from the task's FULL pool, whatever the sample."""

    seed: int = Field(0, description="Seed of the item draw (sha256-derived per task).")
    items_per_task: int | None = Field(None, ge=1, description="Items per task; null: all.")


class SemanticQARender(RenderSection):
    """`idiombench render semanticqa`: the released templates (data/raw/semanticqa/prompts), k-shot."""

    settings: list[str] = settings_field(
        ("0-shot", "3-shot", "5-shot"),
        "`<k>-shot`: k = 0 uses the task's *_zeroshot.txt template, k > 0 its *_fewshot.txt template "
        "with k exemplars in {{example}}.",
    )
    exemplar_seed: int = Field(
        0,
        description="Seed of the exemplar draw: one seeded order of the pool per item, so the 3 exemplars of "
        "3-shot are the first 3 of 5-shot.",
    )
    lce_exemplars: Literal["pool", "taxonomy"] = Field(
        "pool",
        description="collocation_extraction (LCE) exemplars. pool: k other LCE items drawn like every task's "
        "(their collocations, each followed by ' ; ', the authors' LCE example format). taxonomy: the authors' "
        "code (semantic_qa/data_utils.py construct_prompt): the first k example collocations of the item's own "
        "relation from the label taxonomy (item field label_examples); exemplar_ids then name those "
        "taxonomy entries.",
    )
    sample: SemanticQASample | None = sample_field()

    # replaces RenderSection's check (same name): the shape first, then the repeats
    @field_validator("settings")
    @classmethod
    def _unique_settings(cls, settings: list[str]) -> list[str]:
        bad = [s for s in settings if not SHOT_KEY.fullmatch(s)]
        if bad:
            raise ValueError(f"settings must look like 0-shot, 3-shot: got {', '.join(map(repr, bad))}")
        return no_repeats(settings)


class SemanticQASequential(StrictModel):
    """Sequential task compositions (paper tables 5 and 6): one output holds an extracted
    phrase and a judgement or an interpretation. Settings whose name starts with
    `setting_prefix` (the authors' result files say `multi_step_<k>-shot`) are scored as the
    composition of their task: idiom_detection -> IE extraction + judgement,
    noun_compound_compositionality -> NC extraction + judgement, idiom_paraphrase -> IE
    extraction + interpretation, collocation_interpretation -> LC extraction +
    interpretation. (LC extraction + categorization at 4/8/16 classes used item sets that
    are not released; see score.py.)"""

    enabled: bool = Field(False, description="Score `<setting_prefix><k>-shot` settings as sequential compositions.")
    setting_prefix: Name = Field("multi_step_", description="Name prefix of the sequential settings.")


class SemanticQAScaling(StrictModel):
    """LCC category scaling (paper figure 6, table 13): accuracy of collocation_categorization
    runs over n-class subsets of the taxonomy, averaged over class combinations. Settings
    named `scaling_<n>_<combination>_<k>-shot` (the authors' files: `sacling_...`) are such
    runs. The paper's scaling item sets (30 per class, 16-class taxonomy) are not released,
    and render does not write n-class prompts: see score.py."""

    enabled: bool = Field(False, description="Aggregate `scaling_<n>_<combination>_<k>-shot` settings (figure 6).")
    setting_pattern: str = Field(
        r"(?:scaling|sacling)_(?P<classes>\d+)_(?P<combination>\d+)_(?P<shots>\d+-shot)",
        description="Regular expression (full match) with groups classes, combination, shots.",
    )

    @field_validator("setting_pattern")
    @classmethod
    def _groups(cls, pattern: str) -> str:
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        missing = {"classes", "combination", "shots"} - set(compiled.groupindex)
        if missing:
            raise ValueError(f"needs the named groups {sorted(missing)}")
        return pattern


class SemanticQAScore(StrictModel):
    """`idiombench score semanticqa` (docs/METRICS.md#32-tasks-and-metrics): how outputs are read and compared."""

    compatibility: Literal["paper", "released"] = Field(
        "paper",
        description="paper: this project's reading (parse.py) and the options below. released: the authors' "
        "released scorer exactly (semantic_qa/eval.py compute_metric as main.py calls it: the stored text, "
        "stripped; LCC F1 over the prediction strings; an empty response not scored), overriding "
        "extraction_match and count_format_deviations (docs/METRICS.md#35-compatibility-modes).",
    )
    extraction_match: Literal["strict", "released_code"] = Field(
        "strict",
        description="strict (paper §3.4): the normalised output equals a normalised gold phrase; partial spans "
        "do not count. released_code: also count the authors' scorer's containment patterns "
        "(semantic_qa/eval.py exact-match: `is <gold>` or `<gold> the|in|it|this ...` inside the output).",
    )
    count_format_deviations: bool = Field(
        True,
        description="true: a value read from an output that did not follow the requested format (ok false, e.g. "
        "an option's text instead of its letter) is compared with the gold; false: such rows count as wrong.",
    )
    rouge_stemmer: bool = Field(False, description="Porter stemming in ROUGE-L (evaluate's rouge default: off).")
    sequential: SemanticQASequential = SemanticQASequential()
    lcc_scaling: SemanticQAScaling = SemanticQAScaling()


class SemanticQAConfig(BenchmarkSection):
    render: SemanticQARender = SemanticQARender()
    build: SemanticQABuild = SemanticQABuild()
    score: SemanticQAScore = SemanticQAScore()
