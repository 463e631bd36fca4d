"""The package's declared files agree with the mirror's MANIFEST.json files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from idiombench.benchmarks.registry import NAMES, get_benchmark
from idiombench.core.io import sha256_bytes, sha256_file
from idiombench.data.acquire import derive

pytestmark = pytest.mark.mirror


def mirror_root(mirrors: list[Path], mirror_path: str) -> Path:
    """The first mirror directory holding the file (acquire's search order)."""
    for root in mirrors:
        if (root / mirror_path).is_file():
            return root
    pytest.fail(f"{mirror_path} is in no mirror directory ({', '.join(map(str, mirrors))})")


@pytest.mark.parametrize("name", NAMES)
def test_declared_files_match_mirror_manifest(name: str, mirrors: list[Path], default_params):
    specs = get_benchmark(name).file_specs(default_params.benchmark(name))
    assert specs, name
    manifests: dict[Path, dict] = {}
    for spec in specs:
        bench_dir, inside = spec.mirror_path.split("/", 1)
        # Each mirror directory has one MANIFEST.json per benchmark (releases; released code).
        manifest = mirror_root(mirrors, spec.mirror_path) / bench_dir / "MANIFEST.json"
        if manifest not in manifests:
            data = json.loads(manifest.read_text(encoding="utf-8"))
            manifests[manifest] = {f["file"]: f for f in data["files"]}
        entry = manifests[manifest][inside]
        assert (spec.sha256, spec.bytes, spec.source_repo, spec.source_commit, spec.source_path) == (
            entry["sha256"],
            entry["bytes"],
            entry["source_repo"],
            entry["source_commit"],
            entry["source_path"],
        )
        assert sha256_file(manifest.parent.parent / spec.mirror_path) == spec.sha256
        assert (spec.derive is not None) == ("derived" in entry)


def test_semanticqa_derivation_reproduces_released_instances(mirror: Path, default_params):
    """Instances are derived from published results files; where the mirror holds that results
    file, the derivation must reproduce the instance file byte for byte."""
    specs = [s for s in get_benchmark("semanticqa").file_specs(default_params.benchmark("semanticqa")) if s.derive]
    checked = 0
    for spec in specs:
        published = mirror / "semanticqa" / "published_predictions" / spec.source_path.split("results/", 1)[1]
        if not published.exists():
            continue  # e.g. idiom_detection derives from a Kimi-K2 results file not in the mirror
        assert sha256_bytes(derive(spec, published.read_bytes())) == spec.sha256, spec.file
        checked += 1
    assert checked >= 12
