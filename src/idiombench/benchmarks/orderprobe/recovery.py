"""Recovery: did the model restore the canonical four-character expression? (docs/METRICS.md#12-recovery)

The prompts ask for a meaning, not for the expression, and the paper's figures show
models restating the restored expression inside the answer (`不耻下问，指…` for the input
`不耻问下`). Two tests, both always computed:

- default: the canonical expression occurs in the output, both sides NFKC-normalised
  and every whitespace character removed. "The output" is the raw text with reasoning
  blocks (`<think>…</think>`) removed (parsing.clean_output): what the model answered,
  including a CoT Thinking Process line, but not a hidden reasoning trace.
- strict: the explanation's first run of at least four CJK ideographs / kana / Hangul
  syllables starts with the canonical expression. The explanation is the parsed one
  (parse.py: the Final Meaning line in cot / three_shot; the one line, echoed labels
  such as 判断含义： and brackets removed, in zero_shot). Shorter runs (`成语`, `指`) are
  skipped, so `指：不耻下问，…` passes and `不耻问下 → 不耻下问` does not (its first
  run is the scrambled input). In the two-line settings the prompts do not ask the Final
  Meaning line to name the expression, so strict Recovery there counts only models that
  restate it first.

An input identical to the canonical form (an expression with a repeated character, e.g.
一刻一刻 under pattern CDAB) is recovered by echoing it: the aggregates report Recovery
with and without those inputs.
"""

from __future__ import annotations

import re
import unicodedata

# CJK ideographs (unified, extension A, compatibility, supplementary planes), the iteration
# marks 々〆〇, hiragana and katakana (with ー), Hangul syllables.
SCRIPT_CHARACTER = "\u3005-\u3007\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\U00020000-\U0003134f"
SCRIPT_RUN = re.compile(f"[{SCRIPT_CHARACTER}]{{4,}}")
WHITESPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """NFKC with every whitespace character removed."""
    return WHITESPACE.sub("", unicodedata.normalize("NFKC", text))


def recovered_default(output: str, expression: str) -> bool:
    """The canonical expression occurs in the (cleaned) output."""
    target = normalise(expression)
    return bool(target) and target in normalise(output)


def first_script_run(text: str) -> str | None:
    """The first run of 4+ CJK / kana / Hangul characters of the NFKC-normalised text."""
    match = SCRIPT_RUN.search(unicodedata.normalize("NFKC", text))
    return match.group() if match else None


def recovered_strict(explanation: str | None, expression: str) -> bool:
    """The explanation's first 4+ character CJK / kana / Hangul run starts with the expression."""
    if not explanation:
        return False
    run = first_script_run(explanation)
    target = normalise(expression)
    return run is not None and bool(target) and run.startswith(target)
