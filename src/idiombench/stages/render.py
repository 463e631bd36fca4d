"""The render stage: built items x prompt settings -> chat prompts.

    data/processed/<bench>/<task>.parquet  (+ data/raw/semanticqa for its templates)
        -> results/prompts/<bench>/<setting>.parquet   one file per setting, all its tasks
           results/prompts/<bench>/render_stats.json    counts, sample, templates, notes

Each benchmark package renders its own settings (`BENCHMARK.render(tasks, config, raw_dir)`
returning a RenderOutput); this module loads the items, writes the tables and the stats
into a staging directory that replaces the output directory whole, and holds the helpers
the benchmarks share (seeded sampling, the output record).

A disabled benchmark (`benchmarks.<b>.enabled: false`) renders nothing: the directory
then holds only render_stats.json saying so. A configured setting that has no task to
render (e.g. Chengyu-Bench's open_cloze without the official release) gets no prompts
file; render_stats.json lists it with the reason. Items left out of a setting for a
reason (e.g. no gloss for with_gloss) are counted there with examples, never dropped
silently.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NotRequired, Protocol, TypedDict

from ..benchmarks.base import MAX_EXAMPLES
from ..benchmarks.contexts import RenderOutput
from ..benchmarks.registry import get_benchmark
from ..core import paths
from ..core.errors import DataError, IdiombenchError
from ..core.io import read_json_object, staged_directory, write_json
from ..core.items import Item, read_items
from ..templating.prompts import Prompt, write_prompts

STATS_FILE = paths.RENDER_STATS


class RenderSettings(Protocol):
    """A benchmark's `render` section as this stage reads it (params.sections.RenderSection,
    whose subclass declares `settings`)."""

    @property
    def settings(self) -> Sequence[str]: ...

    def model_dump(self, *, mode: str = "python") -> Mapping[str, object]: ...


class RenderConfig(Protocol):
    """A benchmark's params section as this stage reads it (params.sections.BenchmarkSection)."""

    @property
    def enabled(self) -> bool: ...

    @property
    def render(self) -> RenderSettings: ...


class ReasonCount(TypedDict):
    count: int
    examples: list[object]  # at most MAX_EXAMPLES, as the benchmark recorded them


class TaskPrompts(TypedDict):
    prompts: int
    languages: dict[str, int]  # language -> prompts


class SettingPrompts(TypedDict):
    prompts: int
    option_rotations: int  # the option-order pass's further rotations
    tasks: dict[str, TaskPrompts]
    templates: list[str]
    with_exemplars: int


class RenderedSetting(SettingPrompts):
    file: str  # <setting>.parquet


class SkippedSetting(TypedDict):
    file: None
    prompts: int  # 0
    skipped: str  # why the setting has no prompts


# render_stats.json's entry of one configured setting: its prompts file, or why it has none
SettingEntry = RenderedSetting | SkippedSetting


class RenderStats(TypedDict):
    """render_stats.json (the sample, templates and counts only where the benchmark is enabled)."""

    benchmark: str
    enabled: bool
    render_params: Mapping[str, object]
    settings: dict[str, SettingEntry]
    prompts_total: int
    notes: list[str]
    sample: NotRequired[dict[str, object]]
    templates: NotRequired[dict[str, dict[str, str]]]
    not_rendered: NotRequired[dict[str, ReasonCount]]
    flagged: NotRequired[dict[str, ReasonCount]]


def load_tasks(processed_dir: Path, benchmark: str) -> dict[str, list[Item]]:
    """Every task the build wrote (as listed in its build_stats.json)."""
    stats_path = processed_dir / paths.build_stats(benchmark).name
    if not stats_path.is_file():
        raise IdiombenchError(f"{stats_path} is missing: run `idiombench build {benchmark}` first")
    stats = read_json_object(stats_path)
    tasks = stats.get("tasks")
    if not isinstance(tasks, dict):
        raise DataError(stats_path, "no `tasks` mapping", expected="the build's task -> item count")
    loaded: dict[str, list[Item]] = {}
    for task, count in sorted(tasks.items()):
        path = processed_dir / f"{task}.parquet"
        if not path.is_file():
            raise DataError(path, "items file listed in build_stats.json is missing", expected=f"{count} items")
        items = read_items(path)
        if len(items) != count:
            raise DataError(path, f"{len(items)} items, build_stats.json says {count}", expected="a complete build")
        for row, item in enumerate(items):
            if item.benchmark != benchmark or item.task != task:
                raise DataError(
                    path,
                    f"item {item.item_id} is {item.benchmark}/{item.task}",
                    row=row,
                    expected=f"{benchmark}/{task}",
                )
        loaded[task] = items
    return loaded


def _summarise(groups: Mapping[str, list[object]]) -> dict[str, ReasonCount]:
    return {reason: {"count": len(ex), "examples": ex[:MAX_EXAMPLES]} for reason, ex in sorted(groups.items())}


