"""SemanticQA: one task per released instance file (instances/<task>.jsonl).

Each record becomes one item through its task's adapter (adapters.py). Nothing is
dropped; every problem is recorded in build_stats.json (docs/METRICS.md#31-data-and-build):
- a line that is not a JSON object, a missing or empty prompt field (context, idiom,
  options ...), or a field of the wrong type: DataError naming the file and line;
- a missing or empty gold: flagged (`missing_gold` / `empty_gold`), item kept with
  meta.no_gold, so the scorer can count it; empty strings inside a reference list are
  removed from `references` (`empty_reference_removed`; LCI has 9 trailing ones);
- duplicate ids (item ids then fall back to line numbers), records identical apart
  from `id`, and records asking the same question: flagged;
- LCC/LCE/LCI labels are validated against the label taxonomy; VMWE labels against
  the PARSEME labels (three misspellings normalised in meta, flagged);
- an extraction gold that does not occur verbatim in its context (VMWE golds are often
  lemmatised or discontinuous), options that are not the ones appended to the context:
  flagged (informational; meta.phrase_in_context is set for every task with a phrase).
Every {{placeholder}} of the task's released zero- and few-shot templates must be
fillable from every item's fields; the build checks it and lists them in the stats.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...core.errors import DataError
from ...core.items import Item
from ...data.readers import read_jsonl, require_keys
from ..base import BuildResult, BuildStats
from .adapters import ADAPTERS, OPTION_LETTERS, PAPER_VMWE_TOTAL, VMWE_LABEL_FIXES, VMWE_LABELS, TaskAdapter
from .config import LCCTaxonomy, SemanticQABuild
from .taxonomy import Taxonomy, prompt_text, read_taxonomy
from .templates import SETTINGS, placeholders, shot_variant, template_path

BENCHMARK = "semanticqa"
LANGUAGE = "en"
LABELLED_COLLOCATION_TASKS = ("collocation_categorization", "collocation_extraction", "collocation_interpretation")


@dataclass(frozen=True)
class TaxonomyResources:
    """What the collocation tasks need from taxonomy/: the label set and the prompt texts."""

    labels: Taxonomy
    prompt_texts: dict[int, str]
    all_files: dict[str, Taxonomy]  # every taxonomy/*.txt, for the membership report

    @classmethod
    def load(cls, raw_dir: Path, cfg: LCCTaxonomy) -> TaxonomyResources:
        def existing(relative: str) -> Path:
            path = raw_dir / relative
            if not path.is_file():
                raise DataError(path, "taxonomy file not found", expected="a declared taxonomy/*.txt file")
            return path

        labels = read_taxonomy(existing(cfg.labels))
        texts = {k: prompt_text(existing(p), k) for k, p in cfg.files_by_shots().items()}
        files = {f"taxonomy/{p.name}": read_taxonomy(p) for p in sorted((raw_dir / "taxonomy").glob("*.txt"))}
        return cls(labels, texts, files)

    def positions(self, label: str) -> dict[str, int]:
        """Row position (0-based, among relations) of `label` in every taxonomy file holding it."""
        return {name: t.labels.index(label) for name, t in self.all_files.items() if label in t.labels}


def _example(adapter: TaskAdapter, line: int, record: dict[str, object], **extra: object) -> dict[str, object]:
    out = {"task": adapter.task, "line": line}
    if "id" in record:
        out["id"] = record["id"]
    return {**out, **extra}


def _require_text(path: Path, line: int, record: dict[str, object], name: str) -> str:
    value = record[name]
    if not isinstance(value, str):
        raise DataError(path, f"field {name!r} is a {type(value).__name__}", row=line, expected="a string")
    if not value.strip():
        raise DataError(path, f"field {name!r} is empty", row=line, expected="non-empty text")
    return value


def read_gold(
    adapter: TaskAdapter, path: Path, line: int, record: dict[str, object], stats: BuildStats
) -> tuple[str | None, tuple[str, ...]]:
    """(gold text, references). A missing or empty gold is flagged and gives (None, ())."""
    name = adapter.gold_field
    if name not in record:
        stats.flag("missing_gold", _example(adapter, line, record, field=name))
        return None, ()
    value = record[name]
    if isinstance(value, list):
        if adapter.kind != "interpretation":
            raise DataError(path, f"gold field {name!r} is a list", row=line, expected="a string")
        if not all(isinstance(v, str) for v in value):
            raise DataError(path, f"gold field {name!r} holds non-strings", row=line, expected="a list of strings")
        kept = tuple(v for v in value if v.strip())
        if len(kept) < len(value) and kept:
            stats.flag("empty_reference_removed", _example(adapter, line, record, removed=len(value) - len(kept)))
        if not kept:
            stats.flag("empty_gold", _example(adapter, line, record, field=name))
            return None, ()
        return None, kept
    if not isinstance(value, str):
        raise DataError(path, f"gold field {name!r} is a {type(value).__name__}", row=line, expected="a string")
    if not value.strip():
        stats.flag("empty_gold", _example(adapter, line, record, field=name))
        return None, ()
    if adapter.kind == "interpretation":
        return None, (value,)
    return value, ((value,) if adapter.kind == "extraction" else ())


def choose_item_ids(
    adapter: TaskAdapter, rows: list[tuple[int, dict[str, Any]]], stats: BuildStats
) -> tuple[list[str], str]:
    """The records' `id` when every record has one and they are unique, else line numbers."""
    ids = [record.get("id") for _, record in rows]
    if all(i is None for i in ids):
        return [f"L{line:04d}" for line, _ in rows], "line (the file has no id field)"
    usable = [isinstance(i, str) and i.strip() != "" for i in ids]
    for (line, record), ok in zip(rows, usable, strict=True):
        if not ok:
            stats.flag("missing_id", {"task": adapter.task, "line": line, "id": record.get("id")})
    first: dict[str, int] = {}
    duplicated = False
    for (line, record), ok in zip(rows, usable, strict=True):
        if not ok:
            continue
        if record["id"] in first:
            duplicated = True
            stats.flag(
                "duplicate_id",
                {"task": adapter.task, "line": line, "id": record["id"], "first_line": first[record["id"]]},
            )
        else:
            first[record["id"]] = line
    if all(usable) and not duplicated:
        return [str(i) for i in ids], "id"
    reason = "duplicate ids" if duplicated else "some records lack an id"
    return [f"L{line:04d}" for line, _ in rows], f"line ({reason}; see flagged)"


