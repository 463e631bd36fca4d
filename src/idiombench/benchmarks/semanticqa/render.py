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

from dataclasses import dataclass
from pathlib import Path

from ...core.errors import DataError
from ...core.generation_types import Message
from ...core.io import sha256_file
from ...core.items import Item, rotate
from ...core.sampling import seeded_order, seeded_subset
from ...templating.prompts import Prompt
from ..contexts import RenderOutput
from .adapters import ADAPTERS, OPTION_LETTERS, TaskAdapter
from .config import SemanticQAConfig, SemanticQASample
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


@dataclass(frozen=True)
class _Template:
    text: str
    names: list[str]  # its placeholders, each once, in order of first use
    digest: str  # sha256 of the file


class _Templates:
    """Released prompt templates, each read and hashed once per render."""

    def __init__(self) -> None:
        self._cache: dict[Path, _Template] = {}

    def get(self, path: Path) -> _Template:
        if path not in self._cache:
            if not path.is_file():
                raise DataError(path, "prompt template not found", expected="the released template (run acquire)")
            text = path.read_text(encoding="utf-8")
            names = list(dict.fromkeys(PLACEHOLDER.findall(text)))
            self._cache[path] = _Template(text, names, sha256_file(path))
        return self._cache[path]


@dataclass(frozen=True)
class _SettingJob:
    """One task's prompts under one setting: its template and where its exemplars come from."""

    task: str
    setting: str
    k: int  # shots
    path: Path
    template: _Template
    template_id: str
    exemplars: Exemplars
    use_taxonomy: bool  # LCE with lce_exemplars: taxonomy


def _adapter(task: str) -> TaskAdapter:
    adapter = ADAPTERS.get(task)
    if adapter is None:
        raise DataError(
            f"data/processed/{BENCHMARK}/{task}.parquet",
            f"unknown task {task!r}",
            expected=f"one of {sorted(ADAPTERS)}",
        )
    return adapter


def _sampled_items(
    task: str, all_items: list[Item], sample: SemanticQASample | None, output: RenderOutput
) -> list[Item]:
    """The task's items the sample draws (all without a sample), recorded in output.sample."""
    n = sample.items_per_task if sample is not None else None
    chosen_ids = set(seeded_subset([i.item_id for i in all_items], n, sample.seed if sample else 0, BENCHMARK, task))
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
    return items


def _example_value(item: Item, job: _SettingJob, output: RenderOutput) -> tuple[str, tuple[str, ...]]:
    """{{example}}'s text and the exemplar ids; flags an item with fewer than k exemplars."""
    if job.use_taxonomy:
        value, exemplar_ids = taxonomy_exemplars(item, job.k)
    else:
        drawn = job.exemplars.draw(item, job.k)
        value = "".join(e.fields["example"] for e in drawn)
        exemplar_ids = tuple(e.item_id for e in drawn)
    if len(exemplar_ids) < job.k:
        output.flag(
            f"{job.setting}: fewer than {job.k} exemplars available",
            {"task": job.task, "item_id": item.item_id, "exemplars": len(exemplar_ids)},
        )
    return value, exemplar_ids


def _field_value(item: Item, name: str, job: _SettingJob) -> str:
    """The item field that fills placeholder `name` (LCC's taxonomy: the k-shot variant)."""
    key = shot_variant(name, job.k) if name == "taxonomy" else name
    value = item.fields.get(key)
    if not isinstance(value, str):
        raise DataError(
            job.path,
            f"placeholder {{{{{name}}}}} cannot be filled for item {job.task}/{item.item_id}: "
            f"field {key!r} is {type(value).__name__}",
            expected="a text field of the item (see adapters.py; for LCC k-shot add "
            f"lcc_taxonomy.prompt_by_shots['{job.k}-shot'] to the build params)",
        )
    return value


def _placeholder_values(item: Item, job: _SettingJob, output: RenderOutput) -> tuple[dict[str, str], tuple[str, ...]]:
    values: dict[str, str] = {}
    exemplar_ids: tuple[str, ...] = ()
    for name in job.template.names:
        if name == "example":
            values[name], exemplar_ids = _example_value(item, job, output)
        else:
            values[name] = _field_value(item, name, job)
    return values, exemplar_ids


def _prompt(
    item: Item, job: _SettingJob, values: dict[str, str], exemplar_ids: tuple[str, ...], rotation: int = 0
) -> Prompt:
    return Prompt(
        benchmark=BENCHMARK,
        task=job.task,
        setting=job.setting,
        item_id=item.item_id,
        language=item.language,
        messages=(Message("user", fill(job.template.text, values)),),
        template_id=job.template_id,
        template_hash=job.template.digest,
        exemplar_ids=exemplar_ids,
        rotation=rotation,
    )


def _add_rotations(
    item: Item, job: _SettingJob, values: dict[str, str], exemplar_ids: tuple[str, ...], output: RenderOutput
) -> None:
    """The item under option rotations 1..n-1; none when its context cannot be rotated."""
    for rotation in range(1, len(item.choices)):
        context = rotated_context(item, rotation)
        if context is None:
            output.leave_out(
                f"{job.setting} option rotations: the context does not end with the options line",
                {"task": job.task, "item_id": item.item_id},
            )
            break
        output.add(_prompt(item, job, {**values, "context": context}, exemplar_ids, rotation))


def _render_setting(
    items: list[Item], job: _SettingJob, adapter: TaskAdapter, config: SemanticQAConfig, output: RenderOutput
) -> None:
    rotates = adapter.kind == "mcq" and config.generate.rotates(job.setting) and "context" in job.template.names
    for item in items:
        values, exemplar_ids = _placeholder_values(item, job, output)
        output.add(_prompt(item, job, values, exemplar_ids))
        if rotates:
            _add_rotations(item, job, values, exemplar_ids, output)


def render(tasks: dict[str, list[Item]], config: SemanticQAConfig, raw_dir: Path) -> RenderOutput:
    output = RenderOutput()
    cfg = config.render
    templates = _Templates()
    for task, all_items in sorted(tasks.items()):
        adapter = _adapter(task)
        items = _sampled_items(task, all_items, cfg.sample, output)
        exemplars = Exemplars(task, all_items, cfg.exemplar_seed)
        use_taxonomy = task == LCE_TASK and cfg.lce_exemplars == "taxonomy"
        for setting in cfg.settings:
            k = shots(setting)
            path = template_path(raw_dir, adapter.prompt_stem, "zeroshot" if k == 0 else "fewshot")
            template = templates.get(path)
            template_id = f"{BENCHMARK}/prompts/{path.name}"
            output.templates[template_id] = {
                "hash": template.digest,
                "source": f"acquired release file prompts/{path.name}",
            }
            job = _SettingJob(task, setting, k, path, template, template_id, exemplars, use_taxonomy)
            _render_setting(items, job, adapter, config, output)
    if cfg.lce_exemplars == "taxonomy":
        output.notes.append(
            "collocation_extraction exemplars follow the authors' code: the first k example collocations of the "
            "item's relation from the taxonomy (lce_exemplars: taxonomy), not items drawn from the pool."
        )
    return output
