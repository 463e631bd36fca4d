"""The render stage on small hand-written items: golden prompts (OrderProbe per setting, G-IdiomAlign,
Chengyu-Bench), SemanticQA on the fixture release, sampling, determinism, disabled benchmarks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from idiombench.benchmarks.base import BuildResult, BuildStats, write_build
from idiombench.benchmarks.chengyu_bench.config import ChengyuBenchConfig, ChengyuBenchRender, ChengyuBenchSample
from idiombench.benchmarks.g_idiomalign.config import GIdiomAlignConfig, GIdiomAlignRender, GIdiomAlignSample
from idiombench.benchmarks.orderprobe.config import OrderProbeConfig, OrderProbeRender, OrderProbeSample
from idiombench.benchmarks.semanticqa.build import build as build_semanticqa
from idiombench.benchmarks.semanticqa.config import (
    LCCTaxonomy,
    SemanticQABuild,
    SemanticQAConfig,
    SemanticQARender,
    SemanticQASample,
)
from idiombench.cli import app
from idiombench.core.errors import DataError, IdiombenchError
from idiombench.core.generation_types import Message
from idiombench.core.items import Item
from idiombench.core.sampling import seeded_subset
from idiombench.stages.render import load_tasks, render_benchmark, run_render
from idiombench.templating.prompts import hash_messages, read_prompts

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
PATTERNS = ("ABCD", "ABDC", "BADC")


def processed(tmp_path: Path, name: str, tasks: dict[str, list[Item]]) -> Path:
    out = tmp_path / "processed" / name
    write_build(BuildResult(tasks, BuildStats(name)), out)
    return out


def orderprobe_items() -> list[Item]:
    """Three inputs for each of three expressions per language (the paper's figure examples first)."""
    expressions = {
        "zh-CN": ["不耻下问", "画蛇添足", "刻舟求剑"],
        "zh-TW": ["放蕩形骸", "畫蛇添足", "刻舟求劍"],
        "ja": ["画竜点睛", "一石二鳥", "四面楚歌"],
        "ko": ["개관사정", "각주구검", "화사첨족"],
    }
    items = []
    for language, forms in expressions.items():
        for row, form in enumerate(forms, start=1):
            for pattern in PATTERNS:
                scrambled = "".join(form["ABCD".index(c)] for c in pattern)
                items.append(
                    Item(
                        item_id=f"{language}/{row:04d}/{pattern}",
                        benchmark="orderprobe",
                        task="restore",
                        language=language,
                        input=scrambled,
                        answer=form,
                        references=(f"{form}的释义",),
                        fields={"idiom": scrambled},
                        meta={
                            "expression_id": f"{language}/{row:04d}",
                            "pattern": pattern,
                            "is_canonical": pattern == "ABCD",
                        },
                    )
                )
    return items


def op_config(**render) -> OrderProbeConfig:
    return OrderProbeConfig(render=OrderProbeRender(**render))


def prompt_of(prompts, item_id):
    return next(p for p in prompts if p.item_id == item_id)


def as_lists(messages) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in messages]


# --------------------------------------------------------------------------- OrderProbe goldens


@pytest.fixture()
def op_dir(tmp_path: Path) -> Path:
    return processed(tmp_path, "orderprobe", {"restore": orderprobe_items()})


def test_orderprobe_golden_zero_shot_zh_cn(op_dir: Path):
    """Paper table 8, ZH-CN, with the scrambled input of figure 8 (不耻问下)."""
    out = render_benchmark("orderprobe", op_config(), op_dir, op_dir)
    prompt = prompt_of(out.prompts["zero_shot"], "zh-CN/0001/ABDC")
    assert as_lists(prompt.messages) == [
        (
            "system",
            "你是一个严格遵循格式要求的语言专家。请你回答为中文。请只输出一行，不要多余空行或其他文字：\n判断含义：[解释]",
        ),
        (
            "user",
            "请你判断这个的含义。直接判断并说出含义，不要有其他废话，尽可能全面：\n判断含义：[解释]\n成语：不耻问下",
        ),
    ]
    assert prompt.template_id == "orderprobe/zero_shot/zh-CN" and prompt.exemplar_ids == ()
    assert prompt.prompt_id == "orderprobe/restore/zero_shot/zh-CN/0001/ABDC"


def test_orderprobe_golden_zero_shot_zh_tw(op_dir: Path):
    """Paper table 8, ZH-TW (its user message reads 可能全面 as printed)."""
    out = render_benchmark("orderprobe", op_config(), op_dir, op_dir)
    prompt = prompt_of(out.prompts["zero_shot"], "zh-TW/0001/ABDC")
    assert as_lists(prompt.messages) == [
        (
            "system",
            "你是一個嚴格遵循格式要求的語言專家。請用繁體中文回答。請只輸出一行，不要多餘空行或其他文字：\n判斷含義：[解釋]",
        ),
        (
            "user",
            "請你判斷這個的含義。直接判斷並說出含義，不要有其他贅詞，可能全面：\n判斷含義：[解釋]\n成語：放蕩骸形",
        ),
    ]


