"""The word lists of OrderProbe's released S_Acc code, read from the acquired scripts.

The authors keep their lists (stop words, negations, positive and negative polarity words,
per-idiom polarity overrides) as module-level literals in `Sacc/sacc_<language>.py`
(upstream Zhaolu-K/OrderProbe at the commit pinned in files.json). `idiombench acquire`
copies those scripts into data/raw/orderprobe/Sacc/, `build` extracts the lists here and
writes them to data/processed/orderprobe/released_lexicon.json, and `score` reads that file:
the project ships no copy of the lists.

The scripts are never imported or executed (they import torch, transformers and load
models at import time): each list is read from the syntax tree by a small evaluator that
accepts only what the scripts use — set, dict, list and tuple literals, string and boolean
constants, `set("...")` (the set of a string's characters), `set([...])`, and `|` between
sets. Anything else is an error naming the file, the variable and the line.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...core.errors import DataError
from ...core.io import read_json
from ...scoring import segment

LEXICON_FILE = "released_lexicon.json"  # in the build output, data/processed/orderprobe/
# language -> the released script holding its lists (path under data/raw/orderprobe/)
SACC_FILES = {
    "zh-CN": "Sacc/sacc_chinese.py",
    "zh-TW": "Sacc/sacc_traditional_chinese.py",
    "ja": "Sacc/sacc_japanese.py",
    "ko": "Sacc/sacc_korean.py",
}
# ReleasedLexicon field -> the script's variable
WORD_LIST_VARIABLES = {
    "stopwords": "STOPWORDS",
    "negations": "NEGATIONS",
    "positive": "POLAR_POS",
    "negative": "POLAR_NEG",
}
OVERRIDES_VARIABLE = "IDIOM_POLARITY_OVERRIDES"
ACCEPTED = 'set, dict, list or tuple literals of strings, set("..."), set([...]) and | between sets'


def cut_words(text: str) -> list[str]:
    """jieba's default tokenizer, as the released code's jieba.cut uses (the word lists are
    matched against its words: polarity.py, released.py); scoring.segment gives its exact words."""
    return segment.cut(text)


@dataclass(frozen=True)
class ReleasedLexicon:
    stopwords: frozenset[str]
    negations: frozenset[str]
    positive: frozenset[str]
    negative: frozenset[str]
    # idiom -> (has_positive, has_negative): the code's per-idiom polarity overrides
    overrides: dict[str, tuple[bool, bool]]


class NotALiteral(Exception):
    """An expression the restricted evaluator does not read (carries the offending node)."""

    def __init__(self, node: ast.AST, why: str):
        super().__init__(why)
        self.node = node
        self.why = why


def _set_of(value: object, node: ast.AST) -> set[object]:
    if isinstance(value, str):
        return set(value)  # set("的了呢"): one entry per character, as Python does
    if isinstance(value, (set, list, tuple)):
        return set(value)
    raise NotALiteral(node, f"set() of a {type(value).__name__}")


def literal_value(node: ast.AST) -> object:
    """The value of a literal expression, or NotALiteral. No name is looked up and nothing
    is called except `set(...)`, so reading a script cannot run its code."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bool)):
        return node.value
    if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        if any(isinstance(e, ast.Starred) for e in node.elts):
            raise NotALiteral(node, "a starred element")
        values = [literal_value(e) for e in node.elts]
        return (
            set(values) if isinstance(node, ast.Set) else list(values) if isinstance(node, ast.List) else tuple(values)
        )
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise NotALiteral(node, "a ** expansion")
        return {literal_value(k): literal_value(v) for k, v in zip(node.keys, node.values, strict=True)}  # type: ignore[arg-type]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "set":
        if node.keywords or len(node.args) > 1:
            raise NotALiteral(node, "set() with keywords or several arguments")
        return _set_of(literal_value(node.args[0]), node) if node.args else set()
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = literal_value(node.left), literal_value(node.right)
        if not (isinstance(left, set) and isinstance(right, set)):
            raise NotALiteral(node, "| between values that are not both sets")
        return left | right
    raise NotALiteral(node, f"a {type(node).__name__} expression")


def top_level_assignments(tree: ast.Module) -> dict[str, ast.expr]:
    """name -> the value of its last top-level assignment (`X = ...` or `X: T = ...`),
    the one in force once the module has been imported."""
    found: dict[str, ast.expr] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = statement.value
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value:
            found[statement.target.id] = statement.value
    return found


