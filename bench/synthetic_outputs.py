"""A stand-in model for the stage benchmarks: realistic, deterministic outputs without weights.

Every output is built from the benchmarks' own released text (the built items of
data/processed: OrderProbe glosses, G-IdiomAlign idioms, SemanticQA sentences, ChID
passages), so that parsers, segmenters and scorers see real words of the output's language:

- an answer in the benchmark's output format (the reference systems' formatter,
  `format_reference_answer`): the gold about half of the time, else a wrong one (another
  option, or another item's gold of the same task, or for OrderProbe the scrambled input);
- then an explanation of real text of the output's language: a slice of a seeded shuffle of
  that language's released texts, of a length drawn per request between `length_range` of
  `max_new_tokens` (in tokens; about 1.4 characters a token for CJK text, 4 otherwise: a
  512-token Chinese output is ~700 characters). OrderProbe's explanation is the meaning in
  its own format (zero-shot one line, CoT / three-shot `Final Meaning:`); elsewhere the
  explanation follows the answer after a blank line, as chatty models write it.

Everything is drawn from a generator seeded by (seed, request key), so an output depends only
on its request: the consistency samples (sample_index in the key) are distinct, reruns and
any batching give the same bytes. `completion_tokens` is the drawn length, finish reason
`length` when it reaches max_new_tokens.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from idiombench.core.generation_types import BackendBase, Completion, ItemContext, Request
from idiombench.core.items import read_items

CJK_LANGUAGES = ("zh", "ja", "ko")
CHARS_PER_TOKEN_CJK = 1.4
CHARS_PER_TOKEN_OTHER = 4.0
CORPUS_CHARS = 400_000  # per language: long enough that 5 samples of 700+ characters rarely overlap
GOLD_SHARE = 0.5
VERSION = 1  # change when the way outputs are built changes (it is part of the identity)
MARKERS = ("#idiom#", "##")  # ChID / Chengyu-Bench blank markers: not words


def script_of(language: str) -> str:
    return "cjk" if language.split("-")[0] in CJK_LANGUAGES else "other"


def _clean(text: str) -> str:
    for marker in MARKERS:
        text = text.replace(marker, "")
    return " ".join(text.split())


class TextPools:
    """Per language, one long text: the released texts of that language, shuffled (seeded)
    and joined; an explanation is a slice of it starting at a text boundary."""

    def __init__(self, texts: Mapping[str, Sequence[str]], seed: int) -> None:
        self.corpus: dict[str, str] = {}
        self.starts: dict[str, list[int]] = {}
        for language, values in sorted(texts.items()):
            distinct = sorted({_clean(v) for v in values if v and _clean(v)})
            if not distinct:
                continue
            rng = random.Random(f"{seed}:{language}")
            separator = "，" if script_of(language) == "cjk" else " "
            parts: list[str] = []
            size = 0
            while size < CORPUS_CHARS:
                rng.shuffle(distinct)
                for value in distinct:
                    parts.append(value)
                    size += len(value) + 1
                    if size >= CORPUS_CHARS:
                        break
            corpus = separator.join(parts)
            starts, position = [], 0
            for part in parts:
                starts.append(position)
                position += len(part) + len(separator)
            self.corpus[language] = corpus
            self.starts[language] = starts

    def languages(self) -> list[str]:
        return sorted(self.corpus)

    def text(self, language: str, chars: int, rng: random.Random) -> str:
        pool = language if language in self.corpus else _closest(language, self.corpus)
        corpus, starts = self.corpus[pool], self.starts[pool]
        start = starts[rng.randrange(len(starts))]
        piece = corpus[start : start + chars]
        while len(piece) < chars:  # wrap around
            piece += corpus[: chars - len(piece)]
        return piece


def _closest(language: str, corpus: Mapping[str, str]) -> str:
    base = language.split("-")[0]
    for name in sorted(corpus):
        if name.split("-")[0] == base:
            return name
    return "en" if "en" in corpus else sorted(corpus)[0]


@dataclasses.dataclass
class ReleaseText:
    """What the stand-in model knows of the releases, read once from the built items."""

    texts: dict[str, list[str]]  # language -> released texts
    answers: dict[tuple[str, str], list[str]]  # (benchmark, task) -> the items' gold answers
    languages: dict[tuple[str, str, str], str]  # (benchmark, task, item_id) -> the answer's language


def read_release_text(processed_root: Path, benchmarks: Sequence[str]) -> ReleaseText:
    """Inputs count as text of the source language, references and options of the item's language
    (G-IdiomAlign's `source_lang` differs from its item language, the target); OrderProbe's
    permuted inputs are left out (scrambled idioms are not words), its canonical forms kept."""
    texts: dict[str, list[str]] = defaultdict(list)
    answers: dict[tuple[str, str], set[str]] = defaultdict(set)
    languages: dict[tuple[str, str, str], str] = {}
    for benchmark in benchmarks:
        for path in sorted((processed_root / benchmark).glob("*.parquet")):
            for item in read_items(path):
                if item.meta.get("is_canonical") is not False:  # not OrderProbe's scrambled inputs: no words
                    texts[str(item.meta.get("source_lang") or item.language)].append(item.input)
                texts[item.language].extend([*item.references, *item.choices])
                gold = item.answer if item.answer is not None else (item.references[0] if item.references else None)
                if gold:
                    answers[(benchmark, item.task)].add(gold)
                languages[(benchmark, item.task, item.item_id)] = item.language
    return ReleaseText(dict(texts), {k: sorted(v) for k, v in answers.items()}, languages)


class SyntheticBackend(BackendBase):
    """A backend for the generate stage (identity, generate, close; the other hooks: BackendBase's defaults)."""

    def __init__(
        self,
        release: ReleaseText,
        formatters: Mapping[str, Callable[[ItemContext, str, str], str] | None],
        seed: int = 0,
        length_range: tuple[float, float] = (0.5, 1.0),
    ) -> None:
        self.pools = TextPools(release.texts, seed)
        self.answers = release.answers
        self.languages = release.languages
        self.formatters = formatters
        self.seed = seed
        self.length_range = length_range
        digest = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
        self._identity = {
            "backend": "synthetic-bench",
            "version": VERSION,
            "code": digest,
            "seed": seed,
            "length_range": list(length_range),
            "languages": self.pools.languages(),
        }

    def identity(self) -> dict[str, Any]:
        return dict(self._identity)

    def answer(self, item: ItemContext, rng: random.Random) -> str:
        gold = item.answer if item.answer is not None else (item.references[0] if item.references else item.input)
        if rng.random() < GOLD_SHARE:
            return gold
        if item.choices:
            return rng.choice(item.choices)
        if item.benchmark == "orderprobe":
            return item.input  # the scrambled form, unrestored
        others = self.answers.get((item.benchmark, item.task)) or [gold]
        return others[rng.randrange(len(others))]

    def complete(self, request: Request) -> Completion:
        rng = random.Random(hashlib.sha256(f"{self.seed}:{request.key}".encode()).digest())
        item = request.item
        language = self.languages.get((item.benchmark, item.task, item.item_id), "en")
        low, high = self.length_range
        tokens = max(1, round(request.sampling.max_new_tokens * rng.uniform(low, high)))
        per_token = CHARS_PER_TOKEN_CJK if script_of(language) == "cjk" else CHARS_PER_TOKEN_OTHER
        explanation = self.pools.text(language, max(1, round(tokens * per_token)), rng)
        answer = self.answer(item, rng)
        formatter = self.formatters.get(item.benchmark)
        if item.benchmark == "orderprobe" and formatter is not None:
            # the explanation is the meaning: the formatter writes it where the prompt asks for it
            text = formatter(dataclasses.replace(item, references=(explanation,)), answer, "oracle")
        else:
            head = formatter(item, answer, "oracle") if formatter is not None else answer
            text = f"{head}\n\n{explanation}"
        finish = "length" if tokens >= request.sampling.max_new_tokens else "stop"
        return Completion(text, None, tokens, finish, 0.0)

    def generate(self, requests: Sequence[Request]) -> list[Completion]:
        return [self.complete(request) for request in requests]

    def close(self) -> None:
        pass
