"""`score.compatibility: released`: the authors' released scorer, `semantic_qa/eval.py`'s
`compute_metric`, as their `main.py` calls it per record (docs/METRICS.md#35-compatibility-modes).

It reads the prediction as stored, stripped of surrounding whitespace, with no other reading:

- multiple choice (`mcq-accuracy`): right when the prediction is the gold letter, or its part
  before the first `:` is; for NCC also when it equals the gold option's text ignoring case
  (main.py passes the record to NCC only, so IED has no text match);
- LCC (`acc-f1`): right when the prediction string equals the gold label; the F1s are
  scikit-learn's over the prediction strings, every distinct string a class of its own;
- extraction (`exact-match`): the lower-cased prediction equals the gold phrase or contains it
  in one of the authors' patterns (PATTERNS), against the task's one gold
  field;
- sequential (`*-extract-and-*`): the prediction is an object (the authors' stored one, or the
  output's JSON object / labelled lines); its extracted phrase equals the gold phrase after
  lower-casing and stripping, and its option equals the gold letter after upper-casing.

main.py skips an empty response (`if response == "": continue`) before counting it, so a row
whose output is empty is not scored and not in the denominator: it is counted
(`released_empty_responses`) instead. A failed generation (no response at all, e.g. an item a
predictions file has no record for) stays wrong, in the denominator, as in the paper mode.
"""

from __future__ import annotations

import json
from typing import Any

from .sequential import Composition, parse_two_parts

# main.py hands compute_metric the record (and so the option texts) for this task only
TEXT_MATCH_TASKS = frozenset({"noun_compound_compositionality"})
PATTERNS = (
    " is {g}",
    "{g} this ",
    "{g} the ",
    "{g} it ",
    "{g} in ",
    "{g} explanation",
    "{g} is a noun compound",
    "{g} refers to",
)
EMPTY_FLAG = "released_empty_response"


def empty_response(text: str) -> bool:
    """main.py's `response == ""` after its whitespace collapsing: nothing but whitespace."""
    return not text.split()


def mcq_accuracy(prediction: str, gold: str, gold_text: str | None) -> bool:
    pred, gold = prediction.strip(), gold.strip()
    if pred == gold or (":" in pred and pred.split(":")[0] == gold):
        return True
    return gold_text is not None and gold_text.lower() == pred.lower()


def label_accuracy(prediction: str, gold: str) -> bool:
    return prediction.strip() == gold.strip()


def exact_match(prediction: str, gold: str) -> bool:
    pred, g = prediction.strip().lower(), gold.strip().lower()
    return pred == g or any(p.format(g=g) in pred for p in PATTERNS)


def _field(obj: dict[str, Any], key: str) -> str:
    value = obj.get(key)
    return "" if value is None else str(value)


def sequential_parts(text: str, comp: Composition) -> tuple[str, str]:
    """(extracted phrase, second part) as compute_metric reads them from its `pred` object: the
    authors' keys of a stored JSON object; an output that is no object is read into one by its
    labelled lines (sequential.parse_two_parts), as the authors' post-processing does."""
    try:
        obj = json.loads(text.strip())
    except json.JSONDecodeError:
        obj = None
    if isinstance(obj, dict):
        return _field(obj, comp.extraction_keys[0]), _field(obj, comp.second_keys[0])
    parts = parse_two_parts(text, comp)
    return parts.extracted or "", parts.second or ""


def phrase_match(extracted: str, gold: str) -> bool:
    return extracted.lower().strip() == gold.lower().strip()


def option_match(task: str, option: str, gold: str) -> bool:
    """idiom-extraction-and-judgment upper-cases both sides, nc-extract-and-judgment lower-cases them."""
    if task == "noun_compound_compositionality":
        return option.lower().strip() == gold.lower().strip()
    return option.strip().upper() == gold.strip().upper()
