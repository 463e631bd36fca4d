"""OrderProbe prompts: every item of task `restore` in each configured setting, in the
expression's own language (templates prompts/{zero_shot,cot,three_shot}.yaml, paper
appendix C tables 8-10). {idiom} is the item's input (the scrambled or canonical form).

The sample draws whole expressions per language (meta.expression_id) and keeps all
their inputs, so per-expression metrics (S_Cons, S_Rob) stay computable on a sample.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from ...core.errors import DataError
from ...core.items import Item
from ...core.sampling import seeded_subset
from ...templating.prompts import Prompt
from ...templating.templates import ChatTemplate, load_package_templates
from ..contexts import RenderOutput
from .config import OrderProbeConfig

BENCHMARK = "orderprobe"
TASK = "restore"
PACKAGE = __package__ or "idiombench.benchmarks.orderprobe"


def sample_items(items: list[Item], config: OrderProbeConfig, output: RenderOutput) -> list[Item]:
    sample = config.render.sample
    per_language: dict[str, set[str]] = defaultdict(set)
    for item in items:
        per_language[item.language].add(item.meta["expression_id"])
    n = sample.expressions_per_language if sample is not None else None
    if n is None:
        k = sample.permutations_per_expression if sample is not None else None
        if k is None:
            output.sample[TASK] = {"selection": "all", "items": len(items)}
            return items
        selected = sample_permutations(items, k, sample.seed)  # type: ignore[union-attr]
        output.sample[TASK] = {
            "selection": f"every expression, the canonical form and {k} seeded permutation(s) each "
            f"(seed {sample.seed})",  # type: ignore[union-attr]
            "items": len(selected),
            "items_available": len(items),
        }
        return selected
    chosen: dict[str, list[str]] = {
        language: seeded_subset(expressions, n, sample.seed, BENCHMARK, TASK, language)  # type: ignore[union-attr]
        for language, expressions in sorted(per_language.items())
    }
    keep = {e for expressions in chosen.values() for e in expressions}
    selected = [item for item in items if item.meta["expression_id"] in keep]
    k = sample.permutations_per_expression  # type: ignore[union-attr]
    inputs = "all their inputs" if k is None else f"the canonical form and {k} seeded permutation(s) each"
    if k is not None:
        selected = sample_permutations(selected, k, sample.seed)  # type: ignore[union-attr]
    output.sample[TASK] = {
        "selection": f"{n} expression(s) per language, {inputs} (seed {sample.seed})",  # type: ignore[union-attr]
        "expressions": chosen,
        "expressions_available": {language: len(e) for language, e in sorted(per_language.items())},
        "items": len(selected),
        "items_available": len(items),
    }
    return selected


def sample_permutations(items: list[Item], k: int, seed: int) -> list[Item]:
    """Each expression's canonical input and a seeded draw of k of its permutations, in the
    items' order (the draw depends on the seed and the expression, not on the other items)."""
    permutations: dict[str, list[str]] = defaultdict(list)
    for item in items:
        if not item.meta["is_canonical"]:
            permutations[item.meta["expression_id"]].append(item.item_id)
    keep = {
        item_id
        for expression, ids in permutations.items()
        for item_id in seeded_subset(ids, k, seed, BENCHMARK, TASK, "permutations", expression)
    }
    return [item for item in items if item.meta["is_canonical"] or item.item_id in keep]


def render(tasks: dict[str, list[Item]], config: OrderProbeConfig, raw_dir: Path) -> RenderOutput:
    output = RenderOutput()
    if TASK not in tasks:
        raise DataError(f"data/processed/{BENCHMARK}", f"task {TASK!r} was not built", expected="restore.parquet")
    items = sample_items(tasks[TASK], config, output)
    for setting in config.render.settings:
        templates = load_package_templates(PACKAGE, setting)
        by_language: dict[str, ChatTemplate] = {}
        for item in items:
            template = by_language.get(item.language)
            if template is None:
                template = templates.get(item.language)
                if config.render.join_system_messages:
                    template = template.with_joined_system()
                by_language[item.language] = template
                output.use_template(template, f"{templates.path}: {templates.source}")
            output.add(
                Prompt(
                    benchmark=BENCHMARK,
                    task=TASK,
                    setting=setting,
                    item_id=item.item_id,
                    language=item.language,
                    messages=template.render({"idiom": item.fields["idiom"]}),
                    template_id=template.template_id,
                    template_hash=template.template_hash,
                )
            )
    return output
