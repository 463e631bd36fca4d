"""The released S_Acc word lists read from the scripts' syntax tree (lexicon.py), on the
hand-written stand-ins of tests/fixtures/orderprobe/Sacc and on small broken scripts."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from idiombench.benchmarks.orderprobe import lexicon
from idiombench.core.errors import DataError
from orderprobe_fixtures import SACC_FIXTURE

GOOD = """
STOPWORDS = set("的了") | {"这"}
NEGATIONS = {"不"}
POLAR_POS = {"好"}
POLAR_NEG = {"坏"}
IDIOM_POLARITY_OVERRIDES = {"一二三四": {"pos": True, "neg": False}}
"""


def script(tmp_path: Path, text: str, name: str = "sacc_test.py") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_every_literal_form_of_the_stand_ins():
    zh = lexicon.extract(SACC_FIXTURE / "Sacc" / "sacc_chinese.py")
    assert zh.stopwords == {"的", "了", "在", "这", "是"}  # set("...") is one entry per character, | unites
    assert zh.negations == {"不", "没有"} and zh.negative == {"死板", "僵化", "失败"}
    assert zh.overrides == {"一帆风顺": (True, False), "自作自受": (False, True)}
    ko = lexicon.extract(SACC_FIXTURE / "Sacc" / "sacc_korean.py")
    assert ko.stopwords == {"은", "는", "이", "가"}  # set([...]) in a plain assignment
    assert ko.negations == {"안", "못"}  # set((...))
    assert ko.overrides == {"작심삼일": (False, True)}  # missing "pos": False


def test_four_languages_and_an_unknown_one():
    assert sorted(lexicon.extract_languages(SACC_FIXTURE, ["ko", "zh-TW", "ja", "zh-CN"])) == [
        "ja",
        "ko",
        "zh-CN",
        "zh-TW",
    ]
    with pytest.raises(DataError, match=r"no released S_Acc script for languages \['en'\]"):
        lexicon.extract_languages(SACC_FIXTURE, ["zh-CN", "en"])


def test_last_top_level_assignment_wins_and_nested_ones_are_ignored(tmp_path: Path):
    path = script(tmp_path, GOOD + 'POLAR_POS = {"妙"}\ndef f():\n    POLAR_NEG = {"x"}\n')
    lists = lexicon.extract(path)
    assert lists.positive == {"妙"} and lists.negative == {"坏"}


@pytest.mark.parametrize(
    "replacement,message",
    [
        ('NEGATIONS = load_words("neg.txt")', r"NEGATIONS \(line \d+\) is not a literal the extractor reads: a Call"),
        ("NEGATIONS = {WORD}", r"NEGATIONS \(line \d+\) is not a literal .*a Name expression"),
        ('NEGATIONS = {"不"} - {"没"}', r"NEGATIONS .*a BinOp expression"),
        ('NEGATIONS = {"不"} | ["没"]', r"NEGATIONS .*\| between values that are not both sets"),
        ("NEGATIONS = set(range(3))", r"NEGATIONS .*a Call expression"),
        ('NEGATIONS = {"不", 3}', r"NEGATIONS .*a Constant expression"),
        ("NEGATIONS = {*OTHER}", r"NEGATIONS .*a starred element"),
        ('NEGATIONS = "不"', r"NEGATIONS is not a collection of strings \(str\)"),
    ],
)
def test_a_list_that_is_not_a_literal_names_file_variable_and_line(tmp_path: Path, replacement: str, message: str):
    path = script(tmp_path, GOOD.replace('NEGATIONS = {"不"}', replacement))
    with pytest.raises(DataError, match=message) as info:
        lexicon.extract(path)
    assert str(path) in str(info.value)


def test_a_missing_list_names_the_variable(tmp_path: Path):
    path = script(tmp_path, GOOD.replace('POLAR_NEG = {"坏"}\n', ""))
    with pytest.raises(DataError, match=r"sacc_test\.py: no top-level assignment to POLAR_NEG"):
        lexicon.extract(path)


@pytest.mark.parametrize(
    "overrides,message",
    [
        ('["一二三四"]', r"IDIOM_POLARITY_OVERRIDES is a list"),
        ('{"一二三四": {"positive": True}}', r"IDIOM_POLARITY_OVERRIDES\['一二三四'\]"),
        ('{"一二三四": True}', r"IDIOM_POLARITY_OVERRIDES\['一二三四'\] = True"),
    ],
)
def test_malformed_overrides(tmp_path: Path, overrides: str, message: str):
    path = script(tmp_path, GOOD.replace('{"一二三四": {"pos": True, "neg": False}}', overrides))
    with pytest.raises(DataError, match=message):
        lexicon.extract(path)


def test_the_script_is_read_never_run(tmp_path: Path):
    """A script whose lists are fine but whose other code would fail or act is still read."""
    marker = tmp_path / "ran"
    path = script(tmp_path, f"import torch_that_is_not_installed\nopen({str(marker)!r}, 'w')\n" + GOOD)
    assert lexicon.extract(path).positive == {"好"}
    assert not marker.exists()


def test_not_python_and_missing_file(tmp_path: Path):
    with pytest.raises(DataError, match=r"sacc_test\.py: not Python \(line 1"):
        lexicon.extract(script(tmp_path, "STOPWORDS = {\n"))
    with pytest.raises(DataError, match=r"sacc_none\.py: missing"):
        lexicon.extract(tmp_path / "sacc_none.py")


def test_literal_value_accepts_only_the_listed_forms():
    value = lambda text: lexicon.literal_value(ast.parse(text, mode="eval").body)  # noqa: E731
    assert value('set("ab") | set(["c"]) | {"d"}') == {"a", "b", "c", "d"}
    assert value('("a", ["b"], {"k": True})') == ("a", ["b"], {"k": True})
    assert value("set()") == set()
    for text in ('__import__("os")', '"a" + "b"', "frozenset()", "1", "None", 'set("a", "b")', "set(x=1)"):
        with pytest.raises(lexicon.NotALiteral):
            value(text)


def test_json_round_trip_is_sorted_and_load_errors_name_the_file(tmp_path: Path):
    lists = lexicon.extract_languages(SACC_FIXTURE, ["zh-CN", "ko"])
    body = lexicon.to_json(lists)
    assert body["languages"]["zh-CN"]["positive"] == sorted(lists["zh-CN"].positive)
    assert body["source_files"] == {"ko": "Sacc/sacc_korean.py", "zh-CN": "Sacc/sacc_chinese.py"}
    (tmp_path / lexicon.LEXICON_FILE).write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
    assert lexicon.load(tmp_path) == lists
    (tmp_path / lexicon.LEXICON_FILE).write_text('{"languages": {"ko": {"stopwords": []}}}', encoding="utf-8")
    with pytest.raises(DataError, match="released_lexicon.json: malformed released word lists"):
        lexicon.load(tmp_path)
    with pytest.raises(DataError, match="released_lexicon.json: missing.*idiombench build orderprobe"):
        lexicon.load(tmp_path / "elsewhere")
