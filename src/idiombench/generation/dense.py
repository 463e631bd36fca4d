"""A dense copy of a GGUF model, converted once.

transformers loads a GGUF file by dequantizing every tensor and converting the tokenizer
on each load (SmolLM2-135M Q4_1: ~39 s on 2 CPU cores, then the same float32 `Linear`
layers as a dense checkpoint, so generation itself is no faster). The copy holds exactly
those dequantized float32 weights and the converted tokenizer as a transformers directory
(safetensors), which loads in about a second and which vLLM can serve (it cannot read
this GGUF). The GGUF's sha256 names the copy and stays the model's identity.

Copies live under IDIOMBENCH_MODEL_DIR, default `.models/` in the checkout
(git-ignored); `make setup` converts the embedded default's model
(`idiombench prepare-models`), and the hf backend converts on first use otherwise.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypedDict

from ..core.environment import installed_version, project_root
from ..core.errors import IdiombenchError
from ..core.io import check_output_folder, read_json, replace_directory, sha256_file
from ..core.ownership import Output, folder_files

MODEL_DIR_ENV = "IDIOMBENCH_MODEL_DIR"
RECORD = "idiombench-dense.json"  # written last: a directory without it is incomplete


def model_root() -> Path:
    return Path(os.environ.get(MODEL_DIR_ENV) or project_root() / ".models")


def dense_dir(gguf: Path, sha256: str) -> Path:
    return model_root() / f"{gguf.stem}-{sha256[:16]}"


class DenseFileFacts(TypedDict):
    """The record's facts of one file of the copy."""

    size: int
    mtime_ns: int
    sha256: str


def read_record(directory: Path) -> dict[str, object] | None:
    try:
        record = read_json(directory / RECORD)
    except IdiombenchError:
        return None
    return record if isinstance(record, dict) else None


def _file_facts(path: Path, sha256: str | None = None) -> DenseFileFacts:
    stat = path.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": sha256 or sha256_file(path)}


def _content_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.is_file() and p.name != RECORD)


def is_complete(directory: Path, sha256: str) -> bool:
    """Whether `directory` holds the dense copy of the GGUF whose sha256 is `sha256`: its record
    names that GGUF, and every file is the one the conversion wrote (the record's sha256 of
    each; a file whose size and modification time are still the recorded ones is not hashed
    again, as the hf backend's weight-hash memo does). The model's identity is the GGUF's
    sha256, so the copy it loads must be verified against what was converted from it."""
    record = read_record(directory)
    listed = None if record is None else record.get("files")
    if record is None or record.get("gguf_sha256") != sha256 or not isinstance(listed, dict):
        return False  # an earlier version's record (no file hashes) is converted again, once
    files = {p.name: p for p in _content_files(directory)}
    if set(files) != set(listed):
        return False
    for name, expected in listed.items():
        stat = files[name].stat()
        if (stat.st_size, stat.st_mtime_ns) == (expected.get("size"), expected.get("mtime_ns")):
            continue
        if stat.st_size != expected.get("size") or sha256_file(files[name]) != expected.get("sha256"):
            return False
    return True


def write_record(directory: Path, gguf_name: str, sha256: str, *, seconds: float = 0.0) -> None:
    """The copy's record, written last: the GGUF it was converted from, and each file's hash."""
    record = {
        "gguf_file": gguf_name,
        "gguf_sha256": sha256,
        "dtype": "float32",
        "transformers": installed_version("transformers"),
        "seconds": round(seconds, 1),
        "files": {path.name: _file_facts(path) for path in _content_files(directory)},
    }
    (directory / RECORD).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def convert(gguf: Path, sha256: str, out: Path) -> Path:
    """Dequantize `gguf` with transformers and save it (float32, safetensors) with its
    tokenizer at `out`, atomically: a temp directory beside it, renamed into place."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    check_output_folder(out, dense_output(sha256))  # replaced only when it is one of ours
    out.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        try:
            tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True)
            model = AutoModelForCausalLM.from_pretrained(
                gguf.parent, gguf_file=gguf.name, dtype=torch.float32, local_files_only=True
            )
        except (OSError, ValueError, ImportError) as exc:
            raise IdiombenchError(f"{gguf}: cannot convert the GGUF file to a dense model: {exc}") from exc
        # transformers keeps a GGUF "quantizer" on the model although every weight is a plain
        # float32 tensor after loading; without it the model saves as a dense checkpoint
        model.hf_quantizer = None  # type: ignore[assignment]  # transformers types it without None, which it takes
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(stage, safe_serialization=True)
        tokenizer.save_pretrained(stage)
        config_file = stage / "config.json"
        config = read_json(config_file)
        # the weights are dense now; a leftover GGUF quantization entry would make loaders
        # (vLLM) look for the GGUF quantization method
        config.pop("quantization_config", None)
        config_file.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        write_record(stage, gguf.name, sha256, seconds=time.perf_counter() - started)
        stage.chmod(0o755)
        check_output_folder(out, dense_output(sha256))  # again: a copy that failed its verification
        replace_directory(stage, out)  # the old copy renamed aside first, never deleted before
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return out


def dense_output(sha256: str) -> Output:
    """A dense copy is ours when its record names the GGUF it is the copy of and lists every
    file in it (a record of an earlier version, with no file list, when it names that GGUF)."""

    def recognise(folder: Path) -> bool:
        record = read_record(folder)
        if record is None or record.get("gguf_sha256") != sha256:
            return False
        files = record.get("files")
        return files is None or (
            isinstance(files, dict) and all(name in files for name in folder_files(folder) if name != RECORD)
        )

    return Output("prepare-models", "dense model copy", legacy_record=RECORD, legacy=recognise)


@contextlib.contextmanager
def conversion_lock(out: Path, notify: Callable[[str], None]) -> Iterator[None]:
    """One conversion of a copy at a time: two jobs that find it missing (two generate jobs on
    one GGUF) convert it once; the second waits, then finds it complete. A lock file beside the
    copy, opened without following a symbolic link; flock is released when the process ends."""
    out.parent.mkdir(parents=True, exist_ok=True)
    path = out.parent / f".{out.name}.lock"
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise IdiombenchError(
            f"{path}: cannot open the conversion lock ({exc.strerror}; a symbolic link is not followed): remove it"
        ) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            notify(f"waiting for another process converting {out.name} (lock {path})")
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def ensure_dense(gguf: Path, sha256: str, notify: Callable[[str], None] = _stderr) -> tuple[Path, bool]:
    """(directory of the dense copy, whether it was converted now)."""
    out = dense_dir(gguf, sha256)
    if is_complete(out, sha256):
        return out, False
    with conversion_lock(out, notify):
        if is_complete(out, sha256):  # converted by the process this one waited for
            return out, False
        return convert(gguf, sha256, out), True
