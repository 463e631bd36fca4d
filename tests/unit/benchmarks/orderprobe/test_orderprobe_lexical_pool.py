"""OrderProbe's lexical terms in worker processes (lexical.py, core/workers.py): the same score
tables whatever the number of processes and the chunking, an expression's rows in one process,
and the neural roles running while the workers compute (checked with a gate that deadlocks,
and so fails on its timeout, if either side waited for the other)."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import pandas as pd
import pytest

from idiombench.benchmarks.orderprobe.config import OrderProbeScore
from idiombench.benchmarks.orderprobe.lexical import LexicalScorer, LexicalTerms, Pending, RowText
from idiombench.benchmarks.orderprobe.score import score_generations
from idiombench.core.workers import ShardedPool, worker_count
from orderprobe_fixtures import FakeScorers, fixture_lexicons, frame, gen_row, index, items_for, paper_like_config

LEXICONS = fixture_lexicons()
EXPRESSIONS = [
    ("zh-CN", "画蛇添足", ["比喻做了多余的事，反而不恰当", "多此一举"]),
    ("zh-CN", "不耻下问", ["谦虚好学", "形容行为放纵"]),
    ("zh-TW", "畫蛇添足", ["比喻多此一舉，反而壞事"]),
    ("ko", "작심삼일", ["결심이 사흘을 가지 못함"]),
    ("ja", "一期一会", []),
]
OUTPUTS = [
    "{e}：比喻做了多余的事，反而不恰当。",
    "{e}的意思是谦虚好学，不以请教为耻；AI 100%",
    "",
    "{e}",
    "判断含义：[{e}比喻多此一舉]",
    "{e}은 결심이 오래가지 못한다는 뜻입니다.",
]


def generations() -> tuple[dict[str, pd.DataFrame], dict]:
    groups = [
        items_for(language, row, expression, refs, "Verb-Object")
        for row, (language, expression, refs) in enumerate(EXPRESSIONS)
    ]
    rows = []
    for group in groups:
        for n, item in enumerate(group):
            for pass_name, index_ in [("main", 0), ("consistency", 0), ("consistency", 1)]:
                text = OUTPUTS[(n + index_) % len(OUTPUTS)].format(e=item.meta["expression"])
                rows.append(gen_row(item, "zero_shot", text, pass_name, index_))
    return {"zero_shot": frame(rows)}, index(*groups)


CONFIGS = {
    "paper": OrderProbeScore(),
    "paper-options": OrderProbeScore.model_validate(
        {"s_acc": {"polarity_halving": True, "reference_aggregation": "mean"}, "s_info": {"bp_mode": "bleu"}}
    ),
    "released": OrderProbeScore(compatibility="released"),
}


@pytest.mark.parametrize("mode", ["paper-options", "released"])
def test_worker_processes_give_the_in_process_tables(mode: str):
    """Two worker processes and chunks of 50 rows against everything in this process (the paper
    path with every option that reads more than the default; the released path)."""
    cfg = CONFIGS[mode]
    gens, items = generations()
    scorers = FakeScorers(paper_like_config(), default=0.5)
    alone = score_generations(
        "m", gens, items, cfg, scorers, [], lexicons=LEXICONS, lexical=LexicalTerms(cfg, LEXICONS, workers=0)
    )["zero_shot"]
    with LexicalTerms(cfg, LEXICONS, workers=2, min_rows=0) as terms:
        pooled = score_generations("m", gens, items, cfg, scorers, [], lexicons=LEXICONS, chunk_rows=50, lexical=terms)[
            "zero_shot"
        ]
        assert terms.pool is not None and terms.processes == 2  # the rows went through worker processes
        if mode == "released":  # a worker's error reaches the caller: a language the released code lacks
            row = RowText(0, "en/0001", "en", "spill the beans", "to reveal a secret", ("reveal a secret",))
            with pytest.raises(Exception, match="no word lists for language 'en'"):
                terms.submit([row]).result()
    pd.testing.assert_frame_equal(alone, pooled)
    assert len(pooled) == 5 * 24 * 3 and pooled["lex"].notna().any() and (pooled["f_beta"] > 0).any()


def test_a_first_chunk_under_the_threshold_stays_in_process():
    cfg = CONFIGS["paper"]
    terms = LexicalTerms(cfg, LEXICONS, workers=2, min_rows=1000)
    gens, items = generations()
    score_generations("m", gens, items, cfg, FakeScorers(paper_like_config()), [], lexicons=LEXICONS, lexical=terms)
    assert terms.pool is None and terms.local is not None and terms.local.cache.computed > 0


def test_a_shards_tasks_run_in_one_process_in_submission_order():
    with ShardedPool(2) as pool:
        pids = {shard: pool.submit(shard, os.getpid).result() for shard in (0, 1, 2, 3)}
        again = {shard: pool.submit(shard, os.getpid).result() for shard in pids}
        assert pids == again and os.getpid() not in pids.values()
        assert pids[0] == pids[2] != pids[1] == pids[3]  # shard % processes
        futures = [pool.submit(0, pow, 2, n) for n in range(20)]
        assert [f.result() for f in futures] == [2**n for n in range(20)]


def test_each_languages_expressions_are_dealt_to_the_workers_in_turn():
    """Korean rows cost about twice the others (kiwi): dealing every language's expressions in
    turn keeps two workers equally busy, and an expression keeps its worker all run long."""
    terms = LexicalTerms(CONFIGS["paper"], LEXICONS, workers=2)

    def row(expression_id: str) -> RowText:
        return RowText(0, expression_id, expression_id.split("/")[0], "x", "y", ("z",))

    order = ["ko/0001", "zh-CN/0001", "ko/0002", "ko/0003", "zh-CN/0002", "ko/0004", "ko/0001"]
    assert [terms.shard(row(key), 2) for key in order] == [0, 0, 1, 0, 1, 1, 0]
    assert [terms.shard(row(key), 2) for key in order] == [0, 0, 1, 0, 1, 1, 0]  # the same all run long


def test_worker_count(monkeypatch: pytest.MonkeyPatch):
    """(The whole contract with Snakemake's threads: tests/unit/core/test_workers.py.)"""
    assert worker_count({"IDIOMBENCH_SCORE_WORKERS": "3"}, cores=4) == 3
    assert worker_count({}) >= 1
    with pytest.raises(ValueError, match="IDIOMBENCH_SCORE_WORKERS='two'"):
        worker_count({"IDIOMBENCH_SCORE_WORKERS": "two"})
    monkeypatch.setenv("IDIOMBENCH_SCORE_WORKERS", "1")
    assert LexicalTerms(CONFIGS["paper"], LEXICONS).workers == 1  # the default reads the environment


class GatedTerms:
    """The lexical terms in a thread that may start only once a neural role was called."""

    def __init__(self, cfg: OrderProbeScore):
        self.scorer = LexicalScorer(cfg, LEXICONS)
        self.neural_called = threading.Event()
        self.started = threading.Event()
        self.submitted = 0
        self.executor = ThreadPoolExecutor(1)

    def start(self, rows: int) -> None:
        pass

    def submit(self, rows: list[RowText]) -> Pending:
        self.submitted += 1

        def compute():
            self.started.set()
            if not self.neural_called.wait(20):
                raise AssertionError("the neural roles were not called while the lexical terms were pending")
            return self.scorer.terms(rows)

        return Pending([self.executor.submit(compute)])

    def close(self, cancel: bool = False) -> None:
        self.executor.shutdown(cancel_futures=cancel)


class GatedScorers(FakeScorers):
    """A neural role call: only after the chunk's lexical terms were sent and have started."""

    gate: GatedTerms

    def cosine(self, role, pairs):
        assert self.gate.submitted, "the neural roles ran before the lexical terms were sent"
        assert self.gate.started.wait(20), "the lexical terms did not start before the neural roles finished"
        self.gate.neural_called.set()
        return super().cosine(role, pairs)


def test_neural_roles_run_while_the_lexical_terms_are_computed():
    cfg = CONFIGS["paper"]
    gens, items = generations()
    scorers = GatedScorers(paper_like_config(), default=0.5)
    scorers.gate = GatedTerms(cfg)
    gated = score_generations("m", gens, items, cfg, scorers, [], lexicons=LEXICONS, lexical=scorers.gate)["zero_shot"]
    scorers.gate.close()
    plain = score_generations(
        "m",
        gens,
        items,
        cfg,
        FakeScorers(paper_like_config(), default=0.5),
        [],
        lexicons=LEXICONS,
        lexical=LexicalTerms(cfg, LEXICONS, workers=0),
    )["zero_shot"]
    pd.testing.assert_frame_equal(gated, plain)
    assert any(call[0] == "cosine" for call in scorers.calls)


def test_the_score_job_takes_the_cores_where_params_make_the_workers_start():
    """What the score rule declares (score_workers_for: every core, or one thread) follows from
    params as LexicalTerms.start decides: the first setting's rows (sorted settings: cot before
    zero_shot), the sampled inputs times that setting's passes, against POOL_MIN_ROWS."""
    from pathlib import Path

    from idiombench.benchmarks.orderprobe import BENCHMARK
    from idiombench.benchmarks.orderprobe.lexical import POOL_MIN_ROWS, first_setting_rows
    from idiombench.pipeline.config import load_params

    root = Path(__file__).resolve().parents[4]
    default = load_params(root / "params.yaml").benchmark("orderprobe")
    # the embedded default: 4 languages x 1 expression x (canonical + 1 permutation); cot has no
    # consistency samples
    assert first_setting_rows(default) == 8 and not BENCHMARK.score_workers_for(default)
    paper = load_params(root / "overlays" / "paper.yaml").benchmark("orderprobe")
    assert first_setting_rows(paper) is None and BENCHMARK.score_workers_for(paper)  # every expression

    def sized(languages: list[str], expressions: int, permutations: int | None, settings: list[str]):
        return default.model_copy(
            update={
                "build": default.build.model_copy(update={"languages": languages}),
                "render": default.render.model_copy(
                    update={
                        "settings": settings,
                        "sample": default.render.sample.model_copy(
                            update={
                                "expressions_per_language": expressions,
                                "permutations_per_expression": permutations,
                            }
                        ),
                    }
                ),
            }
        )

    # zero_shot alone: main + 2 consistency samples per input
    assert first_setting_rows(sized(["zh-CN", "ko"], 14, None, ["zero_shot"])) == 2 * 14 * 24 * 3 == 2016
    assert BENCHMARK.score_workers_for(sized(["zh-CN", "ko"], 14, None, ["zero_shot"]))
    assert (
        first_setting_rows(sized(["zh-CN", "ko"], 14, None, ["zero_shot", "cot"])) == 672 < POOL_MIN_ROWS
    )  # cot first
    assert not BENCHMARK.score_workers_for(sized(["zh-CN", "ko"], 14, None, ["zero_shot", "cot"]))
    assert first_setting_rows(default.model_copy(update={"enabled": False})) == 0
