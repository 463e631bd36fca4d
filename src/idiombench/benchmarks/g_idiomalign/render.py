"""G-IdiomAlign prompts.

- mcq (Task 1): every item of task `mcq`; the item's released `instruction` is the whole
  user message (prompts/mcq.yaml). When the option-order pass runs on mcq
  (`generate.extra.<pass>.rotate_options`), each item's instruction is also rendered under
  rotations 1-3 of its options (the `Options:` block rewritten, letters kept in place).
- no_gloss / with_gloss (Task 2): task `gloss_generation` (every aligned pair in both
  directions) with the paper's appendix G prompts (prompts/gloss_generation.yaml); with
  `additional_pairs: true` also task `gloss_generation_additional`. Both conditions use
  the same items, so the With - No-gloss delta is paired. An item without a gloss cannot
  be asked With-gloss: it is left out of that setting and counted in render_stats.json.

The sample draws items per translation direction (meta.direction), seeded per task.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from ...core.errors import DataError
from ...core.items import Item, rotate
from ...core.sampling import seeded_subset
from ...templating.prompts import Prompt
from ...templating.templates import load_package_templates
from ..contexts import RenderOutput
from .config import GIdiomAlignConfig
from .mcq import LETTERS

BENCHMARK = "g-idiomalign"
PACKAGE = __package__ or "idiombench.benchmarks.g_idiomalign"
MCQ_TASK = "mcq"
GENERATION_TASK = "gloss_generation"
ADDITIONAL_TASK = "gloss_generation_additional"
GENERATION_SETTINGS = ("no_gloss", "with_gloss")


def sample_per_direction(task: str, items: list[Item], n: int | None, seed: int, output: RenderOutput) -> list[Item]:
    if n is None:
        output.sample[task] = {"selection": "all", "items": len(items)}
        return items
    by_direction: dict[str, list[str]] = defaultdict(list)
    for item in items:
        by_direction[item.meta["direction"]].append(item.item_id)
    chosen = {
        direction: seeded_subset(ids, n, seed, BENCHMARK, task, direction)
        for direction, ids in sorted(by_direction.items())
    }
    keep = {item_id for ids in chosen.values() for item_id in ids}
    selected = [item for item in items if item.item_id in keep]
    output.sample[task] = {
        "selection": f"{n} item(s) per direction (seed {seed})",
        "directions": len(chosen),
        "item_ids": chosen,
        "items": len(selected),
        "items_available": len(items),
    }
    return selected


OPTIONS_HEADING = "\nOptions:\n"


def options_block(choices: tuple[str, ...]) -> str:
    return OPTIONS_HEADING + "".join(f"{letter}. {text}\n" for letter, text in zip(LETTERS, choices, strict=False))


def rotated_instruction(item: Item, rotation: int) -> str | None:
    """The released instruction with its options shown in rotation `rotation`; None when the
    instruction does not list the item's options as one block (it cannot be rotated)."""
    instruction: str = item.fields["instruction"]
    released = options_block(item.choices)
    if instruction.count(released) != 1:
        return None
    return instruction.replace(released, options_block(rotate(item.choices, rotation)))


def has_gloss(item: Item) -> bool:
    gloss = item.fields.get("gloss")
    return isinstance(gloss, str) and bool(gloss.strip()) and not item.meta.get("no_gloss_available")


def render(tasks: dict[str, list[Item]], config: GIdiomAlignConfig, raw_dir: Path) -> RenderOutput:
    output = RenderOutput()
    cfg = config.render
    sample = cfg.sample
    seed = sample.seed if sample is not None else 0

    def required(task: str) -> list[Item]:
        if task not in tasks:
            raise DataError(f"data/processed/{BENCHMARK}", f"task {task!r} was not built", expected=f"{task}.parquet")
        return tasks[task]

    if "mcq" in cfg.settings:
        items = sample_per_direction(
            MCQ_TASK, required(MCQ_TASK), sample.mcq_per_direction if sample else None, seed, output
        )
        template = load_package_templates(PACKAGE, "mcq").get("released_instruction")
        output.use_template(template, "the item's released `instruction` field (prompts/mcq.yaml)")
        rotations = range(len(LETTERS)) if config.generate.rotates("mcq") else range(1)
        for item in items:
            for rotation in rotations:
                instruction = rotated_instruction(item, rotation) if rotation else item.fields["instruction"]
                if instruction is None:
                    output.leave_out(
                        "mcq option rotations: the instruction does not list the options as one block",
                        {"item_id": item.item_id},
                    )
                    break
                output.add(
                    Prompt(
                        benchmark=BENCHMARK,
                        task=MCQ_TASK,
                        setting="mcq",
                        item_id=item.item_id,
                        language=item.language,
                        messages=template.render({"instruction": instruction}),
                        template_id=template.template_id,
                        template_hash=template.template_hash,
                        rotation=rotation,
                    )
                )

    generation_settings = [s for s in cfg.settings if s in GENERATION_SETTINGS]
    if generation_settings:
        generation_tasks = [GENERATION_TASK, *([ADDITIONAL_TASK] if cfg.additional_pairs else [])]
        templates = load_package_templates(PACKAGE, "gloss_generation")
        n = sample.generation_per_direction if sample else None
        for task in generation_tasks:
            items = sample_per_direction(task, required(task), n, seed, output)
            for setting in generation_settings:
                template = templates.get(setting)
                output.use_template(template, f"{templates.path}: {templates.source}")
                for item in items:
                    if setting == "with_gloss" and not has_gloss(item):
                        output.leave_out(
                            "with_gloss: the source idiom has no English gloss", {"task": task, "item_id": item.item_id}
                        )
                        continue
                    values = {
                        "target_language": item.fields["target_language"],
                        "source_idiom": item.fields["source_idiom"],
                        "gloss": item.fields.get("gloss") or "",
                    }
                    output.add(
                        Prompt(
                            benchmark=BENCHMARK,
                            task=task,
                            setting=setting,
                            item_id=item.item_id,
                            language=item.language,
                            messages=template.render(values),
                            template_id=template.template_id,
                            template_hash=template.template_hash,
                        )
                    )
        if not cfg.additional_pairs:
            output.notes.append(
                f"{ADDITIONAL_TASK} (the 42 additional language pairs) not rendered: "
                f"benchmarks.{BENCHMARK}.render.additional_pairs is false."
            )
    return output