def setting_stats(prompts: list[Prompt]) -> SettingPrompts:
    tasks: dict[str, Counter[str]] = {}
    for prompt in prompts:
        tasks.setdefault(prompt.task, Counter())[prompt.language] += 1
    return {
        "prompts": len(prompts),
        "option_rotations": sum(1 for p in prompts if p.rotation),  # the option-order pass's further rotations
        "tasks": {
            task: {"prompts": sum(langs.values()), "languages": dict(sorted(langs.items()))}
            for task, langs in sorted(tasks.items())
        },
        "templates": sorted({p.template_id for p in prompts}),
        "with_exemplars": sum(1 for p in prompts if p.exemplar_ids),
    }


def render_stats(benchmark: str, config: RenderConfig, output: RenderOutput | None) -> RenderStats:
    params = config.render.model_dump(mode="json")
    if output is None:
        return {
            "benchmark": benchmark,
            "enabled": False,
            "render_params": params,
            "settings": {},
            "prompts_total": 0,
            "notes": [f"benchmarks.{benchmark}.enabled is false: no prompts rendered."],
        }
    settings: dict[str, SettingEntry] = {}
    for setting in config.render.settings:
        if setting in output.prompts and output.prompts[setting]:
            settings[setting] = {"file": f"{setting}.parquet", **setting_stats(output.prompts[setting])}
        else:
            reason = output.skipped.get(setting, "no prompts")
            settings[setting] = {"file": None, "prompts": 0, "skipped": reason}
    return {
        "benchmark": benchmark,
        "enabled": True,
        "render_params": params,
        "settings": settings,
        "prompts_total": sum(s["prompts"] for s in settings.values()),
        "sample": output.sample,
        "templates": dict(sorted(output.templates.items())),
        "not_rendered": _summarise(output.not_rendered),
        "flagged": _summarise(output.flagged),
        "notes": output.notes,
    }


@dataclass
class RenderRun:
    stats: RenderStats
    out_dir: Path

    def summary_lines(self) -> list[str]:
        name = self.stats["benchmark"]
        if not self.stats["enabled"]:
            return [f"render {name}: disabled (benchmarks.{name}.enabled: false); no prompts rendered"]
        parts = []
        for setting, info in self.stats["settings"].items():
            rotated = info.get("option_rotations")
            rotations = f" ({rotated:,} option rotations)" if rotated else ""
            parts.append(f"{setting} {info['prompts']:,}{rotations}" + (" (skipped)" if info.get("skipped") else ""))
        lines = [f"render {name}: {self.stats['prompts_total']:,} prompts ({', '.join(parts)}) -> {self.out_dir}"]
        for setting, info in self.stats["settings"].items():
            skipped = info.get("skipped")
            if skipped:
                lines.append(f"render {name}: {setting}: no prompts: {skipped}")
        for reason, counted in self.stats["not_rendered"].items():
            lines.append(f"render {name}: {counted['count']:,} items not rendered: {reason}")
        for reason, counted in self.stats["flagged"].items():
            lines.append(f"render {name}: {counted['count']:,} prompts flagged: {reason}")
        return lines


def render_benchmark(benchmark: str, config: RenderConfig, processed_dir: Path, raw_dir: Path) -> RenderOutput | None:
    """In memory: the benchmark's prompts, or None when it is disabled."""
    if not config.enabled:
        return None
    tasks = load_tasks(processed_dir, benchmark)
    output: RenderOutput = get_benchmark(benchmark).render(tasks, config, raw_dir)
    unknown = sorted(set(output.prompts) - set(config.render.settings))
    if unknown:
        raise IdiombenchError(f"render {benchmark}: rendered settings {unknown} that are not configured")
    for setting, prompts in output.prompts.items():
        ids = [p.prompt_id for p in prompts]
        if len(set(ids)) != len(ids):
            raise IdiombenchError(f"render {benchmark}: duplicate prompt ids in setting {setting}")
    return output


def write_render(benchmark: str, config: RenderConfig, output: RenderOutput | None, out_dir: Path) -> RenderRun:
    """Write the prompt tables and render_stats.json into a staging directory that then
    replaces `out_dir`: it is the previous complete render or the new complete one."""
    stats = render_stats(benchmark, config, output)
    with staged_directory(out_dir, paths.RENDER_OUTPUT) as staging:
        if output is not None:
            for setting in config.render.settings:
                prompts = output.prompts.get(setting)
                if prompts:
                    write_prompts(staging / f"{setting}.parquet", prompts)
        write_json(staging / STATS_FILE, stats)
    return RenderRun(stats, Path(out_dir))


def run_render(
    benchmark: str,
    config: RenderConfig,
    *,
    processed_dir: Path | None = None,
    raw_dir: Path | None = None,
    out_dir: Path | None = None,
) -> RenderRun:
    output = render_benchmark(
        benchmark, config, processed_dir or paths.processed_dir(benchmark), raw_dir or paths.raw_dir(benchmark)
    )
    return write_render(benchmark, config, output, out_dir or paths.prompts_dir(benchmark))
