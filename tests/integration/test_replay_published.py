"""replay on the real SemanticQA published predictions (mirror): lines matched to the released
instances by content, unmatched lines and items without a prediction counted."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from idiombench.benchmarks.registry import backend_hooks
from idiombench.core.generation_types import ItemContext, Message, Request, Sampling
from idiombench.generation.backends import make_backend
from idiombench.generation.cache import request_key
from idiombench.generation.config import ReplayModel

pytestmark = pytest.mark.mirror
SHOT_FILE = re.compile(r"(?P<task>.+)_(?P<setting>\d-shot)_(?P<model>.+)\.json")


def instances(mirror: Path, task: str, setting: str) -> list[ItemContext]:
    """Items as the build keeps them: the released record in `fields` (plus a derived field)."""
    lines = (mirror / "semanticqa" / "instances" / f"{task}.jsonl").read_text(encoding="utf-8").splitlines()
    return [
        ItemContext("semanticqa", task, setting, f"L{n:04d}", "", None, (), (), {**json.loads(line), "example": ""})
        for n, line in enumerate(lines, start=1)
        if line.strip()
    ]


def replay_file(path: Path, task: str, setting: str, items: list[ItemContext]):
    source = {"benchmark": "semanticqa", "task": task, "setting": setting, "path": str(path), "format": "semanticqa"}
    backend = make_backend("published", ReplayModel(backend="replay", sources=[source]), benchmarks=backend_hooks())
    requests = []
    for item in items:
        messages = (Message("user", item.item_id),)
        requests.append(
            Request(
                request_key(backend.identity(), messages, Sampling(), 0, 0),
                f"semanticqa/{task}/{setting}/{item.item_id}",
                messages,
                Sampling(),
                0,
                0,
                item,
            )
        )
    backend.prepare(requests)
    return backend, backend.generate(requests)


def test_every_published_k_shot_file_matches_its_instances(mirror: Path):
    files = sorted(
        p
        for p in (mirror / "semanticqa" / "published_predictions").glob("*/*.json")
        if SHOT_FILE.fullmatch(p.name) and "multi_step" not in p.name and "sacling" not in p.name
    )
    assert len(files) == 56
    counts = {}
    for path in files:
        match = SHOT_FILE.fullmatch(path.name)
        task, setting = match["task"], match["setting"]
        items = instances(mirror, task, setting)
        backend, completions = replay_file(path, task, setting, items)
        source = backend.summary()["sources"][0]
        failed = sum(1 for c in completions if c.failed)
        assert failed == backend.summary()["requests_without_prediction"]
        assert len(completions) - failed == backend.summary()["requests_matched"]
        counts[path.name] = (len(items), source["lines"], source["unmatched_lines"], failed)
    assert counts["idiom_detection_0-shot_qwen3-8b.json"] == (273, 272, 0, 1)
    assert counts["idiom_paraphrase_3-shot_DeepSeek-R1.json"] == (818, 815, 0, 3)
    assert counts["vmwe_extraction_oracle_3-shot_DeepSeek-R1.json"] == (474, 472, 1, 3)
    assert counts["vmwe_extraction_wo-vmwe-definition_5-shot_DeepSeek-R1.json"] == (473, 473, 2, 2)
    assert counts["collocation_categorization_0-shot_DeepSeek-R1.json"] == (305, 305, 0, 0)
    assert sum(c[1] for c in counts.values()) == 19_372  # published lines (grep -c -v "^$" over the 56 files)
    assert sum(c[2] for c in counts.values()) == 6  # lines matching no released instance
    assert sum(c[3] for c in counts.values()) == 17  # instances without a published prediction


def test_multi_step_predictions_are_kept_as_json_text(mirror: Path):
    path = (
        mirror
        / "semanticqa"
        / "published_predictions"
        / "idiom_detection"
        / "idiom_detection_multi_step_0-shot_DeepSeek-R1.json"
    )
    items = instances(mirror, "idiom_detection", "multi_step_0-shot")
    backend, completions = replay_file(path, "idiom_detection", "multi_step_0-shot", items)
    assert backend.summary()["sources"][0]["non_string_predictions"] == 273
    assert all(not c.failed and isinstance(json.loads(c.text), dict) for c in completions)
