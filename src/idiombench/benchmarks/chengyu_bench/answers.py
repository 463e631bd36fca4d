"""How a reference system (oracle, random, majority, echo) writes a Chengyu-Bench answer:
what a model following the prompt exactly would write.

- connotation / appropriateness: the label as its tag, `<positive>`, `<wrong>`.
- open_cloze / chid_open_cloze: `<answer><gold, …></answer>`: the gold idiom first, then the
  item's other acceptable idioms (release references), at most five. The oracle knows no
  other idioms, so it does not pad the list to five with guesses.
- chid_candidates: `<answer><idiom></answer>` with the one chosen candidate.
- echo: the answer (the item's input) as it is, unformatted: a model repeating its input.
"""

from __future__ import annotations

from ...core.generation_types import ItemContext
from .build import RELEASE_TASKS, SAMPLE_TASKS
from .chid import SPLIT_TASKS
from .parse import OPEN_CLOZE_SIZE

# Tasks whose gold is a label or one of the candidates: the ones `random` and `majority` answer.
CLASSIFICATION_TASKS: frozenset[str] = frozenset(
    [t for t in (*RELEASE_TASKS, *SAMPLE_TASKS) if t != "open_cloze"] + list(SPLIT_TASKS.values())
)

LIST_SEPARATOR = ", "


def format_reference_answer(item: ItemContext, answer: str, kind: str) -> str:
    if kind == "echo":
        return answer
    if item.setting in ("connotation", "appropriateness"):
        return f"<{answer}>"
    if item.setting in ("open_cloze", "chid_open_cloze"):
        ranked = list(dict.fromkeys([answer, *(item.references if kind == "oracle" else ())]))
        return f"<answer><{LIST_SEPARATOR.join(ranked[:OPEN_CLOZE_SIZE])}></answer>"
    if item.setting == "chid_candidates":
        return f"<answer><{answer}></answer>"
    return answer
