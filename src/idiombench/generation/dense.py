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

import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from ..environment import installed_version, project_root
from ..errors import IdiombenchError

MODEL_DIR_ENV = "IDIOMBENCH_MODEL_DIR"
RECORD = "idiombench-dense.json"  # written last: a directory without it is incomplete


def model_root() -> Path:
    return Path(os.environ.get(MODEL_DIR_ENV) or project_root() / ".models")


def dense_dir(gguf: Path, sha256: str) -> Path:
    return model_root() / f"{gguf.stem}-{sha256[:16]}"


def read_record(directory: Path) -> dict[str, Any] | None:
    try:
        return json.loads((directory / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def is_complete(directory: Path, sha256: str) -> bool:
    record = read_record(directory)
    return record is not None and record.get("gguf_sha256") == sha256


def convert(gguf: Path, sha256: str, out: Path) -> Path:
    """Dequantize `gguf` with transformers and save it (float32, safetensors) with its
    tokenizer at `out`, atomically: a temp directory beside it, renamed into place."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        try:
            tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True)
            model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32,
                                                         local_files_only=True)
        except (OSError, ValueError, ImportError) as exc:
            raise IdiombenchError(f"{gguf}: cannot convert the GGUF file to a dense model: {exc}") from exc
        # transformers keeps a GGUF "quantizer" on the model although every weight is a plain
        # float32 tensor after loading; without it the model saves as a dense checkpoint
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(stage, safe_serialization=True)
        tokenizer.save_pretrained(stage)
        config_file = stage / "config.json"
        config = json.loads(config_file.read_text(encoding="utf-8"))
        # the weights are dense now; a leftover GGUF quantization entry would make loaders
        # (vLLM) look for the GGUF quantization method
        config.pop("quantization_config", None)
        config_file.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        record = {"gguf_file": gguf.name, "gguf_sha256": sha256, "dtype": "float32",
                  "transformers": installed_version("transformers"), "seconds": round(time.perf_counter() - started, 1)}
        (stage / RECORD).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        stage.chmod(0o755)
        if out.exists():  # an incomplete earlier attempt (no record)
            shutil.rmtree(out)
        os.replace(stage, out)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return out


def ensure_dense(gguf: Path, sha256: str) -> tuple[Path, bool]:
    """(directory of the dense copy, whether it was converted now)."""
    out = dense_dir(gguf, sha256)
    if is_complete(out, sha256):
        return out, False
    return convert(gguf, sha256, out), True
