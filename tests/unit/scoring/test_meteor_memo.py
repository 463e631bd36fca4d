"""METEOR with the memoised stemmer and WordNet reader (scoring/meteor.py) gives exactly NLTK's
scores: on hand-made cases that exercise each matching stage, and on SemanticQA's released
interpretation references against long real English outputs (the mirror), one scorer reused
across all of them as the score stage does."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from idiombench.core.items import read_items
from idiombench.scoring.meteor import ALPHA, BETA, GAMMA, MeteorScorer, tokenize


def plain_nltk(prediction: str, references: list[str]) -> float:
    """What MeteorScorer computed before: NLTK's meteor_score with its own stemmer."""
    from nltk.translate.meteor_score import meteor_score

    from idiombench.scoring.wordnet import load

    hypothesis = tokenize(prediction)
    refs = [tokenize(r) for r in references if r.strip()]
    if not hypothesis or not refs:
        return 0.0
    return float(meteor_score(refs, hypothesis, wordnet=load(), alpha=ALPHA, beta=BETA, gamma=GAMMA))


CASES = [
    ("a fast auto", ["a fast car"]),  # WordNet synonym
    ("The dogs were running quickly", ["the dog runs quick", "a hound ran"]),  # stems, case, several references
    ("a domestic dog and a big canine", ["a dog and a large dog"]),  # lemma names with '_' are skipped
    ("the the the cat cat", ["the cat the cat the"]),  # repeated words: the last positions match first
    ("xyzzy plugh frobnicate", ["frobnicate xyzzy"]),  # no synsets at all
    ("", ["anything"]),
    ("something", ["", "  "]),
    ("He kicked the bucket yesterday, sadly.", ["he died", "he passed away yesterday"]),
]


def test_memoised_meteor_equals_nltk_on_each_matching_stage(wordnet_root: Path):
    scorer = MeteorScorer()
    for _ in range(2):  # the second round reads every word from the memo
        for prediction, references in CASES:
            assert scorer.score(prediction, references) == plain_nltk(prediction, references), prediction


@pytest.mark.mirror
def test_memoised_meteor_equals_nltk_on_released_references(wordnet_root: Path, built):
    """Each interpretation item's references against a long output made of other items' real text
    (its own references among them, so every stage finds matches): identical floats."""
    processed = built("semanticqa")
    items = [
        item
        for task in ("idiom_paraphrase", "collocation_interpretation", "noun_compound_interpretation")
        for item in read_items(processed / f"{task}.parquet")
    ]
    rng = random.Random(0)
    sample = rng.sample(items, 120)
    sentences = [item.input for item in items]
    scorer = MeteorScorer()
    compared = 0
    for item in sample:
        filler = " ".join(rng.sample(sentences, 6))
        prediction = f"{item.references[0] if item.references else ''} {filler}".strip()
        references = list(item.references[:8])
        assert scorer.score(prediction, references) == plain_nltk(prediction, references), item.item_id
        compared += 1
    assert compared == 120
