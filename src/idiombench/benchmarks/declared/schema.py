"""A declarative benchmark's file, `benchmarks/<name>.yaml` in the project: its schema, read with
the project's one bounded YAML reader (core.yamlfile) and validated as params are (pydantic,
unknown keys refused; every problem one `key: problem` line naming the file; the CLI exits 2).
docs/ARCHITECTURE.md, "Add a benchmark", names every key.

Reading a declaration never reads its data: the DAG (dvc.yaml, the Snakemake rules) is built
from the declaration alone, and the data is read by acquire and build.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from ...core.errors import ConfigError
from ...core.schema import Name, name_problem
from ...core.yamlfile import YamlError, load_yaml_file
from ...params.schema import validation_problems

DECLARATIONS = Path("benchmarks")  # the project's declarations: benchmarks/<name>.yaml
DATA = Path("data")  # a declaration's local files: data/<name>/<file>, versioned by DVC (`dvc add data/<name>`)
SUFFIX = ".yaml"
# data/<name>/ is a declared benchmark's folder: these names are the project's own folders there
RESERVED = frozenset({"raw", "processed", "annotations"})

Shape = Literal["multiple_choice", "label", "cloze", "generation"]
# the parsers of each shape (core.parsing), the first the default
PARSERS: dict[str, tuple[str, ...]] = {
    "multiple_choice": ("letter",),
    "label": ("tag", "word"),
    "cloze": ("candidate",),
    "generation": ("text",),
}
# the shapes whose records list their options (a cloze's candidates) in `fields.options`
WITH_OPTIONS = frozenset({"multiple_choice", "cloze"})
SHA256 = re.compile(r"[0-9a-f]{64}")


def _relative(value: str) -> str:
    """A relative path inside its folder: no absolute path, no `..`, every part a name."""
    parts = PurePosixPath(value).parts
    if not parts or PurePosixPath(value).is_absolute() or any(name_problem(part) for part in parts):
        raise ValueError(f"{value!r} is not a relative path of names (letters, digits, '.', '_', '-'; no '..')")
    return value


def _sha256(value: str) -> str:
    if not SHA256.fullmatch(value):
        raise ValueError("expected 64 lower-case hex digits (sha256sum <file>)")
    return value


def _url(value: str) -> str:
    if not re.fullmatch(r"https?://\S+", value):
        raise ValueError("expected an http(s) URL")
    return value


RelativePath = Annotated[str, AfterValidator(_relative)]
Sha256 = Annotated[str, AfterValidator(_sha256)]
Url = Annotated[str, AfterValidator(_url)]
Role = Literal["system", "user", "assistant"]


class Part(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class DataFile(Part):
    """One file of records, pinned by its sha256 (acquire checks it). Local (no `url`):
    data/<name>/<file> in the project, versioned by DVC (`dvc add data/<name>`). Upstream:
    downloaded from `url` (or found in a mirror directory at `mirror_path`)."""

    file: RelativePath
    sha256: Sha256
    url: Url | None = None
    mirror_path: RelativePath | None = None
    format: Literal["jsonl", "json", "csv"] | None = Field(
        None, description="null: from the suffix (.jsonl, .csv; .json: an array, or JSON lines)"
    )
    split: Name = "test"


class Fields(Part):
    """Which field of a record holds what (any other field is a template placeholder too)."""

    input: str
    gold: str
    id: str | None = None
    options: str | None = None
    split: str | None = None


class Setting(Part):
    """A prompt setting: `shots` exemplars (a seeded draw per item from the split `exemplars`)
    before the item of split `split`, with the declaration's template unless it has its own."""

    shots: int = Field(0, ge=0, le=64)
    exemplars: Name = "train"
    split: Name = "test"
    template: list[dict[Role, str]] | None = None


def _default_settings() -> dict[str, Setting]:
    return {"zero_shot": Setting()}


class Declaration(Part):
    shape: Shape
    description: str = ""
    language: str = "en"
    data: list[DataFile] = Field(min_length=1)
    fields: Fields
    labels: list[str] | dict[str, list[str]] | None = None
    template: list[dict[Role, str]] = Field(min_length=1)
    settings: dict[Name, Setting] = Field(default_factory=_default_settings, min_length=1)
    parser: str | None = None
    metrics: list[str] = Field(min_length=1)
    headline: str | None = None
    resampling: str = "item"

    @property
    def parser_name(self) -> str:
        return self.parser or PARSERS[self.shape][0]

    @property
    def headline_metric(self) -> str:
        return self.headline or self.metrics[0]

    def label_names(self) -> tuple[str, ...]:
        if self.labels is None:
            return ()
        return tuple(self.labels) if isinstance(self.labels, list) else tuple(self.labels)

    def synonyms(self) -> dict[str, str]:
        """Further words read as a label (label shape with `labels` as a mapping)."""
        if not isinstance(self.labels, dict):
            return {}
        return {word: label for label, words in self.labels.items() for word in words}

    def local_files(self) -> list[DataFile]:
        """Its files that are in the project (data/<name>/), not downloaded."""
        return [f for f in self.data if f.url is None]

    def splits(self) -> tuple[str, ...] | None:
        """The splits its records fall into (None: a field names each record's split)."""
        return None if self.fields.split is not None else tuple(sorted({f.split for f in self.data}))