def flag_duplicates(
    adapter: TaskAdapter, rows: list[tuple[int, dict[str, object]]], stats: BuildStats
) -> dict[int, int]:
    """Records identical apart from `id`, and records asking the same question; line -> first line."""
    first_record: dict[str, int] = {}
    first_question: dict[str, tuple[int, object]] = {}
    duplicate_of: dict[int, int] = {}
    for line, record in rows:
        content = json.dumps({k: v for k, v in record.items() if k != "id"}, sort_keys=True, ensure_ascii=False)
        question = json.dumps([record.get(f) for f in adapter.question_fields], ensure_ascii=False)
        gold = record.get(adapter.gold_field)
        if content in first_record:
            duplicate_of[line] = first_record[content]
            stats.flag("duplicate_record", _example(adapter, line, record, first_line=first_record[content]))
        elif question in first_question:
            first_line, first_gold = first_question[question]
            duplicate_of[line] = first_line
            stats.flag(
                "duplicate_question",
                _example(
                    adapter,
                    line,
                    record,
                    first_line=first_line,
                    same_gold=gold == first_gold,
                ),
            )
        first_record.setdefault(content, line)
        first_question.setdefault(question, (line, gold))
    return duplicate_of


def vmwe_meta(adapter: TaskAdapter, line: int, record: dict[str, object], stats: BuildStats) -> dict[str, object]:
    label = record.get("label")
    if not isinstance(label, str) or not label.strip():
        stats.flag("vmwe_label_missing", _example(adapter, line, record))
        return {"vmwe_label": label, "vmwe_subtype": None, "vmwe_type": adapter.vmwe_type}
    subtype: str | None = label
    if label in VMWE_LABEL_FIXES:
        subtype = VMWE_LABEL_FIXES[label]
        stats.flag("vmwe_label_misspelled", _example(adapter, line, record, label=label, normalised=subtype))
    elif label not in VMWE_LABELS:
        subtype = None
        stats.flag("vmwe_label_unknown", _example(adapter, line, record, label=label))
    vmwe_type = (subtype or label).split(".")[0].upper()
    if adapter.vmwe_type and vmwe_type != adapter.vmwe_type:
        stats.flag("vmwe_type_mismatch", _example(adapter, line, record, label=label, expected=adapter.vmwe_type))
    return {"vmwe_label": label, "vmwe_subtype": subtype, "vmwe_type": vmwe_type}


