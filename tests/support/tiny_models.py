"""Tiny randomly initialised BERT models with a character tokenizer, saved with
save_pretrained, to exercise the real loading, batching and scoring code paths offline."""

from __future__ import annotations

from pathlib import Path

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
CHARS = list("abcdefghijklmnopqrstuvwxyz0123456789") + list("比喻自己欺骗的一期会を大切にする작심삼일결은好坏人")


def build_tiny_bert(path: Path, num_labels: int, id2label: dict[int, str] | None = None, seed: int = 0) -> Path:
    import torch
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, processors
    from transformers import BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast

    vocab = {token: i for i, token in enumerate(SPECIALS + CHARS)}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Split(Regex("."), behavior="isolated")]
    )
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=64,
    )
    labels = id2label or {i: f"LABEL_{i}" for i in range(num_labels)}
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        num_labels=num_labels,
        id2label=labels,
        label2id={label: i for i, label in labels.items()},
    )
    model = BertForSequenceClassification(config).eval()
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path)
    fast.save_pretrained(path)
    return path
