"""render on the real builds (mirror): counts of the embedded default and of the paper profile,
golden prompts from real items, every placeholder filled, exemplars never the item itself,
byte-identical reruns, and parse(format_reference_answer(item, gold, "oracle")) == gold for
every rendered prompt of every benchmark and setting."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from idiombench.benchmarks.registry import MODULES, NAMES, get_benchmark
from idiombench.core.generation_types import item_context
from idiombench.pipeline.config import load_params
from idiombench.stages.render import load_tasks, render_benchmark, run_render

pytestmark = pytest.mark.mirror

ROOT = Path(__file__).resolve().parents[2]

DEFAULT_COUNTS = {
    # settings -> prompts with params.yaml's embedded sample
    "orderprobe": {
        "zero_shot": 8,
        "cot": 8,
        "three_shot": 8,
    },  # 1 expression x (canonical + 1 permutation) x 4 languages
    "g-idiomalign": {"mcq": 30, "no_gloss": 72, "with_gloss": 72},  # 1 per direction
    "semanticqa": {"0-shot": 12, "3-shot": 12, "5-shot": 12},  # 1 per task x 12 tasks
    "chengyu-bench": {
        "connotation": 4,
        "appropriateness": 4,
        "open_cloze": 0,
        "chid_open_cloze": 4,
        "chid_candidates": 4,
    },
}
FULL_COUNTS = {  # the prompts as released (rotation 0)
    "orderprobe": {"zero_shot": 85_032, "cot": 85_032, "three_shot": 85_032},
    "g-idiomalign": {"mcq": 18_999, "no_gloss": 37_570, "with_gloss": 37_570},
    "semanticqa": {"0-shot": 3_999, "3-shot": 3_999, "5-shot": 3_999},
    "chengyu-bench": {
        "connotation": 40,
        "appropriateness": 40,
        "open_cloze": 0,
        "chid_open_cloze": 2_002,
        "chid_candidates": 2_002,
    },
}
# the paper profile's option-order pass: every further rotation of every choice item's options
ROTATED_COUNTS = {
    "orderprobe": {},
    "g-idiomalign": {"mcq": 3 * 18_999},  # 4 options
    "semanticqa": {s: 3 * (273 + 241) for s in ("0-shot", "3-shot", "5-shot")},  # IED and NCC, 4 options
    "chengyu-bench": {"chid_candidates": 6 * 2_002},  # 7 candidates
}


def golden_sample(params, name: str):
    """The benchmark's config with the sample the golden prompts below were written for:
    SemanticQA 2 items per task, OrderProbe every input of the drawn expression."""
    config = params.benchmark(name)
    sample = config.render.sample
    update = {"items_per_task": 2} if name == "semanticqa" else {"permutations_per_expression": None}
    render = config.render.model_copy(update={"sample": sample.model_copy(update=update)})
    return config.model_copy(update={"render": render})


def raw_of(processed: Path) -> Path:
    return processed.parent.parent / "raw" / processed.name


@pytest.fixture(scope="module")
def paper_params():
    return load_params(ROOT / "overlays" / "paper.yaml")


@pytest.fixture(scope="module")
def full(built, paper_params):
    """render(name) -> (RenderOutput of the paper profile, items by (task, item_id)), once per module."""
    cache: dict[str, tuple] = {}

    def get(name: str):
        if name not in cache:
            processed = built(name)
            out = render_benchmark(name, paper_params.benchmark(name), processed, raw_of(processed))
            items = {(t, i.item_id): i for t, its in load_tasks(processed, name).items() for i in its}
            cache.clear()  # keep one benchmark in memory at a time
            cache[name] = (out, items)
        return cache[name]

    return get


@pytest.mark.parametrize("name", NAMES)
def test_embedded_default_counts(name: str, built, default_params, tmp_path: Path):
    processed = built(name)
    run = run_render(
        name,
        default_params.benchmark(name),
        processed_dir=processed,
        raw_dir=raw_of(processed),
        out_dir=tmp_path / name,
    )
    assert {s: info["prompts"] for s, info in run.stats["settings"].items()} == DEFAULT_COUNTS[name]
    again = run_render(
        name,
        default_params.benchmark(name),
        processed_dir=processed,
        raw_dir=raw_of(processed),
        out_dir=tmp_path / f"{name}-again",
    )
    files = sorted(p.name for p in (tmp_path / name).iterdir())
    assert files == sorted(p.name for p in (tmp_path / f"{name}-again").iterdir())
    for file in files:  # same params -> byte-identical prompt tables and stats
        assert (tmp_path / name / file).read_bytes() == (tmp_path / f"{name}-again" / file).read_bytes(), file
    assert again.stats == run.stats


@pytest.mark.parametrize("name", NAMES)
def test_full_render_counts_placeholders_and_oracle_round_trip(name: str, full):
    out, items = full(name)
    assert {s: sum(1 for p in out.prompts.get(s, []) if not p.rotation) for s in FULL_COUNTS[name]} == FULL_COUNTS[name]
    rotated = {s: sum(1 for p in prompts if p.rotation) for s, prompts in out.prompts.items()}
    assert {s: n for s, n in rotated.items() if n} == ROTATED_COUNTS[name]
    parse = importlib.import_module(f"{MODULES[name]}.parse").parse_output
    formatter = get_benchmark(name).format_reference_answer
    for prompts in out.prompts.values():
        for prompt in prompts:
            for message in prompt.messages:
                assert "{{" not in message.content and "}}" not in message.content, prompt.prompt_id
                assert "{idiom}" not in message.content and "{paragraph}" not in message.content, prompt.prompt_id
    assert formatter is not None, f"{name}: every benchmark writes its reference answers in its own format"
    failures = []
    for setting, prompts in out.prompts.items():
        for prompt in prompts:
            item = items[(prompt.task, prompt.item_id)]
            context = item_context(item, setting, prompt.rotation)  # a rotation: the gold where it is shown
            gold = context.answer if context.answer is not None else item.references[0]
            parsed = parse(context, formatter(context, gold, "oracle"))
            if name == "orderprobe":
                # the explanation scored is the gloss (the expression itself where the release has none),
                # and the output restores the canonical expression (Recovery)
                meaning = item.references[0] if item.references else item.answer
                good = parsed.ok and meaning in (parsed.value or "") and item.answer in parsed.raw
            else:
                value = parsed.value[0] if isinstance(parsed.value, tuple) else parsed.value
                good = parsed.ok and value == gold
            if not good:
                failures.append((prompt.prompt_id, gold, parsed))
    assert not failures, f"{len(failures)} oracle answers did not parse back, e.g. {failures[:3]}"


def test_semanticqa_exemplars_are_drawn_from_the_task_and_never_the_item(full):
    out, items = full("semanticqa")
    for setting in ("3-shot", "5-shot"):
        k = int(setting[0])
        for prompt in out.prompts[setting]:
            assert len(prompt.exemplar_ids) == k
            assert prompt.item_id not in prompt.exemplar_ids
            item = items[(prompt.task, prompt.item_id)]
            for eid in prompt.exemplar_ids:
                exemplar = items[(prompt.task, eid)]
                assert exemplar.input != item.input
                assert exemplar.fields["example"] in prompt.messages[0].content
    for prompt in out.prompts["0-shot"]:
        assert prompt.exemplar_ids == ()


def test_golden_semanticqa_real_item(built, default_params):
    """noun_compound_interpretation_fewshot.txt, 3 exemplars in the authors' demonstration format."""
    processed = built("semanticqa")
    out = render_benchmark("semanticqa", golden_sample(default_params, "semanticqa"), processed, raw_of(processed))
    prompt = next(p for p in out.prompts["3-shot"] if p.task == "noun_compound_interpretation")
    assert (prompt.item_id, prompt.exemplar_ids) == ("L0059", ("L0036", "L0087", "L0043"))
    assert [(m.role, m.content) for m in prompt.messages] == [
        (
            "user",
            "Assume that you are a linguist who research in noun compound.\n\n"
            "You will be given a noun compound.\n\n"
            "Your task is to interpret the given noun compound in the out-of-context setting.\n\n"
            "Please paraphrase the noun compound in accurate and very very concise style (3 to 10 words, 10 words at "
            "most).\n\n"
            "Answer only, no analysis!\n\n"
            "Examples: \n"
            "Noun compound: rubber industry\nOutput: industry that produces rubber\n\n"
            "Noun compound: boundary commission\nOutput: commission to change a boundary\n\n"
            "Noun compound: fuel supplier\nOutput: supplier of fuel\n\n\n"
            "Noun compound: halogen lamp\n\n"
            "Short interpretation: \n",
        )
    ]
    assert prompt.template_id == "semanticqa/prompts/noun_compound_interpretation_fewshot.txt"
    assert prompt.template_hash == "8a94026cdecace3624844458bf50fc735b22c2b9a116d742da0e1ad7bcfd13ae"


