"""What OrderProbe's report section and figures read: the report context with every scored
model's metrics body typed (results.OrderProbeBody)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ...params.schema import Params
from ..contexts import ReportContext
from .results import OrderProbeBody


@dataclasses.dataclass(frozen=True)
class Scored:
    context: ReportContext
    metrics: dict[str, OrderProbeBody]  # model -> its metrics body

    @classmethod
    def of(cls, ctx: ReportContext) -> Scored:
        return cls(ctx, ctx.bodies(OrderProbeBody))

    @property
    def params(self) -> Params:
        return self.context.params

    @property
    def figures_dir(self) -> Path:
        return self.context.figures_dir

    def display_name(self, model: str) -> str:
        return self.context.display_name(model)
