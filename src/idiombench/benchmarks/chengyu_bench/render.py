"""Chengyu-Bench prompts (prompts/chengyu_bench.yaml; paper appendix A, plus a ChID prompt).

Settings and the tasks they render:
- connotation: task `connotation` (official release) when built, else `connotation_sample`
  (the project's labelled sample); {idiom}.
- appropriateness: `appropriateness`, else `appropriateness_sample`; {sentence} is the
  passage with the judged idiom marked ##...##.
- open_cloze: the release's `open_cloze` task only; without the release the setting has
  no prompts and render_stats.json says why.
- chid_open_cloze: every built ChID task (`chid`, and `chid_train_few` / `chid_dev_few`
  when built) as an OPEN-CLOZE set: the paper's Open Cloze prompt, candidates hidden.
- chid_candidates: the same ChID passages with their seven candidates (comma-separated,
  in the released order) and one idiom asked for in <answer><...></answer>. When the
  option-order pass runs on it (`generate.extra.<pass>.rotate_options`), also under rotations
  1-6 of the candidates.
The sample draws items per task (seeded), so both ChID settings use the same passages.
"""

from __future__ import annotations

from pathlib import Path

from ...core.items import Item, rotate
from ...core.sampling import seeded_subset
from ...templating.prompts import Prompt
from ...templating.templates import load_package_templates
from ..contexts import RenderOutput
from .config import ChengyuBenchConfig

BENCHMARK = "chengyu-bench"
PACKAGE = __package__ or "idiombench.benchmarks.chengyu_bench"
CANDIDATE_SEPARATOR = ", "
RELEASE_MISSING = "the official Chengyu-Bench release was not built (see the build's NOT AVAILABLE note)"


def chid_tasks(tasks: dict[str, list[Item]]) -> list[str]:
    return sorted(t for t in tasks if t == "chid" or t.startswith("chid_"))


def tasks_for(setting: str, tasks: dict[str, list[Item]]) -> tuple[list[str], str | None, str | None]:
    """(tasks to render, why none, a note on the choice)."""
    if setting in ("connotation", "appropriateness"):
        sample_task = f"{setting}_sample"
        if setting in tasks:
            return [setting], None, None
        if sample_task in tasks:
            return (
                [sample_task],
                None,
                (
                    f"{setting}: rendered on {sample_task}, the project's SAMPLE (not the official data): "
                    f"{RELEASE_MISSING}."
                ),
            )
        return [], f"neither {setting} nor {sample_task} was built", None
    if setting == "open_cloze":
        if "open_cloze" in tasks:
            return ["open_cloze"], None, None
        return [], f"task open_cloze not built: {RELEASE_MISSING}", None
    found = chid_tasks(tasks)
    if not found:
        return [], "no ChID task was built", None
    note = (
        f"chid_open_cloze: ChID passages ({', '.join(found)}) asked as an OPEN-CLOZE set (candidates hidden, "
        "the paper's Open Cloze prompt); not the paper's Open Cloze data."
        if setting == "chid_open_cloze"
        else None
    )
    return found, None, note


def values_for(setting: str, item: Item, rotation: int = 0) -> dict[str, str]:
    if setting == "connotation":
        return {"idiom": item.fields["idiom"]}
    if setting == "appropriateness":
        return {"sentence": item.fields["sentence"]}
    if setting == "chid_candidates":
        return {
            "paragraph": item.fields["paragraph"],
            "candidates": CANDIDATE_SEPARATOR.join(rotate(item.choices, rotation)),
        }
    return {"paragraph": item.fields["paragraph"]}  # open_cloze, chid_open_cloze


def template_key(setting: str) -> str:
    return "open_cloze" if setting == "chid_open_cloze" else setting


def render(tasks: dict[str, list[Item]], config: ChengyuBenchConfig, raw_dir: Path) -> RenderOutput:
    output = RenderOutput()
    cfg = config.render
    sample = cfg.sample
    templates = load_package_templates(PACKAGE, "chengyu_bench")
    sampled: dict[str, list[Item]] = {}

    def items_of(task: str) -> list[Item]:
        if task not in sampled:
            all_items = tasks[task]
            n = sample.items_per_task if sample is not None else None
            chosen = set(
                seeded_subset([i.item_id for i in all_items], n, sample.seed if sample else 0, BENCHMARK, task)
            )
            sampled[task] = [item for item in all_items if item.item_id in chosen]
            output.sample[task] = (
                {"selection": "all", "items": len(all_items)}
                if n is None
                else {
                    "selection": f"{n} item(s) (seed {sample.seed})",  # type: ignore[union-attr]
                    "item_ids": sorted(chosen),
                    "items": len(sampled[task]),
                    "items_available": len(all_items),
                }
            )
        return sampled[task]

    for setting in cfg.settings:
        setting_tasks, why_none, note = tasks_for(setting, tasks)
        if why_none is not None:
            output.skipped[setting] = why_none
            continue
        if note is not None:
            output.notes.append(note)
        template = templates.get(template_key(setting))
        output.use_template(template, f"{templates.path}: {templates.source}")
        for task in setting_tasks:
            for item in items_of(task):
                if setting == "chid_candidates" and not item.choices:
                    output.leave_out(
                        "chid_candidates: the passage has no candidates", {"task": task, "item_id": item.item_id}
                    )
                    continue
                rotations = (
                    len(item.choices) if setting == "chid_candidates" and config.generate.rotates(setting) else 1
                )
                for rotation in range(rotations):
                    output.add(
                        Prompt(
                            benchmark=BENCHMARK,
                            task=task,
                            setting=setting,
                            item_id=item.item_id,
                            language=item.language,
                            messages=template.render(values_for(setting, item, rotation)),
                            template_id=template.template_id,
                            template_hash=template.template_hash,
                            rotation=rotation,
                        )
                    )
    return output
