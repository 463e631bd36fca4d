"""Acquisition: mirror first, then the pinned upstream; sha256 verified on every copy."""

from __future__ import annotations

import hashlib
import json
import os
import urllib.error
from pathlib import Path

import pytest

from idiombench.core.errors import AcquireError, ChecksumError
from idiombench.data.acquire import acquire, acquire_file, derive, resolve_mirror
from idiombench.data.manifest import FileSpec

CONTENT = "爱不释手,喜爱得舍不得放手\r\n".encode()


def spec_for(data: bytes, name: str = "data/a.csv", **extra) -> FileSpec:
    return FileSpec(
        file=name,
        mirror_path=f"bench/{name}",
        sha256=hashlib.sha256(data).hexdigest(),
        bytes=len(data),
        source_repo="owner/repo",
        source_commit="0" * 40,
        source_path=f"release/{name}",
        **extra,
    )


@pytest.fixture
def mirror(tmp_path: Path) -> Path:
    root = tmp_path / "mirror"
    (root / "bench" / "data").mkdir(parents=True)
    (root / "bench" / "data" / "a.csv").write_bytes(CONTENT)
    return root


def no_network(url: str, timeout: float) -> bytes:
    raise AssertionError(f"unexpected download of {url}")


def test_copies_from_mirror_and_verifies(tmp_path: Path, mirror: Path):
    result = acquire_file(spec_for(CONTENT), tmp_path / "raw", mirror, download=True, fetch=no_network)
    assert result.source == "mirror"
    assert (tmp_path / "raw" / "data" / "a.csv").read_bytes() == CONTENT


def test_mirror_checksum_mismatch_names_file_and_hashes(tmp_path: Path, mirror: Path):
    spec = spec_for(b"something else")
    with pytest.raises(ChecksumError) as info:
        acquire_file(spec, tmp_path / "raw", mirror, download=True, fetch=no_network)
    message = str(info.value)
    assert "data/a.csv" in message
    assert spec.sha256 in message
    assert hashlib.sha256(CONTENT).hexdigest() in message
    assert not (tmp_path / "raw" / "data" / "a.csv").exists()  # nothing written on bad data


def test_downloads_from_pinned_upstream_when_mirror_lacks_file(tmp_path: Path):
    seen = []

    def fetch(url: str, timeout: float) -> bytes:
        seen.append(url)
        return CONTENT

    spec = spec_for(CONTENT, name="data/Full permutation in Korean.csv")
    result = acquire_file(spec, tmp_path / "raw", tmp_path / "empty-mirror", download=True, fetch=fetch)
    assert result.source == "upstream"
    assert seen == [
        "https://raw.githubusercontent.com/owner/repo/"
        + "0" * 40
        + "/release/data/Full%20permutation%20in%20Korean.csv"
    ]


def test_upstream_checksum_mismatch(tmp_path: Path):
    spec = spec_for(CONTENT)
    with pytest.raises(ChecksumError, match="expected sha256 " + spec.sha256):
        acquire_file(spec, tmp_path / "raw", None, download=True, fetch=lambda u, t: b"tampered")


def test_absent_everywhere_is_a_clear_error(tmp_path: Path):
    spec = spec_for(CONTENT)
    with pytest.raises(AcquireError) as info:
        acquire_file(spec, tmp_path / "raw", tmp_path / "m", download=False, fetch=no_network)
    assert "data/a.csv: not found (mirror" in str(info.value)
    assert "downloads are disabled" in str(info.value)

    def offline(url: str, timeout: float) -> bytes:
        raise urllib.error.URLError("no route to host")

    with pytest.raises(AcquireError) as info:
        acquire_file(spec, tmp_path / "raw", None, download=True, fetch=offline)
    assert "download of https://raw.githubusercontent.com/owner/repo/" in str(info.value)
    assert "IDIOMBENCH_MIRROR" in str(info.value)


