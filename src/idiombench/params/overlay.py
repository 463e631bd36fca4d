"""Params overlays: a profile written as its differences from a base params file.

An overlay is a YAML mapping with `overlay_of: <base file>` (relative to the overlay's
own folder). Its other keys are merged into the base key by key: mappings recursively,
any other value (scalar, list, null) replaces the base's. Sections named in
`replace: [dotted.key, ...]` are taken whole instead (e.g. `models`, whose entries differ
entirely between profiles). A base may itself be an overlay.

DVC reads params.yaml only, so `idiombench merge-params <overlay> --out params.yaml`
writes the merged, validated file; Snakemake and the CLI read overlays directly
(`--config params=overlays/paper.yaml`, `--params overlays/paper.yaml`).
"""

from __future__ import annotations

import copy
from pathlib import Path

from ..core.errors import ConfigError
from ..core.yamlfile import YamlError, load_yaml_file

OVERLAY_KEY = "overlay_of"
REPLACE_KEY = "replace"


def read_yaml_mapping(path: Path) -> dict[str, object]:
    """A params file's top-level mapping, read within the YAML limits (core/yamlfile.py), with
    an error naming the file otherwise."""
    try:
        raw = load_yaml_file(path, expected="a params YAML file", missing="no such params file")
    except YamlError as exc:
        raise ConfigError(str(exc)) from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level, got {type(raw).__name__}")
    return raw


def _split(dotted: str) -> list[str]:
    return dotted.split(".")


def merge(
    base: dict[str, object], overlay: dict[str, object], replace: set[str], prefix: str = ""
) -> dict[str, object]:
    """`base` with `overlay` merged in (neither is modified)."""
    out = copy.deepcopy(base)
    for key, value in overlay.items():
        dotted = f"{prefix}{key}"
        current = out.get(key)
        if dotted not in replace and isinstance(value, dict) and isinstance(current, dict):
            out[key] = merge(current, value, replace, f"{dotted}.")
        else:
            out[key] = copy.deepcopy(value)
    return out


def _has_path(tree: dict[str, object], dotted: str) -> bool:
    node: object = tree
    for part in _split(dotted):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def read_params_raw(path: str | Path, _chain: tuple[Path, ...] = ()) -> dict[str, object]:
    """The raw params mapping of `path`, overlays resolved onto their bases."""
    path = Path(path)
    raw = read_yaml_mapping(path)
    if OVERLAY_KEY not in raw:
        if REPLACE_KEY in raw:
            raise ConfigError(f"{path}: `{REPLACE_KEY}` is only meaningful in an overlay (one with `{OVERLAY_KEY}`)")
        return raw
    base_ref = raw.pop(OVERLAY_KEY)
    replace = raw.pop(REPLACE_KEY, [])
    if not isinstance(base_ref, str) or not base_ref.strip():
        raise ConfigError(f"{path}: `{OVERLAY_KEY}` must name the base params file, got {base_ref!r}")
    if not isinstance(replace, list) or not all(isinstance(k, str) for k in replace):
        raise ConfigError(f"{path}: `{REPLACE_KEY}` must be a list of dotted keys (e.g. [models]), got {replace!r}")
    for dotted in replace:
        if not _has_path(raw, dotted):
            raise ConfigError(f"{path}: `{REPLACE_KEY}` names {dotted!r}, which the overlay does not set")
    base_path = (path.parent / base_ref).resolve()
    if base_path in _chain or base_path == path.resolve():
        raise ConfigError(f"{path}: `{OVERLAY_KEY}: {base_ref}` makes a cycle of overlays")
    base = read_params_raw(base_path, (*_chain, path.resolve()))
    return merge(base, raw, set(replace))


def diff(base: dict[str, object], full: dict[str, object], replace: set[str], prefix: str = "") -> dict[str, object]:
    """The smallest overlay turning `base` into `full` (keys only in `base` must lie in a
    replaced section: an overlay cannot delete a key)."""
    out: dict[str, object] = {}
    for key, value in full.items():
        dotted = f"{prefix}{key}"
        if dotted in replace:
            out[key] = copy.deepcopy(value)
        elif isinstance(value, dict) and isinstance(in_base := base.get(key), dict):
            inner = diff(in_base, value, replace, f"{dotted}.")
            if inner:
                out[key] = inner
        elif key not in base or base[key] != value:
            out[key] = copy.deepcopy(value)
    for key in base:
        dotted = f"{prefix}{key}"
        if key not in full and not any(dotted == r or dotted.startswith(f"{r}.") for r in replace):
            raise ValueError(f"{dotted} is in the base only: list a section holding it in `replace`")
    return out
