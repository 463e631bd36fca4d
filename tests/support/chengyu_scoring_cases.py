"""Hand-written Chengyu-Bench items and model outputs, scored and aggregated through the
benchmark's hooks (shared by the scoring and report unit tests)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from idiombench.benchmarks.chengyu_bench import BENCHMARK
from idiombench.benchmarks.chengyu_bench.config import ChengyuBenchConfig, ChengyuBenchScore, ValidIdiomConfig
from idiombench.benchmarks.chengyu_bench.render import values_for
from idiombench.benchmarks.chengyu_bench.score import PromptCheck
from idiombench.benchmarks.contexts import AggregateContext, ScoreContext
from idiombench.core.items import Item
from idiombench.templating.prompts import hash_messages

CANDIDATES = ("严阵以待", "改朝换代", "不共戴天", "天南海北", "物归原主", "波谲云诡", "高视阔步")


def item(task: str, item_id: str, answer: str, **kw: Any) -> Item:
    return Item(
        item_id=item_id,
        benchmark="chengyu-bench",
        task=task,
        language="zh-CN",
        input=kw.pop("input", answer),
        answer=answer,
        **kw,
    )


ITEMS: dict[str, dict[str, Item]] = {
    "connotation_sample": {
        i.item_id: i
        for i in [
            item("connotation_sample", "c1", "positive", input="雪中送炭", fields={"idiom": "雪中送炭"}),
            item("connotation_sample", "c2", "negative", input="助纣为虐", fields={"idiom": "助纣为虐"}),
            item("connotation_sample", "c3", "negative", input="画蛇添足", fields={"idiom": "画蛇添足"}),
            item("connotation_sample", "c4", "positive", input="见义勇为", fields={"idiom": "见义勇为"}),
        ]
    },
    "chid": {
        i.item_id: i
        for i in [
            item(
                "chid",
                f"{n:05d}",
                "改朝换代",
                choices=CANDIDATES,
                references=("改朝换代",),
                input=f"passage {n} #idiom#",
                fields={"paragraph": f"passage {n} #idiom#"},
            )
            for n in range(8)
        ]
    },
    "open_cloze": {
        i.item_id: i
        for i in [
            *(
                item(
                    "open_cloze",
                    f"o{n}",
                    "好景不长",
                    references=("好景不长",),
                    input=f"段落{n}##idiom##",
                    fields={"paragraph": f"段落{n}##idiom##"},
                )
                for n in range(1, 7)
            ),
            item(
                "open_cloze",
                "o7",
                "一鸣惊人",
                references=("一鸣惊人", "一举成名"),
                input="段落7##idiom##",
                fields={"paragraph": "段落7##idiom##"},
            ),
        ]
    },
}
OUTPUTS = {
    "connotation": [
        ("connotation_sample", "c1", "<positive>"),  # correct
        ("connotation_sample", "c2", "<think>maybe <positive>?</think>\n<negative>"),  # think block stripped: correct
        ("connotation_sample", "c3", "褒义"),  # unformatted, wrong
        ("connotation_sample", "c4", "I cannot tell."),  # unparseable
    ],
    "chid_candidates": [
        ("chid", "00000", "<answer><改朝换代></answer>"),  # correct
        ("chid", "00001", "<answer><严阵以待></answer>"),  # wrong
        ("chid", "00002", "<answer><一鸣惊人></answer>"),  # not a candidate
        ("chid", "00003", "<answer><改朝换代, 严阵以待></answer>"),  # hedge: no answer
        ("chid", "00004", "我认为是改朝换代。"),  # candidate named without the block: unformatted, correct
        ("chid", "00005", "<answer><2></answer>"),  # candidate number 2 = 改朝换代: unformatted, correct
        ("chid", "00006", "<think><answer><改朝换代></answer>"),  # unclosed think: nothing written
        ("chid", "00007", ""),  # failed generation
    ],
    "open_cloze": [
        ("open_cloze", "o1", "<answer><乐极生悲, 好景不长></answer>"),  # rank 2, 2 valid of 2
        ("open_cloze", "o2", "<answer><乐极生悲, 乐极生悲, 乐极生悲, 好景不长, 天长地久></answer>"),  # rank 4, 3 of 3
        ("open_cloze", "o3", "<answer><好景不常在, 快乐时光, 好景不长></answer>"),  # rank 3, 1 valid of 3
        ("open_cloze", "o4", "I don't know"),  # unparseable
        (
            "open_cloze",
            "o5",
            "<think><answer><好景不长></answer></think>\n<answer><天长地久, 好景 不长></answer>",
        ),  # rank 2, 2/2
        (
            "open_cloze",
            "o6",
            "<answer><乐极生悲, 天长地久, 一鸣惊人, 一举成名, 画蛇添足, 好景不长></answer>",
        ),  # none, 5/5
        ("open_cloze", "o7", "<answer><一举成名></answer>"),  # an acceptable alternative at rank 1, 1/1
    ],
}


def generations(
    check: PromptCheck,
    wrong_hash: tuple[str, str] | None = None,
    outputs_by_setting: dict[str, list[tuple[str, str, str]]] = OUTPUTS,
    items: dict[str, dict[str, Item]] = ITEMS,
    unknown_hash: tuple[str, str] | None = None,
) -> dict[str, pd.DataFrame]:
    out = {}
    for setting, outputs in outputs_by_setting.items():
        rows = []
        for task, item_id, text in outputs:
            it = items[task][item_id]
            prompt_hash = hash_messages(check.template(setting).render(values_for(setting, it)))
            if wrong_hash == (setting, item_id):
                prompt_hash = "0" * 16  # generated from another template
            if unknown_hash == (setting, item_id):
                prompt_hash = ""  # produced elsewhere (evaluate-predictions): the prompt is unknown
            failed = text == ""
            rows.append(
                {
                    "prompt_id": f"chengyu-bench/{task}/{setting}/{item_id}",
                    "benchmark": "chengyu-bench",
                    "task": task,
                    "setting": setting,
                    "item_id": item_id,
                    "prompt_hash": prompt_hash,
                    "pass": "main",
                    "sample_index": 0,
                    "rotation": 0,
                    "text": text,
                    "prompt_tokens": None,
                    "completion_tokens": None,
                    "finish_reason": "error" if failed else "stop",
                    "error": "boom" if failed else None,
                    "request_key": f"k-{item_id}",
                }
            )
        out[setting] = pd.DataFrame(rows)
    return out


def config(accept_unformatted: bool = True) -> ChengyuBenchConfig:
    return ChengyuBenchConfig(
        score=ChengyuBenchScore(
            accept_unformatted=accept_unformatted, valid_idiom=ValidIdiomConfig(four_character_only=True)
        )
    )


def score_and_aggregate(
    default_params,
    accept_unformatted: bool = True,
    wrong_hash=None,
    outputs: dict[str, list[tuple[str, str, str]]] = OUTPUTS,
    items: dict[str, dict[str, Item]] = ITEMS,
    unknown_hash=None,
):
    cfg = config(accept_unformatted)
    ctx = ScoreContext(
        params=default_params,
        model="m",
        benchmark="chengyu-bench",
        config=cfg,
        generations=generations(PromptCheck(), wrong_hash, outputs, items, unknown_hash),
        items=items,
    )
    tables = BENCHMARK.score(ctx)
    body = BENCHMARK.aggregate(
        AggregateContext(
            params=default_params,
            model="m",
            benchmark="chengyu-bench",
            config=cfg,
            scores=tables,
            items=items,
            scoring_meta={"notes": ctx.notes},
        )
    )
    return tables, body
