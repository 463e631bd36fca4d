"""scoring.segment.cut gives jieba 0.42.1's exact words (docs/METRICS.md §1.10).

The argument of the module docstring, piece by piece: jieba's own words on every reference of
the OrderProbe release, on the ChID passages and on realistic outputs (raw and normalised, as the
polarity rule and the tokeniser read them); random CJK strings, which run jieba's HMM on almost
every character; the fallback cases (ASCII runs, digits, punctuation, whitespace, mixed scripts,
characters the two libraries classify differently, a user dictionary and deleted words); every
code point's class in jieba-rs; and the one transcendental function of the route, log."""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import random
from pathlib import Path

import jieba
import jieba.finalseg
import pytest

from idiombench.scoring import segment
from idiombench.scoring.tokenize import normalize
from realistic_corpus import chid_passages, outputs, references

JIEBA = segment.default_tokenizer()


def jieba_words(text: str) -> list[str]:
    return list(JIEBA.cut(text))


def paths_taken(texts: list[str]) -> tuple[int, int]:
    """(texts cut by jieba-rs whole, texts cut block by block)."""
    blocks = sum(1 for text in texts if segment.NEEDS_BLOCKS.search(text))
    return len(texts) - blocks, blocks


def assert_same(texts: list[str]) -> None:
    assert segment.native_on()
    differing = [text for text in texts if segment.cut(text) != jieba_words(text)]
    assert not differing, f"{len(differing)} of {len(texts)} texts differ, e.g. {differing[:3]}"


@pytest.mark.mirror
def test_every_release_reference_and_chid_passage(built, mirror: Path):
    refs = [ref for pairs in references(built("orderprobe")).values() for _, ref in pairs]
    passages = chid_passages(mirror)
    assert len(refs) == 1532 + 2252 + 451 and len(passages) > 4000  # zh-CN, zh-TW, ko references; ChID
    texts = refs + [normalize(ref) for ref in refs] + passages
    whole, blocks = paths_taken(texts)
    assert whole > 8000 and blocks > 1000  # both paths run (ChID: digits and Latin in a third of the passages)
    assert_same(texts)


@pytest.mark.mirror
def test_realistic_outputs(built):
    rows = outputs(built("orderprobe"), per_language=4)  # 768 outputs of ~700 characters, zero_shot and cot
    texts = [row["text"] for row in rows] + [normalize(row["text"]) for row in rows if row["setting"] == "zero_shot"]
    whole, blocks = paths_taken(texts)
    assert whole > 200 and blocks > 200  # cot outputs hold ASCII labels, a third of the others list numbers
    assert_same(texts)


def test_random_cjk_strings_run_the_hmm_alike():
    rng = random.Random(29)
    common = "的一是不了人我在有他这为之大来以个中上们到说时地也子就道要出会可下而过天去能对小多然于心学么"
    texts = []
    for _ in range(6000):
        n = rng.randint(1, 40)
        if rng.random() < 0.5:  # rare characters: mostly outside the dictionary, so the HMM cuts them
            texts.append("".join(chr(rng.randint(0x4E00, 0x9FD5)) for _ in range(n)))
        else:
            texts.append("".join(rng.choice(common + "，。 \n\r") for _ in range(n)))
    assert_same(texts)


FALLBACK_CASES = [
    "COL_10的含义",
    "用AI技术解释成语",
    "3.5%的人",
    "100%正确",
    "a+b=c，C++语言",
    "Q&A：画蛇添足",
    "第1.2节",
    "e.g. 比喻做了多余的事",
    "全角ＡＢＣ１２３和半角abc123",
    "人民-国家_社会#主义",
    "换行\r\n再换行\n\r\n回车\r结束",
    "空格 中文\t制表　全角空格",
    "“引号”（括号）《书名》【方括号】",
    "한국어와 中文 混合",
    "ひらがなとカタカナ、漢字",
    "㐀㐁中文",
    "中文\u9fd6\u9fff字",
    "兀\uf900\ufa00字",
    "\U00020000\U0002a6d6字",
    "\ud800中文",
    "",
    " ",
    "。",
    "中",
    "中国",
]


