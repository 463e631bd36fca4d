"""A tiny randomly initialised Llama-style chat model, built locally (no downloads).

The tokenizer is a byte-level BPE trained with the `tokenizers` library on a few
sentences (so any text, CJK included, is encodable), with ChatML special tokens and a
chat template; the model is a 2-layer LlamaForCausalLM with random weights (seeded).
It exercises the real transformers loading, chat templating, left padding, batching
and sampling code paths of the hf backend.
"""

from __future__ import annotations

from pathlib import Path

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
SPECIAL = ["<|pad|>", "<|im_start|>", "<|im_end|>"]
CORPUS = [
    "Restore the scrambled idiom and explain its meaning.",
    "Thinking Process: the characters are out of order. Final Meaning: a saying about effort.",
    "画蛇添足 比喻做了多余的事 一鸣惊人 刻舟求剑 不耻下问",
    "Answer with the letter of the correct option: A, B, C or D.",
    "system user assistant you are a helpful assistant",
] * 4


def build_tiny_chat_model(
    directory: Path,
    *,
    hidden_size: int = 64,
    layers: int = 2,
    seed: int = 0,
    initializer_range: float = 0.3,
) -> Path:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    directory.mkdir(parents=True, exist_ok=True)
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    bpe.train_from_iterator(CORPUS, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe, pad_token="<|pad|>", eos_token="<|im_end|>", bos_token="<|im_start|>"
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(directory)

    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=False,
        initializer_range=initializer_range,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.save_pretrained(directory)
    GenerationConfig(eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id).save_pretrained(
        directory
    )
    return directory
