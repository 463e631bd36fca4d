"""Declared upstream files of a benchmark: repository, pinned commit, path and sha256."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from urllib.parse import quote

DERIVE_DROP_FIELDS = "drop_fields"


@dataclass(frozen=True)
class FileSpec:
    """One file a benchmark needs.

    file: path under data/raw/<benchmark>/.
    mirror_path: path under a mirror directory (data.mirror: one or several, searched in order).
    source_repo/source_commit/source_path: where the file lives upstream.
    derive: for files that are not verbatim upstream files (SemanticQA's instances
      are the published results with the model's prediction removed): how to
      derive them from the upstream file; None for verbatim copies.
    url: where the file is downloaded from when that is not a GitHub commit (a declarative
      benchmark's pinned upstream URL); None: the raw file of source_repo at source_commit.
    local: a file of the project (relative to its root, e.g. data/<benchmark>/items.jsonl,
      versioned by DVC) that acquire copies, instead of a mirror or a download; None: upstream.
    """

    file: str
    mirror_path: str
    sha256: str
    bytes: int
    source_repo: str
    source_commit: str
    source_path: str
    derive: dict[str, list[str]] | None = None
    url: str | None = None
    local: str | None = None

    @property
    def upstream_url(self) -> str:
        if self.url is not None:
            return self.url
        return f"https://raw.githubusercontent.com/{self.source_repo}/{self.source_commit}/{quote(self.source_path)}"


def load_file_specs(package: str) -> list[FileSpec]:
    """Read `files.json` of a benchmark package (e.g. idiombench.benchmarks.orderprobe)."""
    text = resources.files(package).joinpath("files.json").read_text(encoding="utf-8")
    return [FileSpec(**entry) for entry in json.loads(text)["files"]]
