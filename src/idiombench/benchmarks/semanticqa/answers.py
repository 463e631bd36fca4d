"""How a reference system (oracle, random, majority, echo) writes a SemanticQA answer: the
released prompts end with `Output:` and ask for the answer only, so a model following them
writes the bare answer: the option letter (IED, NCC; an option's text becomes its letter),
the label (LCC), the phrase (extraction) or the paraphrase (interpretation).
echo: the answer (the item's input) as it is.
"""

from __future__ import annotations

from ...core.generation_types import ItemContext
from ...core.parsing import LETTERS
from .adapters import ADAPTERS

# Tasks whose gold is an option letter or a label: the ones `random` and `majority` answer.
CLASSIFICATION_TASKS: frozenset[str] = frozenset(t for t, a in ADAPTERS.items() if a.kind in ("mcq", "label"))


def format_reference_answer(item: ItemContext, answer: str, kind: str) -> str:
    if kind != "echo" and item.choices and answer not in LETTERS and answer in item.choices:
        return LETTERS[item.choices.index(answer)]
    return answer
