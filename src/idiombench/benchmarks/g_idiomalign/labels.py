"""Human labels of Task 2 generations given in the MLflow UI (`Benchmark.human_labels`): the
paper's output types (section 5.3; appendix L), one feedback named `idiom_type` per trace, which
`idiombench labels pull g-idiomalign --model <m>` writes into the attention stage's annotation
file (`attention.annotations`, columns prompt_id,label[,model]; attention.py reads it)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..contexts import HumanLabels

if TYPE_CHECKING:
    from .config import GIdiomAlignConfig

NAME = "idiom_type"
# the paper's types 0-4, as offered in the UI (a categorical label schema); the number is the label
OPTIONS = ("0 invalid", "1 correct", "2 literal", "3 meaning-correct, not idiomatic", "4 other wrong")
INSTRUCTION = (
    "The type of this Task 2 output (G-IdiomAlign section 5.3): 0 invalid (no interpretable idiom), "
    "1 correct, 2 a literal translation, 3 meaning-correct but not idiomatic, 4 other wrong."
)


def label_of(value: Any) -> int | None:
    """The label a feedback value stands for: an option ("2 literal"), its number (2 or "2") or
    its word ("literal"); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and float(value).is_integer() and 0 <= int(value) < len(OPTIONS):
        return int(value)
    if isinstance(value, str):
        text = value.strip().lower()
        for number, option in enumerate(OPTIONS):
            words = option.split(" ", 1)[1]
            if text in (option, str(number), words) or re.fullmatch(rf"{number}\b.*", text):
                return number
    return None


def _file(config: GIdiomAlignConfig) -> str | None:
    return config.attention.annotations


def _read(path: str, model: str) -> dict[str, int]:
    from .attention import read_annotations

    return read_annotations(path, model)


HUMAN_LABELS = HumanLabels(
    name=NAME,
    options=OPTIONS,
    instruction=INSTRUCTION,
    settings=("no_gloss", "with_gloss"),
    file=_file,
    read=_read,
    value=label_of,
)
