"""Language names of the G-IdiomAlign release and their codes: the one place they are mapped."""

from __future__ import annotations

from pathlib import Path

from ...core.errors import DataError

# Canonical English name -> code. Also the names shown to models in the generation prompts.
LANGUAGE_CODES: dict[str, str] = {
    "Chinese": "zh",
    "English": "en",
    "Finnish": "fi",
    "French": "fr",
    "German": "de",
    "Japanese": "ja",
    "Polish": "pl",
    "Portuguese": "pt",
    "Spanish": "es",
    "Arabic": "ar",
    "Korean": "ko",
    "Thai": "th",
    "Vietnamese": "vi",
}
# Names the release uses for a language besides its canonical name
# (the Additional_language pairs files call Spanish "Spain").
ALIASES: dict[str, str] = {"Spain": "Spanish"}


def canonical_name(name: str, path: Path | str, row: int | None = None) -> str:
    """The canonical English name of a release language name; unknown names are a DataError."""
    canonical = ALIASES.get(name, name)
    if canonical not in LANGUAGE_CODES:
        known = ", ".join([*LANGUAGE_CODES, *ALIASES])
        raise DataError(path, f"unknown language name {name!r}", row=row, expected=f"one of {known}")
    return canonical


def language_code(name: str, path: Path | str, row: int | None = None) -> str:
    return LANGUAGE_CODES[canonical_name(name, path, row)]


def direction(source_code: str, target_code: str) -> str:
    """The direction label used in meta and breakdowns, e.g. `en->zh`."""
    return f"{source_code}->{target_code}"


def direction_id(source_code: str, target_code: str) -> str:
    """The direction as used inside item ids (no `>`, so ids stay safe as path parts), e.g. `en-zh`."""
    return f"{source_code}-{target_code}"