def test_orderprobe_golden_cot_ja(op_dir: Path):
    """Paper table 10, JA: "start deep thinking …" is the first line of the user message; <p> and <ol> items
    are one line each."""
    out = render_benchmark("orderprobe", op_config(), op_dir, op_dir)
    prompt = prompt_of(out.prompts["cot"], "ja/0001/BADC")
    assert as_lists(prompt.messages) == [
        (
            "system",
            "あなたは厳格な論理を持つ言語分析の専門家です。ユーザーの指示するフォーマットに厳密に従い、"
            "余計な挨拶や結びの言葉は出力しないでください。",
        ),
        (
            "user",
            "start deep thinking, please always use the thinking mode\n"
            "以下のテキストの深層的な意味を分析してください。これは言語論理の再構築能力をテストするタスクです。\n"
            "正確性を確保するため必ずステップバイステップで思考し以下の分析パスを厳守してください。\n"
            "1 文字の解読 テキストに含まれる各文字の個別の意味を分析します。\n"
            "2 構造の再構築 文字間の構文論理を観察し語順が入れ替わっていないか判断します。\n"
            "3 意味の導出 再構築された論理に基づいてテキスト全体の意味を推論します。\n"
            "以下の形式に厳密に従って出力してください。必ず二行でなければなりません。\n"
            "Thinking Process: ここに文字の順序と構造の分析を含む詳細な段階的推論プロセスを記述してください。\n"
            "Final Meaning: 推論に基づいて導き出された最終的な意味の説明。"
            "結論のみを提示し推論過程を繰り返さないでください。可能な限り包括的に記述してください。\n"
            "入力テキスト：竜画睛点",
        ),
    ]


def test_orderprobe_golden_cot_zh_cn(op_dir: Path):
    """Paper table 10, ZH-CN (its idiom line has an ASCII colon: 输入文本: )."""
    out = render_benchmark("orderprobe", op_config(), op_dir, op_dir)
    prompt = prompt_of(out.prompts["cot"], "zh-CN/0002/ABCD")
    assert prompt.messages[1].content.endswith(
        "Final Meaning: 基于推理得出的最终含义解释，只给结论，不要再解释推理过程，尽可能全面。\n输入文本: 画蛇添足"
    )
    assert prompt.messages[1].content.splitlines()[2:5] == [
        "1 字义拆解分析文本中每个字的独立含义。",
        "2 结构重组观察这些字之间可能存在的句法逻辑，判断是否存在语序错位。",
        "3 语义推导基于重组后的逻辑，推导该文本的整体寓意。",
    ]


def test_orderprobe_golden_three_shot_ko(op_dir: Path):
    """Paper table 9, KO: two system messages, the three exemplars as printed (incl. 첨족화사 (添足蛇))."""
    out = render_benchmark("orderprobe", op_config(), op_dir, op_dir)
    prompt = prompt_of(out.prompts["three_shot"], "ko/0001/ABDC")
    assert as_lists(prompt.messages) == [
        (
            "system",
            "너는 논리적이고 엄격한 언어 분석 전문가야. 한국어로만 답해. "
            "사용자의 지시에 따라 단계별로 사고하고 결과를 도출해.",
        ),
        ("system", "start deep thinking, please always use the thinking mode"),
        (
            "user",
            "다음 텍스트 분석 예시를 자세히 읽고 분석 논리와 출력 형식을 학습하십시오. 그런 다음 마지막에 제시된 분석 "
            "대상 텍스트에 대해 동일한 분석을 수행하십시오.\n"
            "예시 1\n"
            "입력 텍스트: 경인일명 (驚人一鳴)\n"
            "Thinking Process: 새가 한 번 울어 사람들을 놀라게 한다는 인과 관계가 자연스럽다. 따라서 어순을 "
            "일명경인으로 재구성한다.\n"
            "Final Meaning: 평소에는 조용하다가 갑자기 놀라운 성과를 내어 세상을 놀라게 함을 비유하는 말이다.\n"
            "예시 2\n"
            "입력 텍스트: 첨족화사 (添足蛇)\n"
            "Thinking Process: 뱀을 그리고 나서 발을 더하는 행위가 불필요하다. 어순을 화사첨족으로 재구성한다.\n"
            "Final Meaning: 쓸데없는 일을 덧붙여서 도리어 일을 그르침을 이르는 말이다.\n"
            "예시 3\n"
            "입력 텍스트: 구검각주 (求劍刻舟)\n"
            "Thinking Process: 칼을 찾기 위한 수단으로 배에 표시를 하므로 먼저 각주하고 나중에 구검한다. 어순을 "
            "각주구검으로 재구성한다.\n"
            "Final Meaning: 변화하는 상황을 모르고 낡은 방식에 집착하는 어리석음을 비유한다.\n"
            "분석 대상 텍스트\n"
            "입력 텍스트: 개관정사\n"
            "위 예시들의 논리와 형식을 엄격히 모방하여 출력하십시오. 반드시 두 줄만 출력하십시오.",
        ),
    ]


