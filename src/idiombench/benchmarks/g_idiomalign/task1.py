"""Task 1 (Multiple-Choice Idiom Equivalence): one answer's verdict and its outcome type.

- The letter is read by parse.py (`{"Answer": "B"}`, a bare letter, a letter with text, ...).
  No letter: the answer is wrong and counted as `invalid` (docs/METRICS.md#22-task-1-multiple-choice).
- Correct when the letter is the item's released answer (`correct_option`), or, with
  `duplicate_option_target_correct` (default), when the chosen option's text equals the
  target idiom (the 48 released items that hold the target twice name the copy at a
  distractor slot; choosing the reference slot is right too).
- Outcome type (paper table 12 / figure 3): `Correct`, else the decoded type of the chosen
  option (`LT`, `LC`, `CA`, from `original_positions`), else `invalid`. Only with
  `duplicate_option_target_correct: false` can a wrong answer land on an option that holds
  the target text (the reference slot of a duplicate_option item): outcome `target_copy`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CORRECT = "Correct"
INVALID = "invalid"
TARGET_COPY = "target_copy"
DISTRACTOR_TYPES = ("LT", "LC", "CA")
OUTCOMES = (CORRECT, *DISTRACTOR_TYPES, INVALID, TARGET_COPY)
GROUPS = ("Zh-target", "En-target", "Other targets")


@dataclass(frozen=True)
class MCQVerdict:
    letter: str | None
    correct: bool
    invalid: bool
    chosen_type: str | None  # reference / LT / LC / CA of the chosen option, None when invalid
    outcome: str


def judge(letter: str | None, answer: str, meta: dict[str, Any], duplicate_option_target_correct: bool) -> MCQVerdict:
    """The verdict on one parsed answer; `meta` is the item's meta (option_types, target_letters)."""
    option_types: dict[str, str] = meta["option_types"]
    if letter is None or letter not in option_types:
        return MCQVerdict(letter, False, True, None, INVALID)
    chosen_type = option_types[letter]
    target_letters = meta.get("target_letters") or []
    correct = letter == answer or (duplicate_option_target_correct and letter in target_letters)
    if correct:
        outcome = CORRECT
    elif chosen_type in DISTRACTOR_TYPES and letter not in target_letters:
        outcome = chosen_type
    else:  # an option holding the target text, not counted as correct (flag off)
        outcome = TARGET_COPY
    return MCQVerdict(letter, correct, False, chosen_type, outcome)
