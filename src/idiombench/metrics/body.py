"""The metrics body (results/metrics/<benchmark>/<model>.json): its schema and the migration of
bodies written by earlier versions, in one place."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.ownership import STAMP


def migrate(body: Mapping[str, Any]) -> dict[str, Any]:
    """A body of any earlier schema as the current schema writes it."""
    return dict(body)


def comparable(body: Mapping[str, Any]) -> dict[str, Any]:
    """A body's content without its ownership record (two bodies with equal content compare equal)."""
    return {key: value for key, value in body.items() if key != STAMP}
