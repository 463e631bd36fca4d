"""The types a benchmark's hooks receive and return (the contract's other half, beside
base.Benchmark). The stage drivers build them; benchmark packages import them from here,
never from the drivers."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from pydantic import BaseModel

if TYPE_CHECKING:
    import pandas as pd

    from ..core.generation_types import Message
    from ..core.items import Item
    from ..generation.config import GenerateConfig
    from ..params.schema import Params
    from ..scoring.registry import Scorers
    from ..templating.prompts import Prompt
    from ..templating.templates import ChatTemplate


class RenderSection(Protocol):
    """What the stages read of a benchmark's `render` section."""

    @property
    def settings(self) -> Sequence[str]: ...


class BenchmarkSection(Protocol):
    """What the stages read of every benchmark's params section (`benchmarks.<name>`, its
    `Benchmark.config_model`); the benchmark's own hooks see its whole model."""

    @property
    def enabled(self) -> bool: ...

    @property
    def render(self) -> RenderSection: ...

    @property
    def generate(self) -> GenerateConfig: ...


# a benchmark's params section: what `Benchmark` and the contexts its hooks receive are generic over
ConfigT = TypeVar("ConfigT", bound=BenchmarkSection)
BodyT = TypeVar("BodyT", bound=BaseModel)  # a benchmark's typed metrics body (metrics.body.MetricsBody)


