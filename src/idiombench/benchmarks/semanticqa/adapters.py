"""How each SemanticQA task's released records map to items: the one place to look.

Every instance file is the authors' `results/<task>/<task>_0-shot_DeepSeek-R1.json` without
its `prediction`, i.e. the records exactly as their `semantic_qa/data_utils.py` loaded them.
The gold fields follow the authors' scoring code (`semantic_qa/main.py`): `target` for the
multiple-choice tasks, `label` for LCC, the phrase for extraction, `paraphrase` (IEI, one
reference), `paraphrases` (LCI, five) and `references` (NCI, 11-167) for interpretation.

Template placeholders that are not released field names are added to `fields`:
- `context` of IEI is `context_idiomatic` (the authors' construct_prompt);
- `noun compound` is `noun_compound`, `vmwe-definition` is `oracle`;
- `example` is the item written as one demonstration in the authors' per-task format:
  a k-shot {{example}} is the concatenation of the k drawn exemplars' `example` fields;
- LCC's `taxonomy` / `taxonomy_<k>shot` and LCE's `relation` / `label_examples` come
  from the taxonomy files (see build.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal["mcq", "label", "extraction", "interpretation"]
Record = Mapping[str, Any]
OPTION_LETTERS = ("A", "B", "C", "D")


@dataclass(frozen=True)
class TaskAdapter:
    """task: the instance file stem and the task name in params/paths.
    code: the paper's abbreviation. kind: how the gold is scored (docs/METRICS.md#32-tasks-and-metrics).
    input_field: the main text (`Item.input`). gold_field: where the gold lives.
    question_fields: what the prompt shows; two records with equal values ask the same question.
    phrase_field / context_field: the target phrase and the sentence it occurs in (checked).
    options_line: how the authors appended the options to `context` (multiple choice).
    aliases: template placeholder -> released field. prompt_stem: prompts/<stem>_{zero,few}shot.txt.
    extra_templates: other released templates of the task (e.g. LCE with oracle relation).
    demonstration: the item as one few-shot exemplar (authors' construct_prompt format).
    meta_fields: released fields copied into meta for breakdowns.
    paper_count: table 1 test size (None where the paper gives only the VMWE total)."""

    task: str
    code: str
    phrase_type: str
    kind: Kind
    input_field: str
    gold_field: str
    question_fields: tuple[str, ...]
    phrase_field: str | None
    context_field: str | None
    prompt_stem: str
    demonstration: Callable[[Record], str]
    aliases: Mapping[str, str] = field(default_factory=dict)
    options_line: str | None = None
    extra_templates: tuple[str, ...] = ()
    meta_fields: tuple[str, ...] = ()
    vmwe_type: str | None = None
    extension: bool = False
    paper_count: int | None = None

    @property
    def required_fields(self) -> tuple[str, ...]:
        """Fields without which no prompt can be written (their absence is a DataError)."""
        names = [self.input_field, *self.question_fields, *self.aliases.values()]
        if self.kind == "mcq":
            names += OPTION_LETTERS
        return tuple(dict.fromkeys(n for n in names if n != self.gold_field))


def _vmwe(task: str, vmwe_type: str | None, stem: str, *, extension: bool = False) -> TaskAdapter:
    # only the oracle-schema templates show the definition ({{vmwe-definition}})
    aliases = {"vmwe-definition": "oracle"} if stem == "vmwe_extraction_oracle" else {}
    return TaskAdapter(
        task=task,
        code={"LVC": "LVE", "VID": "VIE", "VPC": "VPE"}.get(vmwe_type or "", "VMWE"),
        phrase_type="vmwe",
        kind="extraction",
        input_field="context",
        gold_field="vmwe",
        question_fields=("context",),
        phrase_field="vmwe",
        context_field="context",
        prompt_stem=stem,
        aliases=aliases,
        demonstration=lambda r: f"\nContext: {r['context']}\nExtracted VMWE (phrase only): {r['vmwe']}\n",
        vmwe_type=vmwe_type,
        extension=extension,
    )


def _extraction(task: str, code: str, phrase: str, answer_label: str, paper_count: int) -> TaskAdapter:
    """A task that extracts the `phrase` field from `context` (IEE, NCE); the exemplar gives the
    context and, after `answer_label`, the phrase."""
    return TaskAdapter(
        task=task,
        code=code,
        phrase_type=phrase,
        kind="extraction",
        input_field="context",
        gold_field=phrase,
        question_fields=("context",),
        phrase_field=phrase,
        context_field="context",
        prompt_stem=task,
        demonstration=lambda r: f"\nContext: {r['context']}\n{answer_label}: {r[phrase]}\n",
        paper_count=paper_count,
    )


ADAPTERS: dict[str, TaskAdapter] = {
    a.task: a
    for a in [
        TaskAdapter(
            task="idiom_detection",
            code="IED",
            phrase_type="idiom",
            kind="mcq",
            input_field="context",
            gold_field="target",
            question_fields=("context", "idiom"),
            phrase_field="idiom",
            context_field="context",
            prompt_stem="idiom_detection",
            options_line="\nA: {A}\tB: {B}\tC: {C}\tD: {D}",
            demonstration=lambda r: f"\nIdiom: {r['idiom']}\nContext: {r['context']}\nOutput: {r['target']}\n",
            meta_fields=("idiom",),
            paper_count=273,
        ),
        _extraction("idiom_extraction", "IEE", "idiom", "Output", 447),
        TaskAdapter(
            task="idiom_paraphrase",
            code="IEI",
            phrase_type="idiom",
            kind="interpretation",
            input_field="context_idiomatic",
            gold_field="paraphrase",
            question_fields=("idiom", "context_idiomatic"),
            phrase_field="idiom",
            context_field="context_idiomatic",
            prompt_stem="idiom_paraphrase",
            aliases={"context": "context_idiomatic"},
            demonstration=lambda r: (
                f"\nIdiom: {r['idiom']}\nContext: {r['context_idiomatic']}\nOutput: {r['paraphrase']}\n"
            ),
            meta_fields=("idiom",),
            paper_count=818,
        ),
        TaskAdapter(
            task="collocation_categorization",
            code="LCC",
            phrase_type="collocation",
            kind="label",
            input_field="context",
            gold_field="label",
            question_fields=("context", "collocation"),
            phrase_field="collocation",
            context_field="context",
            prompt_stem="collocation_categorization",
            demonstration=lambda r: f"\nInput: {r['context']}; {r['collocation']}\nOutput: {r['label']}\n",
            meta_fields=("collocation", "base", "collocate", "label_id"),
            paper_count=305,
        ),
        TaskAdapter(
            task="collocation_extraction",
            code="LCE",
            phrase_type="collocation",
            kind="extraction",
            input_field="context",
            gold_field="collocation",
            question_fields=("context",),
            phrase_field="collocation",
            context_field="context",
            prompt_stem="collocation_extraction",
            extra_templates=("collocation_extraction_w_oracle",),
            # The authors' LCE exemplars are bare collocations of the item's relation, each followed by " ; ".
            demonstration=lambda r: f"{r['collocation']} ; ",
            meta_fields=("label", "keyword", "value"),
            paper_count=305,
        ),
        TaskAdapter(
            task="collocation_interpretation",
            code="LCI",
            phrase_type="collocation",
            kind="interpretation",
            input_field="context",
            gold_field="paraphrases",
            question_fields=("context", "collocation"),
            phrase_field="collocation",
            context_field="context",
            prompt_stem="collocation_interpretation",
            demonstration=lambda r: (
                f"\nCollocation: {r['collocation']}\nContext: {r['context']}\nInterpretation: {r['paraphrases'][0]}\n"
            ),
            meta_fields=("collocation", "label", "label_id"),
            paper_count=305,
        ),
        TaskAdapter(
            task="noun_compound_compositionality",
            code="NCC",
            phrase_type="noun_compound",
            kind="mcq",
            input_field="context",
            gold_field="target",
            question_fields=("context", "noun_compound"),
            phrase_field="noun_compound",
            context_field="context",
            prompt_stem="noun_compound_compositionality",
            aliases={"noun compound": "noun_compound"},
            options_line="\nOptions: A: {A}\tB: {B}\tC: {C}\tD: {D}",
            demonstration=lambda r: (
                f"\nNoun compound: {r['noun_compound']}\nContext: {r['context']}\nOutput: {r['target']}\n"
            ),
            meta_fields=("noun_compound",),
            paper_count=242,
        ),
        _extraction("noun_compound_extraction", "NCE", "noun_compound", "Noun compound", 720),
        TaskAdapter(
            task="noun_compound_interpretation",
            code="NCI",
            phrase_type="noun_compound",
            kind="interpretation",
            input_field="noun_compound",
            gold_field="references",
            question_fields=("noun_compound",),
            phrase_field=None,
            context_field=None,
            prompt_stem="noun_compound_interpretation",
            aliases={"noun compound": "noun_compound"},
            demonstration=lambda r: f"\nNoun compound: {r['noun_compound']}\nOutput: {r['references'][0]}\n",
            meta_fields=("noun_compound",),
            paper_count=110,
        ),
        _vmwe("vmwe_extraction_LVC", "LVC", "vmwe_extraction"),
        _vmwe("vmwe_extraction_VID", "VID", "vmwe_extraction"),
        _vmwe("vmwe_extraction_VPC", "VPC", "vmwe_extraction"),
        _vmwe("vmwe_extraction_oracle", None, "vmwe_extraction_oracle", extension=True),
        _vmwe("vmwe_extraction_wo-vmwe-definition", None, "vmwe_extraction_wo-vmwe-definition", extension=True),
    ]
}

# Paper table 1 gives VMWE only as a total (LVC 180 + VID 105 + VPC 190, docs/METRICS.md#31-data-and-build).
PAPER_VMWE_TOTAL = 475

# PARSEME v1.3 English labels of the release, and the three misspellings found in the
# LVC file; the oracle-schema sets hold the same sentences with the standard labels.
VMWE_LABELS = ("LVC.full", "LVC.cause", "VID", "VPC.full", "VPC.semi")
VMWE_LABEL_FIXES = {"LVC.fulll": "LVC.full", "LVC.fullD": "LVC.full", "LVC.causeD": "LVC.cause"}
