"""A declared benchmark's prompts: per setting, the items of its split (a seeded sample where
params ask for one), each as the template's messages with its values; a k-shot setting puts k
exemplars before it, drawn per item (seeded by params `render.exemplar_seed`, the benchmark, the
setting and the item) from the setting's exemplar split, the item itself excluded: each one the
template's non-system messages with the exemplar's values, then an assistant message with its
gold answer as the parser reads it (answers.py).

Placeholders: every field of the record by its name, and
- `{input}`: the `fields.input` value;
- `{options}`: multiple_choice: one line per option, `A. <text>`; cloze: the candidates
  separated by `, `;
- `{labels}`: label shape: the labels separated by `, `.
A placeholder the template names that an item lacks is an error naming the setting and the
template's key.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ...core.errors import DataError
from ...core.generation_types import Message
from ...core.items import OPTION_LETTERS, Item
from ...core.sampling import seeded_subset
from ...templating.prompts import Prompt
from ...templating.templates import ChatTemplate
from ..contexts import RenderOutput
from .answers import answer_text
from .schema import Declaration

if TYPE_CHECKING:
    from collections.abc import Sequence

OPTION_SEPARATOR = "\n"
LIST_SEPARATOR = ", "


def template_for(name: str, decl: Declaration, setting: str) -> tuple[ChatTemplate, str]:
    """(the setting's template, the declaration key it comes from)."""
    own = decl.settings[setting].template
    messages = own if own is not None else decl.template
    key = f"settings.{setting}.template" if own is not None else "template"
    parsed = tuple(Message(role, text) for entry in messages for role, text in entry.items())
    return ChatTemplate(f"{name}/{setting}", parsed), key


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return LIST_SEPARATOR.join(value)
    return json.dumps(value, ensure_ascii=False)


def values_for(decl: Declaration, item: Item) -> dict[str, str]:
    """The template's values for one item (see the module docstring)."""
    values = {key: _text(value) for key, value in item.fields.items()}
    values["input"] = item.input
    if decl.shape == "multiple_choice":
        values["options"] = OPTION_SEPARATOR.join(f"{OPTION_LETTERS[i]}. {c}" for i, c in enumerate(item.choices))
    elif decl.shape == "cloze":
        values["options"] = LIST_SEPARATOR.join(item.choices)
    elif decl.shape == "label":
        values["labels"] = LIST_SEPARATOR.join(decl.label_names())
    return values


def _fill(template: ChatTemplate, values: dict[str, str], where: str, item: Item) -> tuple[Message, ...]:
    missing = [name for name in template.placeholders if name not in values]
    if missing:
        raise DataError(
            where,
            f"placeholder {{{missing[0]}}} has no value for item {item.task}/{item.item_id}",
            expected=f"a field of every record, or one of input, options, labels "
            f"(its fields: {', '.join(sorted(values))})",
        )
    return template.render(values)


def messages_for(
    decl: Declaration, template: ChatTemplate, where: str, item: Item, exemplars: Sequence[Item]
) -> tuple[Message, ...]:
    """The item's prompt: the template's leading system messages, each exemplar's turn and answer,
    then the item's turn."""
    system = [m for m in template.messages if m.role == "system"]
    lead = len(system) if tuple(template.messages[: len(system)]) == tuple(system) else 0
    turn = ChatTemplate(template.template_id, template.messages[lead:])
    head = ChatTemplate(template.template_id, template.messages[:lead])
    out: list[Message] = list(_fill(head, values_for(decl, item), where, item)) if lead else []
    for exemplar in exemplars:
        out += _fill(turn, values_for(decl, exemplar), where, exemplar)
        out.append(Message("assistant", answer_text(decl.parser_name, exemplar.answer or "")))
    out += _fill(turn, values_for(decl, item), where, item)
    return tuple(out)


def render(name: str, decl: Declaration, where: str, tasks: dict[str, list[Item]], config: Any) -> RenderOutput:
    output = RenderOutput()
    sample = config.render.sample
    sampled: dict[str, list[Item]] = {}

    def items_of(task: str) -> list[Item]:
        if task not in sampled:
            every = tasks.get(task, [])
            n = sample.items_per_task if sample is not None else None
            chosen = set(seeded_subset([i.item_id for i in every], n, sample.seed if sample else 0, name, task))
            sampled[task] = [item for item in every if item.item_id in chosen]
            output.sample[task] = (
                {"selection": "all", "items": len(every)}
                if n is None
                else {
                    "selection": f"{n} item(s) (seed {sample.seed})",
                    "item_ids": sorted(chosen),
                    "items": len(sampled[task]),
                    "items_available": len(every),
                }
            )
        return sampled[task]

    for setting in config.render.settings:
        spec = decl.settings[setting]
        if spec.split not in tasks:
            output.skipped[setting] = f"no record of split {spec.split!r} (splits built: {', '.join(sorted(tasks))})"
            continue
        template, key = template_for(name, decl, setting)
        output.use_template(template, f"{where}: {key}")
        pool = {item.item_id: item for item in tasks.get(spec.exemplars, [])} if spec.shots else {}
        for item in items_of(spec.split):
            candidates = [i for i in pool if not (spec.exemplars == spec.split and i == item.item_id)]
            drawn = seeded_subset(candidates, spec.shots, config.render.exemplar_seed, name, setting, item.item_id)
            if len(drawn) < spec.shots:
                output.flag(
                    f"{setting}: fewer than {spec.shots} exemplars in split {spec.exemplars!r}",
                    {"item_id": item.item_id, "exemplars": len(drawn)},
                )
            output.add(
                Prompt(
                    benchmark=name,
                    task=item.task,
                    setting=setting,
                    item_id=item.item_id,
                    language=item.language,
                    messages=messages_for(decl, template, f"{where}: {key}", item, [pool[i] for i in drawn]),
                    template_id=template.template_id,
                    template_hash=template.template_hash,
                    exemplar_ids=tuple(drawn),
                )
            )
    return output
