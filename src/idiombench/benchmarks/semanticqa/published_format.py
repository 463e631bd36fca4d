"""SemanticQA's published results format, registered for replay and evaluate-predictions
(`SemanticQA.prediction_formats["semanticqa"]`).

One JSON object per line holding the item's released fields plus `prediction`. A line is
matched to items BY CONTENT: every released field of the line (all keys but
`prediction`) must equal the same key of the item's `fields` (which hold the released
record, plus fields the build derived). Non-string predictions (the multi-step files hold
objects) are kept as canonical JSON text and counted.
"""

from __future__ import annotations

import json
from pathlib import Path

from ...errors import DataError
from ...generation.backends.replay import SourceStats
from ...generation.cache import canonical_json
from ...generation.config import ReplaySource
from ...generation.types import Request

FORMAT = "semanticqa"


class PublishedResultsSource:
    """Content index of one published-results file."""

    def __init__(self, source: ReplaySource, path: Path, stats: SourceStats):
        self.stats = stats
        # key set -> canonical JSON of the released fields -> (line, prediction)
        self.index: dict[tuple[str, ...], dict[str, tuple[int, str]]] = {}
        with open(path, "rb") as handle:
            for number, raw in enumerate(handle, start=1):
                stats.lines = number
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise DataError(path, f"invalid UTF-8 byte 0x{raw[exc.start]:02x}", row=number,
                                    expected="UTF-8 text, one JSON object per line") from None
                if not line.strip():
                    stats.blank_lines.add(number)
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DataError(path, f"not JSON ({exc.msg})", row=number, expected="one JSON object per line") from None
                if not isinstance(record, dict) or "prediction" not in record:
                    raise DataError(path, "no `prediction` key", row=number,
                                    expected="a JSON object with the item's fields and `prediction`")
                prediction = record.pop("prediction")
                if not isinstance(prediction, str):
                    stats.non_string_predictions += 1
                    prediction = canonical_json(prediction)
                keys = tuple(sorted(record))
                content = canonical_json(record)
                bucket = self.index.setdefault(keys, {})
                if content in bucket:
                    if bucket[content][1] != prediction:
                        stats.conflicting_duplicates.append(number)
                    stats.duplicate_of[number] = bucket[content][0]
                    continue
                bucket[content] = (number, prediction)

    def lookup(self, request: Request) -> str | None:
        fields = request.item.fields
        for keys, bucket in self.index.items():
            if all(key in fields for key in keys):
                hit = bucket.get(canonical_json({key: fields[key] for key in keys}))
                if hit is not None:
                    self.stats.matched_lines.add(hit[0])
                    return hit[1]
        return None