def problems(decl: Declaration, name: str, known_metrics: dict[str, frozenset[str]]) -> list[str]:
    """The rules across keys, each as `key: problem` (the schema checks each key alone).
    `known_metrics`: metric name -> the shapes it applies to (library.SHAPES)."""
    found: list[str] = []
    shape = decl.shape
    if decl.parser is not None and decl.parser not in PARSERS[shape]:
        found.append(
            f"parser: {decl.parser!r} does not read a {shape} answer (expected one of: {', '.join(PARSERS[shape])})"
        )
    for index, metric in enumerate(decl.metrics):
        shapes = known_metrics.get(metric)
        usable = sorted(m for m, s in known_metrics.items() if shape in s)
        if shapes is None or shape not in shapes:
            found.append(f"metrics.{index}: unknown metric {metric!r} for shape {shape} (known: {', '.join(usable)})")
    if decl.metrics.count(decl.headline_metric) == 0:
        found.append(f"headline: {decl.headline!r} is not one of metrics ({', '.join(decl.metrics)})")
    repeated = sorted({m for m in decl.metrics if decl.metrics.count(m) > 1})
    if repeated:
        found.append(f"metrics: listed more than once: {', '.join(repeated)}")
    if shape in WITH_OPTIONS and decl.fields.options is None:
        what = "candidates" if shape == "cloze" else "options"
        found.append(f"fields.options: missing (a {shape} record lists its {what} in a field)")
    if shape != "label" and decl.labels is not None:
        found.append(f"labels: only the label shape has labels (this one is {shape})")
    if shape == "label":
        labels = decl.label_names()
        if len(labels) < 2:
            found.append("labels: missing or fewer than two (the label shape names its labels)")
        elif len({label.lower() for label in labels}) < len(labels):
            found.append("labels: two labels differ only in case")
        elif any(not re.fullmatch(r"[^<>\s][^<>]*", label) for label in labels):
            found.append("labels: a label is empty or holds '<', '>' or leading space")
    files = [f.file for f in decl.data]
    for index, entry in enumerate(decl.data):
        if entry.url is None and entry.mirror_path is not None:
            found.append(f"data.{index}.mirror_path: only a file with a url is looked for in a mirror")
        if files.count(entry.file) > 1:
            found.append(f"data.{index}.file: {entry.file!r} is listed more than once")
    splits = decl.splits()
    for setting, spec in decl.settings.items():
        if splits is not None and spec.split not in splits:
            found.append(
                f"settings.{setting}.split: no data file holds split {spec.split!r} (splits: {', '.join(splits)})"
            )
        if spec.shots and splits is not None and spec.exemplars not in splits:
            found.append(
                f"settings.{setting}.exemplars: no data file holds split {spec.exemplars!r} "
                f"(splits: {', '.join(splits)})"
            )
    if decl.resampling != "item" and not decl.resampling.strip():
        found.append("resampling: expected `item` or the field holding each record's cluster")
    for where, template in [("template", decl.template)] + [
        (f"settings.{s}.template", spec.template) for s, spec in decl.settings.items() if spec.template is not None
    ]:
        for index, message in enumerate(template or []):
            if len(message) != 1 or not next(iter(message.values())).strip():
                found.append(f"{where}.{index}: expected one `system`, `user` or `assistant` key with a non-empty text")
        if not any("user" in message for message in template or []):
            found.append(f"{where}: no `user` message")
    problem = name_problem(name, key=True)
    if problem:
        found.append(f"(file name): the benchmark's name {problem}")
    elif name in RESERVED:
        found.append(f"(file name): {name!r} is reserved (data/{name}/ is the project's own folder)")
    return found


def read_declaration(path: Path, known_metrics: dict[str, frozenset[str]]) -> Declaration:
    """The declaration at `path`, validated; a ConfigError naming the file and every bad key
    (its size, nodes and nesting bounded: core.yamlfile)."""
    try:
        raw = load_yaml_file(path, expected="a benchmark declaration")
    except YamlError as exc:
        raise ConfigError(str(exc)) from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a mapping of the declaration's keys, got {type(raw).__name__}")
    try:
        decl = Declaration.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"{path}: invalid declaration: " + "; ".join(validation_problems(exc, Declaration))) from None
    found = problems(decl, path.name.removesuffix(SUFFIX), known_metrics)
    if found:
        raise ConfigError(f"{path}: invalid declaration: " + "; ".join(found))
    return decl
