"""The released prompt templates (prompts/<stem>_{zeroshot,fewshot}.txt) and their {{placeholders}}."""

from __future__ import annotations

import re
from pathlib import Path

from ...core.errors import DataError
from ...data.readers import read_utf8

PLACEHOLDER = re.compile(r"\{\{([^{}]+)\}\}")
SETTINGS = ("zeroshot", "fewshot")


def template_path(raw_dir: Path, stem: str, setting: str) -> Path:
    return raw_dir / "prompts" / f"{stem}_{setting}.txt"


def placeholders(path: Path) -> list[str]:
    """Placeholder names in order of first appearance."""
    if not path.is_file():
        raise DataError(path, "prompt template not found", expected="the released template (run acquire)")
    return list(dict.fromkeys(PLACEHOLDER.findall(read_utf8(path))))


def shot_variant(name: str, shots: int) -> str:
    """Field that fills placeholder `name` in a k-shot prompt when the text depends on k
    (LCC's taxonomy): `taxonomy` for 0 shots, `taxonomy_3shot` for 3 shots."""
    return name if shots == 0 else f"{name}_{shots}shot"
