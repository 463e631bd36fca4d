"""The dense copy of a GGUF model is loaded only when it is what the conversion wrote: the
model's identity is the GGUF's sha256, so the copy is verified file by file against the hashes
its record took at conversion (generation/dense.py)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from idiombench.core.errors import IdiombenchError
from idiombench.generation import dense


@pytest.fixture
def copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, str]:
    """A GGUF file and its dense copy as a conversion leaves it (record written last)."""
    monkeypatch.setenv(dense.MODEL_DIR_ENV, str(tmp_path / "models"))
    gguf = tmp_path / "tiny.Q4_1.gguf"
    gguf.write_bytes(b"a gguf")
    digest = hashlib.sha256(gguf.read_bytes()).hexdigest()
    directory = dense.dense_dir(gguf, digest)
    directory.mkdir(parents=True)
    (directory / "model.safetensors").write_bytes(b"dense weights")
    (directory / "config.json").write_text("{}", encoding="utf-8")
    dense.write_record(directory, gguf.name, digest)
    return gguf, directory, digest


def test_a_copy_as_converted_is_complete(copy) -> None:
    gguf, directory, digest = copy
    assert dense.is_complete(directory, digest)
    assert dense.ensure_dense(gguf, digest) == (directory, False)  # reused, not converted again
    assert not dense.is_complete(directory, "0" * 64)  # another GGUF's copy


def test_changed_or_extra_or_missing_weights_are_not_trusted_on_the_record(copy) -> None:
    _, directory, digest = copy
    weights = directory / "model.safetensors"
    weights.write_bytes(b"other weights")  # same size, new content, a new mtime: hashed again, mismatch
    os.utime(weights, ns=(2, 2))  # (explicit: two writes within one clock tick may share an mtime)
    assert not dense.is_complete(directory, digest)
    weights.write_bytes(b"dense weights")
    assert dense.is_complete(directory, digest)  # the recorded content again
    (directory / "extra.bin").write_bytes(b"x")
    assert not dense.is_complete(directory, digest)
    (directory / "extra.bin").unlink()
    (directory / "config.json").unlink()
    assert not dense.is_complete(directory, digest)


def test_a_touched_but_unchanged_file_is_still_verified(copy) -> None:
    _, directory, digest = copy
    weights = directory / "model.safetensors"
    os.utime(weights, ns=(1, 1))  # another mtime: the file is hashed, and matches
    assert dense.is_complete(directory, digest)


def test_a_record_without_file_hashes_is_converted_again(copy) -> None:
    """A copy an earlier version converted (its record names the GGUF only) is not trusted."""
    _, directory, digest = copy
    (directory / dense.RECORD).write_text(f'{{"gguf_sha256": "{digest}"}}', encoding="utf-8")
    assert not dense.is_complete(directory, digest)
    (directory / dense.RECORD).write_text("{not json", encoding="utf-8")
    assert dense.read_record(directory) is None and not dense.is_complete(directory, digest)


def test_a_folder_that_is_not_a_copy_is_never_replaced(copy, monkeypatch: pytest.MonkeyPatch) -> None:
    """convert() replaces a copy that failed its verification only when it carries the record."""
    gguf, directory, digest = copy
    (directory / dense.RECORD).unlink()
    (directory / "notes.txt").write_text("mine", encoding="utf-8")
    import transformers

    class Fake:
        hf_quantizer = None
        config = object()

        @classmethod
        def from_pretrained(cls, *args, **kwargs):
            return cls()

        def save_pretrained(self, out, **kwargs):
            (Path(out) / "config.json").write_text("{}", encoding="utf-8")

    monkeypatch.setattr(transformers, "AutoTokenizer", Fake)
    monkeypatch.setattr(transformers, "AutoModelForCausalLM", Fake)
    with pytest.raises(IdiombenchError, match="was not written by idiombench"):
        dense.convert(gguf, digest, directory)
    assert (directory / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert [p.name for p in directory.parent.iterdir()] == [directory.name]  # no staging folder left


@pytest.fixture
def fake_transformers(monkeypatch: pytest.MonkeyPatch) -> None:
    """transformers' loaders replaced by one that saves a one-file 'model' (no GGUF to read)."""
    import transformers

    class Fake:
        hf_quantizer = None
        config = object()

        @classmethod
        def from_pretrained(cls, *args, **kwargs):
            return cls()

        def save_pretrained(self, out, **kwargs):
            (Path(out) / "config.json").write_text("{}", encoding="utf-8")
            (Path(out) / "model.safetensors").write_bytes(b"new dense weights")

    monkeypatch.setattr(transformers, "AutoTokenizer", Fake)
    monkeypatch.setattr(transformers, "AutoModelForCausalLM", Fake)


