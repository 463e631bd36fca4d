"""Reading Chengyu-Bench outputs (paper appendix A formats).

- connotation: `<positive>` / `<negative>`; appropriateness: `<correct>` / `<wrong>`
  (idiombench.core.parsing.parse_tag_label: an echo of the format is ignored, two different
  tags give None; a bare label word or its Chinese name gives the value with ok False).
- open_cloze, chid_open_cloze: the ranked idioms of the last `<answer><i1, …, i5></answer>`
  block (value: a tuple, best first, as written: a repeated idiom keeps its place and is
  flagged `duplicate_items`; 5 expected).
- chid_candidates: the same block with one idiom (value: a one-element tuple); an idiom
  that is not one of the item's candidates is flagged `not_a_candidate` (ok False). Read
  leniently (ok False): a candidate's number 1-7 in the block (`candidate_number`), and,
  without any answer block, the one candidate the text names (`candidate_in_text`; two
  or more named: None).
"""

from __future__ import annotations

from ...core.generation_types import ItemContext
from ...core.parsing import ParseResult, parse_candidate_choice, parse_ranked_list, parse_tag_label, result

CONNOTATION_WORDS = {"褒义": "positive", "贬义": "negative", "褒義": "positive", "貶義": "negative"}
APPROPRIATENESS_WORDS = {"正确": "correct", "错误": "wrong", "正確": "correct", "錯誤": "wrong", "incorrect": "wrong"}
OPEN_CLOZE_SIZE = 5


def parse_connotation(raw: str) -> ParseResult:
    return parse_tag_label(raw, ("positive", "negative"), CONNOTATION_WORDS)


def parse_appropriateness(raw: str) -> ParseResult:
    return parse_tag_label(raw, ("correct", "wrong"), APPROPRIATENESS_WORDS)


def parse_output(item: ItemContext, raw: str) -> ParseResult:
    setting = item.setting
    if setting == "connotation":
        return parse_connotation(raw)
    if setting == "appropriateness":
        return parse_appropriateness(raw)
    if setting in ("open_cloze", "chid_open_cloze"):
        return parse_ranked_list(raw, expected=OPEN_CLOZE_SIZE, keep_duplicates=True)
    if setting == "chid_candidates":
        return parse_candidate_choice(raw, item.choices)
    return result(None, False, raw if isinstance(raw, str) else "", {f"unknown_setting:{setting}"})
