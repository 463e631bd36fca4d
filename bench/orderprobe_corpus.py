"""A realistic OrderProbe scoring project, built deterministically from the release's own text.

Used by bench/score_speed.py (rows/s of `idiombench score orderprobe`) and bench/score_identity.py
(score tables before and after a change, byte for byte). Nothing here is random at run time:
every choice comes from `random.Random(<string>)`, which Python seeds from the string's bytes
(not from PYTHONHASHSEED), so two runs write the same project.

- The release: acquired from the mirror (IDIOMBENCH_MIRROR, as the tests do) and built by
  OrderProbe's own build code with the default params.
- The expressions: `per_language` per language, drawn with a fixed seed; every one of their 24
  inputs (the canonical form and the 23 permutations).
- The outputs: per input, one `main` output and `samples` distinct `consistency` outputs per
  setting, each ~`chars` characters (700: about a 512-token answer) of the language's own
  reference glosses (other expressions'), in sentence frames a model writes ("X的意思是：…",
  "例如：…"), with the expression itself up front. A share of the outputs holds ASCII (list
  numbers, a Latin word, a percentage) as real outputs do, so the segmenters see mixed text too.
  The Japanese release has no glosses: its outputs are built from its expressions (its rows have
  no references, so no term segments them). cot / three_shot outputs are two lines
  (Thinking Process / Final Meaning), zero_shot one line.
"""

from __future__ import annotations

import os
import random
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from idiombench.benchmarks.base import write_build  # noqa: E402
from idiombench.benchmarks.registry import get_benchmark  # noqa: E402
from idiombench.core.items import Item, read_items  # noqa: E402
from idiombench.core.yamlfile import load_yaml_file  # noqa: E402
from idiombench.data.acquire import acquire, resolve_mirror  # noqa: E402
from idiombench.generation.table import write_generations  # noqa: E402
from idiombench.pipeline.config import load_params  # noqa: E402

BENCHMARK = "orderprobe"
MODEL = "bench"
LANGUAGES = ("zh-CN", "zh-TW", "ja", "ko")
OPENINGS = {
    "zh-CN": ["{e}的意思是：", "“{e}”这个成语的含义是", "判断含义：{e}，", "{e}：", "成语“{e}”指"],
    "zh-TW": ["{e}的意思是：", "「{e}」這個成語的含義是", "判斷含義：{e}，", "{e}：", "成語「{e}」指"],
    "ja": ["「{e}」とは、", "意味：{e}は", "{e}：", "「{e}」という四字熟語は"],
    "ko": ["{e}의 의미는 ", "의미: {e}은 ", "{e}: ", "'{e}'라는 성어는 "],
}
FRAMES = {
    "zh-CN": ["{g}。", "例如：{g}。", "也就是说，{g}；", "这个成语常用来形容{g}，", "{g}，", "比喻{g}。"],
    "zh-TW": ["{g}。", "例如：{g}。", "也就是說，{g}；", "這個成語常用來形容{g}，", "{g}，", "比喻{g}。"],
    "ja": ["{g}という意味です。", "例えば、{g}のように使います。", "{g}、", "これは{g}に近い表現です。"],
    "ko": ["{g}라는 뜻입니다. ", "예를 들어, {g}. ", "{g}, ", "즉 {g}를 의미합니다. "],
}
# Mixed-script pieces real outputs carry (numbered lists, a Latin word, numbers): a fifth of the
# outputs hold one or two.
ASCII = ["1. ", "2. ", "(1)", "AI", "e.g. ", "Q&A", "100%", "3.5", "idiom", "COL_10", "A-B", "x+y"]


def mirrors() -> list[Path]:
    found = resolve_mirror(None)
    if not found:
        raise SystemExit(
            "set IDIOMBENCH_MIRROR to the mirror directories of the release files "
            "(the benchmark releases and the authors' code, separated by ':', as .ci/run sets it)"
        )
    return found


def build_release(root: Path) -> Path:
    """data/raw + data/processed of OrderProbe under `root`, by the project's acquire and build."""
    params = load_params(ROOT / "params.yaml")
    config = params.benchmark(BENCHMARK)
    bench = get_benchmark(BENCHMARK)
    raw = root / "data" / "raw" / BENCHMARK
    acquire(BENCHMARK, bench.file_specs(config), raw, mirrors(), download=False)
    processed = root / "data" / "processed" / BENCHMARK
    write_build(bench.build(raw, config), processed)
    return processed


def canonical_items(processed: Path) -> dict[str, list[Item]]:
    """language -> its canonical items (one per expression), in expression id order."""
    out: dict[str, list[Item]] = defaultdict(list)
    for item in read_items(processed / "restore.parquet"):
        if item.meta["is_canonical"]:
            out[item.language].append(item)
    return {language: sorted(items, key=lambda i: i.meta["expression_id"]) for language, items in out.items()}


