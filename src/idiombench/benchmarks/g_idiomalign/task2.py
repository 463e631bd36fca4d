"""Task 2 (Gloss-Contrastive Generation): the output cleaned to one idiom, and its surface
metrics against the gold target idiom (EM, BLEU, chrF; paper table 16).

Cleaning rule (applied to the model output AND to the gold idiom, so both sides are
compared in the same form):
1. parse.py's reading of the output: `<think>` blocks removed, a leading label (`Idiom:`,
   `Answer:`, `<language> idiom:`) dropped, the first non-empty line kept, matching quotes /
   markdown emphasis around it removed;
2. then, repeatedly until nothing changes: trailing sentence punctuation removed
   (`. , ; : ! ? …` and their full-width / CJK forms `。，；：！？、`), and matching quotes
   around the text removed (`"break a leg".` -> `break a leg`). Brackets, apostrophes and
   hyphens are kept (`mennä metsään (jossakin)`, `huntin'`);
3. inner whitespace collapsed to single spaces.
An output with nothing left is `empty` (invalid): it gets similarity 0, EM 0, BLEU 0, chrF 0.

EM: the cleaned idioms are equal after NFKC (and case folding, `exact_match_casefold`).
BLEU: sacrebleu with the target language's tokenizer (`bleu_tokenize`: `zh` for Chinese,
`ja-mecab` for Japanese when mecab-python3 + ipadic are installed, else `char`; `char`
for Thai, which writes no spaces; `13a` otherwise), effective n-gram order so that idioms
shorter than four tokens can score. chrF: sacrebleu's default chrF (character 6-grams,
beta 2). Scores are 0-100 as sacrebleu prints them.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import cache

from sacrebleu.metrics import BLEU, CHRF

from ...core.parsing import unwrap

TRAILING_PUNCTUATION = frozenset(".,;:!?…。，；：！？、．｡")
FALLBACK_TOKENIZER = "char"


def strip_trailing_punctuation(text: str) -> str:
    end = len(text)
    while end and (text[end - 1] in TRAILING_PUNCTUATION or text[end - 1].isspace()):
        end -= 1
    return text[:end]


def clean_idiom(text: str | None) -> str:
    """The cleaning rule's steps 2-3 on a parsed idiom (or a gold idiom); "" for None."""
    if not text:
        return ""
    current = " ".join(text.split())
    while True:
        stripped = strip_trailing_punctuation(current)
        stripped, _ = unwrap(stripped)
        stripped = " ".join(stripped.split())
        if stripped == current:
            return current
        current = stripped


def exact_match_key(text: str, casefold: bool = True) -> str:
    normal = unicodedata.normalize("NFKC", text)
    return normal.casefold() if casefold else normal


def exact_match(prediction: str, gold: str, casefold: bool = True) -> bool:
    return bool(prediction) and exact_match_key(prediction, casefold) == exact_match_key(gold, casefold)


@dataclass(frozen=True)
class TokenizerChoice:
    language: str
    configured: str
    used: str
    note: str | None = None  # why `used` differs from `configured`


@cache
def _bleu(tokenize: str) -> BLEU:
    return BLEU(tokenize=tokenize, effective_order=True)


@cache
def tokenizer_available(tokenize: str) -> str | None:
    """None when sacrebleu can run `tokenize` here, else the reason (e.g. ja-mecab without MeCab)."""
    try:
        _bleu(tokenize).sentence_score("a b", ["a b"])
    except Exception as error:  # sacrebleu raises RuntimeError / ImportError for missing extras
        _bleu.cache_clear()
        return " ".join(str(error).split()) or type(error).__name__
    return None


def choose_tokenizer(language: str, mapping: dict[str, str], default: str) -> TokenizerChoice:
    configured = mapping.get(language, default)
    problem = tokenizer_available(configured)
    if problem is None:
        return TokenizerChoice(language, configured, configured)
    return TokenizerChoice(
        language,
        configured,
        FALLBACK_TOKENIZER,
        f"sacrebleu tokenizer {configured!r} cannot run here ({problem}); used {FALLBACK_TOKENIZER!r}",
    )


def sentence_bleu(prediction: str, gold: str, tokenize: str) -> float:
    if not prediction:
        return 0.0
    return min(100.0, max(0.0, float(_bleu(tokenize).sentence_score(prediction, [gold]).score)))


_CHRF = CHRF()


def sentence_chrf(prediction: str, gold: str) -> float:
    if not prediction:
        return 0.0
    return min(100.0, max(0.0, float(_CHRF.sentence_score(prediction, [gold]).score)))


def corpus_bleu(predictions: list[str], golds: list[str], tokenize: str) -> float:
    return min(100.0, float(_bleu(tokenize).corpus_score(predictions, [golds]).score))


def corpus_chrf(predictions: list[str], golds: list[str]) -> float:
    return min(100.0, float(_CHRF.corpus_score(predictions, [golds]).score))
