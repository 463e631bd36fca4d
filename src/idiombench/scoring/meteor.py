"""METEOR (Banerjee and Lavie 2005, as implemented by NLTK) with WordNet synonym matching.

The published interpretation scores (docs/METRICS.md §3.2) use Hugging Face `evaluate`'s "meteor",
which calls `nltk.translate.meteor_score.meteor_score` on `word_tokenize`d texts with
alpha 0.9, beta 3, gamma 0.5, and averages over predictions; with several references
NLTK's meteor_score takes the best one. Differences here, both documented:
- tokens: `word_tokenize(text, preserve_line=True)`, i.e. NLTK's Treebank-style word
  tokenizer without the Punkt sentence splitter (Punkt's model is another NLTK download);
  the only difference is a period ending a sentence INSIDE a text stays attached;
- NLTK's stages run exact, then Porter-stem, then WordNet synonym matching on the STEMS
  (NLTK's behaviour, kept): "large" (stem "larg") finds no synonym, "auto" finds "car".

WordNet comes from scoring.wordnet (installed by `make setup`). Without it METEOR does
not run: `MeteorScorer()` raises WordNetMissing with the install instructions, so that
METEOR is reported as not computed instead of silently losing its synonym stage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .wordnet import load as load_wordnet

ALPHA, BETA, GAMMA = 0.9, 3.0, 0.5  # NLTK's and evaluate's defaults


def tokenize(text: str) -> list[str]:
    from nltk.tokenize import word_tokenize

    return word_tokenize(text, preserve_line=True)


class _OncePerWord:
    """WordNet's synsets and the Porter stem of a word, computed once per distinct word:
    NLTK's METEOR asks for them for every hypothesis word, and a long output repeats its words
    (a 1 MB output took minutes in the synset lookups alone). The same answers, so the same
    scores; the rest of WordNet is passed through."""

    def __init__(self, wordnet: Any):
        from nltk.stem.porter import PorterStemmer

        self._wordnet = wordnet
        self._stemmer = PorterStemmer()
        self._synsets: dict[str, Any] = {}
        self._stems: dict[str, str] = {}

    def synsets(self, lemma: str, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs:
            return self._wordnet.synsets(lemma, *args, **kwargs)
        if lemma not in self._synsets:
            self._synsets[lemma] = self._wordnet.synsets(lemma)
        return self._synsets[lemma]

    def stem(self, word: str) -> str:
        if word not in self._stems:
            self._stems[word] = self._stemmer.stem(word)
        return self._stems[word]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._wordnet, name)


@dataclass
class MeteorScorer:
    alpha: float = ALPHA
    beta: float = BETA
    gamma: float = GAMMA

    def __post_init__(self) -> None:
        self._wordnet: Any = _OncePerWord(load_wordnet())  # raises WordNetMissing: no silent fallback without synonyms
        self._tokens: dict[str, list[str]] = {}

    def _tokenize(self, text: str) -> list[str]:
        if text not in self._tokens:
            self._tokens[text] = tokenize(text)
        return self._tokens[text]

    def score(self, prediction: str, references: Sequence[str]) -> float:
        """METEOR of `prediction` against its best reference; 0 for an empty prediction or no references."""
        from nltk.translate.meteor_score import meteor_score

        hypothesis = self._tokenize(prediction)
        refs = [self._tokenize(r) for r in references if r.strip()]
        if not hypothesis or not refs:
            return 0.0
        return float(meteor_score(refs, hypothesis, wordnet=self._wordnet, stemmer=self._wordnet,
                                  alpha=self.alpha, beta=self.beta, gamma=self.gamma))