def test_golden_g_idiomalign_real_items(built, default_params):
    processed = built("g-idiomalign")
    out = render_benchmark("g-idiomalign", default_params.benchmark("g-idiomalign"), processed, raw_of(processed))
    mcq = out.prompts["mcq"][0]
    assert mcq.item_id == "mcq/de-en/00105"
    assert [(m.role, m.content) for m in mcq.messages] == [
        (
            "user",
            "You are a cross lingual expert. Your task is to identify the correct idiom in the English that shares the "
            "same figurative meaning and usage context as the source idiom.\n\n"
            "Instructions:\n"
            "1. Analyze the figurative meaning of the source idiom.\n"
            "2. Select the option that best conveys this meaning in the English.\n\n"
            "3. Output the exact format shown below, without any other text or comments.Input:\n"
            "- Source Idiom: wie gewonnen, so zerronnen\n"
            "- Source Language: German\n"
            "- Target Language: English\n\n"
            "Options:\n"
            "A. easy come, easy go\n"
            "B. a penny saved is a penny earned\n"
            "C. as won, so run away\n"
            "D. run for your money\n\n"
            "Question: Which option is the correct equivalent?\n\n"
            "Output Format:\n"
            '{\n"Answer": "(A, B, C, or D)"}\n',
        )
    ]
    gen = out.prompts["with_gloss"][0]
    assert gen.item_id == "gen/de-en/00282"
    assert [(m.role, m.content) for m in gen.messages] == [
        (
            "user",
            'Output the English idiom corresponding to "auf gutem Fuß stehen" with meaning "to be on good terms". '
            "Return only one idiom and do not include any explanation or additional text.",
        )
    ]


