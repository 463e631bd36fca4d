"""SemanticQA prompts from the released templates (data/raw/semanticqa/prompts/*.txt, taken
through acquire, never copied into the repo).

Setting `<k>-shot`: k = 0 fills the task's `<stem>_zeroshot.txt`, k > 0 its
`<stem>_fewshot.txt` (stem: adapters.TaskAdapter.prompt_stem). Each {{placeholder}} takes
the item field of that name (the build puts every placeholder value into `fields`),
except:
- {{example}}: the k exemplars' `example` fields concatenated, i.e. the authors'
  construct_prompt format ("".join over the demonstrations). Exemplars are drawn from the
  same task's full pool (items with a gold), EXCLUDING the item itself and every item
  with the same input text (a duplicate question would leak the answer); one seeded
  order of the pool per item (exemplar_seed, task, item id), of which k-shot takes the
  first k, so 3-shot's exemplars are the first three of 5-shot's. Their item ids are
  recorded in exemplar_ids.
- LCC's {{taxonomy}}: field `taxonomy` at 0 shots, `taxonomy_<k>shot` otherwise (the
  taxonomy text with k example collocations per relation, as released).
- LCE with `lce_exemplars: taxonomy`: the authors' convention instead of the pool: the
  first k example collocations of the item's own relation (field label_examples), each
  followed by " ; "; exemplar_ids then read `taxonomy:<label>:<index>`.
The filled template is sent as one user message, as the authors' code does
(semantic_qa/model/model_utils.py). template_hash is the sha256 of the template file.

When the option-order pass runs on a setting (`generate.extra.<pass>.rotate_options`), each
multiple-choice item (IED, NCC) is also rendered under rotations 1-3 of its options: the
options line that ends its {{context}} (adapters.TaskAdapter.options_line) is written with the
texts rotated and the letters in place; exemplars keep their released options.
"""

from __future__ import annotations

from pathlib import Path

from ...core.errors import DataError
from ...core.generation_types import Message
from ...core.io import sha256_file
from ...core.items import Item, rotate
from ...core.sampling import seeded_order, seeded_subset
from ...templating.prompts import Prompt
from ..contexts import RenderOutput
from .adapters import ADAPTERS, OPTION_LETTERS
from .config import SemanticQAConfig
from .templates import PLACEHOLDER, shot_variant, template_path

BENCHMARK = "semanticqa"
LCE_TASK = "collocation_extraction"


def shots(setting: str) -> int:
    return int(setting.split("-", 1)[0])


class Exemplars:
    """Seeded exemplar draws for one task's items."""

    def __init__(self, task: str, items: list[Item], seed: int):
        self.task = task
        self.seed = seed
        self.pool = [item for item in items if item.fields.get("example") is not None]
        self._orders: dict[str, list[Item]] = {}

    def order(self, item: Item) -> list[Item]:
        """The item's pool order: every eligible exemplar, seeded per item."""
        if item.item_id not in self._orders:
            eligible = [c for c in self.pool if c.item_id != item.item_id and c.input != item.input]
            self._orders[item.item_id] = seeded_order(eligible, self.seed, BENCHMARK, self.task, item.item_id)
        return self._orders[item.item_id]

    def draw(self, item: Item, k: int) -> list[Item]:
        return self.order(item)[:k]


def taxonomy_exemplars(item: Item, k: int) -> tuple[str, tuple[str, ...]]:
    examples = list(item.fields.get("label_examples") or [])[:k]
    label = item.fields.get("label")
    return "".join(f"{e} ; " for e in examples), tuple(f"taxonomy:{label}:{i}" for i in range(len(examples)))


def fill(template: str, values: dict[str, str]) -> str:
    return PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def rotated_context(item: Item, rotation: int) -> str | None:
    """The item's context with its options line showing the options in rotation `rotation`;
    None when the context does not end with the released options line (it cannot be rotated)."""
    line = ADAPTERS[item.task].options_line
    context = str(item.fields.get("context", ""))
    if line is None:
        return None
    released = line.format(**dict(zip(OPTION_LETTERS, item.choices, strict=False)))
    if not context.endswith(released):
        return None
    return context[: len(context) - len(released)] + line.format(
        **dict(zip(OPTION_LETTERS, rotate(item.choices, rotation), strict=False))
    )