def collocation_label_meta(
    adapter: TaskAdapter, line: int, record: dict[str, object], tax: TaxonomyResources, stats: BuildStats
) -> dict[str, object]:
    label = record.get("label")
    relation = tax.labels.get(label) if isinstance(label, str) else None
    if relation is None:
        stats.flag(
            "label_not_in_taxonomy",
            _example(adapter, line, record, label=label, taxonomy=f"taxonomy/{tax.labels.path.name}"),
        )
    elif "label_id" in record and relation.id is not None and record["label_id"] != relation.id:
        stats.flag(
            "label_id_mismatch",
            _example(adapter, line, record, label=label, label_id=record["label_id"], taxonomy_id=relation.id),
        )
    return {
        "label": label,
        "label_id": record.get("label_id"),
        "label_in_taxonomy": relation is not None,
        # what LCC category scaling needs: where the label sits in each taxonomy file
        "taxonomy_positions": tax.positions(label) if isinstance(label, str) else {},
    }


def derived_fields(
    adapter: TaskAdapter,
    path: Path,
    line: int,
    record: dict[str, object],
    references: tuple[str, ...],
    has_gold: bool,
    tax: TaxonomyResources | None,
) -> dict[str, object]:
    """Template fields that are not released field names (see adapters.py)."""
    added: dict[str, object] = {}
    for placeholder, source in adapter.aliases.items():
        added[placeholder] = record[source]
    if has_gold:
        clean = dict(record)
        if adapter.kind == "interpretation" and isinstance(record[adapter.gold_field], list):
            clean[adapter.gold_field] = list(references)
        added["example"] = adapter.demonstration(clean)
    else:
        added["example"] = None  # no gold: this item cannot serve as an exemplar
    if adapter.task == "collocation_categorization" and tax is not None:
        for shots, text in tax.prompt_texts.items():
            added[shot_variant("taxonomy", shots)] = text
    if adapter.task == "collocation_extraction" and tax is not None:
        relation = tax.labels.get(record.get("label"))  # type: ignore[arg-type]
        added["relation"] = relation.gloss if relation else None
        added["label_examples"] = list(relation.examples) if relation else []
    for name, value in added.items():
        if name in record and record[name] != value:
            raise DataError(path, f"released field {name!r} clashes with the template field of that name", row=line)
    return added


def mcq_checks(
    adapter: TaskAdapter, line: int, record: dict[str, Any], answer: str | None, meta: dict[str, Any], stats: BuildStats
) -> str | None:
    """Options as released and as appended to the context; the gold letter (None when invalid)."""
    choices = [record[letter] for letter in OPTION_LETTERS]
    if len(set(choices)) < len(choices):
        stats.flag("duplicate_option", _example(adapter, line, record, choices=choices))
    assert adapter.options_line is not None and adapter.context_field is not None
    if not record[adapter.context_field].endswith(adapter.options_line.format(**record)):
        stats.flag("options_not_in_context", _example(adapter, line, record))
    if answer is not None and answer not in OPTION_LETTERS:
        stats.flag("answer_not_an_option_letter", _example(adapter, line, record, target=answer))
        meta["gold_problem"] = f"target {answer!r} is not one of A-D"
        answer = None
    meta["answer_text"] = record[answer] if answer else None
    return answer


