"""Attention mass on prompt spans during a recorded generation, for models on the hf backend.

One forward pass per (prompt, recorded output): the prompt is chat-templated as the hf
backend templated it for generation, the output is appended (teacher forcing), and forward
hooks on every decoder self-attention module reduce that layer's post-softmax weights at
once to what the diagnostics need, then drop them. So at most one layer's attention is
alive at a time (never the [layers, heads, tokens, tokens] tensor of the whole sequence),
and the result is deterministic. Eager attention is required: sdpa and flash attention
return no weights (the hooks check).

Positions. The query at position p produces the token at p + 1, so the decoding step that
emitted output token j is the query at (prompt length + j - 1): the "generation positions"
T of the content segment are those queries. For every layer l and head h the hooks add up,
over t in T, the weights on each key token; the tracked spans' mass per (l, h) gives the
head scores S^(l,h) (mean over T), and the sum over layers, heads and T divided by
|T| L H gives A(k), the averaged attention mass of key k (rows sum to 1, so A sums to 1
over the prompt and the output keys before t).

Spans. A span is given as character offsets in one chat message; the chat-templated prompt
is searched for each message's whole content (in order) to place it, and the fast
tokenizer's offset mapping turns characters into token positions: a token belongs to a
span when its characters overlap it.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, overload

import numpy as np

from ..core.errors import IdiombenchError
from ..core.generation_types import Message


class Encoding(Protocol):
    """A fast tokenizer's encoding of one text (transformers' BatchEncoding), read by key."""

    @overload
    def __getitem__(self, key: Literal["input_ids"]) -> list[int]: ...

    @overload
    def __getitem__(self, key: Literal["offset_mapping"]) -> list[tuple[int, int]]: ...


class OffsetTokenizer(Protocol):
    """What placing the spans reads of a transformers tokenizer (a fast one: offsets)."""

    def apply_chat_template(
        self, conversation: list[dict[str, str]], *, tokenize: bool, add_generation_prompt: bool
    ) -> str: ...

    def __call__(self, text: str, *, add_special_tokens: bool, return_offsets_mapping: bool) -> Encoding: ...


class AttentionError(IdiombenchError):
    """The model or tokenizer cannot give the diagnostics (no eager weights, no offsets...)."""


@dataclass(frozen=True)
class TokenSpans:
    input_ids: list[int]  # prompt tokens followed by output tokens
    prompt_length: int
    spans: dict[str, list[int]]  # span name -> key positions in the prompt
    content: list[int]  # positions (in input_ids) of the output tokens of the content segment


@dataclass
class Measurement:
    """One prompt's diagnostics: A(k) summed onto the spans, and per-(layer, head) scores."""

    span_mass: dict[str, float]  # span name -> sum of A(k) over its tokens
    prompt_other: float  # A(k) on prompt tokens outside every span
    generated: float  # A(k) on output tokens (keys after the prompt)
    other_top1: float | None  # the largest share of one off-span prompt token within prompt_other
    head_scores: dict[str, np.ndarray]  # span name -> [layers, heads] mean over T of the span's mass
    positions: int  # |T|
    sequence_length: int
    greedy_agreement: float  # share of content tokens that are the model's argmax at their step
    attention_bytes: int  # the largest attention tensor alive at once (one layer)
    seconds: float = 0.0
    extra: dict[str, object] = field(default_factory=dict)


def message_offsets(tokenizer: OffsetTokenizer, messages: Sequence[Message]) -> tuple[str, list[int]]:
    """The chat-templated prompt (as the hf backend sends it) and where each message's content
    starts in it."""
    text = tokenizer.apply_chat_template(
        [{"role": m.role, "content": m.content} for m in messages], tokenize=False, add_generation_prompt=True
    )
    starts, cursor = [], 0
    for index, message in enumerate(messages):
        at = text.find(message.content, cursor)
        if at < 0:
            raise AttentionError(
                f"the chat template does not keep message {index} verbatim: its spans cannot be placed"
            )
        starts.append(at)
        cursor = at + len(message.content)
    return text, starts


def token_positions(offsets: Sequence[tuple[int, int]], start: int, end: int) -> list[int]:
    """Tokens whose characters overlap [start, end) (empty tokens, e.g. special ones, never do)."""
    return [i for i, (a, b) in enumerate(offsets) if b > a and a < end and b > start]


def locate(
    tokenizer: OffsetTokenizer,
    messages: Sequence[Message],
    spans: dict[str, tuple[int, int, int]],
    output: str,
    content: tuple[int, int],
) -> TokenSpans:
    """Token positions of the spans (name -> (message index, start, end) in that message) and of
    the output's content segment (character offsets in `output`)."""
    if not getattr(tokenizer, "is_fast", False):
        raise AttentionError("the tokenizer is not a fast tokenizer: no offset mapping to place the spans")
    text, starts = message_offsets(tokenizer, messages)
    prompt = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    positions = {}
    for name, (message, start, end) in spans.items():
        found = token_positions(prompt["offset_mapping"], starts[message] + start, starts[message] + end)
        if not found:
            raise AttentionError(f"span {name!r} covers no prompt token")
        positions[name] = found
    answer = tokenizer(output, add_special_tokens=False, return_offsets_mapping=True)
    length = len(prompt["input_ids"])
    content_tokens = [length + j for j in token_positions(answer["offset_mapping"], *content)]
    return TokenSpans(list(prompt["input_ids"]) + list(answer["input_ids"]), length, positions, content_tokens)