def test_golden_orderprobe_real_item(built, default_params):
    processed = built("orderprobe")
    out = render_benchmark("orderprobe", golden_sample(default_params, "orderprobe"), processed, raw_of(processed))
    assert out.sample["restore"]["expressions"] == {
        "ja": ["ja/0395"],
        "ko": ["ko/0061"],
        "zh-CN": ["zh-CN/0099"],
        "zh-TW": ["zh-TW/0734"],
    }
    items = {i.item_id: i for i in load_tasks(processed, "orderprobe")["restore"]}
    prompt = next(
        p for p in out.prompts["zero_shot"] if p.item_id.startswith("zh-CN/0099/") and p.item_id.endswith("ABDC")
    )
    idiom = items[prompt.item_id].fields["idiom"]
    assert [(m.role, m.content) for m in prompt.messages] == [
        (
            "system",
            "你是一个严格遵循格式要求的语言专家。请你回答为中文。请只输出一行，不要多余空行或其他文字：\n判断含义：[解释]",
        ),
        (
            "user",
            f"请你判断这个的含义。直接判断并说出含义，不要有其他废话，尽可能全面：\n判断含义：[解释]\n成语：{idiom}",
        ),
    ]
    assert {p.item_id.rsplit("/", 1)[0] for p in out.prompts["cot"]} == {
        "ja/0395",
        "ko/0061",
        "zh-CN/0099",
        "zh-TW/0734",
    }


def test_golden_chengyu_real_items(built, default_params):
    processed = built("chengyu-bench")
    out = render_benchmark("chengyu-bench", default_params.benchmark("chengyu-bench"), processed, raw_of(processed))
    connotation = out.prompts["connotation"][0]
    assert (connotation.task, connotation.item_id) == ("connotation_sample", "00002")
    assert [(m.role, m.content) for m in connotation.messages] == [
        (
            "user",
            "Please determine the evaluative connotation of the following Chinese idiom. Classify the idiom as either "
            "positive (with a favorable meaning) or negative (with an unfavorable meaning). Do not choose neutral.\n\n"
            "The idiom is as follows: 助纣为虐\n\n"
            "Please provide your final answer in the format:\n\n"
            "<positive> or <negative>",
        )
    ]
    chid = next(p for p in out.prompts["chid_candidates"] if p.item_id == "00695")
    assert chid.messages[0].content.split("\n\n")[2] == (
        "The candidate idioms are: 一盘散沙, 管中窥豹, 是是非非, 神乎其神, 有板有眼, 一马当先, 攻城略地"
    )
    assert chid.messages[0].content.split("\n\n")[1].startswith("The passage is as follows: 虽然无法否认的是,清朝")