def render(tasks: dict[str, list[Item]], config: SemanticQAConfig, raw_dir: Path) -> RenderOutput:
    output = RenderOutput()
    cfg = config.render
    sample = cfg.sample
    template_cache: dict[Path, tuple[str, list[str], str]] = {}

    def template(path: Path) -> tuple[str, list[str], str]:
        if path not in template_cache:
            if not path.is_file():
                raise DataError(path, "prompt template not found", expected="the released template (run acquire)")
            text = path.read_text(encoding="utf-8")
            names = list(dict.fromkeys(PLACEHOLDER.findall(text)))
            template_cache[path] = (text, names, sha256_file(path))
        return template_cache[path]

    for task, all_items in sorted(tasks.items()):
        adapter = ADAPTERS.get(task)
        if adapter is None:
            raise DataError(
                f"data/processed/{BENCHMARK}/{task}.parquet",
                f"unknown task {task!r}",
                expected=f"one of {sorted(ADAPTERS)}",
            )
        n = sample.items_per_task if sample is not None else None
        chosen_ids = set(
            seeded_subset([i.item_id for i in all_items], n, sample.seed if sample else 0, BENCHMARK, task)
        )
        items = [item for item in all_items if item.item_id in chosen_ids]
        output.sample[task] = (
            {"selection": "all", "items": len(items)}
            if n is None
            else {
                "selection": f"{n} item(s) (seed {sample.seed})",  # type: ignore[union-attr]
                "item_ids": sorted(chosen_ids),
                "items": len(items),
                "items_available": len(all_items),
            }
        )
        exemplars = Exemplars(task, all_items, cfg.exemplar_seed)
        use_taxonomy = task == LCE_TASK and cfg.lce_exemplars == "taxonomy"
        for setting in cfg.settings:
            k = shots(setting)
            path = template_path(raw_dir, adapter.prompt_stem, "zeroshot" if k == 0 else "fewshot")
            text, names, digest = template(path)
            template_id = f"{BENCHMARK}/prompts/{path.name}"
            output.templates[template_id] = {"hash": digest, "source": f"acquired release file prompts/{path.name}"}
            for item in items:
                values: dict[str, str] = {}
                exemplar_ids: tuple[str, ...] = ()
                for name in names:
                    if name == "example":
                        if use_taxonomy:
                            values[name], exemplar_ids = taxonomy_exemplars(item, k)
                        else:
                            drawn = exemplars.draw(item, k)
                            values[name] = "".join(e.fields["example"] for e in drawn)
                            exemplar_ids = tuple(e.item_id for e in drawn)
                        if len(exemplar_ids) < k:
                            output.flag(
                                f"{setting}: fewer than {k} exemplars available",
                                {"task": task, "item_id": item.item_id, "exemplars": len(exemplar_ids)},
                            )
                        continue
                    key = shot_variant(name, k) if name == "taxonomy" else name
                    value = item.fields.get(key)
                    if not isinstance(value, str):
                        raise DataError(
                            path,
                            f"placeholder {{{{{name}}}}} cannot be filled for item {task}/{item.item_id}: "
                            f"field {key!r} is {type(value).__name__}",
                            expected="a text field of the item (see adapters.py; for LCC k-shot add "
                            f"lcc_taxonomy.prompt_by_shots['{k}-shot'] to the build params)",
                        )
                    values[name] = value
                output.add(
                    Prompt(
                        benchmark=BENCHMARK,
                        task=task,
                        setting=setting,
                        item_id=item.item_id,
                        language=item.language,
                        messages=(Message("user", fill(text, values)),),
                        template_id=template_id,
                        template_hash=digest,
                        exemplar_ids=exemplar_ids,
                    )
                )
                if adapter.kind != "mcq" or not config.generate.rotates(setting) or "context" not in names:
                    continue
                for rotation in range(1, len(item.choices)):
                    context = rotated_context(item, rotation)
                    if context is None:
                        output.leave_out(
                            f"{setting} option rotations: the context does not end with the options line",
                            {"task": task, "item_id": item.item_id},
                        )
                        break
                    output.add(
                        Prompt(
                            benchmark=BENCHMARK,
                            task=task,
                            setting=setting,
                            item_id=item.item_id,
                            language=item.language,
                            messages=(Message("user", fill(text, {**values, "context": context})),),
                            template_id=template_id,
                            template_hash=digest,
                            exemplar_ids=exemplar_ids,
                            rotation=rotation,
                        )
                    )
    if cfg.lce_exemplars == "taxonomy":
        output.notes.append(
            "collocation_extraction exemplars follow the authors' code: the first k example collocations of the "
            "item's relation from the taxonomy (lce_exemplars: taxonomy), not items drawn from the pool."
        )
    return output