# The model and its modules below are loosely typed: torch types a module's dynamic attributes
# (layer_idx, the config, the forward hook's output) as `Tensor | Module`.
def attention_modules(model: Any) -> list[Any]:
    """The decoder's self-attention modules in layer order (transformers names them
    `...layers.<i>.self_attn` and gives them a layer_idx)."""
    found = [
        (module.layer_idx, module)
        for name, module in model.named_modules()
        if name.endswith("self_attn") and hasattr(module, "layer_idx")
    ]
    if not found:
        raise AttentionError(f"no self-attention modules found in {type(model).__name__}")
    return [module for _, module in sorted(found, key=lambda pair: pair[0])]


def use_eager(model: Any) -> None:
    """Eager attention: the only implementation that returns the post-softmax weights."""
    if hasattr(model, "set_attn_implementation"):
        model.set_attn_implementation("eager")
    else:  # older transformers
        model.config._attn_implementation = "eager"


def measure(model: Any, located: TokenSpans) -> Measurement:
    """One forward pass over prompt + output with hooks that keep only the rows of the
    generation positions and reduce them per layer (see the module docstring)."""
    import torch

    if not located.content:
        raise AttentionError("no content tokens: nothing was generated to attend from")
    started = time.perf_counter()
    device = next(model.parameters()).device
    queries = torch.tensor([p - 1 for p in located.content], device=device)
    span_index = {name: torch.tensor(pos, device=device) for name, pos in located.spans.items()}
    modules = attention_modules(model)
    layers = len(modules)
    per_head: dict[str, list[Any]] = {name: [None] * layers for name in span_index}
    key_mass = torch.zeros(len(located.input_ids), dtype=torch.float64, device=device)
    largest = [0]
    heads = [0]

    def hook_for(layer: int) -> object:
        def hook(module: Any, args: Any, output: Any) -> Any:
            weights = output[1] if isinstance(output, tuple) and len(output) > 1 else None
            if weights is None:
                raise AttentionError("the attention module returned no weights: attn_implementation is not eager")
            largest[0] = max(largest[0], weights.numel() * weights.element_size())
            heads[0] = int(weights.shape[1])
            rows = weights[0, :, queries, :].to(torch.float64)  # [heads, |T|, keys]
            for name, index in span_index.items():
                per_head[name][layer] = rows[:, :, index].sum(dim=(1, 2)).cpu()
            key_mass.add_(rows.sum(dim=(0, 1)))
            return (output[0], None, *output[2:])  # drop the weights: the decoder layer ignores them

        return hook

    handles = [module.register_forward_hook(hook_for(i)) for i, module in enumerate(modules)]
    try:
        with torch.inference_mode():
            ids = torch.tensor([located.input_ids], device=device)
            logits = model(input_ids=ids, logits_to_keep=queries).logits[0]
    finally:
        for handle in handles:
            handle.remove()
    count = len(located.content)
    mass = (key_mass / (count * layers * heads[0])).cpu().numpy()
    tracked = sorted({p for pos in located.spans.values() for p in pos})
    other = np.setdiff1d(np.arange(located.prompt_length), tracked)
    other_mass = mass[other]
    forced = torch.tensor([located.input_ids[p] for p in located.content], device=logits.device)
    return Measurement(
        span_mass={name: float(mass[pos].sum()) for name, pos in located.spans.items()},
        prompt_other=float(other_mass.sum()),
        generated=float(mass[located.prompt_length :].sum()),
        other_top1=float(other_mass.max() / other_mass.sum()) if other_mass.size and other_mass.sum() > 0 else None,
        head_scores={name: torch.stack(values).numpy() / count for name, values in per_head.items()},
        positions=count,
        sequence_length=len(located.input_ids),
        greedy_agreement=float((logits.argmax(dim=-1) == forced).float().mean().item()),
        attention_bytes=largest[0],
        seconds=time.perf_counter() - started,
    )


# --------------------------------------------------------------------------- salient heads (paper appendix L)


def salient_sets(
    scores: Sequence[np.ndarray], top_k: int, heads: int, layers: int
) -> tuple[list[tuple[int, int]], list[int]]:
    """From per-sample [layers, heads] scores: each sample's top_k heads; the `heads` heads most
    often among them, and the `layers` layers holding most of those per-sample entries.
    Ties are broken by position (lower layer, then lower head first), so the sets are deterministic."""
    head_counts: dict[tuple[int, int], int] = {}
    layer_counts: dict[int, int] = {}
    for score in scores:
        flat = score.reshape(-1)
        k = min(top_k, flat.size)
        order = np.lexsort((np.arange(flat.size), -flat))[:k]  # highest score, then lowest index
        for index in order:
            layer, head = divmod(int(index), score.shape[1])
            head_counts[(layer, head)] = head_counts.get((layer, head), 0) + 1
            layer_counts[layer] = layer_counts.get(layer, 0) + 1
    top_heads = sorted(head_counts, key=lambda h: (-head_counts[h], h))[:heads]
    top_layers = sorted(layer_counts, key=lambda layer: (-layer_counts[layer], layer))[:layers]
    return sorted(top_heads), sorted(top_layers)


def jaccard(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    union = set(a) | set(b)
    return len(set(a) & set(b)) / len(union) if union else None
