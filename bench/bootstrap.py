"""Run time of the report's bootstrap (report.uncertainty) on the FULL OrderProbe set.

    PYTHONPATH=src python bench/bootstrap.py [--expressions 3543] [--resamples 1000] [--samples 5]

Synthetic scores of the shape of the full benchmark (3,543 expressions x 24 inputs: the
canonical form and its 23 permutations; `--samples` consistency samples per perturbed input)
for one model, and a second model for the paired tests. Times, separately: building the
estimands of table 3 from the score rows (OrderProbe's `estimands` hook), the bootstrap
replicates of every cell of one setting (one pass per unit set: items, expressions), and the
paired tests between the two models with BH, as the report runs them.
"""

from __future__ import annotations

import argparse
import sys
import time
from itertools import permutations
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from idiombench.benchmarks.orderprobe.build import CATEGORIES  # noqa: E402
from idiombench.benchmarks.orderprobe.config import OrderProbeScore  # noqa: E402
from idiombench.benchmarks.orderprobe.uncertainty import group_estimands  # noqa: E402
from idiombench.report.tables import Cell, CellRef, Table  # noqa: E402
from idiombench.stages.report_uncertainty import Replicates, annotate_table  # noqa: E402
from idiombench.statistics.config import UncertaintyConfig  # noqa: E402

PATTERNS = ["".join(p) for p in permutations("ABCD")]  # ABCD first: the canonical form
LANGUAGES = ("zh-CN", "zh-TW", "ja", "ko")


def synthetic_scores(expressions: int, samples: int, skill: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    expr = np.repeat(np.arange(expressions), len(PATTERNS))
    pattern = np.tile(np.arange(len(PATTERNS)), expressions)
    language = np.array(LANGUAGES)[expr % len(LANGUAGES)]
    main = pd.DataFrame(
        {
            "item_id": [f"{lang}/{e:04d}/{PATTERNS[p]}" for lang, e, p in zip(language, expr, pattern, strict=True)],
            "expression_id": [f"{lang}/{e:04d}" for lang, e in zip(language, expr, strict=True)],
            "language": language,
            "category": np.array(CATEGORIES)[expr % len(CATEGORIES)],
            "is_canonical": pattern == 0,
            "is_identity": False,
            "n_references": np.where(language == "ja", 0, 1),
            "pass": "main",
            "sample_index": 0,
            "recovered": rng.random(len(expr)) < skill,
            "recovered_strict": rng.random(len(expr)) < skill / 2,
            "s_acc": np.clip(rng.normal(skill, 0.15, len(expr)), 0, 1),
            "s_info": rng.random(len(expr)),
            "s_logic": rng.random(len(expr)),
        }
    )
    perturbed = main[~main["is_canonical"]]
    consistency = perturbed.loc[perturbed.index.repeat(samples)].copy()
    consistency["pass"] = "consistency"
    consistency["sample_index"] = np.tile(np.arange(samples), len(perturbed))
    consistency["s_acc"] = np.clip(consistency["s_acc"] + rng.normal(0, 0.05, len(consistency)), 0, 1)
    return pd.concat([main, consistency], ignore_index=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--expressions", type=int, default=3543)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=5)
    args = parser.parse_args()
    config = UncertaintyConfig(resamples=args.resamples)
    cfg = OrderProbeScore()
    frames = {
        "model_a": synthetic_scores(args.expressions, args.samples, 0.55, 1),
        "model_b": synthetic_scores(args.expressions, args.samples, 0.53, 2),
    }
    rows = len(frames["model_a"])
    print(
        f"synthetic OrderProbe: {args.expressions:,} expressions, {args.expressions * 24:,} main-pass inputs, "
        f"{rows:,} score rows per model ({args.samples} consistency samples per perturbed input); "
        f"{args.resamples:,} resamples"
    )

    start = time.perf_counter()
    estimands = {m: group_estimands(f, cfg, "zero_shot") for m, f in frames.items()}
    built = time.perf_counter() - start
    names = sorted(estimands["model_a"])
    units = {n: f"{estimands['model_a'][n].n:,} {estimands['model_a'][n].unit}s" for n in names}
    listed = ", ".join(f"{n.split('/')[1]}: {u}" for n, u in units.items())
    print(f"estimands of table 3's cells, one model: {built / 2:.2f} s  ({listed})")

    one = {"model_a": estimands["model_a"]}
    start = time.perf_counter()
    reps = Replicates(config)
    reps.prepare([("model_a", n, e) for n, e in one["model_a"].items()])
    single = time.perf_counter() - start
    print(f"bootstrap, one model, every cell of one setting ({len(names)} cells): {single:.2f} s")

    table = Table(
        "bench",
        "bench",
        ["Model", *names],
        [[Cell(m)] + [Cell(f"{estimands[m][n].value():.6f}", ref=CellRef(m, n)) for n in names] for m in frames],
    )
    start = time.perf_counter()
    annotate_table(table, estimands, config, Replicates(config), lambda m: m)
    both = time.perf_counter() - start
    print(f"table of two models (intervals + {config.test} tests + BH): {both:.2f} s")
    config = UncertaintyConfig(resamples=args.resamples, test="paired-permutation")
    table = Table(
        "bench",
        "bench",
        ["Model", *names],
        [[Cell(m)] + [Cell(f"{estimands[m][n].value():.6f}", ref=CellRef(m, n)) for n in names] for m in frames],
    )
    start = time.perf_counter()
    annotate_table(table, estimands, config, Replicates(config), lambda m: m)
    print(f"the same with paired-permutation tests: {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
