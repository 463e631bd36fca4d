"""Template files (package data), their hashes and strict rendering; io.staged_directory."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from idiombench.core.errors import DataError
from idiombench.core.generation_types import Message
from idiombench.core.io import staged_directory
from idiombench.core.ownership import RECORD, Output
from idiombench.templating.templates import (
    ChatTemplate,
    load_package_templates,
    load_template_path,
    parse_template_file,
)

PACKAGE_TEMPLATES = {
    ("idiombench.benchmarks.orderprobe", "zero_shot"): {"zh-CN", "zh-TW", "ja", "ko"},
    ("idiombench.benchmarks.orderprobe", "cot"): {"zh-CN", "zh-TW", "ja", "ko"},
    ("idiombench.benchmarks.orderprobe", "three_shot"): {"zh-CN", "zh-TW", "ja", "ko"},
    ("idiombench.benchmarks.g_idiomalign", "mcq"): {"released_instruction"},
    ("idiombench.benchmarks.g_idiomalign", "gloss_generation"): {"no_gloss", "with_gloss"},
    ("idiombench.benchmarks.chengyu_bench", "chengyu_bench"): {
        "connotation",
        "appropriateness",
        "open_cloze",
        "chid_candidates",
    },
}
PLACEHOLDERS = {
    "orderprobe/zero_shot": ("idiom",),
    "orderprobe/cot": ("idiom",),
    "orderprobe/three_shot": ("idiom",),
    "g-idiomalign/mcq": ("instruction",),
    "g-idiomalign/gloss_generation/no_gloss": ("target_language", "source_idiom"),
    "g-idiomalign/gloss_generation/with_gloss": ("target_language", "source_idiom", "gloss"),
    "chengyu-bench/connotation": ("idiom",),
    "chengyu-bench/appropriateness": ("sentence",),
    "chengyu-bench/open_cloze": ("paragraph",),
    "chengyu-bench/chid_candidates": ("paragraph", "candidates"),
}


@pytest.mark.parametrize(("package", "name"), sorted(PACKAGE_TEMPLATES))
def test_package_template_files_load_with_their_entries_and_placeholders(package: str, name: str):
    loaded = load_package_templates(package, name)
    assert set(loaded.entries) == PACKAGE_TEMPLATES[(package, name)]
    assert loaded.source.strip() and loaded.layout.strip()
    for key, template in loaded.entries.items():
        assert template.template_id == f"{loaded.file_id}/{key}"
        expected = next(v for k, v in PLACEHOLDERS.items() if template.template_id.startswith(k))
        assert template.placeholders == expected, template.template_id
        blob = json.dumps(
            [{"role": m.role, "content": m.content} for m in template.messages],
            ensure_ascii=False,
            sort_keys=True,
            separators=(",", ":"),
        )
        assert template.template_hash == hashlib.sha256(blob.encode("utf-8")).hexdigest()


def test_orderprobe_message_structure_follows_the_paper_tables():
    for language in ("zh-CN", "zh-TW", "ja", "ko"):
        zero = load_package_templates("idiombench.benchmarks.orderprobe", "zero_shot").get(language)
        cot = load_package_templates("idiombench.benchmarks.orderprobe", "cot").get(language)
        few = load_package_templates("idiombench.benchmarks.orderprobe", "three_shot").get(language)
        assert [m.role for m in zero.messages] == ["system", "user"]
        assert [m.role for m in cot.messages] == ["system", "user"]
        # table 9: two system messages; table 10: "start deep thinking" opens the user message
        assert [m.role for m in few.messages] == ["system", "system", "user"]
        assert few.messages[1].content == "start deep thinking, please always use the thinking mode"
        assert cot.messages[1].content.startswith("start deep thinking, please always use the thinking mode\n")
        for template in (cot, few):
            user = template.messages[-1].content
            assert "<p>" not in user and "<ol" not in user and "Final Meaning: " in user
        assert few.messages[-1].content.count("Thinking Process: ") == 3


def test_render_fills_every_placeholder_in_one_pass():
    template = ChatTemplate("t/x", (Message("system", "S {a}"), Message("user", "{a} and {b}; {not a placeholder}")))
    assert template.placeholders == ("a", "b")
    messages = template.render({"a": "{b}", "b": "B"})
    # a value containing {b} is not expanded again; other braces are literal text
    assert messages == (Message("system", "S {b}"), Message("user", "{b} and B; {not a placeholder}"))


def test_render_refuses_missing_or_non_text_values():
    template = ChatTemplate("t/x", (Message("user", "{a} {b}"),))
    with pytest.raises(KeyError, match="template t/x: no value for b"):
        template.render({"a": "1"})
    with pytest.raises(TypeError, match="value of b is int"):
        template.render({"a": "1", "b": 2})  # type: ignore[dict-item]


def test_hash_changes_with_any_edit():
    a = ChatTemplate("t/x", (Message("user", "Say {a}."),))
    b = ChatTemplate("t/x", (Message("user", "Say {a}!"),))
    c = ChatTemplate("t/x", (Message("system", "Say {a}."),))
    assert len({a.template_hash, b.template_hash, c.template_hash}) == 3


def test_joined_system_messages():
    few = load_package_templates("idiombench.benchmarks.orderprobe", "three_shot").get("zh-CN")
    joined = few.with_joined_system()
    assert [m.role for m in joined.messages] == ["system", "user"]
    assert joined.messages[0].content == few.messages[0].content + "\n" + few.messages[1].content
    assert joined.template_id == "orderprobe/three_shot/zh-CN+joined_system"
    assert joined.template_hash != few.template_hash
    zero = load_package_templates("idiombench.benchmarks.orderprobe", "zero_shot").get("zh-CN")
    assert zero.with_joined_system() is zero


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("id: [unclosed", "not valid YAML"),
        ("- a list", "not a mapping"),
        ("id: x\nsource: s\nlayout: l\n", "key 'templates' missing or empty"),
        ("id: x\nsource: s\ntemplates: {a: [{user: hi}]}\n", "key 'layout' missing or not text"),
        ("id: x\nsource: s\nlayout: l\nextra: 1\ntemplates: {a: [{user: hi}]}\n", "unknown keys ['extra']"),
        ("id: x\nsource: s\nlayout: l\ntemplates: {a: [{robot: hi}]}\n", "templates.a[0]: bad role 'robot'"),
        ("id: x\nsource: s\nlayout: l\ntemplates: {a: [{user: ''}]}\n", "templates.a[0]: bad role 'user' or empty"),
        ("id: x\nsource: s\nlayout: l\ntemplates: {a: [{user: hi, system: ho}]}\n", "not a one-key mapping"),
        ("id: x\nsource: s\nlayout: l\ntemplates: {a: 'text'}\n", "templates.a is not a message list"),
    ],
)
def test_bad_template_files_are_clear_errors(tmp_path: Path, text: str, problem: str):
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError) as info:
        load_template_path(path)
    assert str(path) in str(info.value) and problem in str(info.value)


def test_unknown_entry_and_missing_file_are_clear_errors():
    loaded = parse_template_file("id: x\nsource: s\nlayout: l\ntemplates: {a: [{user: hi}]}\n", "pkg/prompts/x.yaml")
    with pytest.raises(DataError, match=r"pkg/prompts/x.yaml.*no template entry 'fr'.*one of \['a'\]"):
        loaded.get("fr")
    with pytest.raises(DataError, match="orderprobe/prompts/nine_shot.yaml.*template file not found"):
        load_package_templates("idiombench.benchmarks.orderprobe", "nine_shot")


def test_staged_directory_swaps_whole_or_not_at_all(tmp_path: Path):
    out = tmp_path / "out"
    output = Output("test", "text files")
    with staged_directory(out, output) as staging:
        (staging / "a.txt").write_text("1")
    assert sorted(p.name for p in out.iterdir()) == ["a.txt", RECORD]
    with pytest.raises(RuntimeError):
        with staged_directory(out, output) as staging:
            (staging / "b.txt").write_text("2")
            raise RuntimeError("crash mid-write")
    assert sorted(p.name for p in out.iterdir()) == ["a.txt", RECORD]  # the previous complete output
    with staged_directory(out, output) as staging:
        (staging / "c.txt").write_text("3")
    assert sorted(p.name for p in out.iterdir()) == ["c.txt", RECORD]  # replaced whole, no leftovers
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no staging directories left behind