def test_orderprobe_golden_three_shot_zh_cn_joined_system(op_dir: Path):
    out = render_benchmark("orderprobe", op_config(join_system_messages=True), op_dir, op_dir)
    prompt = prompt_of(out.prompts["three_shot"], "zh-CN/0003/ABCD")
    assert as_lists(prompt.messages)[0] == (
        "system",
        "你是一个严谨的逻辑分析专家。请严格遵循用户的指令格式输出结果。禁止输出任何开场白或结束语。\n"
        "start deep thinking, please always use the thinking mode",
    )
    assert prompt.messages[1].content.splitlines()[-2:] == [
        "输入文本：刻舟求剑",
        "请严格模仿上述示例的逻辑和格式输出，必须严格两行。",
    ]
    assert prompt.template_id == "orderprobe/three_shot/zh-CN+joined_system"


def test_orderprobe_every_item_every_setting_hashes_and_templates(op_dir: Path):
    out = render_benchmark("orderprobe", op_config(), op_dir, op_dir)
    assert {s: len(p) for s, p in out.prompts.items()} == {"zero_shot": 36, "cot": 36, "three_shot": 36}
    for setting, prompts in out.prompts.items():
        for prompt in prompts:
            assert prompt.prompt_hash == hash_messages(prompt.messages)
            assert prompt.template_id == f"orderprobe/{setting}/{prompt.language}"
            assert out.templates[prompt.template_id]["hash"] == prompt.template_hash
            assert all("{idiom}" not in m.content for m in prompt.messages)
    assert len({p.prompt_hash for p in out.prompts["zero_shot"]}) == 36


def test_orderprobe_sample_takes_whole_expressions_deterministically(op_dir: Path):
    sample = OrderProbeSample(seed=0, expressions_per_language=1)
    first = render_benchmark("orderprobe", op_config(sample=sample), op_dir, op_dir)
    again = render_benchmark("orderprobe", op_config(sample=sample), op_dir, op_dir)
    assert [p.prompt_id for p in first.prompts["cot"]] == [p.prompt_id for p in again.prompts["cot"]]
    chosen = first.sample["restore"]["expressions"]
    assert {lang: len(e) for lang, e in chosen.items()} == {"ja": 1, "ko": 1, "zh-CN": 1, "zh-TW": 1}
    ids = {p.item_id for p in first.prompts["zero_shot"]}
    assert ids == {f"{e}/{pattern}" for exprs in chosen.values() for e in exprs for pattern in PATTERNS}
    seeds = [
        tuple(
            sorted(
                render_benchmark(
                    "orderprobe", op_config(sample=OrderProbeSample(seed=s, expressions_per_language=1)), op_dir, op_dir
                ).sample["restore"]["expressions"]["zh-CN"]
            )
        )
        for s in range(8)
    ]
    assert len(set(seeds)) > 1  # the seed matters


def test_orderprobe_permutation_sample_keeps_the_canonical_form_and_k_permutations(op_dir: Path):
    sample = OrderProbeSample(seed=0, expressions_per_language=1, permutations_per_expression=1)
    out = render_benchmark("orderprobe", op_config(sample=sample), op_dir, op_dir)
    again = render_benchmark("orderprobe", op_config(sample=sample), op_dir, op_dir)
    chosen = out.sample["restore"]["expressions"]
    assert "the canonical form and 1 seeded permutation(s) each" in out.sample["restore"]["selection"]
    ids = [p.item_id for p in out.prompts["zero_shot"]]
    assert ids == [p.item_id for p in again.prompts["zero_shot"]]
    by_expression: dict[str, list[str]] = {}
    for item_id in ids:
        expression, pattern = item_id.rsplit("/", 1)
        by_expression.setdefault(expression, []).append(pattern)
    assert set(by_expression) == {e for exprs in chosen.values() for e in exprs}
    for patterns in by_expression.values():
        assert "ABCD" in patterns and len(patterns) == 2 and set(patterns) <= set(PATTERNS)
    # the same items in every setting; the seed decides which permutation an expression keeps
    assert {s: len(p) for s, p in out.prompts.items()} == {"zero_shot": 8, "cot": 8, "three_shot": 8}
    draws = {
        tuple(
            p.item_id
            for p in render_benchmark(
                "orderprobe",
                op_config(
                    sample=OrderProbeSample(seed=seed, expressions_per_language=3, permutations_per_expression=1)
                ),
                op_dir,
                op_dir,
            ).prompts["cot"]
        )
        for seed in range(4)
    }
    assert len(draws) > 1
    # without an expression draw: every expression, still k permutations each
    every = render_benchmark(
        "orderprobe", op_config(sample=OrderProbeSample(permutations_per_expression=1)), op_dir, op_dir
    )
    assert len(every.prompts["cot"]) == 2 * 12  # 12 expressions, canonical + 1 permutation each
    with pytest.raises(ValueError):
        OrderProbeSample(permutations_per_expression=24)


