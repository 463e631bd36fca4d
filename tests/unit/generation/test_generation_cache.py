"""The content-addressed cache: keys, atomic shards, corrupt lines reported and skipped."""

from __future__ import annotations

import json
from pathlib import Path

from idiombench.core.generation_types import Completion, Message, Sampling
from idiombench.generation.cache import GenerationCache, request_key

IDENTITY = {"backend": "hf", "model": "org/model-a", "revision": "abc123", "dtype": "float32"}
MESSAGES = (Message("system", "你是专家。"), Message("user", "画蛇添足"))


def key(**changes) -> str:
    args = {"identity": IDENTITY, "messages": MESSAGES, "sampling": Sampling(), "seed": 0, "sample_index": 0}
    args.update(changes)
    return request_key(**args)


def done(text: str) -> Completion:
    return Completion(text, 10, 3, "stop", 0.25)


def test_key_is_a_stable_sha256_of_exactly_its_inputs():
    assert key() == key()
    assert len(key()) == 64 and int(key(), 16) >= 0
    # dict order does not matter; content does
    assert key(identity=dict(reversed(list(IDENTITY.items())))) == key()


def test_key_changes_with_model_sampling_seed_sample_and_messages():
    base = key()
    variants = {
        "model": key(identity={**IDENTITY, "model": "org/model-b"}),
        "revision": key(identity={**IDENTITY, "revision": "def456"}),
        "weights": key(identity={**IDENTITY, "weights_sha256": "00" * 32}),
        "backend": key(identity={**IDENTITY, "backend": "vllm"}),
        "temperature": key(sampling=Sampling(temperature=0.7)),
        "top_p": key(sampling=Sampling(top_p=0.9)),
        "max_new_tokens": key(sampling=Sampling(max_new_tokens=255)),
        "stop": key(sampling=Sampling(stop=("\n",))),
        "seed": key(seed=1),
        "sample_index": key(sample_index=1),
        "message": key(messages=(MESSAGES[0], Message("user", "画蛇添足 "))),
        "role": key(messages=(Message("user", MESSAGES[0].content), MESSAGES[1])),
    }
    assert base not in variants.values()
    assert len(set(variants.values())) == len(variants)


def test_shards_round_trip_and_failures_are_not_stored(tmp_path: Path):
    cache = GenerationCache.load(tmp_path / "m")
    assert len(cache) == 0
    failed = Completion("", None, None, "error", 0.1, error="HTTP 500")
    shard = cache.put_batch([(key(), done("一")), (key(seed=1), done("二")), (key(seed=2), failed)])
    assert shard is not None and shard.name.startswith("shard-") and shard.suffix == ".jsonl"
    assert len(shard.read_text(encoding="utf-8").splitlines()) == 2
    again = GenerationCache.load(tmp_path / "m")
    assert again.get(key()) == done("一") and again.get(key(seed=1)) == done("二")
    assert key(seed=2) not in again  # a rerun retries failures
    assert again.shards_read == 1 and again.problems == []
    assert cache.put_batch([(key(seed=3), failed)]) is None


def test_two_models_never_share_entries(tmp_path: Path):
    a = GenerationCache.load(tmp_path / "a")
    a.put_batch([(key(), done("from a"))])
    other_identity = key(identity={**IDENTITY, "model": "org/model-b"})
    assert other_identity not in GenerationCache.load(tmp_path / "a")
    assert len(GenerationCache.load(tmp_path / "b")) == 0


def test_temporary_files_are_ignored_and_corrupt_lines_reported(tmp_path: Path):
    cache = GenerationCache.load(tmp_path)
    shard = cache.put_batch([(key(), done("好")), (key(seed=1), done("坏"))])
    assert shard is not None
    # an interrupted write leaves a temporary file (io.atomic_path names it .<name>.<random>.tmp)
    (tmp_path / f".{shard.name}.x1y2.tmp").write_text('{"key": "half', encoding="utf-8")
    lines = shard.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    record["completion_tokens"] = "three"
    corrupt = tmp_path / "shard-corrupt.jsonl"
    corrupt.write_text(
        "\n".join([lines[0], "{not json", json.dumps(record), '{"key": "short"}']) + "\n", encoding="utf-8"
    )
    loaded = GenerationCache.load(tmp_path)
    assert loaded.shards_read == 2
    assert len(loaded) == 2  # every good line is still read
    reported = sorted((Path(p.path).name, p.line) for p in loaded.problems)
    assert reported == [("shard-corrupt.jsonl", 2), ("shard-corrupt.jsonl", 3), ("shard-corrupt.jsonl", 4)]
    messages = " | ".join(str(p) for p in loaded.problems)
    assert "completion_tokens must be an integer" in messages and "missing keys" in messages
    assert "shard-corrupt.jsonl, line 2" in messages


def test_shard_names_are_content_addressed(tmp_path: Path):
    cache = GenerationCache.load(tmp_path / "one")
    first = cache.put_batch([(key(), done("x")), (key(seed=1), done("y"))])
    other = GenerationCache.load(tmp_path / "two")
    second = other.put_batch([(key(seed=1), done("y")), (key(), done("x"))])
    assert first is not None and second is not None and first.name == second.name
    # Keys already stored are written once only (issue 13): the rewrite stores nothing.
    assert cache.put_batch([(key(seed=1), done("y")), (key(), done("x"))]) is None
    assert len(list((tmp_path / "one").glob("shard-*.jsonl"))) == 1


def test_read_gives_each_stored_completion_of_the_keys_asked_and_no_other(tmp_path: Path):
    """The cache holds an index in memory and reads texts from the shards on demand (the generate
    stage reads one table's at a time). A canonical line's key is found without parsing it; a
    text that spells `"key":"` and a hand-written (non-canonical) line are still read right."""
    cache = GenerationCache.load(tmp_path)
    tricky = done('he said "key":"' + "0" * 64 + '" twice')
    separators = done("a\u2028b\u2029c\x85d\x0be\x1cf")  # line breaks to str.splitlines, not to JSON Lines
    cache.put_batch([(key(), tricky), (key(seed=1), separators), (key(seed=2), done("two"))])
    by_hand = {"text": "by hand", "latency_s": 1, "key": key(seed=3), "prompt_tokens": None}
    by_hand |= {"completion_tokens": 2, "finish_reason": "length"}
    (tmp_path / "shard-byhand.jsonl").write_text(json.dumps(by_hand, indent=None) + "\n", encoding="utf-8")
    loaded = GenerationCache.load(tmp_path)
    assert len(loaded) == 4 and not loaded.problems
    asked = [key(), key(seed=2), key(seed=3), key(seed=9)]  # seed 9: never stored
    assert loaded.read(asked) == {
        key(): tricky,
        key(seed=2): done("two"),
        key(seed=3): Completion("by hand", None, 2, "length", 1.0),
    }
    assert loaded.read(["0" * 64]) == {}  # the key spelled inside a text is not an entry
    assert loaded.get(key(seed=1)) == separators == cache.get(key(seed=1))
    assert cache.get(key(seed=3)) is None  # the hand-written shard came after `cache` looked
