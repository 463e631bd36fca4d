"""params.yaml section `benchmarks.chengyu-bench`."""

from __future__ import annotations

from pydantic import Field

from ...generation.config import GenerateConfig
from ...schema import StrictModel


class ChengyuBenchBuild(StrictModel):
    release_dir: str | None = Field(
        None,
        description="Local checkout of the official Chengyu-Bench release (github sofyc/ChengyuBench); "
        "not reachable from the development machines.",
    )


class ChengyuBenchConfig(StrictModel):
    enabled: bool = True
    build: ChengyuBenchBuild = ChengyuBenchBuild()
    generate: GenerateConfig = GenerateConfig()
