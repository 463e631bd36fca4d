"""An answer as a declared benchmark's parser reads it: what the reference systems (oracle,
random, majority) write and what a k-shot prompt's exemplar answers with.

| parser | answer |
|---|---|
| letter | the option's letter: `B` |
| tag | the label in angle brackets: `<positive>` |
| word | the label: `positive` |
| candidate | the candidate in an answer block: `<answer><画蛇添足></answer>` |

The build records the parser in each item's meta (so the format is part of the item the
reference systems' cache keys digest); echo writes the item's input as it is.
"""

from __future__ import annotations

from ...core.generation_types import ItemContext


def answer_text(parser: str, answer: str) -> str:
    """`answer` as a model following the prompt exactly would write it under `parser`."""
    if parser == "candidate":
        return f"<answer><{answer}></answer>"
    return f"<{answer}>" if parser == "tag" else answer


def format_reference_answer(item: ItemContext, answer: str, kind: str) -> str:
    """Benchmark.format_reference_answer of every declared benchmark (the item says its parser)."""
    if kind == "echo":
        return answer
    return answer_text(str(item.meta.get("parser", "letter")), answer)
