"""Principle 6 of issue 30: no string crashes a parser, every benchmark's parser reads the
output through one normalisation, and parsing is linear in the text's length.

The parsers are every benchmark's (tests/support/parser_contexts.py: one entry per way of
reading). Linearity is a property of growth, not a speed figure: for each adversarial family
the CPU time of all parsers on a text 4x longer is compared with the shorter one (about 4 for
linear code, 16 for the quadratic regexes this replaced, which bench/parse_scaling.py shows
parser by parser). The tests take ~4 s of CPU."""

from __future__ import annotations

import random
import time

import pytest

from idiombench.core.parsing import ParseResult, clean_output, normalise_output, parse_letter
from parser_contexts import PARSERS, adversarial_texts

SIZE = 10_000
SMALL, LARGE = adversarial_texts(SIZE), adversarial_texts(4 * SIZE)
LINEAR_LIMIT = 10.0  # linear ~4, quadratic ~16: the ratio of CPU times for 4x the text


def cpu_time_of_every_parser(text: str) -> float:
    best = float("inf")
    for _ in range(2):  # the lesser of two: a busy machine only adds time
        start = time.process_time()
        for parse in PARSERS.values():
            parse(text)
        best = min(best, time.process_time() - start)
    return best


@pytest.mark.timeout(300)  # a cubic regex never finishes: fail instead of hanging the suite
@pytest.mark.parametrize("family", sorted(SMALL))
def test_parsing_time_grows_linearly_with_the_text(family: str) -> None:
    small, large = cpu_time_of_every_parser(SMALL[family]), cpu_time_of_every_parser(LARGE[family])
    ratio = large / max(small, 2e-3)
    assert ratio < LINEAR_LIMIT, (
        f"{family}: {small:.4f} s for {len(SMALL[family]):,} characters, {large:.4f} s for "
        f"{len(LARGE[family]):,} ({ratio:.1f}x): run bench/parse_scaling.py to see which parser"
    )


STRANGE = {
    "lone surrogate": "B\ud800",
    "NUL": "B\x00",
    "C0 and C1 controls": "\x1b[31mB\x07\x08\x7f\x85",
    "direction marks": "\u202eB\u2066\u200f",
    "zero-width": "\u200bB\ufeff\u2060",
    "huge number": "1" * 5000,
    "huge number in JSON": '{"answer": ' + "1" * 5000 + "}",
    "deep nesting": "[" * 100_000,
    "1 MB line": "B " + "画蛇添足" * 250_000,
    "not text": None,
}


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_no_string_crashes_a_parser(name: str) -> None:
    parse = PARSERS[name]
    rng = random.Random(0)
    texts = [
        *STRANGE.values(),
        *(
            "".join(rng.choice('\x00\ud800\u202e\u200b<think></think>{}[]"*「」:B ') for _ in range(rng.randrange(30)))
            for _ in range(200)
        ),
    ]
    for text in texts:
        parsed = parse(text)  # type: ignore[arg-type]
        if isinstance(parsed, ParseResult):
            assert not (parsed.ok and parsed.value is None)


def test_outputs_are_normalised_in_one_place() -> None:
    """NFKC, zero-width and direction marks removed, before any parser reads the text; free-text
    values keep their compatibility forms (compared with references as written)."""
    assert normalise_output("Ａｎｓｗｅｒ：Ｂ") == ("Answer:B", set())
    assert normalise_output("一，二…\u200b", keep_forms=True) == ("一，二…", {"invisible_characters"})
    assert normalise_output("\u202eB\u200b\ufeff") == ("B", {"invisible_characters"})
    assert clean_output("\u200b<think>x</think>\u2066 B \u2069") == ("B", {"invisible_characters", "think_block"})
    assert parse_letter("Ａｎｓｗｅｒ：Ｂ").value == "B"
    assert parse_letter("\u202bB\u202c").value == "B"  # a letter inside an embedding read as the letter


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_every_parser_reads_through_the_normalisation(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each benchmark's parser calls parsing.normalise_output (through clean_output): the one place."""
    import idiombench.core.parsing as parsing

    seen: list[str] = []
    real = parsing.normalise_output

    def spy(text: str, keep_forms: bool = False) -> tuple[str, set[str]]:
        seen.append(text)
        return real(text, keep_forms)

    monkeypatch.setattr(parsing, "normalise_output", spy)
    PARSERS[name]("Answer: B\u200b")
    assert "Answer: B\u200b" in seen