def record_item(
    adapter: TaskAdapter,
    path: Path,
    line: int,
    record: dict[str, Any],
    item_id: str,
    tax: TaxonomyResources | None,
    stats: BuildStats,
    duplicate_of: int | None = None,
) -> Item:
    require_keys(path, line, record, adapter.required_fields)
    for name in adapter.required_fields:
        _require_text(path, line, record, name)
    answer, references = read_gold(adapter, path, line, record, stats)
    meta: dict[str, object] = {
        "code": adapter.code,
        "phrase_type": adapter.phrase_type,
        "kind": adapter.kind,
        "source_line": line,
        "source_id": record.get("id"),
        "duplicate_of_line": duplicate_of,
    }
    meta.update({name: record.get(name) for name in adapter.meta_fields})
    if adapter.kind == "mcq":
        answer = mcq_checks(adapter, line, record, answer, meta, stats)
    has_gold = answer is not None or bool(references)
    meta["no_gold"] = not has_gold
    if adapter.task in LABELLED_COLLOCATION_TASKS and tax is not None:
        meta.update(collocation_label_meta(adapter, line, record, tax, stats))
    if adapter.phrase_type == "vmwe":
        meta.update(vmwe_meta(adapter, line, record, stats))
    if adapter.phrase_field and adapter.context_field and isinstance(record.get(adapter.phrase_field), str):
        phrase = record[adapter.phrase_field]
        meta["phrase_in_context"] = phrase.strip().lower() in record[adapter.context_field].lower()
        # only consequential for extraction: the exact-match gold is then not a span of the input
        if not meta["phrase_in_context"] and adapter.kind == "extraction":
            stats.flag("gold_not_verbatim_in_context", _example(adapter, line, record, gold=phrase))
    if adapter.kind == "interpretation":
        meta["n_references"] = len(references)
        meta["repeated_references"] = len(references) - len(set(references))
        if meta["repeated_references"]:
            stats.flag("repeated_references", _example(adapter, line, record, repeated=meta["repeated_references"]))
    return Item(
        item_id=item_id,
        benchmark=BENCHMARK,
        task=adapter.task,
        language=LANGUAGE,
        input=record[adapter.input_field],
        choices=tuple(record[letter] for letter in OPTION_LETTERS) if adapter.kind == "mcq" else (),
        answer=answer,
        references=references,
        fields={**record, **derived_fields(adapter, path, line, record, references, has_gold, tax)},
        meta=meta,
    )


def check_templates(
    raw_dir: Path, adapter: TaskAdapter, items: list[Item], cfg: SemanticQABuild, stats: BuildStats
) -> dict[str, object]:
    """Every placeholder of the task's released zero/few-shot templates must be a text field of
    every item (else DataError); for its other templates (LCE with oracle relation) an item
    that cannot fill one is flagged `template_placeholder_unfilled`."""
    few_shot_counts = [k for k in cfg.lcc_taxonomy.files_by_shots() if k > 0]
    report: dict[str, object] = {}
    for stem in (adapter.prompt_stem, *adapter.extra_templates):
        main = stem == adapter.prompt_stem
        for setting in SETTINGS:
            path = template_path(raw_dir, stem, setting)
            names = placeholders(path)
            unfilled: Counter[str] = Counter()
            for name in names:
                # the few-shot taxonomy text depends on k (taxonomy_3shot, taxonomy_5shot)
                per_k = (name, setting) == ("taxonomy", "fewshot")
                keys = [shot_variant(name, k) for k in few_shot_counts] if per_k else [name]
                for item in items:
                    for key in keys:
                        value = item.fields.get(key)
                        if isinstance(value, str) or (key == "example" and item.meta["no_gold"]):
                            continue
                        if main:
                            raise DataError(
                                path,
                                f"placeholder {{{{{name}}}}} cannot be filled: item {item.item_id} (line "
                                f"{item.meta['source_line']}) has no text field {key!r}",
                                expected=f"one of the item's fields {sorted(item.fields)}",
                            )
                        unfilled[name] += 1
                        stats.flag(
                            "template_placeholder_unfilled",
                            {
                                "task": adapter.task,
                                "line": item.meta["source_line"],
                                "template": f"prompts/{path.name}",
                                "placeholder": name,
                            },
                        )
            entry: dict[str, object] = {"file": f"prompts/{path.name}", "placeholders": names}
            if not main:
                entry["items_unfilled"] = dict(unfilled)
            report[setting if main else f"{stem}_{setting}"] = entry
    return report