def test_a_copy_that_failed_its_verification_is_replaced_by_renames(copy, fake_transformers) -> None:
    """Issue 30: the old copy is renamed aside, the new one renamed in, then the old one deleted
    (before: deleted, then the new one renamed: a kill in between left no copy)."""
    gguf, directory, digest = copy
    (directory / "model.safetensors").write_bytes(b"corrupted")
    assert dense.ensure_dense(gguf, digest, notify=print) == (directory, True)
    assert dense.is_complete(directory, digest)
    assert (directory / "model.safetensors").read_bytes() == b"new dense weights"
    assert sorted(p.name for p in directory.parent.iterdir()) == [f".{directory.name}.lock", directory.name]


def test_a_look_alike_copy_record_is_refused_before_converting(copy, fake_transformers) -> None:
    gguf, directory, digest = copy
    (directory / dense.RECORD).write_text('{"gguf_sha256": "%s", "files": {}}' % ("0" * 64), encoding="utf-8")
    with pytest.raises(
        IdiombenchError,
        match=r"was not written by idiombench \(no idiombench-output.json, and its "
        r"idiombench-dense.json is not a record of",
    ):
        dense.ensure_dense(gguf, digest, notify=print)
    (directory / dense.RECORD).write_text(f'{{"gguf_sha256": "{digest}", "files": {{}}}}', encoding="utf-8")
    with pytest.raises(IdiombenchError, match="names every file in it"):  # it lists none of the files there
        dense.ensure_dense(gguf, digest, notify=print)


def test_two_jobs_on_one_gguf_convert_it_once(copy, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second job waits on the conversion lock (saying so), then finds the copy complete."""
    import threading
    import time

    gguf, directory, digest = copy
    (directory / dense.RECORD).unlink()
    for path in directory.iterdir():
        path.unlink()
    conversions: list[str] = []
    started = threading.Event()

    def slow_convert(gguf: Path, sha256: str, out: Path) -> Path:
        conversions.append(threading.current_thread().name)
        started.set()
        time.sleep(0.5)
        (out / "model.safetensors").write_bytes(b"dense weights")
        dense.write_record(out, gguf.name, sha256)
        return out

    monkeypatch.setattr(dense, "convert", slow_convert)
    said: list[str] = []
    results: dict[str, tuple[Path, bool]] = {}

    def job(name: str) -> None:
        results[name] = dense.ensure_dense(gguf, digest, notify=said.append)

    first = threading.Thread(target=job, args=("first",), name="first")
    first.start()
    started.wait(10)
    second = threading.Thread(target=job, args=("second",), name="second")
    second.start()
    first.join(10)
    second.join(10)
    assert conversions == ["first"]
    assert results == {"first": (directory, True), "second": (directory, False)}
    assert said == [
        f"waiting for another process converting {directory.name} (lock {directory.parent / f'.{directory.name}.lock'})"
    ]


def test_the_conversion_lock_is_not_opened_through_a_link(copy, tmp_path: Path) -> None:
    gguf, directory, digest = copy
    victim = tmp_path / "victim.txt"
    victim.write_text("yours", encoding="utf-8")
    (directory.parent / f".{directory.name}.lock").symlink_to(victim)
    (directory / "model.safetensors").write_bytes(b"corrupted")
    with pytest.raises(IdiombenchError, match="cannot open the conversion lock"):
        dense.ensure_dense(gguf, digest, notify=print)
    assert victim.read_text(encoding="utf-8") == "yours"
