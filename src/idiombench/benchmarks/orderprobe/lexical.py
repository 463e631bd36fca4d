"""The lexical terms of OrderProbe's rows (LEX, Fβ with the polarity rule, S_Info), computed in
worker processes while the main process parses the next chunk and runs the neural roles.

Per scorable row the worker reads one analysis of each distinct text (scoring.tokenize
TokenCache: the explanation's tokens and the references', the jieba words of the raw texts for
the polarity rule and `compatibility: released`) and computes what score.finish_row computed
before, with the same functions: `paper` mode the content-token cosine (LEX), set Fβ (halved
where the polarity rule fires) and S_Info = BP x ROUGE-L precision per reference; `released`
mode released.py's functions. Rows go to workers by expression, so an expression's references
are segmented once, in one process, for the whole run (every chunk and setting); each language's
expressions are dealt to the workers in turn as they first appear, which keeps the workers
equally busy (in paper mode a Korean output costs ~15x a Chinese one: kiwi's analysis).
Results are keyed by the row's position: the output order never depends on which worker
finished first, nor on the number of workers (IDIOMBENCH_SCORE_WORKERS; 0 or 1, or a first
setting of fewer than POOL_MIN_ROWS rows: computed in process).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass

from ...core.errors import IdiombenchError
from ...core.workers import ShardedPool, worker_count
from ...scoring.lexical import cosine_counts, f_beta_sets, rouge_l_tokens
from ...scoring.tokenize import TokenCache
from . import lexicon, metrics, released
from .config import OrderProbeConfig, OrderProbeScore
from .polarity import lexicon_for, polarity_contradicts

POOL_MIN_ROWS = 2_000  # fewer rows than this in the first setting: no worker processes (their start costs more)
PERMUTATIONS = 23  # of an expression's four characters, besides the canonical order


def first_setting_rows(config: OrderProbeConfig) -> int | None:
    """The generation rows of the first setting the score stage reads (settings in sorted order;
    the one LexicalTerms.start decides on), as params give them: the sampled inputs times the
    passes of that setting (main, and each extra pass's n samples). None where every expression
    is drawn (the release's size: hundreds of expressions per language, thousands of rows)."""
    if not config.enabled or not config.render.settings:
        return 0
    sample = config.render.sample
    if sample is None or sample.expressions_per_language is None:
        return None
    permutations = PERMUTATIONS if sample.permutations_per_expression is None else sample.permutations_per_expression
    inputs = len(config.build.languages) * sample.expressions_per_language * (1 + permutations)
    first = sorted(config.render.settings)[0]
    passes = 1 + sum(p.n for p in config.generate.extra.values() if p.settings is None or first in p.settings)
    return inputs * passes


def runs_workers(config: OrderProbeConfig) -> bool:
    """Whether a score run on these params starts worker processes (given more than one thread)."""
    rows = first_setting_rows(config)
    return rows is None or rows >= POOL_MIN_ROWS


@dataclass(frozen=True)
class RowText:
    """What a row's lexical terms read."""

    position: int  # the row's place in its chunk
    expression_id: str  # the shard key: an expression's rows share their references
    language: str
    expression: str
    explanation: str  # the parsed explanation (non-empty)
    references: tuple[str, ...]  # the built references (non-empty)


@dataclass(frozen=True)
class Terms:
    lex: float | None  # None: released mode without a content word in the explanation
    f_beta: float
    f_beta_halved: bool
    s_info: float


class LexicalScorer:
    """The terms of rows in one process, with its cache of analyses."""

    def __init__(self, cfg: OrderProbeScore, lexicons: Mapping[str, lexicon.ReleasedLexicon]):
        self.cfg = cfg
        self.lexicons = lexicons
        self.cache = TokenCache()

    def terms(self, rows: list[RowText]) -> list[tuple[int, Terms]]:
        score = self.released if self.cfg.compatibility == "released" else self.paper
        return [(row.position, score(row)) for row in rows]

    def paper(self, row: RowText) -> Terms:
        acc, cache, keep = self.cfg.s_acc, self.cache, (row.expression,)
        mine = cache.get(row.explanation, row.language, keep)
        golds = [cache.get(r, row.language, keep, pin=True) for r in row.references]
        lex = metrics.over_references(
            [cosine_counts(mine.content_counts, g.content_counts, mine.content_norm, g.content_norm) for g in golds],
            acc.reference_aggregation,
        )
        f_beta = metrics.over_references(
            [f_beta_sets(mine.content_set, g.content_set, acc.beta) for g in golds], acc.reference_aggregation
        )
        halved = False
        if acc.polarity_halving:
            for reference in row.references:
                cache.words(reference, pin=True)
            halved = bool(
                polarity_contradicts(
                    row.explanation,
                    list(row.references),
                    lexicon_for(self.lexicons, row.language),
                    row.expression,
                    cache.words,
                )
            )
        f_beta = metrics.halve_if_contradicting(f_beta, halved)
        s_info = metrics.over_references(
            [
                metrics.info_for_reference(
                    rouge_l_tokens(mine.forms, g.forms).precision,
                    len(mine.forms),
                    len(g.forms),
                    self.cfg.s_info.bp_mode,
                )
                for g in golds
            ],
            self.cfg.s_info.reference_aggregation,
        )
        return Terms(lex, f_beta, halved, s_info)

    def released(self, row: RowText) -> Terms:
        lists = lexicon_for(self.lexicons, row.language)
        if lists is None:
            raise IdiombenchError(
                f"orderprobe: compatibility: released has no word lists for language "
                f"{row.language!r} (the released code covers {', '.join(lexicon.SACC_FILES)})"
            )
        how = self.cfg.s_acc.reference_aggregation
        explanation = released.clean_text(row.explanation)
        references = released.split_references(released.reference_cell(list(row.references)))
        cut = self.cache.words
        for reference in references:
            cut(reference, pin=True)
        lex = released.lexical_cosine(explanation, references, lists, how, cut)
        f_beta, halved = released.f_beta(explanation, references, lists, row.expression, self.cfg.s_acc.beta, how, cut)
        # S_Info reads the Sacc output's Prediction column: the cleaned explanation
        s_info = released.s_info(explanation, released.reference_cell(list(row.references)))
        return Terms(lex, f_beta, halved, s_info)


_WORKER: LexicalScorer | None = None  # the scorer of a worker process


def _start_worker(cfg: OrderProbeScore, lexicons: Mapping[str, lexicon.ReleasedLexicon]) -> None:
    global _WORKER
    _WORKER = LexicalScorer(cfg, lexicons)


def _warm() -> None:
    """Load what every row needs (jieba's dictionary and jieba-rs's; in paper mode jieba's POS
    table and kiwi's model) while the stage's process still parses the first chunk."""
    assert _WORKER is not None
    _WORKER.cache.words("画蛇添足")
    if _WORKER.cfg.compatibility != "released":
        _WORKER.cache.get("画蛇添足", "zh-CN")
        _WORKER.cache.get("작심삼일", "ko")


def _worker_terms(rows: list[RowText]) -> list[tuple[int, Terms]]:
    assert _WORKER is not None, "the pool's initializer sets the worker's scorer"
    return _WORKER.terms(rows)


class Pending:
    """The terms of one chunk's rows, computed or on their way."""

    def __init__(
        self, futures: list[Future[list[tuple[int, Terms]]]] | None = None, done: list[tuple[int, Terms]] | None = None
    ):
        self.futures = futures or []
        self.computed = done or []

    def result(self) -> dict[int, Terms]:
        out = dict(self.computed)
        for future in self.futures:
            out.update(future.result())
        return out


class LexicalTerms:
    """Submits each chunk's rows to the workers of their expressions (or computes them here)."""

    def __init__(
        self,
        cfg: OrderProbeScore,
        lexicons: Mapping[str, lexicon.ReleasedLexicon],
        workers: int | None = None,
        min_rows: int = POOL_MIN_ROWS,
    ):
        self.cfg = cfg
        self.lexicons = lexicons
        self.workers = worker_count() if workers is None else workers
        self.min_rows = min_rows
        self.pool: ShardedPool | None = None
        self.local: LexicalScorer | None = None
        self.decided = False
        self.shards: dict[str, int] = {}  # expression -> its worker, for the whole run
        self.dealt: Counter[str] = Counter()  # expressions given a worker, per language

    def shard(self, row: RowText, processes: int) -> int:
        """The expression's worker: each language's expressions in turn over the workers."""
        found = self.shards.get(row.expression_id)
        if found is None:
            found = self.shards[row.expression_id] = self.dealt[row.language] % processes
            self.dealt[row.language] += 1
        return found

    def start(self, rows: int) -> None:
        """Decide, once, from the rows of the first setting (or chunk): worker processes for a
        run of at least `min_rows` rows, started and warmed now, or everything in process."""
        if self.decided:
            return
        self.decided = True
        if self.workers > 1 and rows >= self.min_rows:
            self.pool = ShardedPool(self.workers, _start_worker, (self.cfg, dict(self.lexicons)), preload=(__name__,))
            for shard in range(self.pool.processes):
                self.pool.submit(shard, _warm)

    def submit(self, rows: list[RowText]) -> Pending:
        if not rows:
            return Pending()
        self.start(len(rows))
        if self.pool is None:
            if self.local is None:
                self.local = LexicalScorer(self.cfg, self.lexicons)
            return Pending(done=self.local.terms(rows))
        shards: dict[int, list[RowText]] = {}
        for row in rows:
            shards.setdefault(self.shard(row, self.pool.processes), []).append(row)
        return Pending([self.pool.submit(shard, _worker_terms, batch) for shard, batch in sorted(shards.items())])

    @property
    def processes(self) -> int:
        return self.pool.processes if self.pool is not None else 1

    def close(self, cancel: bool = False) -> None:
        if self.pool is not None:
            self.pool.close(cancel)
            self.pool = None

    def __enter__(self) -> LexicalTerms:
        return self

    def __exit__(self, kind: object, value: object, traceback: object) -> None:
        self.close(cancel=kind is not None)
