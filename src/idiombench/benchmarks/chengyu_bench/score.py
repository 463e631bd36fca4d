"""`idiombench score chengyu-bench`: one row per generation row, per setting.

Every generation row is scored (an unparseable or failed output is a row with
`parse_failed`, never dropped). Columns, all settings:

    prompt_id, task, setting, item_id, pass, sample_index   identity (sorted by these)
    data             release | sample | chid: which data the item comes from
    passage          ChID items: the passage (sha256 of its text without the blanks), the
                     cluster the report's intervals resample; None for the other tasks
    gold             the gold label / idiom
    parsed           the parser's value as a list (empty: nothing read)
    ok, flags        the parser's verdict (requested format followed) and what was odd
    answered         the value counted as an answer (metrics.answer_counts)
    parse_failed     nothing could be read (wrong, counted)
    unformatted      a value read without the requested format
    generation_error the backend produced no text
    prompt_matches_template  the prompt re-rendered from the item with the current
                     template has the generation's prompt hash (False: generated from
                     another template or item text; counted in aggregate)

connotation, appropriateness: prediction, correct. chid_candidates: also ambiguous,
not_a_candidate, and for the option-order pass (`rotation` > 0: the candidates shown rotated)
position (the shown position of the chosen candidate) and n_options. open_cloze,
chid_open_cloze: acceptable, predictions (normalised, at most 5, as written), listed, rank,
hit_at_1 … hit_at_5, n_predicted, n_valid, invalid.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from ...core import paths
from ...core.errors import DataError
from ...core.generation_types import item_context
from ...core.io import sha256_bytes
from ...core.items import Item
from ...core.parsing import normalise_idiom
from ...templating.prompts import hash_messages
from ...templating.templates import ChatTemplate, load_package_templates
from .build import RELEASE_TASKS, SAMPLE_TASKS
from .chid import PLACEHOLDER
from .idioms import IdiomList, load_idiom_list
from .metrics import TOP_K, score_choice, score_label, score_ranked
from .parse import parse_output
from .render import PACKAGE, template_key, values_for

if TYPE_CHECKING:
    from ..contexts import ScoreContext
    from .config import ChengyuBenchConfig

LABEL_SETTINGS = ("connotation", "appropriateness")
CHOICE_SETTINGS = ("chid_candidates",)
RANKED_SETTINGS = ("open_cloze", "chid_open_cloze")
SORT_KEY = ["prompt_id", "pass", "sample_index"]
HIT_COLUMNS = [f"hit_at_{k}" for k in range(1, TOP_K + 1)]
COMMON_COLUMNS = [
    "prompt_id",
    "task",
    "setting",
    "item_id",
    "pass",
    "sample_index",
    "rotation",
    "data",
    "passage",
    "gold",
    "parsed",
    "ok",
    "flags",
    "answered",
    "parse_failed",
    "unformatted",
    "generation_error",
    "prompt_matches_template",
]
SETTING_COLUMNS = {
    "label": ["prediction", "correct"],
    "choice": ["prediction", "correct", "ambiguous", "not_a_candidate", "position", "n_options"],
    "ranked": ["acceptable", "predictions", "listed", "rank", *HIT_COLUMNS, "n_predicted", "n_valid", "invalid"],
}


def setting_kind(setting: str) -> str:
    if setting in LABEL_SETTINGS:
        return "label"
    if setting in CHOICE_SETTINGS:
        return "choice"
    if setting in RANKED_SETTINGS:
        return "ranked"
    raise KeyError(setting)


def data_source(task: str) -> str:
    """release (the official Chengyu-Bench release), sample (the project's own), chid (FewCLUE ChID)."""
    if task in RELEASE_TASKS:
        return "release"
    if task in SAMPLE_TASKS:
        return "sample"
    return "chid"


def passage_key(item: Item) -> str | None:
    """A ChID item's passage: lines asking about blanks of one passage share it (FewCLUE's
    test_public has one line per passage, so there it is the item)."""
    if data_source(item.task) != "chid":
        return None
    text = "".join(str(item.fields.get("paragraph", item.input)).replace(PLACEHOLDER, "").split())
    return sha256_bytes(text.encode("utf-8"))[:16]


class PromptCheck:
    """Whether a generation's prompt is what the current template makes of its item."""

    def __init__(self) -> None:
        self.templates = load_package_templates(PACKAGE, "chengyu_bench")
        self._hashes: dict[tuple[str, str, str, int], str] = {}  # (setting, task, item, rotation) -> hash

    def template(self, setting: str) -> ChatTemplate:
        return self.templates.get(template_key(setting))

    def matches(self, setting: str, item: Item, prompt_hash: str, rotation: int = 0) -> bool:
        key = (setting, item.task, item.item_id, rotation)
        if key not in self._hashes:
            self._hashes[key] = hash_messages(self.template(setting).render(values_for(setting, item, rotation)))
        return self._hashes[key] == prompt_hash


def _item(ctx: ScoreContext[ChengyuBenchConfig], setting: str, row: int, gen: dict[str, Any]) -> Item:
    item = ctx.items.get(gen["task"], {}).get(gen["item_id"])
    if item is None:
        where = paths.generations_file(benchmark=ctx.benchmark, model=ctx.model, setting=setting)
        raise DataError(
            where,
            f"generation {gen['prompt_id']}: no item {gen['item_id']} in task {gen['task']}",
            row=row,
            expected=f"an item of {paths.task_items(ctx.benchmark, gen['task'])} "
            "(rebuild, render and generate again after changing the data)",
        )
    return item


def score_row(
    setting: str,
    kind: str,
    item: Item,
    gen: dict[str, Any],
    accept_unformatted: bool,
    idioms: IdiomList | None,
    check: PromptCheck,
) -> dict[str, object]:
    rotation = int(gen["rotation"])
    context = item_context(item, setting, rotation)
    parsed = parse_output(context, gen["text"])
    value = parsed.value
    row: dict[str, Any] = {
        "prompt_id": gen["prompt_id"],
        "task": gen["task"],
        "setting": setting,
        "item_id": gen["item_id"],
        "pass": gen["pass"],
        "sample_index": int(gen["sample_index"]),
        "rotation": rotation,
        "data": data_source(item.task),
        "passage": passage_key(item),
        "gold": item.answer or "",
        "parsed": [] if value is None else [str(v) for v in (value if isinstance(value, tuple) else (value,))],
        "ok": parsed.ok,
        "flags": list(parsed.flags),
        "generation_error": gen.get("error") is not None and not pd.isna(gen.get("error")),
        # None: the prompt is unknown (predictions produced elsewhere, evaluate-predictions)
        "prompt_matches_template": check.matches(setting, item, gen["prompt_hash"], rotation)
        if gen["prompt_hash"]
        else None,
    }
    if kind == "ranked":
        acceptable = list(dict.fromkeys(normalise_idiom(a) for a in (item.answer or "", *item.references) if a))
        assert idioms is not None
        ranked = score_ranked(parsed, acceptable, idioms.__contains__, accept_unformatted)
        row.update(
            {
                "answered": bool(ranked.predictions),
                "parse_failed": ranked.parse_failed,
                "unformatted": ranked.unformatted,
                "acceptable": acceptable,
                "predictions": list(ranked.predictions),
                "listed": ranked.listed,
                "rank": ranked.rank,
                **{f"hit_at_{k}": ranked.hit(k) for k in range(1, TOP_K + 1)},
                "n_predicted": ranked.n_predicted,
                "n_valid": ranked.n_valid,
                "invalid": list(ranked.invalid),
            }
        )
        return row
    scored = (score_label if kind == "label" else score_choice)(parsed, row["gold"], accept_unformatted)
    row.update(
        {
            "answered": scored.prediction is not None,
            "parse_failed": scored.parse_failed,
            "unformatted": scored.unformatted,
            "prediction": scored.prediction,
            "correct": scored.correct,
        }
    )
    if kind == "choice":
        row["ambiguous"] = scored.ambiguous
        row["not_a_candidate"] = "not_a_candidate" in parsed.flags
        shown = [normalise_idiom(c) for c in context.choices]
        row["position"] = shown.index(scored.prediction) if scored.prediction in shown else None
        row["n_options"] = len(context.choices)
    return row


def score(ctx: ScoreContext[ChengyuBenchConfig]) -> dict[str, pd.DataFrame]:
    cfg = ctx.config.score
    check = PromptCheck()
    idioms: IdiomList | None = None
    tables: dict[str, pd.DataFrame] = {}
    for setting, frame in sorted(ctx.generations.items()):
        try:
            kind = setting_kind(setting)
        except KeyError:
            raise DataError(
                paths.generations_file(benchmark=ctx.benchmark, model=ctx.model, setting=setting),
                f"unknown setting {setting!r}",
                expected=f"one of {', '.join(LABEL_SETTINGS + CHOICE_SETTINGS + RANKED_SETTINGS)}",
            ) from None
        if kind == "ranked" and idioms is None:
            idioms = load_idiom_list(cfg.valid_idiom.four_character_only)
        rows = []
        for index, gen in enumerate(frame.to_dict("records")):
            if gen["setting"] != setting:
                raise DataError(
                    paths.generations_file(benchmark=ctx.benchmark, model=ctx.model, setting=setting),
                    f"row of setting {gen['setting']!r}",
                    row=index,
                    expected=f"setting {setting!r}",
                )
            item = _item(ctx, setting, index, gen)
            rows.append(score_row(setting, kind, item, gen, cfg.accept_unformatted, idioms, check))
        columns = COMMON_COLUMNS + SETTING_COLUMNS[kind]
        table = pd.DataFrame(rows, columns=columns)
        table["rotation"] = table["rotation"].astype("int32")
        if kind == "ranked":
            table["rank"] = table["rank"].astype("Int64")
        if kind == "choice":
            table["position"] = table["position"].astype("float64")
        tables[setting] = table.sort_values(SORT_KEY, kind="stable").reset_index(drop=True)
    if idioms is not None:
        ctx.notes.append(f"Valid Idiom: predictions looked up in {idioms.describe()}.")
    return tables
