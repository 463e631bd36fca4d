"""A small project for the generate stage: hand-written items and prompts (as `build` and
`render` would write them) and a params.yaml naming the models under test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from idiombench.core.generation_types import Message
from idiombench.core.items import Item, write_items
from idiombench.templating.prompts import Prompt, write_prompts

IDIOMS = [
    ("画蛇添足", "比喻做了多余的事"),
    ("一鸣惊人", "比喻平时没有突出的表现，一下子做出惊人的成绩"),
    ("刻舟求剑", "比喻拘泥不知变通"),
    ("不耻下问", "不以向地位比自己低的人请教为耻"),
    ("守株待兔", "比喻死守狭隘经验，不知变通"),
    ("亡羊补牢", "比喻出了问题以后想办法补救"),
]
PATTERNS = ["ABCD", "BACD", "DCBA", "CDAB"]
SETTINGS = {
    "zero_shot": "请解释以下文本的含义，只输出一行。输入文本：{idiom}",
    "cot": "请一步步思考，严格两行输出 Thinking Process: … / Final Meaning: …。输入文本：{idiom}",
}


def permute(expression: str, pattern: str) -> str:
    return "".join(expression["ABCD".index(c)] for c in pattern)


def orderprobe_items(copies: int = 1) -> list[Item]:
    items = []
    for copy in range(copies):
        for row, (idiom, meaning) in enumerate(IDIOMS):
            for pattern in PATTERNS:
                items.append(
                    Item(
                        item_id=f"zh-CN/{copy * 100 + row:04d}/{pattern}",
                        benchmark="orderprobe",
                        task="restore",
                        language="zh-CN",
                        input=permute(idiom, pattern),
                        answer=idiom,
                        references=(meaning,),
                        fields={"idiom": permute(idiom, pattern)},
                        meta={"pattern": pattern, "copy": copy},
                    )
                )
    return items


def orderprobe_prompts(items: list[Item], settings: dict[str, str] = SETTINGS) -> dict[str, list[Prompt]]:
    out = {}
    for setting, template in settings.items():
        out[setting] = [
            Prompt(
                benchmark="orderprobe",
                task="restore",
                setting=setting,
                item_id=item.item_id,
                language="zh-CN",
                messages=(
                    Message("system", "你是一个语言专家。"),
                    Message("user", template.format(idiom=item.input) + f" #{item.meta['copy']}"),
                ),
                template_id=f"orderprobe/{setting}/zh-CN",
                template_hash="t" * 16,
            )
            for item in items
        ]
    return out


ROOT = Path(__file__).resolve().parents[2]


def params_dict(
    models: dict[str, Any],
    *,
    consistency_n: int = 2,
    max_new_tokens: int = 8,
    seed: int = 0,
    consistency_settings: list[str] | None = None,
) -> dict:
    off = {"enabled": False}
    # sections generate does not read are taken from the project's params.yaml
    default = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    return {
        **{key: value for key, value in default.items() if key not in ("profile", "seed", "benchmarks", "models")},
        "profile": "test",
        "seed": seed,
        "benchmarks": {
            "orderprobe": {
                "enabled": True,
                "generate": {
                    "main": {"max_new_tokens": max_new_tokens},
                    "extra": {
                        "consistency": {
                            "n": consistency_n,
                            "temperature": 0.7,
                            "max_new_tokens": max_new_tokens,
                            "settings": consistency_settings,
                        }
                    },
                },
            },
            "g-idiomalign": off,
            "semanticqa": off,
            "chengyu-bench": off,
        },
        "models": models,
    }


def write_project(root: Path, models: dict[str, Any], *, copies: int = 1, **params: Any) -> Path:
    """data/processed/orderprobe/restore.parquet (+ build_stats.json), results/prompts/orderprobe/<setting>.parquet
    (+ render_stats.json), params.yaml."""
    items = orderprobe_items(copies)
    write_items(root / "data" / "processed" / "orderprobe" / "restore.parquet", items)
    # build's completion record (written last by build): it marks the folder as build's own output
    (root / "data" / "processed" / "orderprobe" / "build_stats.json").write_text(
        f'{{"tasks": {{"restore": {len(items)}}}}}\n', encoding="utf-8"
    )
    for setting, prompts in orderprobe_prompts(items).items():
        write_prompts(root / "results" / "prompts" / "orderprobe" / f"{setting}.parquet", prompts)
    # render's completion record (written last by render): generate refuses a prompts folder without it
    (root / "results" / "prompts" / "orderprobe" / "render_stats.json").write_text("{}\n", encoding="utf-8")
    (root / "params.yaml").write_text(
        yaml.safe_dump(params_dict(models, **params), allow_unicode=True, sort_keys=False), encoding="utf-8"
    )
    return root