def test_seeded_subset_is_stable_and_order_free():
    keys = [f"k{i}" for i in range(100)]
    assert seeded_subset(keys, 5, 0, "x") == seeded_subset(list(reversed(keys)), 5, 0, "x")
    assert seeded_subset(keys, 5, 0, "x") == ["k18", "k2", "k46", "k5", "k86"]  # pinned: same on every machine
    assert seeded_subset(keys, None, 0, "x") == sorted(keys)
    assert seeded_subset(keys, 500, 0, "x") == sorted(keys)


def test_missing_template_language_is_a_clear_error(tmp_path: Path):
    item = Item(
        "fr/0001/ABCD",
        "orderprobe",
        "restore",
        "fr",
        "abcd",
        fields={"idiom": "abcd"},
        meta={"expression_id": "fr/0001"},
    )
    folder = processed(tmp_path, "orderprobe", {"restore": [item]})
    with pytest.raises(DataError, match=r"orderprobe/prompts/zero_shot.yaml.*no template entry 'fr'"):
        render_benchmark("orderprobe", op_config(), folder, folder)


# --------------------------------------------------------------------------- writing, determinism, CLI


def test_written_tables_are_byte_identical_on_rerun(op_dir: Path, tmp_path: Path):
    config = op_config(sample=OrderProbeSample(seed=3, expressions_per_language=2))
    first = run_render("orderprobe", config, processed_dir=op_dir, raw_dir=op_dir, out_dir=tmp_path / "a")
    run_render("orderprobe", config, processed_dir=op_dir, raw_dir=op_dir, out_dir=tmp_path / "b")
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == [
        "cot.parquet",
        "idiombench-output.json",
        "render_stats.json",
        "three_shot.parquet",
        "zero_shot.parquet",
    ]
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    stats = first.stats
    assert stats["prompts_total"] == 3 * 4 * 2 * len(PATTERNS)
    assert stats["settings"]["cot"]["tasks"]["restore"]["languages"] == {"ja": 6, "ko": 6, "zh-CN": 6, "zh-TW": 6}
    assert set(stats["templates"]) == {
        f"orderprobe/{s}/{language}"
        for s in ("zero_shot", "cot", "three_shot")
        for language in ("zh-CN", "zh-TW", "ja", "ko")
    }
    loaded = read_prompts(tmp_path / "a" / "cot.parquet")
    assert len(loaded) == 24 and all(p.setting == "cot" for p in loaded)


