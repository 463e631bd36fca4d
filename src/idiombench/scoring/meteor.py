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

Speed: NLTK stems every word and looks up every hypothesis word's WordNet synsets again for
each (hypothesis, reference) pair: a 512-token paraphrase against an item's 39 references is
~15,000 synset look-ups, most of METEOR's time. The scorer hands NLTK's `meteor_score` a
stemmer and a WordNet reader that memoise by word (`stemmer=`, `wordnet=` are its parameters;
`stem` and `synsets` are pure functions of the word), so each word is stemmed and looked up
once per process: the same scores (tests/unit/scoring/test_meteor_memo.py compares them with
plain NLTK), about 8x faster on long outputs (docs/performance.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .wordnet import WordNetReader
from .wordnet import load as load_wordnet

ALPHA, BETA, GAMMA = 0.9, 3.0, 0.5  # NLTK's and evaluate's defaults


class MemoStemmer:
    """NLTK's PorterStemmer (METEOR's default), each word stemmed once."""

    def __init__(self) -> None:
        from nltk.stem.porter import PorterStemmer

        self._stemmer = PorterStemmer()
        self._stems: dict[str, str] = {}

    def stem(self, word: str) -> str:
        stem = self._stems.get(word)
        if stem is None:
            stem = self._stems[word] = self._stemmer.stem(word)
        return stem


@dataclass(frozen=True)
class _Lemma:
    lemma_name: str

    def name(self) -> str:
        return self.lemma_name


@dataclass(frozen=True)
class _Synonyms:
    """One stand-in synset holding the distinct lemma names of all of a word's synsets: METEOR
    reads only `synset.lemmas()` and `lemma.name()` and collects the names into a set."""

    lemma_list: tuple[_Lemma, ...]

    def lemmas(self) -> tuple[_Lemma, ...]:
        return self.lemma_list


class MemoWordNet:
    """The one method METEOR calls on its WordNet reader, `synsets(word)`, once per word."""

    def __init__(self, wordnet: WordNetReader) -> None:
        self._wordnet = wordnet
        self._synsets: dict[str, tuple[_Synonyms, ...]] = {}

    def synsets(self, word: str) -> tuple[_Synonyms, ...]:
        found = self._synsets.get(word)
        if found is None:
            names = sorted({lemma.name() for synset in self._wordnet.synsets(word) for lemma in synset.lemmas()})
            found = self._synsets[word] = (_Synonyms(tuple(map(_Lemma, names))),) if names else ()
        return found


def tokenize(text: str) -> list[str]:
    from nltk.tokenize import word_tokenize

    words: list[str] = word_tokenize(text, preserve_line=True)
    return words


@dataclass
class MeteorScorer:
    alpha: float = ALPHA
    beta: float = BETA
    gamma: float = GAMMA

    def __post_init__(self) -> None:
        self._wordnet = load_wordnet()  # raises WordNetMissing: no silent fallback without synonyms
        self._synonyms = MemoWordNet(self._wordnet)
        self._stemmer = MemoStemmer()
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
        return float(
            meteor_score(
                refs,
                hypothesis,
                stemmer=self._stemmer,
                wordnet=self._synonyms,
                alpha=self.alpha,
                beta=self.beta,
                gamma=self.gamma,
            )
        )