def test_derived_file_is_rebuilt_from_upstream_results(tmp_path: Path):
    published = (
        json.dumps({"context": "I feel washed out.", "idiom": "washed out", "prediction": "washed out"})
        + "\n"
        + json.dumps({"context": "Über alles", "idiom": "x", "prediction": "y"}, ensure_ascii=False)
        + "\n"
    ).encode()
    derived = (
        json.dumps({"context": "I feel washed out.", "idiom": "washed out"})
        + "\n"
        + json.dumps({"context": "Über alles", "idiom": "x"}, ensure_ascii=False)
        + "\n"
    ).encode()
    spec = spec_for(derived, name="instances/t.jsonl", derive={"drop_fields": ["prediction"]})
    assert derive(spec, published) == derived
    result = acquire_file(spec, tmp_path / "raw", None, download=True, fetch=lambda u, t: published)
    assert result.source == "upstream"
    assert (tmp_path / "raw" / "instances" / "t.jsonl").read_bytes() == derived


def test_present_file_is_kept_and_corrupt_file_replaced(tmp_path: Path, mirror: Path):
    spec = spec_for(CONTENT)
    raw = tmp_path / "raw"
    acquire_file(spec, raw, mirror, download=False)
    assert acquire_file(spec, raw, mirror, download=False).source == "present"
    (raw / "data" / "a.csv").write_bytes(b"corrupted")
    assert acquire_file(spec, raw, mirror, download=False).source == "mirror"
    assert (raw / "data" / "a.csv").read_bytes() == CONTENT


def test_record_is_deterministic_and_stray_files_removed(tmp_path: Path, mirror: Path):
    raw = tmp_path / "raw"
    (raw / "old").mkdir(parents=True)
    (raw / "old" / "gone.csv").write_text("stale")  # declared by an earlier manifest
    # an earlier version's record (no idiombench-output.json), naming the files it acquired: the
    # folder is acquire's to replace
    (raw / "ACQUIRED.json").write_text(json.dumps({"benchmark": "bench", "files": [{"file": "old/gone.csv"}]}))
    report = acquire("bench", [spec_for(CONTENT)], raw, mirror, download=False)
    assert report.removed == ["old/gone.csv"]
    first = (raw / "ACQUIRED.json").read_bytes()
    acquire("bench", [spec_for(CONTENT)], raw, mirror, download=False)
    assert (raw / "ACQUIRED.json").read_bytes() == first
    record = json.loads(first)
    assert record["files"][0]["sha256"] == hashlib.sha256(CONTENT).hexdigest()
    assert "source" not in record["files"][0]  # where a file came from is logged, not recorded


def test_environment_overrides_configured_mirror(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("IDIOMBENCH_MIRROR", str(tmp_path))
    assert resolve_mirror("../mirror/releases") == [tmp_path]
    assert resolve_mirror(["../a", "../b"]) == [tmp_path]
    monkeypatch.setenv("IDIOMBENCH_MIRROR", f"{tmp_path / 'a'}{os.pathsep}{tmp_path / 'b'}")
    assert resolve_mirror("../mirror/releases") == [tmp_path / "a", tmp_path / "b"]
    monkeypatch.delenv("IDIOMBENCH_MIRROR")
    assert resolve_mirror("../elsewhere") == [Path("../elsewhere")]
    assert resolve_mirror(["../mirror/releases", "../mirror/code"]) == [
        Path("../mirror/releases"),
        Path("../mirror/code"),
    ]
    assert resolve_mirror(None) == []


def test_several_mirrors_are_searched_in_order(tmp_path: Path, mirror: Path):
    """The benchmark releases and the authors' code live in different mirror directories."""
    empty = tmp_path / "empty-mirror"
    result = acquire_file(spec_for(CONTENT), tmp_path / "raw", [empty, mirror], download=False)
    assert result.source == "mirror"
    assert (tmp_path / "raw" / "data" / "a.csv").read_bytes() == CONTENT


def test_first_mirror_holding_a_wrong_copy_is_an_error(tmp_path: Path, mirror: Path):
    other = tmp_path / "other"
    (other / "bench" / "data").mkdir(parents=True)
    (other / "bench" / "data" / "a.csv").write_bytes(b"tampered\n")
    with pytest.raises(ChecksumError, match="other"):
        acquire_file(spec_for(CONTENT), tmp_path / "raw", [other, mirror], download=False)


def test_absent_from_every_mirror_names_each_path(tmp_path: Path):
    with pytest.raises(AcquireError) as info:
        acquire_file(spec_for(CONTENT), tmp_path / "raw", [tmp_path / "m1", tmp_path / "m2"], download=False)
    message = str(info.value)
    assert str(tmp_path / "m1" / "bench" / "data" / "a.csv") in message
    assert str(tmp_path / "m2" / "bench" / "data" / "a.csv") in message