def test_disabled_benchmark_renders_nothing_and_says_so(tmp_path: Path, op_dir: Path):
    params = yaml_params(tmp_path, {"orderprobe": {"enabled": False}})
    out = tmp_path / "prompts"
    result = CliRunner().invoke(
        app, ["render", "orderprobe", "--params", str(params), "--items", str(op_dir), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "disabled (benchmarks.orderprobe.enabled: false); no prompts rendered" in result.output
    assert sorted(p.name for p in out.iterdir()) == ["idiombench-output.json", "render_stats.json"]
    stats = json.loads((out / "render_stats.json").read_text(encoding="utf-8"))
    assert stats["enabled"] is False and stats["prompts_total"] == 0
    assert stats["notes"] == ["benchmarks.orderprobe.enabled is false: no prompts rendered."]


def test_cli_render_writes_prompts_and_reports_counts(tmp_path: Path, op_dir: Path):
    params = yaml_params(tmp_path, {"orderprobe": {"render": {"settings": ["cot"]}}})
    out = tmp_path / "prompts"
    result = CliRunner().invoke(
        app, ["render", "orderprobe", "--params", str(params), "--items", str(op_dir), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    # params.yaml's embedded sample: 1 expression per language, its canonical form and 1 permutation
    assert "render orderprobe: 8 prompts (cot 8)" in result.output
    assert sorted(p.name for p in out.iterdir()) == ["cot.parquet", "idiombench-output.json", "render_stats.json"]


def test_cli_render_without_a_build_is_a_one_line_error(tmp_path: Path):
    params = yaml_params(tmp_path, {})
    result = CliRunner().invoke(
        app,
        [
            "render",
            "orderprobe",
            "--params",
            str(params),
            "--items",
            str(tmp_path / "nothing"),
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert result.exit_code == 2
    assert "build_stats.json is missing: run `idiombench build orderprobe` first" in result.output


def test_an_items_file_that_disagrees_with_build_stats_is_an_error(op_dir: Path):
    stats = json.loads((op_dir / "build_stats.json").read_text(encoding="utf-8"))
    stats["tasks"]["restore"] += 1
    (op_dir / "build_stats.json").write_text(json.dumps(stats), encoding="utf-8")
    with pytest.raises(DataError, match=r"restore.parquet.*36 items, build_stats.json says 37"):
        load_tasks(op_dir, "orderprobe")


def yaml_params(tmp_path: Path, overrides: dict) -> Path:
    import yaml

    root = Path(__file__).resolve().parents[3]
    params = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    for bench, section in overrides.items():
        for key, value in section.items():
            if isinstance(value, dict):
                params["benchmarks"][bench][key].update(value)
            else:
                params["benchmarks"][bench][key] = value
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params, allow_unicode=True), encoding="utf-8")
    return path


def test_render_params_are_validated():
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="listed more than once: cot"):
        OrderProbeRender(settings=["cot", "cot"])
    with pytest.raises(ValidationError):
        OrderProbeRender(settings=["five_shot"])  # type: ignore[list-item]
    with pytest.raises(ValidationError, match="settings must look like 0-shot"):
        SemanticQARender(settings=["zero"])
    with pytest.raises(ValidationError):
        OrderProbeSample(expressions_per_language=0)


# --------------------------------------------------------------------------- G-IdiomAlign


def gia_tasks() -> dict[str, list[Item]]:
    mcq = [
        Item(
            f"mcq/de-en/{i:05d}",
            "g-idiomalign",
            "mcq",
            "en",
            "nasses Element",
            choices=("bone dry", "Adam's ale", "wet element", "a fish out of water"),
            answer="B",
            fields={"instruction": f"Instruction {i}\nOptions:\nA. bone dry\n"},
            meta={"direction": "de->en"},
        )
        for i in range(3)
    ]
    gen = []
    for direction, (src, tgt, lang) in {
        "de->en": ("German", "English", "en"),
        "en->fr": ("English", "French", "fr"),
    }.items():
        for i in range(3):
            gen.append(
                Item(
                    f"gen/{direction.replace('->', '-')}/{i:05d}",
                    "g-idiomalign",
                    "gloss_generation",
                    lang,
                    f"idiom {i}",
                    references=(f"target {i}",),
                    fields={
                        "gloss": "" if i == 2 and lang == "fr" else f"gloss {i}",
                        "source_idiom": f"idiom {i}",
                        "source_language": src,
                        "target_language": tgt,
                    },
                    meta={"direction": direction, "no_gloss_available": i == 2 and lang == "fr"},
                )
            )
    extra = [
        Item(
            "gen/ar-de/00000",
            "g-idiomalign",
            "gloss_generation_additional",
            "de",
            "نكص على عقبيه",
            references=("den Spieß umdrehen",),
            fields={
                "gloss": "to retreat",
                "source_idiom": "نكص على عقبيه",
                "source_language": "Arabic",
                "target_language": "German",
            },
            meta={"direction": "ar->de"},
        )
    ]
    return {"mcq": mcq, "gloss_generation": gen, "gloss_generation_additional": extra}


def test_g_idiomalign_golden_prompts_and_paired_conditions(tmp_path: Path):
    folder = processed(tmp_path, "g-idiomalign", gia_tasks())
    out = render_benchmark("g-idiomalign", GIdiomAlignConfig(), folder, folder)
    with_gloss = prompt_of(out.prompts["with_gloss"], "gen/de-en/00001")
    assert as_lists(with_gloss.messages) == [
        (
            "user",
            'Output the English idiom corresponding to "idiom 1" with meaning "gloss 1". Return only one idiom '
            "and do not include any explanation or additional text.",
        )
    ]
    no_gloss = prompt_of(out.prompts["no_gloss"], "gen/de-en/00001")
    assert as_lists(no_gloss.messages) == [
        (
            "user",
            'Output the English idiom corresponding to "idiom 1". Return only one idiom and do not include any '
            "explanation or additional text.",
        )
    ]
    mcq = prompt_of(out.prompts["mcq"], "mcq/de-en/00002")
    assert as_lists(mcq.messages) == [("user", "Instruction 2\nOptions:\nA. bone dry\n")]
    assert mcq.template_id == "g-idiomalign/mcq/released_instruction"
    # the item without a gloss is asked No-gloss only, and counted
    assert len(out.prompts["no_gloss"]) == 6 and len(out.prompts["with_gloss"]) == 5
    assert out.not_rendered == {
        "with_gloss: the source idiom has no English gloss": [
            {"task": "gloss_generation", "item_id": "gen/en-fr/00002"}
        ]
    }
    assert {p.task for p in out.prompts["no_gloss"]} == {"gloss_generation"}
    assert any("additional_pairs is false" in note for note in out.notes)


def test_g_idiomalign_sample_per_direction_and_additional_pairs(tmp_path: Path):
    folder = processed(tmp_path, "g-idiomalign", gia_tasks())
    config = GIdiomAlignConfig(
        render=GIdiomAlignRender(
            additional_pairs=True, sample=GIdiomAlignSample(seed=1, mcq_per_direction=1, generation_per_direction=1)
        )
    )
    out = render_benchmark("g-idiomalign", config, folder, folder)
    assert len(out.prompts["mcq"]) == 1
    # paired conditions: the same drawn items, less those without a gloss (counted)
    no_gloss = {p.item_id for p in out.prompts["no_gloss"]}
    with_gloss = {p.item_id for p in out.prompts["with_gloss"]}
    left_out = {e["item_id"] for examples in out.not_rendered.values() for e in examples}
    assert with_gloss | left_out == no_gloss and not with_gloss & left_out and len(no_gloss) == 3
    assert {p.task for p in out.prompts["with_gloss"]} == {"gloss_generation", "gloss_generation_additional"}
    assert out.sample["gloss_generation"]["directions"] == 2
    assert (
        prompt_of(out.prompts["with_gloss"], "gen/ar-de/00000")
        .messages[0]
        .content.startswith('Output the German idiom corresponding to "نكص على عقبيه" with meaning "to retreat".')
    )


# --------------------------------------------------------------------------- Chengyu-Bench


def chengyu_tasks(release: bool = False) -> dict[str, list[Item]]:
    candidates = ("严阵以待", "改朝换代", "不共戴天", "天南海北", "物归原主", "波谲云诡", "高视阔步")
    chid = [
        Item(
            f"{i:05d}",
            "chengyu-bench",
            "chid",
            "zh-CN",
            f"段落{i}#idiom#。",
            choices=candidates,
            answer="改朝换代",
            references=("改朝换代",),
            fields={"paragraph": f"段落{i}#idiom#。", "candidates": list(candidates), "placeholder": "#idiom#"},
        )
        for i in range(5)
    ]
    connotation = [
        Item(
            "00001",
            "chengyu-bench",
            "connotation_sample",
            "zh-CN",
            "雪中送炭",
            answer="positive",
            fields={"idiom": "雪中送炭"},
        )
    ]
    appropriateness = [
        Item(
            "00001",
            "chengyu-bench",
            "appropriateness_sample",
            "zh-CN",
            "他##差强人意##。",
            answer="correct",
            fields={"sentence": "他##差强人意##。", "idiom": "差强人意"},
        )
    ]
    tasks = {"chid": chid, "connotation_sample": connotation, "appropriateness_sample": appropriateness}
    if release:
        tasks["connotation"] = [
            Item(
                "00001",
                "chengyu-bench",
                "connotation",
                "zh-CN",
                "助纣为虐",
                answer="negative",
                fields={"idiom": "助纣为虐"},
            )
        ]
        tasks["open_cloze"] = [
            Item(
                "00001",
                "chengyu-bench",
                "open_cloze",
                "zh-CN",
                "好景##idiom##。",
                answer="好景不长",
                references=("好景不长",),
                fields={"paragraph": "好景##idiom##。", "placeholder": "##idiom##"},
            )
        ]
    return tasks


def test_chengyu_golden_prompts(tmp_path: Path):
    folder = processed(tmp_path, "chengyu-bench", chengyu_tasks())
    out = render_benchmark("chengyu-bench", ChengyuBenchConfig(), folder, folder)
    assert as_lists(out.prompts["connotation"][0].messages) == [
        (
            "user",
            (
                "Please determine the evaluative connotation of the following Chinese idiom. Classify the idiom as "
                "either positive (with a favorable meaning) or negative (with an unfavorable meaning). Do not choose "
                "neutral.\n\nThe idiom is as follows: 雪中送炭\n\n"
                "Please provide your final answer in the format:\n\n"
                "<positive> or <negative>"
            ),
        )
    ]
    assert as_lists(out.prompts["appropriateness"][0].messages) == [
        (
            "user",
            (
                "Below is a Chinese passage. Please evaluate the appropriateness of the idiom marked by ## within the "
                "given context. Determine whether the idiom is used correctly or incorrectly based on its meaning and "
                "usage in standard Chinese.\n\n"
                "The passage is as follows: 他##差强人意##。\n\n"
                "Please provide your final answer in the format: <correct> or <wrong>"
            ),
        )
    ]
    assert as_lists(prompt_of(out.prompts["chid_open_cloze"], "00003").messages) == [
        (
            "user",
            (
                "Below is a Chinese passage. Please generate five four-character idioms that would be contextually "
                "appropriate to replace the placeholder #idiom# in the passage.\n\n"
                "The passage is as follows: 段落3#idiom#。\n\n"
                "Please rank the idioms from most to least appropriate based on the context. At the end of your "
                "response, provide the idioms in the following format between <answer> and </answer>:\n\n"
                "<answer><idiom1, idiom2, idiom3, idiom4, idiom5></answer>\n\n"
                "Do not output any additional content between <answer> and </answer>."
            ),
        )
    ]
    assert as_lists(prompt_of(out.prompts["chid_candidates"], "00003").messages) == [
        (
            "user",
            (
                "Below is a Chinese passage. Please choose, from the seven candidate idioms below, the one "
                "four-character idiom that is contextually appropriate to replace the placeholder #idiom# in the "
                "passage.\n\nThe passage is as follows: 段落3#idiom#。\n\n"
                "The candidate idioms are: 严阵以待, 改朝换代, 不共戴天, 天南海北, 物归原主, 波谲云诡, 高视阔步\n\n"
                "At the end of your response, provide the chosen idiom in the following format between <answer> and "
                "</answer>:\n\n"
                "<answer><idiom></answer>\n\n"
                "Do not output any additional content between <answer> and </answer>."
            ),
        )
    ]
    # without the release: open_cloze has no task, said so; the sample tasks are labelled
    assert "open_cloze" not in out.prompts
    assert out.skipped["open_cloze"].startswith("task open_cloze not built")
    assert any("connotation_sample, the project's SAMPLE" in n for n in out.notes)
    assert any("asked as an OPEN-CLOZE set" in n for n in out.notes)


def test_chengyu_release_tasks_win_over_samples_and_skipped_settings_are_reported(tmp_path: Path):
    folder = processed(tmp_path, "chengyu-bench", chengyu_tasks(release=True))
    config = ChengyuBenchConfig(render=ChengyuBenchRender(sample=ChengyuBenchSample(seed=0, items_per_task=2)))
    out = render_benchmark("chengyu-bench", config, folder, folder)
    assert {p.task for p in out.prompts["connotation"]} == {"connotation"}
    assert {p.task for p in out.prompts["appropriateness"]} == {"appropriateness_sample"}
    assert out.prompts["open_cloze"][0].messages[0].content.count("好景##idiom##。") == 1
    # the same two ChID passages in both ChID settings
    assert [p.item_id for p in out.prompts["chid_open_cloze"]] == [p.item_id for p in out.prompts["chid_candidates"]]
    assert len(out.prompts["chid_candidates"]) == 2

    run = run_render(
        "chengyu-bench",
        ChengyuBenchConfig(),
        processed_dir=processed(tmp_path / "x", "chengyu-bench", chengyu_tasks()),
        raw_dir=folder,
        out_dir=tmp_path / "out",
    )
    assert run.stats["settings"]["open_cloze"] == {
        "file": None,
        "prompts": 0,
        "skipped": "task open_cloze not built: the official Chengyu-Bench release was not built (see the build's "
        "NOT AVAILABLE note)",
    }
    assert not (tmp_path / "out" / "open_cloze.parquet").exists()
    assert any("open_cloze: no prompts" in line for line in run.summary_lines())


# --------------------------------------------------------------------------- SemanticQA (fixture release)

SQA_TAXONOMY = LCCTaxonomy(
    labels="taxonomy/LF_3.txt",
    prompt_by_shots={"0-shot": "taxonomy/LF_3_0-shots.txt", "3-shot": "taxonomy/LF_3_3-shots.txt"},
)


@pytest.fixture(scope="module")
def sqa_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    result = build_semanticqa(FIXTURES / "semanticqa", SemanticQABuild(lcc_taxonomy=SQA_TAXONOMY))
    out = tmp_path_factory.mktemp("sqa") / "semanticqa"
    write_build(result, out)
    return out


def sqa_config(**render) -> SemanticQAConfig:
    return SemanticQAConfig(render=SemanticQARender(**{"settings": ["0-shot", "3-shot"], **render}))


def test_semanticqa_fills_the_released_templates(sqa_dir: Path):
    out = render_benchmark("semanticqa", sqa_config(), sqa_dir, FIXTURES / "semanticqa")
    tasks = load_tasks(sqa_dir, "semanticqa")
    for setting, prompts in out.prompts.items():
        assert {p.task for p in prompts} == set(tasks)
        for prompt in prompts:
            assert [m.role for m in prompt.messages] == ["user"]
            assert "{{" not in prompt.messages[0].content and "}}" not in prompt.messages[0].content
            name = prompt.template_id.rsplit("/", 1)[1]
            assert name.endswith("_zeroshot.txt" if setting == "0-shot" else "_fewshot.txt")
    idiom = prompt_of([p for p in out.prompts["0-shot"] if p.task == "idiom_detection"], "7")
    template = (FIXTURES / "semanticqa" / "prompts" / "idiom_detection_zeroshot.txt").read_text(encoding="utf-8")
    item = next(i for i in tasks["idiom_detection"] if i.item_id == "7")
    assert idiom.messages[0].content == template.replace("{{idiom}}", item.fields["idiom"]).replace(
        "{{context}}", item.fields["context"]
    )
    import hashlib

    assert idiom.template_hash == hashlib.sha256(template.encode("utf-8")).hexdigest()


def test_semanticqa_exemplars_exclude_the_item_and_its_duplicates(sqa_dir: Path):
    out = render_benchmark("semanticqa", sqa_config(settings=["3-shot"]), sqa_dir, FIXTURES / "semanticqa")
    tasks = load_tasks(sqa_dir, "semanticqa")
    checked = 0
    for prompt in out.prompts["3-shot"]:
        items = {i.item_id: i for i in tasks[prompt.task]}
        item = items[prompt.item_id]
        assert prompt.item_id not in prompt.exemplar_ids
        for eid in prompt.exemplar_ids:
            exemplar = items[eid]
            assert exemplar.input != item.input and exemplar.fields["example"] is not None
        expected = "".join(items[e].fields["example"] for e in prompt.exemplar_ids)
        if "{{example}}" in (FIXTURES / "semanticqa" / "prompts" / prompt.template_id.rsplit("/", 1)[1]).read_text(
            encoding="utf-8"
        ):
            assert expected in prompt.messages[0].content
            checked += 1
    assert checked > 0


def test_semanticqa_three_shot_exemplars_are_the_first_of_five(sqa_dir: Path, tmp_path: Path):
    # the fixture's LCC taxonomy has no 5-shot text: leave LCC out for this check
    tasks = {t: i for t, i in load_tasks(sqa_dir, "semanticqa").items() if t != "collocation_categorization"}
    folder = processed(tmp_path, "semanticqa", tasks)
    out = render_benchmark("semanticqa", sqa_config(settings=["3-shot", "5-shot"]), folder, FIXTURES / "semanticqa")
    five = {p.prompt_id.replace("5-shot", "3-shot"): p.exemplar_ids for p in out.prompts["5-shot"]}
    for prompt in out.prompts["3-shot"]:
        assert five[prompt.prompt_id][: len(prompt.exemplar_ids)] == prompt.exemplar_ids


def test_semanticqa_missing_k_shot_taxonomy_is_a_clear_error(sqa_dir: Path):
    with pytest.raises(DataError) as info:
        render_benchmark("semanticqa", sqa_config(settings=["5-shot"]), sqa_dir, FIXTURES / "semanticqa")
    message = str(info.value)
    assert "collocation_categorization_fewshot.txt" in message and "{{taxonomy}}" in message
    assert "lcc_taxonomy.prompt_by_shots['5-shot']" in message


def test_semanticqa_missing_template_file_is_a_clear_error(sqa_dir: Path, tmp_path: Path):
    with pytest.raises(DataError, match=r"prompts/collocation_categorization_zeroshot.txt: prompt template not found"):
        render_benchmark("semanticqa", sqa_config(settings=["0-shot"]), sqa_dir, tmp_path)


def test_semanticqa_lce_taxonomy_exemplars_option(sqa_dir: Path):
    out = render_benchmark(
        "semanticqa", sqa_config(settings=["3-shot"], lce_exemplars="taxonomy"), sqa_dir, FIXTURES / "semanticqa"
    )
    tasks = load_tasks(sqa_dir, "semanticqa")
    lce = [p for p in out.prompts["3-shot"] if p.task == "collocation_extraction"]
    assert lce
    for prompt in lce:
        item = next(i for i in tasks["collocation_extraction"] if i.item_id == prompt.item_id)
        examples = item.fields["label_examples"][:3]
        assert prompt.exemplar_ids == tuple(f"taxonomy:{item.fields['label']}:{i}" for i in range(len(examples)))
        assert "".join(f"{e} ; " for e in examples) in prompt.messages[0].content
    assert any("lce_exemplars: taxonomy" in n for n in out.notes)


def test_semanticqa_sample_is_per_task_and_shared_across_settings(sqa_dir: Path):
    config = sqa_config(sample=SemanticQASample(seed=0, items_per_task=1))
    out = render_benchmark("semanticqa", config, sqa_dir, FIXTURES / "semanticqa")
    zero = sorted((p.task, p.item_id) for p in out.prompts["0-shot"])
    three = sorted((p.task, p.item_id) for p in out.prompts["3-shot"])
    assert zero == three and len(zero) == len(load_tasks(sqa_dir, "semanticqa"))
    assert out.flagged  # fixture tasks have fewer than 3 exemplars for some items: recorded, not hidden


def test_unknown_rendered_setting_is_refused(op_dir: Path, monkeypatch: pytest.MonkeyPatch):
    from idiombench.benchmarks.orderprobe import render as op_render
    from idiombench.stages.render import RenderOutput
    from idiombench.templating.prompts import Prompt

    def rogue(tasks, config, raw_dir):
        out = RenderOutput()
        out.add(Prompt("orderprobe", "restore", "nine_shot", "x", "zh-CN", (Message("user", "x"),), "t", "h"))
        return out

    monkeypatch.setattr(op_render, "render", rogue)
    with pytest.raises(IdiombenchError, match=r"rendered settings \['nine_shot'\] that are not configured"):
        render_benchmark("orderprobe", op_config(), op_dir, op_dir)
