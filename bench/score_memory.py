"""Peak memory and time of `idiombench score orderprobe` on long synthetic outputs.

    python bench/score_memory.py [--expressions 50 200] [--samples 5] [--chars 700] [--chunks 20000 0]

A project in a temporary folder with E synthetic expressions x 24 inputs (the canonical form and
its 23 permutations, the items built by OrderProbe's own build code, 3 references each) and one
model's zero-shot generations: a main output and --samples consistency samples per input, each
--chars characters of distinct CJK text (700 characters: about a 512-token output). The score
stage runs in a fresh process per measurement (`stages.score.run_score`, the code `idiombench score`
runs), once per --chunks value (0: the whole setting in one chunk, as before chunking), and
the process's peak resident memory (getrusage of the child) and wall time are printed, with the
load average. The neural roles are off (model null): CPU-only embedding of 512-token texts at this
scale takes hours on 2 cores; the lexical terms (content tokens, Fβ, ROUGE-L for S_Info) run in
full. What grows with the rows is then what the stage keeps per row.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from idiombench.benchmarks.orderprobe.build import Expression, expression_items  # noqa: E402
from idiombench.core.items import write_items  # noqa: E402
from idiombench.core.yamlfile import load_yaml_file  # noqa: E402
from idiombench.generation.table import write_generations  # noqa: E402

CHARS = (
    "的一是不了人我在有他这为之大来以个中上们到说时地也子就道要出会可下而过天去能对小多然于心学么之都好看"
    "起发当没成只如事把还用第样道想作种开美总从无情己面最女但现前些所同日手又行意动方期它头经长儿回位分爱"
    "老因很给名法间斯知世什两次使身者被高已亲其进此话常与活正感"
)
LANGUAGES = ("zh-CN", "zh-TW", "ja", "ko")


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def write_project(root: Path, expressions: int, samples: int, chars: int) -> int:
    rng = random.Random(0)
    items = []
    for row in range(expressions):
        expression = "".join(rng.sample(CHARS, 4))
        references = ["".join(rng.choices(CHARS, k=30)) for _ in range(3)]
        items += expression_items(Expression("zh-CN", row, expression, references), "Verb-Object")
    write_items(root / "data/processed/orderprobe/restore.parquet", items)
    rows = []
    for item in items:
        for pass_name, index in [("main", 0)] + [("consistency", i) for i in range(samples)]:
            text = item.meta["expression"] + "：" + "".join(rng.choices(CHARS, k=chars))
            rows.append(
                {
                    "prompt_id": f"orderprobe/restore/zero_shot/{item.item_id}",
                    "benchmark": "orderprobe",
                    "task": "restore",
                    "setting": "zero_shot",
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
                    "request_key": f"{item.item_id}/{pass_name}/{index}",
                }
            )
    write_generations(root / "results/generations/bench/orderprobe/zero_shot.parquet", rows)
    (root / "results/generations/bench/generation_info.json").write_text("{}\n", encoding="utf-8")
    raw = load_yaml_file(ROOT / "params.yaml")
    raw["models"] = {"bench": {"backend": "echo"}}
    for role in raw["scoring"]["roles"].values():
        role["model"] = None  # neural terms not computed (see the docstring)
    raw["benchmarks"]["orderprobe"]["render"]["settings"] = ["zero_shot"]
    (root / "params.yaml").write_text(yaml.safe_dump(raw, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return len(rows)


SCORE = """
import resource, sys, time
from idiombench.benchmarks.orderprobe import score
from idiombench.pipeline.config import load_params
from idiombench.stages.score import run_score
score.CHUNK_ROWS = int(sys.argv[1]) or 10**12
started = time.perf_counter()
run_score(load_params("params.yaml"), "bench", "orderprobe")
print(time.perf_counter() - started, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def measure(root: Path, chunk: int) -> tuple[float, float]:
    """(peak RSS in MiB, seconds) of one score run in a fresh process (its own getrusage)."""
    subprocess.run(["rm", "-rf", str(root / "results/scores")], check=True)
    done = subprocess.run(
        [sys.executable, "-c", SCORE, str(chunk)],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    seconds, peak = (float(v) for v in done.stdout.strip().splitlines()[-1].split())
    return peak, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--expressions", type=int, nargs="+", default=[50, 200])
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--chars", type=int, default=700)
    parser.add_argument(
        "--chunks", type=int, nargs="+", default=[20000, 0], help="chunk sizes in rows (0: one chunk per setting)"
    )
    args = parser.parse_args()
    print(f"bench/score_memory.py: {os.cpu_count()} CPUs; load {load()}", flush=True)
    results = []
    for expressions in sorted(args.expressions):
        with tempfile.TemporaryDirectory(prefix="idiombench-bench-score-") as folder:
            root = Path(folder)
            rows = write_project(root, expressions, args.samples, args.chars)
            for chunk in sorted(args.chunks, key=lambda c: c or 10**12):
                peak, seconds = measure(root, chunk)
                results.append(
                    {
                        "expressions": expressions,
                        "rows": rows,
                        "chunk_rows": chunk or "setting",
                        "peak_rss_mib": round(peak),
                        "seconds": round(seconds, 1),
                        "load": load(),
                    }
                )
                print(
                    f"{expressions:,} expressions, {rows:,} rows of {args.chars} characters, chunk "
                    f"{chunk or 'whole setting'}: peak RSS {peak:,.0f} MiB, {seconds:.1f} s "
                    f"({rows / seconds:,.0f} rows/s); load {load()}",
                    flush=True,
                )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