def gold_summary(adapter: TaskAdapter, items: list[Item]) -> dict[str, object]:
    summary: dict[str, object] = {"no_gold": sum(1 for i in items if i.meta["no_gold"])}
    if adapter.kind in ("mcq", "label"):
        summary["answers"] = dict(sorted(Counter(i.answer or "(none)" for i in items).items()))
    if adapter.kind == "mcq":
        summary["answer_texts"] = dict(sorted(Counter(i.meta["answer_text"] or "(none)" for i in items).items()))
    if adapter.kind == "interpretation":
        counts = [len(i.references) for i in items]
        summary["references_per_item"] = {
            "min": min(counts, default=0),
            "max": max(counts, default=0),
            "mean": round(sum(counts) / len(counts), 3) if counts else None,
        }
    if adapter.phrase_type == "vmwe":
        summary["vmwe_labels"] = dict(sorted(Counter(str(i.meta["vmwe_label"]) for i in items).items()))
    if adapter.task in LABELLED_COLLOCATION_TASKS:
        summary["labels"] = dict(sorted(Counter(str(i.meta["label"]) for i in items).items()))
    if adapter.phrase_field and adapter.context_field:
        summary["phrase_in_context"] = sum(1 for i in items if i.meta.get("phrase_in_context"))
    return summary


def build_task(
    raw_dir: Path, adapter: TaskAdapter, cfg: SemanticQABuild, tax: TaxonomyResources | None, stats: BuildStats
) -> tuple[list[Item], dict[str, object]]:
    path = raw_dir / "instances" / f"{adapter.task}.jsonl"
    if not path.is_file():
        raise DataError(path, "instance file not found", expected="the released test set (run acquire)")
    rows = read_jsonl(path)
    stats.read(adapter.task, len(rows))
    item_ids, id_source = choose_item_ids(adapter, rows, stats)
    duplicate_of = flag_duplicates(adapter, rows, stats)
    items = [
        record_item(adapter, path, line, record, item_id, tax, stats, duplicate_of.get(line))
        for (line, record), item_id in zip(rows, item_ids, strict=False)
    ]
    stats.kept(adapter.task, len(items))
    field_counts = Counter(name for _, record in rows for name in record)
    details = {
        "file": f"instances/{path.name}",
        "code": adapter.code,
        "phrase_type": adapter.phrase_type,
        "kind": adapter.kind,
        "extension": adapter.extension,
        "records": len(rows),
        "paper_table1_count": adapter.paper_count,
        "item_id_source": id_source,
        "released_fields": dict(sorted(field_counts.items())),
        "mapping": {
            "input": adapter.input_field,
            "choices": list(OPTION_LETTERS) if adapter.kind == "mcq" else [],
            "answer": adapter.gold_field if adapter.kind != "interpretation" else None,
            "references": adapter.gold_field if adapter.kind in ("extraction", "interpretation") else None,
        },
        "fields_added": sorted({k for i in items for k in i.fields} - set(field_counts)),
        "templates": check_templates(raw_dir, adapter, items, cfg, stats),
        "gold": gold_summary(adapter, items),
    }
    return items, details


def taxonomy_report(tax: TaxonomyResources, tasks: dict[str, list[Item]]) -> dict[str, object]:
    """How the collocation labels map onto every taxonomy file, and what LCC category scaling can use."""
    labels_in_data = Counter(
        i.meta["label"] for task in LABELLED_COLLOCATION_TASKS for i in tasks.get(task, []) if i.meta.get("label")
    )
    lcc = Counter(i.meta["label"] for i in tasks.get("collocation_categorization", []) if i.meta.get("label"))
    known = [label for label in tax.labels.labels if label in labels_in_data]
    label_set = known + sorted(set(labels_in_data) - set(known))
    membership = {
        name: {
            "relations": len(t.relations),
            "has_id_column": "ID" in t.columns,
            "data_labels_missing": [label for label in label_set if label not in t.labels],
            "labels_without_data": [label for label in t.labels if label not in labels_in_data],
        }
        for name, t in tax.all_files.items()
    }
    by_size: dict[int, list[str]] = {}
    for name, t in tax.all_files.items():
        by_size.setdefault(len(t.relations), []).append(name)
    sixteen = [tax.all_files[name] for name in by_size.get(16, [])]
    return {
        "labels_file": f"taxonomy/{tax.labels.path.name}",
        "label_ids": {r.label: r.id for r in tax.labels.relations},
        "data_label_set": label_set,
        "lcc_label_counts": dict(sorted(lcc.items())),
        "not_found_in_labels_file": sorted(set(labels_in_data) - set(tax.labels.labels)),
        "files": membership,
        "files_by_relation_count": {str(k): v for k, v in sorted(by_size.items())},
        "scaling": {
            "classes": [1, 2, 4, 8, 16],
            "lcc_labels_usable_up_to_8_classes": [x for x in label_set if x in lcc],
            "sixteen_class_file": by_size.get(16, []),
            "lcc_labels_outside_16_class_file": [
                x for x in label_set if x in lcc and sixteen and x not in sixteen[0].labels
            ],
            "sixteen_class_labels_without_lcc_items": [
                x for x in (sixteen[0].labels if sixteen else []) if x not in lcc
            ],
        },
        "prompt_taxonomy_lines": {str(k): v.count("\n") for k, v in tax.prompt_texts.items()},
    }


