"""Throughput of each scorer role that runs offline in a profile (default: the embedded
default, params.yaml), and of the lexical scorers, on this machine's CPU (or GPU).

    PYTHONPATH=src python bench/scorers.py [--params params.yaml] [--pairs 300]
        [--orderprobe data/processed/orderprobe/restore.parquet]
        [--semanticqa data/raw/semanticqa/instances/idiom_paraphrase.jsonl]

Pairs are real texts: OrderProbe references (each paired with another expression's
reference) for zh-CN/zh-TW/ko, SemanticQA IEI sentences for English. Every pair is
distinct, so deduplication does not flatter the numbers; the model load is timed apart
(the first call of a role), then the role scores all pairs in one call.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from idiombench.core.items import read_items  # noqa: E402
from idiombench.pipeline.config import load_params  # noqa: E402
from idiombench.scoring import Scorers  # noqa: E402
from idiombench.scoring.lexical import brevity_penalty, f_beta, lexical_cosine, rouge_l_precision, token_length  # noqa: E402
from idiombench.scoring.tokenize import content_tokens  # noqa: E402

ROLE_LANGUAGE = {
    "cross_encoder": "zh-CN",
    "nli": "zh-CN",
    "sts_zh": "zh-CN",
    "sts_multilingual": "ko",
    "bertscore_zh": "zh-CN",
    "bertscore_ja": "ja",
    "bertscore_ko": "ko",
    "bertscore_en": "en",
    "embedder_en": "en",
    "embedder_multilingual": "zh-CN",
}


def cjk_pairs(path: Path, n: int, seed: int) -> dict[str, list[tuple[str, str, str]]]:
    """(expression, explanation-like text, reference) per language."""
    if not path.is_file():
        sys.exit(f"{path}: not found; build OrderProbe first (idiombench build orderprobe) or pass --orderprobe")
    by_language: dict[str, list[tuple[str, str]]] = {}
    for item in read_items(path):
        if item.meta["is_canonical"] and item.references:
            by_language.setdefault(item.language, []).append((item.answer, item.references[0]))
    rng = random.Random(seed)
    out = {}
    for language, rows in by_language.items():
        rng.shuffle(rows)
        rows = rows[: n + 1]
        out[language] = [(rows[i][0], rows[i + 1][1], rows[i][1]) for i in range(len(rows) - 1)]
    return out


def en_pairs(path: Path, n: int) -> list[tuple[str, str, str]]:
    if not path.is_file():
        sys.exit(f"{path}: not found; acquire SemanticQA first (idiombench acquire semanticqa) or pass --semanticqa")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(r["idiom"], r["context_literal"], r["context_idiomatic"]) for r in rows[:n]]


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--params", default=str(ROOT / "params.yaml"))
    parser.add_argument("--pairs", type=int, default=300)
    parser.add_argument("--orderprobe", default=str(ROOT / "data/processed/orderprobe/restore.parquet"))
    parser.add_argument("--semanticqa", default=str(ROOT / "data/raw/semanticqa/instances/idiom_paraphrase.jsonl"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import torch

    data = cjk_pairs(Path(args.orderprobe), args.pairs, args.seed)
    data["en"] = en_pairs(Path(args.semanticqa), args.pairs)
    scorers = Scorers(load_params(args.params).scoring)
    print(f"device {scorers.device}; torch threads {torch.get_num_threads()}; cpu count {os.cpu_count()}")
    print(f"{'role':24} {'model':42} {'status':13} {'lang':6} {'pairs':>5} {'load s':>7} {'pairs/s':>9}")
    for role, info in scorers.infos().items():
        language = ROLE_LANGUAGE[role]
        rows = data.get(language, [])
        if not info.computed or not rows:
            why = "not computed" if not info.computed else f"no {language} pairs"
            print(f"{role:24} {str(info.model):42} {info.status:13} {language:6} {'-':>5} {'-':>7} {why:>9}")
            continue
        pairs = [(ref, text) for _, text, ref in rows]
        call = {
            "embedder": lambda p, role=role: scorers.cosine(role, p),
            "cross_encoder": lambda p, role=role: scorers.cross_encoder(p, role),
            "bertscore": lambda p, role=role: scorers.bertscore(role, p),
            "nli": lambda p, role=role: scorers.nli(role, p),
        }[info.kind]
        warm = [("warm-up a", "warm-up b")]
        load = timed(partial(call, warm))
        seconds = timed(partial(call, pairs))
        print(
            f"{role:24} {str(info.model):42} {info.status:13} {language:6} {len(pairs):5d} {load:7.2f} "
            f"{len(pairs) / seconds:9.1f}"
        )

    print()
    print(
        f"{'lexical (per pair: content tokens of both sides, Fβ, LEX, ROUGE-L P, BP)':75} "
        f"{'lang':6} {'pairs':>5} {'pairs/s':>9}"
    )
    for language in ("zh-CN", "zh-TW", "ko", "en"):
        rows = data.get(language, [])
        if not rows:
            continue
        content_tokens(rows[0][1], language)  # load the tokeniser

        def lexical(rows: list[tuple[str, str, str]] = rows, language: str = language) -> None:
            for expression, text, ref in rows:
                pred, gold = content_tokens(text, language, [expression]), content_tokens(ref, language, [expression])
                f_beta(pred, gold)
                lexical_cosine(pred, gold)
                rouge_l_precision(text, ref, language, [expression])
                brevity_penalty(token_length(text, language, [expression]), token_length(ref, language, [expression]))

        seconds = timed(lexical)
        print(f"{'':75} {language:6} {len(rows):5d} {len(rows) / seconds:9.1f}")


if __name__ == "__main__":
    main()