@dataclass
class RenderOutput:
    """What a benchmark's render returns.

    prompts: setting -> prompts (in a deterministic order).
    templates: template id -> {"hash", "source"} of every template used.
    sample: task -> how its items were selected (the draw, or "all").
    skipped: setting -> why it has no prompts.
    not_rendered: reason -> examples of items left out of a setting.
    flagged: reason -> examples of prompts rendered with something odd (e.g. fewer exemplars).
    """

    prompts: dict[str, list[Prompt]] = field(default_factory=dict)
    templates: dict[str, dict[str, str]] = field(default_factory=dict)
    sample: dict[str, Any] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    not_rendered: dict[str, list[Any]] = field(default_factory=dict)
    flagged: dict[str, list[Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, prompt: Prompt) -> None:
        self.prompts.setdefault(prompt.setting, []).append(prompt)

    def use_template(self, template: ChatTemplate, source: str) -> None:
        self.templates[template.template_id] = {"hash": template.template_hash, "source": source}

    def leave_out(self, reason: str, example: object) -> None:
        self.not_rendered.setdefault(reason, []).append(example)

    def flag(self, reason: str, example: object) -> None:
        self.flagged.setdefault(reason, []).append(example)


# The columns every score table row carries besides its metrics: which generation row it scores
# (prompt_id, pass, sample_index) and which item and task (the score stage checks them; track,
# the intervals and the comparisons join on them).
SCORE_KEYS = ("prompt_id", "pass", "sample_index", "item_id", "task")


# The columns of a benchmark's `item_outcomes` frame (base.Benchmark.item_outcomes).
OUTCOME_COLUMNS = ("prompt_id", "sample_index", "unit", "outcome", "metric", "binary")


def outcome_frame(rows: pd.DataFrame, unit: Any, outcome: Any, metric: Any, binary: Any) -> pd.DataFrame:
    """An `item_outcomes` frame for `rows` (main-pass score rows): each argument a column or a
    constant; outcome as float (NaN: not scored)."""
    import pandas as pd

    frame = pd.DataFrame(
        {
            "prompt_id": rows["prompt_id"].astype(str).to_numpy(),
            "sample_index": rows["sample_index"].astype(int).to_numpy(),
        }
    )
    frame["unit"] = unit.astype(str).to_numpy() if hasattr(unit, "astype") else str(unit)
    frame["outcome"] = (
        pd.to_numeric(outcome, errors="coerce").astype(float).to_numpy()
        if hasattr(outcome, "to_numpy")
        else float(outcome)
    )
    frame["metric"] = metric.to_numpy() if hasattr(metric, "to_numpy") else str(metric)
    frame["binary"] = binary.to_numpy() if hasattr(binary, "to_numpy") else bool(binary)
    return frame[list(OUTCOME_COLUMNS)]


@dataclass
class ScoreContext(Generic[ConfigT]):
    params: Params
    model: str
    benchmark: str
    config: ConfigT  # the benchmark's params section
    generations: Mapping[str, pd.DataFrame]  # setting -> table (read when first looked up)
    items: dict[str, dict[str, Item]]
    scorers: Scorers | None = None  # created by the stage where the benchmark has scorer roles
    notes: list[str] = field(default_factory=list)


@dataclass
class AggregateContext(Generic[ConfigT]):
    params: Params
    model: str
    benchmark: str
    config: ConfigT
    scores: dict[str, pd.DataFrame]
    items: dict[str, dict[str, Item]]
    scoring_meta: dict[str, Any]


@dataclass
class ReportContext:
    params: Params
    benchmark: str
    metrics: dict[str, Any]  # model -> its metrics body (Benchmark.results_model; scored models only)
    figures_dir: Path  # where the section writes its PNGs

    def display_name(self, model: str) -> str:
        config = self.params.models.get(model)
        return (config.display_name if config is not None else None) or model

    def bodies(self, model: type[BodyT]) -> dict[str, BodyT]:
        """Every model's metrics body as the benchmark's typed body `model`: a body handed over as
        plain JSON (e.g. read by a caller that does not know the benchmark) is validated here."""
        bodies: dict[str, BodyT] = {}
        for name, body in self.metrics.items():
            if isinstance(body, model):
                bodies[name] = body
            elif isinstance(body, Mapping):
                bodies[name] = model.model_validate(body)
            else:
                raise TypeError(
                    f"{self.benchmark}: the metrics body of {name} is a {type(body).__name__}, not {model.__name__}"
                )
        return bodies


@dataclass(frozen=True)
class PlotSpec:
    """One `dvc plots` curve family a benchmark declares (`Benchmark.plots`): its folder under
    results/plots/, what dvc.yaml's `plots:` says of it (`idiombench dvc-yaml`), and how a
    model's metrics body becomes its records (one per x value; a setting not run is None)."""

    folder: str
    title: str
    x: str
    series: tuple[str, ...]
    rows_of: Callable[[dict[str, Any]], list[dict[str, Any]]]


@dataclass(frozen=True)
class ItemMetric:
    """An item-level metric shown on each item's MLflow trace (an assessment): a column of the
    benchmark's score table, and the scorer role behind it (its model is the assessment's
    source): a role name, a function of the score row (a per-language role), or None for a
    metric computed by the benchmark's own code."""

    column: str
    role: str | Callable[[Mapping[str, Any]], str] | None = None


@dataclass(frozen=True)
class ItemView:
    """How a benchmark's scored rows appear as items in MLflow (`Benchmark.item_view`; the
    track stage's traces, stages/track_traces.py). Column names are score-table columns; a tag that
    is not a column is read from the item's `meta`; a column a table lacks is left out.

    metrics: the item-level metrics (None: every numeric or boolean column but the row's keys).
    tags: what a researcher filters items by (besides benchmark, model, setting, task,
      language, pass, sample and status, which every trace has).
    answer: the columns holding the answer parsed from the output (the first one a table has);
      parse_ok: the boolean column saying the output followed the requested format; flags:
      columns of flag names.
    strata: the tags a sampled trace set is stratified by (params tracking.traces.sample).
    """

    metrics: tuple[ItemMetric, ...] | None = None
    tags: tuple[str, ...] = ()
    answer: tuple[str, ...] = ()
    parse_ok: str | None = None
    flags: tuple[str, ...] = ()
    strata: tuple[str, ...] = ("task",)


@dataclass(frozen=True)
class HumanLabels:
    """Labels a person gives items in the MLflow UI (feedback named `name`, one of `options`,
    on a trace of one of `settings`), pulled into the annotation file an analysis reads
    (`idiombench labels pull`). `file(config)` is that file's configured path (None: not
    configured); `read(path, model)` reads and validates it (prompt_id -> label); `value(v)` is
    the label a feedback value stands for, None when it is not one of the options."""

    name: str
    options: tuple[str, ...]
    instruction: str
    settings: tuple[str, ...]
    file: Callable[[Any], str | None]
    read: Callable[[str, str], dict[str, int]]
    value: Callable[[Any], int | None]


@dataclass(frozen=True)
class AttentionPrompt:
    """One generation to measure (`Benchmark.attention_prompts`): the prompt's messages, its
    tracked spans as name -> (message index, start, end) character offsets in that message
    (from the template, e.g. templating.templates.ChatTemplate.render_spans), the recorded output and
    the [start, end) characters of its content-bearing segment (None: nothing to measure, e.g.
    an empty output), and labels kept as columns of the per-item table (group, condition...)."""

    prompt_id: str
    setting: str
    item_id: str
    messages: tuple[Message, ...]
    spans: dict[str, tuple[int, int, int]]
    output: str
    content: tuple[int, int] | None
    labels: dict[str, Any] = field(default_factory=dict)


@dataclass
class AttentionContext(Generic[ConfigT]):
    params: Params
    model: str
    benchmark: str
    config: ConfigT  # the benchmark's params section
    generations: Mapping[str, pd.DataFrame]  # setting -> table (read when first looked up)
    items: dict[str, dict[str, Item]]
    scores: dict[str, pd.DataFrame]  # the score stage's per-item tables (setting -> table)
    prompts: dict[str, dict[str, Prompt]]  # setting -> prompt_id -> the rendered prompt
    notes: list[str] = field(default_factory=list)