def test_fallback_cases_equal_jieba_and_take_the_expected_path():
    assert_same(FALLBACK_CASES)
    for text in ("COL_10的含义", "3.5%的人", "㐀㐁中文", "中文\u9fd6字", "兀\uf900字", "\U00020000字", "\ud800中文"):
        assert segment.NEEDS_BLOCKS.search(text), text  # cut block by block
    for text in ("换行\r\n再换行", "“引号”（括号）", "한국어와 中文", "ひらがなとカタカナ、漢字", "空格　全角"):
        assert not segment.NEEDS_BLOCKS.search(text), text  # cut whole by jieba-rs
    assert segment.cut("COL_10") == ["COL", "_", "10"] == jieba_words("COL_10")  # jieba-rs alone: ["COL_10"]


def test_the_environment_switch_leaves_everything_to_jieba(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(segment.NATIVE_ENV, "0")
    assert not segment.native_on()
    assert segment.cut("画蛇添足比喻做了多余的事") == jieba_words("画蛇添足比喻做了多余的事")


def test_a_changed_dictionary_is_followed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A tokenizer of its own (jieba's global one stays untouched); forced splits are module-wide
    in jieba, so they are restored after the test."""
    monkeypatch.setattr(jieba.finalseg, "Force_Split_Words", set())
    tokenizer = jieba.Tokenizer()
    tokenizer.initialize()
    mine = segment.Segmenter(tokenizer)
    texts = ["这个成语常用来形容鸿雁哀鸣的景象", "蛇足添画是画蛇添足的倒序", "台中市政府今天开会"]

    def same() -> None:
        assert [mine.cut(t) for t in texts] == [list(tokenizer.cut(t)) for t in texts]

    same()
    first = mine.native()
    tokenizer.add_word("鸿雁哀鸣", 50000)
    same()
    assert mine.native() is not first  # rebuilt from the new counts
    (tmp_path / "user.txt").write_text("蛇足添画 1000 n\n今天开会 3\n", encoding="utf-8")
    tokenizer.load_userdict(str(tmp_path / "user.txt"))
    same()
    tokenizer.del_word("台中")  # count 0 and a forced split
    assert jieba.finalseg.Force_Split_Words
    same()
    tokenizer.suggest_freq(("常用", "来"), tune=True)
    same()


def test_jieba_rs_classes_no_other_character_as_han():
    """Every code point outside NEEDS_BLOCKS and U+4E00-U+9FD5 is no han character for jieba-rs
    either, so such texts have the same blocks in both: doubled, a character jieba-rs counted as
    han would come back as one word of two (its HMM returns runs it cannot read whole)."""
    native = segment.Segmenter().native()
    candidates = [
        chr(c)
        for c in range(1, 0x110000)
        if not 0xD800 <= c <= 0xDFFF
        and c not in (0x0D, 0x0A)
        and not segment.NEEDS_BLOCKS.match(chr(c))
        and not segment.PURE_CJK.match(chr(c))
    ]
    assert len(candidates) > 950_000
    for start in range(0, len(candidates), 50_000):
        text = "".join(c + c for c in candidates[start : start + 50_000])
        words = native.cut(text, True)
        assert all(len(w) == 1 for w in words), [w for w in words if len(w) > 1][:5]
    assert native.cut("\r\n\r\r", True) == ["\r\n", "\r", "\r"] == jieba_words("\r\n\r\r")


def test_the_route_uses_glibcs_log_as_python_does():
    """jieba-rs (rjieba 0.2.2) computes ln(count) with glibc's log (it imports log@GLIBC_2.2.5;
    CPython's math.log is log@GLIBC_2.29): both versions give math.log's value on every distinct
    count of the dictionary and on its total, so both libraries evaluate the same route scores."""
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    libdl = ctypes.CDLL(None)
    libdl.dlvsym.restype = ctypes.c_void_p
    libdl.dlvsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
    counts = sorted({count for count in JIEBA.FREQ.values() if count > 0} | {JIEBA.total})
    for version in (b"GLIBC_2.2.5", b"GLIBC_2.29"):
        address = libdl.dlvsym(libm._handle, b"log", version)
        assert address, f"libm has no log@{version.decode()}"
        log = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(address)
        assert [log(float(c)) for c in counts] == [math.log(c) for c in counts]
