"""Spans and attention mass on a tiny random Llama chat model built in a temp dir (no downloads):
the spans found through the template and the tokenizer's offsets are the idiom's and the gloss's
tokens, the hooked one-pass aggregation equals the full attention tensors' average, and
IAR + GAR + DR = 1 per item."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from idiombench.analysis.attention import AttentionError, locate, measure, use_eager
from idiombench.benchmarks.g_idiomalign.attention import content_span
from idiombench.templating.templates import load_package_templates

IDIOM = "画蛇添足"
GLOSS = "to ruin something by adding unnecessary detail"
OUTPUT = 'Idiom: "gild the lily".'


@pytest.fixture(scope="module")
def tiny(tiny_chat_model: Path, model_dtype: str):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_chat_model)
    model = AutoModelForCausalLM.from_pretrained(tiny_chat_model, dtype=getattr(torch, model_dtype)).eval()
    use_eager(model)
    return tokenizer, model


def rendered(setting: str):
    template = load_package_templates("idiombench.benchmarks.g_idiomalign", "gloss_generation").get(setting)
    messages, fields = template.render_spans({"target_language": "English", "source_idiom": IDIOM, "gloss": GLOSS})
    spans = {"idiom": fields["source_idiom"][0]}
    if setting == "with_gloss":
        spans["gloss"] = fields["gloss"][0]
    return messages, {name: (s.message, s.start, s.end) for name, s in spans.items()}


def test_render_spans_give_the_fields_offsets_in_the_message():
    messages, spans = rendered("with_gloss")
    content = messages[0].content
    message, start, end = spans["idiom"]
    assert message == 0 and content[start:end] == IDIOM
    assert content[spans["gloss"][1] : spans["gloss"][2]] == GLOSS
    # a value holding the other field's text does not move the offsets (they come from the template)
    template = load_package_templates("idiombench.benchmarks.g_idiomalign", "gloss_generation").get("with_gloss")
    tricky, fields = template.render_spans(
        {"target_language": "English", "source_idiom": "meaning", "gloss": "meaning"}
    )
    idiom, gloss = fields["source_idiom"][0], fields["gloss"][0]
    assert tricky[0].content[idiom.start : idiom.end] == "meaning" and gloss.start > idiom.end
    assert tricky[0].content.find("meaning") != gloss.start  # string search alone would pick another copy


@pytest.mark.parametrize("setting", ["no_gloss", "with_gloss"])
def test_spans_tokens_are_the_idiom_and_the_gloss(tiny, setting):
    tokenizer, _ = tiny
    messages, spans = rendered(setting)
    located = locate(tokenizer, messages, spans, OUTPUT, content_span(OUTPUT, "English"))
    decoded = {
        name: tokenizer.decode([located.input_ids[p] for p in positions]) for name, positions in located.spans.items()
    }
    # the span's tokens hold the field and at most the characters merged into its edge tokens (the quotes)
    assert decoded["idiom"].strip().strip('"') == IDIOM
    assert all(b == a + 1 for a, b in zip(located.spans["idiom"], located.spans["idiom"][1:], strict=False))
    if setting == "with_gloss":
        assert decoded["gloss"].strip().strip('"') == GLOSS
    content = tokenizer.decode([located.input_ids[p] for p in located.content])
    # the content tokens are the idiom's; an edge token may carry merged punctuation (`lily".`)
    assert content.strip().strip('".') == "gild the lily"
    assert min(located.content) >= located.prompt_length


def reference_mass(model, located) -> np.ndarray:
    """A(k) from the full attention tensors (output_attentions): what the hooks must reproduce."""
    import torch

    with torch.inference_mode():
        out = model(input_ids=torch.tensor([located.input_ids]), output_attentions=True)
    stacked = torch.stack([a[0] for a in out.attentions])  # [layers, heads, queries, keys]
    queries = [p - 1 for p in located.content]
    return stacked[:, :, queries, :].double().mean(dim=(0, 1, 2)).numpy()


@pytest.mark.parametrize("setting", ["no_gloss", "with_gloss"])
def test_hooked_mass_equals_the_full_tensors_and_the_ratios_sum_to_one(tiny, setting, model_dtype: str):
    tokenizer, model = tiny
    # A softmax row sums to 1 within the dtype's rounding: float32 exactly enough; bfloat16 rounds
    # each weight to 8 significant bits, so the mass over all keys is 1 only within ~2e-4 (measured).
    total = {"float32": 1e-6, "bfloat16": 1e-3}[model_dtype]
    messages, spans = rendered(setting)
    located = locate(tokenizer, messages, spans, OUTPUT, content_span(OUTPUT, "English"))
    result = measure(model, located)
    mass = reference_mass(model, located)
    for name, positions in located.spans.items():
        assert result.span_mass[name] == pytest.approx(mass[positions].sum(), abs=1e-6)
    iar = result.span_mass["idiom"]
    gar = result.span_mass.get("gloss", 0.0)
    dr = 1.0 - iar - gar
    assert iar + gar + dr == pytest.approx(1.0)
    # DR is the rest of the mass: off-span prompt tokens plus the output's own earlier tokens
    assert iar + gar + result.prompt_other + result.generated == pytest.approx(1.0, abs=total)
    assert result.generated == pytest.approx(mass[located.prompt_length :].sum(), abs=1e-6)
    layers, heads = model.config.num_hidden_layers, model.config.num_attention_heads
    assert result.head_scores["idiom"].shape == (layers, heads)
    # the mean of the per-(layer, head) scores is IAR (A(k) averages over layers and heads too)
    assert result.head_scores["idiom"].mean() == pytest.approx(iar, abs=1e-6)
    assert 0.0 < result.other_top1 <= 1.0
    assert result.positions == len(located.content)
    assert 0.0 <= result.greedy_agreement <= 1.0
    # one layer's [1, heads, tokens, tokens] at a time, never all layers
    assert result.attention_bytes == heads * len(located.input_ids) ** 2 * model.dtype.itemsize


def test_an_implementation_without_weights_is_refused(tiny_chat_model: Path):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_chat_model)
    model = AutoModelForCausalLM.from_pretrained(
        tiny_chat_model, dtype=torch.float32, attn_implementation="sdpa"
    ).eval()
    messages, spans = rendered("no_gloss")
    located = locate(tokenizer, messages, spans, OUTPUT, content_span(OUTPUT, "English"))
    with pytest.raises(AttentionError, match="not eager"):
        measure(model, located)


def test_content_span_is_the_parsed_idiom():
    assert OUTPUT[slice(*content_span(OUTPUT, "English"))] == "gild the lily"
    text = "<think>\ngild the lily\n</think>\n\nbreak a leg\nmore"
    assert text[slice(*content_span(text, "English"))] == "break a leg"
    assert content_span("   ", "English") is None
