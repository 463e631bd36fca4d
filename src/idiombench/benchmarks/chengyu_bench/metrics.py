"""Chengyu-Bench metrics on one parsed output (paper table 7). Pure functions, no I/O.

Normalisation (`normalise_idiom`), applied to predictions, gold idioms, candidates and
the idiom dictionary alike: Unicode NFKC (full-width forms become ASCII, compatibility
ideographs become the unified ones), every whitespace character removed ("好景 不长" is
"好景不长"), then `#`, quotes, brackets and punctuation stripped from both ends. No
traditional/simplified conversion: "好景不長" is not "好景不长".

What counts as an answer (`answer_counts`): the parser's value when it followed the
requested format (`ok`); a value read without it (a bare 褒义, a candidate named outside
<answer>…</answer>, an unclosed answer block) counts only when `accept_unformatted`
is true (params `benchmarks.chengyu-bench.score.accept_unformatted`). No value at all
(unparseable, empty, failed generation) is a parse failure: wrong, and counted.

- Connotation / Appropriateness: correct when the label equals the gold label.
- ChID with candidates: correct when the ONE chosen idiom equals the gold candidate;
  several different idioms (a hedge) answer nothing (`several_idioms`), an idiom that
  is not a candidate is simply wrong.
- Open Cloze (release and ChID with candidates hidden): the ranked list is taken as
  written, first five entries (`TOP_K`); a repeated idiom keeps its slot and is not a
  new prediction (so [A, A, gold] has gold at rank 3). Acc@k: an acceptable idiom (the
  gold, or another listed by the release) among the first k entries; a list shorter
  than k is scored on what it has. Valid Idiom counts the DISTINCT idioms among those
  entries and how many of them the dictionary lists; an unanswered item adds nothing
  to either count (its failure is counted as a parse failure).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ...core.parsing import ParseResult, normalise_idiom

TOP_K = 5
KS = (1, 3, 5)  # paper table 7


def answer_counts(parsed: ParseResult, accept_unformatted: bool) -> bool:
    return parsed.value is not None and (parsed.ok or accept_unformatted)


@dataclass(frozen=True)
class LabelScore:
    """One classification output (a label, or ChID's chosen candidate)."""

    prediction: str | None  # the answer that was scored (None: no answer)
    correct: bool
    parse_failed: bool  # the parser read nothing
    unformatted: bool  # a value read without the requested format (counted or not, see answer_counts)
    ambiguous: bool = False  # several different idioms for one choice


def score_label(parsed: ParseResult, gold: str, accept_unformatted: bool) -> LabelScore:
    """Connotation / Appropriateness: the parser's label against the gold label."""
    unformatted = parsed.value is not None and not parsed.ok
    if not answer_counts(parsed, accept_unformatted):
        return LabelScore(None, False, parsed.value is None, unformatted)
    prediction = str(parsed.value).strip().lower()
    return LabelScore(prediction, prediction == gold.strip().lower(), False, unformatted)


def score_choice(parsed: ParseResult, gold: str, accept_unformatted: bool) -> LabelScore:
    """ChID with candidates: the single chosen idiom against the gold candidate."""
    unformatted = parsed.value is not None and not parsed.ok
    if not answer_counts(parsed, accept_unformatted):
        return LabelScore(None, False, parsed.value is None, unformatted)
    chosen = list(dict.fromkeys(n for n in (normalise_idiom(v) for v in parsed.value) if n))
    if len(chosen) != 1:
        return LabelScore(None, False, not chosen, unformatted, ambiguous=len(chosen) > 1)
    return LabelScore(chosen[0], chosen[0] == normalise_idiom(gold), False, unformatted)


@dataclass(frozen=True)
class RankedScore:
    """One Open Cloze output."""

    predictions: tuple[str, ...]  # normalised, as written, at most TOP_K (empty: no answer)
    rank: int | None  # 1-based position of the first acceptable idiom among them
    n_predicted: int  # distinct idioms among `predictions`
    n_valid: int  # of which the dictionary lists
    invalid: tuple[str, ...]  # the distinct ones it does not, in order
    parse_failed: bool
    unformatted: bool
    listed: int  # entries the model wrote (before cutting to TOP_K)

    def hit(self, k: int) -> bool:
        return self.rank is not None and self.rank <= k


def score_ranked(
    parsed: ParseResult,
    acceptable: Iterable[str],
    is_idiom: Callable[[str], bool],
    accept_unformatted: bool,
) -> RankedScore:
    unformatted = parsed.value is not None and not parsed.ok
    if not answer_counts(parsed, accept_unformatted):
        return RankedScore((), None, 0, 0, (), parsed.value is None, unformatted, 0)
    written = [n for n in (normalise_idiom(v) for v in parsed.value) if n]
    predictions = tuple(written[:TOP_K])
    golds = {normalise_idiom(a) for a in acceptable} - {""}
    rank = next((i + 1 for i, p in enumerate(predictions) if p in golds), None)
    distinct = list(dict.fromkeys(predictions))
    invalid = tuple(p for p in distinct if not is_idiom(p))
    return RankedScore(
        predictions=predictions,
        rank=rank,
        n_predicted=len(distinct),
        n_valid=len(distinct) - len(invalid),
        invalid=invalid,
        parse_failed=not written,
        unformatted=unformatted,
        listed=len(written),
    )