def _variable(path: Path, assignments: dict[str, ast.expr], name: str) -> object:
    node = assignments.get(name)
    if node is None:
        raise DataError(path, f"no top-level assignment to {name}", expected=f"{name} = <{ACCEPTED}>")
    try:
        return literal_value(node)
    except NotALiteral as exc:
        line = getattr(exc.node, "lineno", node.lineno)
        raise DataError(
            path, f"{name} (line {line}) is not a literal the extractor reads: {exc.why}", expected=ACCEPTED
        ) from None


def _word_list(path: Path, assignments: dict[str, ast.expr], name: str) -> frozenset[str]:
    value = _variable(path, assignments, name)
    if not isinstance(value, (set, list, tuple)) or not all(isinstance(w, str) for w in value):
        raise DataError(
            path, f"{name} is not a collection of strings ({type(value).__name__})", expected="a set of words"
        )
    return frozenset(value)


def _overrides(path: Path, assignments: dict[str, ast.expr]) -> dict[str, tuple[bool, bool]]:
    value = _variable(path, assignments, OVERRIDES_VARIABLE)
    if not isinstance(value, dict):
        raise DataError(
            path,
            f"{OVERRIDES_VARIABLE} is a {type(value).__name__}",
            expected='a dict idiom -> {"pos": bool, "neg": bool}',
        )
    out: dict[str, tuple[bool, bool]] = {}
    for idiom, flags in value.items():
        if not isinstance(idiom, str) or not isinstance(flags, dict) or set(flags) - {"pos", "neg"}:
            raise DataError(
                path,
                f"{OVERRIDES_VARIABLE}[{idiom!r}] = {flags!r}",
                expected='an idiom string -> {"pos": bool, "neg": bool}',
            )
        # The released extract_polarity reads bool(ov.get("pos", False)): a missing key is False.
        out[idiom] = (bool(flags.get("pos", False)), bool(flags.get("neg", False)))
    return out


def extract(path: Path) -> ReleasedLexicon:
    """The word lists of one released Sacc script."""
    try:
        source = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(
            path,
            "missing: the released S_Acc script is an acquired file",
            expected="the file `idiombench acquire orderprobe` copies",
        ) from None
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        raise DataError(path, f"not Python (line {exc.lineno}: {exc.msg})") from None
    assignments = top_level_assignments(tree)
    lists = {field: _word_list(path, assignments, variable) for field, variable in WORD_LIST_VARIABLES.items()}
    return ReleasedLexicon(**lists, overrides=_overrides(path, assignments))


def extract_languages(raw_dir: Path, languages: list[str]) -> dict[str, ReleasedLexicon]:
    """language -> its lists, from the acquired scripts under raw_dir (data/raw/orderprobe)."""
    unknown = [lang for lang in languages if lang not in SACC_FILES]
    if unknown:
        raise DataError(
            raw_dir,
            f"no released S_Acc script for languages {unknown}",
            expected=f"languages among {', '.join(SACC_FILES)}",
        )
    return {language: extract(raw_dir / SACC_FILES[language]) for language in languages}


def to_json(lexicons: dict[str, ReleasedLexicon]) -> dict[str, object]:
    """The build output's form: sorted lists, so that a rebuild writes identical bytes."""
    return {
        "source_files": {language: SACC_FILES[language] for language in sorted(lexicons)},
        "languages": {
            language: {
                **{field: sorted(getattr(lex, field)) for field in WORD_LIST_VARIABLES},
                "idiom_overrides": {
                    idiom: {"positive": pos, "negative": neg} for idiom, (pos, neg) in sorted(lex.overrides.items())
                },
            }
            for language, lex in sorted(lexicons.items())
        },
    }


def from_json(raw: dict[str, Any], path: Path) -> dict[str, ReleasedLexicon]:
    try:
        return {
            language: ReleasedLexicon(
                **{field: frozenset(entry[field]) for field in WORD_LIST_VARIABLES},
                overrides={k: (bool(v["positive"]), bool(v["negative"])) for k, v in entry["idiom_overrides"].items()},
            )
            for language, entry in raw["languages"].items()
        }
    except (KeyError, TypeError, AttributeError) as exc:
        raise DataError(
            path, f"malformed released word lists ({exc!r})", expected="the file `idiombench build orderprobe` writes"
        ) from None


def load(processed_dir: Path) -> dict[str, ReleasedLexicon]:
    """The lists written by the build (data/processed/orderprobe/released_lexicon.json)."""
    path = processed_dir / LEXICON_FILE
    if not path.is_file():
        raise DataError(
            path,
            "missing: the released word lists are part of the OrderProbe build",
            expected="run `idiombench acquire orderprobe` and `idiombench build orderprobe`",
        )
    return from_json(read_json(path), path)