def realistic_text(language: str, expression: str, pool: list[str], key: str, chars: int) -> str:
    """About `chars` characters explaining `expression` with glosses from `pool` (one line)."""
    rng = random.Random(key)
    parts = [rng.choice(OPENINGS[language]).format(e=expression)]
    ascii_left = rng.choice([0, 0, 0, 0, 1, 2])
    length = len(parts[0])
    while length < chars:
        piece = rng.choice(FRAMES[language]).format(g=rng.choice(pool).strip())
        if ascii_left and rng.random() < 0.3:
            piece = rng.choice(ASCII) + piece
            ascii_left -= 1
        parts.append(piece)
        length += len(piece)
    return "".join(parts)[:chars].replace("\n", " ")


def output_text(setting: str, language: str, expression: str, pool: list[str], key: str, chars: int) -> str:
    body = realistic_text(language, expression, pool, key, chars)
    if setting == "zero_shot":
        return body
    split = len(body) * 2 // 3  # reasoning first, the meaning last
    return f"Thinking Process: {body[:split]}\nFinal Meaning: {body[split:]}"


def gloss_pools(canonical: dict[str, list[Item]]) -> dict[str, list[str]]:
    pools = {
        language: sorted({r for item in items for r in item.references if r.strip()})
        for language, items in canonical.items()
    }
    pools["ja"] = sorted({item.answer for item in canonical.get("ja", [])})  # no Japanese glosses
    return pools


def generation_rows(
    processed: Path, per_language: int, samples: int, settings: list[str], chars: int
) -> dict[str, list[dict[str, Any]]]:
    """setting -> generation rows of `per_language` expressions per language, all 24 inputs."""
    canonical = canonical_items(processed)
    pools = gloss_pools(canonical)
    chosen = set()
    for language in LANGUAGES:
        ids = [item.meta["expression_id"] for item in canonical.get(language, [])]
        chosen.update(random.Random(f"expressions/{language}").sample(ids, min(per_language, len(ids))))
    items = [item for item in read_items(processed / "restore.parquet") if item.meta["expression_id"] in chosen]
    out: dict[str, list[dict[str, Any]]] = {}
    for setting in settings:
        rows = []
        for item in items:
            for pass_name, index in [("main", 0)] + [("consistency", i) for i in range(samples)]:
                key = f"{setting}/{item.item_id}/{pass_name}/{index}"
                text = output_text(setting, item.language, item.meta["expression"], pools[item.language], key, chars)
                rows.append(
                    {
                        "prompt_id": f"{BENCHMARK}/restore/{setting}/{item.item_id}",
                        "benchmark": BENCHMARK,
                        "task": "restore",
                        "setting": setting,
                        "item_id": item.item_id,
                        "prompt_hash": "0" * 16,
                        "pass": pass_name,
                        "sample_index": index,
                        "rotation": 0,
                        "text": text,
                        "prompt_tokens": 48,
                        "completion_tokens": 512,
                        "finish_reason": "length",
                        "error": None,
                        "request_key": key,
                    }
                )
        out[setting] = rows
    return out


def write_project(
    root: Path,
    per_language: int,
    samples: int,
    settings: list[str],
    chars: int,
    score_overrides: dict[str, Any] | None = None,
) -> int:
    """A project under `root` (params.yaml, the built release, one model's generations); the rows.
    The neural roles are off (model null): the lexical terms are what is measured and compared."""
    processed = build_release(root)
    total = 0
    for setting, rows in generation_rows(processed, per_language, samples, settings, chars).items():
        write_generations(root / "results" / "generations" / MODEL / BENCHMARK / f"{setting}.parquet", rows)
        total += len(rows)
    (root / "results" / "generations" / MODEL / "generation_info.json").write_text("{}\n", encoding="utf-8")
    write_params(root, settings, score_overrides or {})
    return total


def write_params(root: Path, settings: list[str], score_overrides: dict[str, Any]) -> None:
    raw = load_yaml_file(ROOT / "params.yaml")
    raw["models"] = {MODEL: {"backend": "echo"}}
    for role in raw["scoring"]["roles"].values():
        role["model"] = None
    section = raw["benchmarks"][BENCHMARK]
    section["render"]["settings"] = list(settings)
    merge(section["score"], score_overrides)
    for name in raw["benchmarks"]:
        if name != BENCHMARK:
            raw["benchmarks"][name]["enabled"] = False
    (root / "params.yaml").write_text(yaml.safe_dump(raw, allow_unicode=True, sort_keys=False), encoding="utf-8")


def merge(into: dict[str, Any], overrides: dict[str, Any]) -> None:
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merge(into[key], value)
        else:
            into[key] = value


def cli_env(src: Path | None = None) -> dict[str, str]:
    """The environment of an `idiombench` run on the code in `src` (default: this checkout)."""
    return {**os.environ, "PYTHONPATH": str(src or ROOT / "src")}
