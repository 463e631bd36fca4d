"""SemanticQA's published results format, registered for replay and evaluate-predictions
(`SemanticQA.prediction_formats["semanticqa"]`).

One JSON object per line holding the item's released fields plus `prediction`. A line's
identifying fields are all its keys but `prediction`; it fits an item when every one of
them equals the same key of the item's `fields` (which hold the released record, plus
fields the build derived). Which line answers which item is the replay backend's rule
(`replay.match_records`: one line, one item); a line without any other key identifies
nothing. Non-string predictions (the multi-step files hold objects) are kept as canonical
JSON text and counted. Size limits: foreign.MAX_FILE_BYTES, foreign.MAX_LINE_BYTES.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from ...core.errors import DataError
from ...core.foreign import storable_text, text_lines
from ...core.generation_types import Request
from ...generation.backends.replay import SourceStats
from ...generation.cache import canonical_json
from ...generation.config import ReplaySource

FORMAT = "semanticqa"
EXPECTED = "one JSON object per line: the item's released fields and `prediction`"


def _not_json(constant: str) -> None:
    """NaN and Infinity, which Python's json accepts and JSON does not."""
    raise json.JSONDecodeError(f"{constant} is not a JSON value", constant, 0)


class PublishedResultsSource:
    """Content index of one published-results file."""

    def __init__(self, source: ReplaySource, path: Path, stats: SourceStats):
        self.stats = stats
        self.texts: dict[int, str] = {}
        # key set -> canonical JSON of those fields -> the lines holding them
        self.index: dict[tuple[str, ...], dict[str, list[int]]] = {}
        for number, line in text_lines(path, "predictions file", EXPECTED):
            stats.lines = number
            if not line.strip():
                stats.blank_lines.add(number)
                continue
            try:
                record = json.loads(line, parse_constant=_not_json)
            except json.JSONDecodeError as exc:
                raise DataError(path, f"not JSON ({exc.msg})", row=number, expected=EXPECTED) from None
            except ValueError as exc:  # valid JSON Python will not read: a number of over 4,300 digits
                raise DataError(
                    path, f"not readable JSON ({' '.join(str(exc).split())[:120]})", row=number, expected=EXPECTED
                ) from None
            except RecursionError:
                raise DataError(path, "JSON nested too deeply", row=number, expected=EXPECTED) from None
            if not isinstance(record, dict) or "prediction" not in record:
                raise DataError(
                    path,
                    "no `prediction` key",
                    row=number,
                    expected="a JSON object with the item's fields and `prediction`",
                )
            prediction = record.pop("prediction")
            if not isinstance(prediction, str):
                stats.non_string_predictions += 1
                prediction = canonical_json(prediction)
            self.texts[number] = storable_text(prediction)
            if not record:
                stats.unidentified_lines.add(number)
                continue
            self.index.setdefault(tuple(sorted(record)), defaultdict(list))[canonical_json(record)].append(number)

    def candidates(self, request: Request) -> list[int]:
        fields = request.item.fields
        found: list[int] = []
        for keys, by_content in self.index.items():
            if all(key in fields for key in keys):
                found += by_content.get(canonical_json({key: fields[key] for key in keys}), [])
        return found

    def prediction(self, line: int) -> str:
        return self.texts[line]
