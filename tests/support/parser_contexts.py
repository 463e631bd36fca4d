"""Every benchmark's output parser, each bound to a hand-made item of each task kind and setting
it reads differently, and adversarial texts of a given length: what tests/unit/test_parsing_linear.py
and bench/parse_scaling.py run. A parser added to a benchmark belongs here too (one entry per
way of reading: the setting or the task kind decides it)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from idiombench.benchmarks.chengyu_bench.parse import parse_output as chengyu_parse
from idiombench.benchmarks.g_idiomalign.parse import parse_output as g_idiomalign_parse
from idiombench.benchmarks.orderprobe.parse import parse_output as orderprobe_parse
from idiombench.benchmarks.semanticqa.adapters import ADAPTERS
from idiombench.benchmarks.semanticqa.parse import normalise_answer
from idiombench.benchmarks.semanticqa.parse import parse_output as semanticqa_parse
from idiombench.benchmarks.semanticqa.sequential import COMPOSITIONS, parse_two_parts
from idiombench.core.generation_types import ItemContext
from idiombench.core.parsing import ParseResult

TAXONOMY = "Label\tDescription\nMagn\tintensifier\nAntiMagn\tde-intensifier\nBon\tpositive\nAntiBon\tnegative\n"
CANDIDATES = ("画蛇添足", "一鸣惊人", "刻舟求剑", "不耻下问", "守株待兔", "亡羊补牢", "对牛弹琴")


def context(
    benchmark: str, task: str, setting: str, choices: tuple[str, ...] = (), fields: dict[str, object] | None = None
) -> ItemContext:
    return ItemContext(benchmark, task, setting, "x0", "输入", None, (), choices, fields or {})


def _semanticqa(task: str) -> Callable[[str], ParseResult]:
    kind = ADAPTERS[task].kind
    choices = ("literal", "idiomatic", "Proper Noun", "Meta Usage") if kind == "mcq" else ()
    fields = {"taxonomy": TAXONOMY} if kind == "label" else {}
    return partial(semanticqa_parse, context("semanticqa", task, "0-shot", choices, fields))


def _two_parts(task: str) -> Callable[[str], object]:
    return partial(parse_two_parts, comp=COMPOSITIONS[task])


# name -> parse(text); a task kind of SemanticQA once (its parser depends on the kind only)
_KINDS = {ADAPTERS[t].kind: t for t in sorted(ADAPTERS)}
PARSERS: dict[str, Callable[[str], object]] = {
    **{
        f"orderprobe/restore/{s}": partial(orderprobe_parse, context("orderprobe", "restore", s))
        for s in ("zero_shot", "cot", "three_shot")
    },
    "g-idiomalign/mcq/mcq": partial(g_idiomalign_parse, context("g-idiomalign", "mcq", "mcq", ("a", "b", "c", "d"))),
    **{
        f"g-idiomalign/gloss_generation/{s}": partial(
            g_idiomalign_parse, context("g-idiomalign", "gloss_generation", s, fields={"target_language": "French"})
        )
        for s in ("no_gloss", "with_gloss")
    },
    **{f"semanticqa/{task}/0-shot ({kind})": _semanticqa(task) for kind, task in sorted(_KINDS.items())},
    "semanticqa normalise_answer (exact match)": normalise_answer,
    **{f"semanticqa/{task}/multi_step (two parts)": _two_parts(task) for task in sorted(COMPOSITIONS)},
    **{
        f"chengyu-bench/{s}": partial(
            chengyu_parse, context("chengyu-bench", s, s, CANDIDATES if s == "chid_candidates" else ())
        )
        for s in ("connotation", "appropriateness", "open_cloze", "chid_open_cloze", "chid_candidates")
    },
}


def adversarial_texts(size: int) -> dict[str, str]:
    """Texts of about `size` characters, each built to defeat one kind of linear-time reading:
    repeated openers without a closer (a lazy `.*?` rescanned from each), long runs between two
    optional parts (`\\s*x?\\s*`), repeated wrappers (a copy per layer), many candidates (a slice
    per match), and long plain lines."""

    def rep(unit: str) -> str:
        return unit * max(1, size // len(unit))

    return {
        "think openers": rep("<think>"),
        "think closers": rep("</think>"),
        "answer openers": rep("<answer>"),
        "answer block of commas": "<answer>" + rep(",") + "</answer>",
        "spaces": rep(" "),
        "newlines": rep("\n"),
        "label then spaces": "Answer:" + rep(" ") + "?",
        "answer is then spaces": "The answer is" + rep(" ") + "?",
        "quotes": rep('"'),
        "emphasis": rep("*"),
        "nested quotes": rep("「") + rep("」"),
        "standalone letters": rep("A "),
        "letter alternatives": rep("B or "),
        "braces": rep("{"),
        "open brace then text": "{" + rep("a"),
        "echoed labels": rep("含义："),
        "thinking process then spaces": "Thinking Process" + rep(" ") + "x",
        "final meaning then spaces": "Final Meaning" + rep(" ") + "x",
        "tags with spaces": "<" + rep(" ") + "positive",
        "label words": rep("positive negative "),
        "words then no colon": rep("ab "),
        "space run then colon": "a" + rep(" ") + "b:",
        "digits": rep("1"),
        "digits in a JSON object": '{"answer": ' + rep("1") + "}",
        "nested brackets": rep("[") + rep("]"),
        "cjk": rep("画蛇添足"),
        "invisible characters": rep("\u200b\u202e\ufeffB"),
        "fullwidth": rep("Ａｎｓｗｅｒ：Ｂ "),
    }