def vmwe_report(tasks: dict[str, list[Item]]) -> dict[str, object]:
    """Oracle definitions per VMWE type, and how the oracle-schema sets relate to the main sets."""
    vmwe_items = [i for items in tasks.values() for i in items if i.meta["phrase_type"] == "vmwe"]
    definitions: dict[str, set[str]] = {}
    for item in vmwe_items:
        definitions.setdefault(str(item.meta["vmwe_type"]), set()).add(str(item.fields.get("oracle")))
    main_tasks = ("vmwe_extraction_LVC", "vmwe_extraction_VID", "vmwe_extraction_VPC")
    report: dict[str, object] = {
        "oracle_definitions": {t: sorted(d) for t, d in sorted(definitions.items())},
        "main_total": sum(len(tasks[t]) for t in main_tasks if t in tasks),
        "paper_table1_total": PAPER_VMWE_TOTAL,
    }
    if all(t in tasks for t in main_tasks):

        def key(i: Item) -> tuple[str, str]:
            return (i.fields["context"], i.fields.get("vmwe", ""))

        main = Counter(key(i) for t in main_tasks for i in tasks[t])
        for ext in (t for t in tasks if ADAPTERS[t].extension):
            ext_keys = Counter(key(i) for i in tasks[ext])
            report[ext] = {
                "records": len(tasks[ext]),
                "records_in_main_sets": sum(1 for i in tasks[ext] if key(i) in main),
                "not_in_main_sets": [list(k) for k in ext_keys if k not in main][:10],
                "main_not_in_this_set": [list(k) for k in main if k not in ext_keys][:10],
            }
    return report


def build(raw_dir: Path, cfg: SemanticQABuild) -> BuildResult:
    stats = BuildStats(BENCHMARK)
    selected = cfg.selected_tasks()
    needs_taxonomy = any(t in LABELLED_COLLOCATION_TASKS for t in selected)
    tax = TaxonomyResources.load(raw_dir, cfg.lcc_taxonomy) if needs_taxonomy else None
    tasks: dict[str, list[Item]] = {}
    per_task: dict[str, Any] = {}
    for task in selected:
        tasks[task], per_task[task] = build_task(raw_dir, ADAPTERS[task], cfg, tax, stats)
    stats.details = {
        "tasks": per_task,
        "items": sum(len(v) for v in tasks.values()),
        "extensions": cfg.extensions,
    }
    if tax is not None:
        stats.details["collocation_taxonomy"] = taxonomy_report(tax, tasks)
    if any(ADAPTERS[t].phrase_type == "vmwe" for t in selected):
        stats.details["vmwe"] = vmwe_report(tasks)
    stats.notes.extend(NOTES)
    for task, detail in per_task.items():
        if detail["paper_table1_count"] not in (None, detail["records"]):
            stats.notes.append(
                f"{task}: paper table 1 lists {detail['paper_table1_count']} items, "
                f"the released set has {detail['records']}."
            )
    return BuildResult(tasks=tasks, stats=stats)


NOTES = [
    "Instances are the authors' published 0-shot DeepSeek-R1 results with `prediction` removed (files.json derive).",
    "{{example}} = concatenation of the k exemplars' `example` fields (authors' per-task demonstration format); "
    "LCE's authors drew its exemplars from the taxonomy examples of the item's relation (`label_examples`).",
    "LCC {{taxonomy}}: field `taxonomy` for 0-shot prompts, `taxonomy_<k>shot` for k-shot prompts.",
    "The paper's LCC category-scaling runs (figure 6) used separate 30-per-class sets over the 16-class "
    "taxonomy that are not released as instances (only as published_predictions/*_sacling_*).",
]
