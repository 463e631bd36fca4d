"""The dense copy of a GGUF model is loaded only when it is what the conversion wrote: the
model's identity is the GGUF's sha256, so the copy is verified file by file against the hashes
its record took at conversion (generation/dense.py)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from idiombench.errors import IdiombenchError
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
