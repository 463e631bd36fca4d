"""How a reference system (oracle, echo) writes an OrderProbe answer.

The prompts (paper appendix tables 8-10) ask for one line of explanation in the
zero-shot setting and two lines `Thinking Process: …` / `Final Meaning: …` (labels
in English in every language) in the CoT and three-shot settings. The oracle restores
the canonical expression and explains it with the first reference gloss; the
Japanese release has no glosses, so there the expression alone is the meaning.
"""

from __future__ import annotations

from ...core.generation_types import ItemContext

# No OrderProbe task is classification: `random` and `majority` skip it.
CLASSIFICATION_TASKS: frozenset[str] = frozenset()


def one_line_setting(setting: str) -> bool:
    """zero-shot asks for one line; every other setting (cot, three_shot) for two."""
    return "zero" in setting.lower() or setting.lower().startswith("0")


def format_reference_answer(item: ItemContext, answer: str, kind: str) -> str:
    if kind == "oracle" and item.references:
        meaning = item.references[0]
        one_line = f"{answer}：{meaning}"
    else:
        meaning = answer
        one_line = answer
    if one_line_setting(item.setting):
        return one_line
    thinking = f"{item.input} → {answer}" if kind == "oracle" else answer
    return f"Thinking Process: {thinking}\nFinal Meaning: {meaning}"
