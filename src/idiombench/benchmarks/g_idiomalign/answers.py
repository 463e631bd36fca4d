"""How a reference system (oracle, random, majority, echo) writes a G-IdiomAlign answer:
what a model following the prompt exactly would write.

- mcq: the released output format, `{"Answer": "B"}`; an answer given as an option's text
  (random/majority over option texts) is written as that option's letter.
- no_gloss / with_gloss: the target idiom alone, as the prompt asks ("Return only one
  idiom and do not include any explanation or additional text").
- echo: the answer (the item's input) as it is, unformatted: a model repeating its input.
"""

from __future__ import annotations

import json

from ...core.generation_types import ItemContext
from ...core.parsing import LETTERS

# Task 1 (multiple choice) is the one `random` and `majority` answer.
CLASSIFICATION_TASKS: frozenset[str] = frozenset({"mcq"})


def format_reference_answer(item: ItemContext, answer: str, kind: str) -> str:
    if kind == "echo":
        return answer
    if item.setting == "mcq":
        letter = answer
        if answer not in LETTERS and answer in item.choices:
            letter = LETTERS[item.choices.index(answer)]
        return json.dumps({"Answer": letter}, ensure_ascii=False)
    return answer
