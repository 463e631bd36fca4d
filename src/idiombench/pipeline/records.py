"""What a benchmark's stages depend on besides data, as files in the project that both workflow
tools can hash: the records of its code (`results/code/<benchmark>/`) and, for a plugin, its
params section with the benchmark's own defaults (`results/params/<benchmark>.json`).

Why records, not the code's folder:

- A plugin is installed outside the project (site-packages, a venv): its folder is a machine
  path, and DVC hashes a dependency outside the repository under that absolute path, so
  dvc.yaml and dvc.lock would name this machine. A record holds what the code is (the
  distribution's name and version, a hash of each file), no path: the same on every machine
  with the same plugin.
- DVC's `matrix` (models x benchmarks) can name a path built from the benchmark's name, not its
  package folder (`chengyu-bench` lives in `chengyu_bench`): with `results/code/${item.bench}/...`
  a score job depends on its own benchmark's code only.
- Two records per benchmark: `package.json` covers every file of the package (what score,
  aggregate, construct, attention and noise run); `data.json` only the code acquire, build and
  render reach (`data_units`), so editing a scoring function reruns neither build nor render,
  hence, under Snakemake, which dates rather than hashes, no generate job either. Comments,
  blank lines and docstrings are not part of any hash: editing them reruns nothing.

A record is rewritten only when its content changes (the file's time is kept otherwise), by
`idiombench code-record` (the `code@<b>` / `plugin@<b>` stages), by `idiombench dvc-yaml` and
when the Snakefile is parsed.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import io
import json
import os
import sys
import tokenize
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..benchmarks.declared import DeclaredBenchmark
from ..benchmarks.registry import BUILTIN, DECLARED, DISTRIBUTIONS, MODULES, NAMES, get_benchmark
from ..core import paths
from ..core.io import check_output_file, dumps_json, write_text
from ..core.ownership import Output, stamp, stamped_by

if TYPE_CHECKING:
    from ..params.schema import Params

# The hooks acquire, build and render call (benchmarks.base.Benchmark): where `data_units` starts.
DATA_HOOKS = ("file_specs", "acquire_notes", "build", "render")
# Class attributes that only the later stages (and the reference backends) read: not data code.
LATER_ATTRIBUTES = frozenset(
    {
        "item_view",
        "human_labels",
        "headline_metrics",
        "plots",
        "prediction_formats",
        "scorer_roles",
        "classification_tasks",
        "format_reference_answer",
    }
)
# Names that reach code the analysis cannot follow: where one is used, the data record covers the
# whole package (as the package record does).
DYNAMIC = frozenset({"__import__", "import_module", "globals", "vars", "eval", "exec"})
SKIPPED_TOKENS = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.ENCODING})


# ------------------------------------------------------------------------------ sources


def code_root(module: str) -> Path:
    """The registered module's package folder, or the module's file when it is not a package."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise RuntimeError(f"benchmark module {module} has no source")
    origin = Path(spec.origin)
    return origin.parent if spec.submodule_search_locations else origin


def package_files(root: Path) -> list[Path]:
    """Every file of the code (.dvcignore's rule: no __pycache__, no *.pyc), in a stable order."""
    if root.is_file():
        return [root]
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        found += [Path(folder) / name for name in sorted(files) if not name.endswith(".pyc")]
    return found


def named_files(root: Path) -> list[tuple[str, Path]]:
    """`package_files` with each file's name in the records: its path under the code's root (the
    file name for a one-file module)."""
    if root.is_file():
        return [(root.name, root)]
    return [(path.relative_to(root).as_posix(), path) for path in package_files(root)]


def _docstring_lines(tree: ast.Module) -> set[int]:
    """The lines of every docstring (module, class, function): not part of the code's hash."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
                and first.end_lineno is not None
            ):
                lines.update(range(first.lineno, first.end_lineno + 1))
    return lines


@dataclass
class Source:
    """One Python file of the code: its tree and its tokens (comments and docstrings left out)."""

    module: str  # dotted name
    relative: str  # path under the code's root (the file name for a one-file module)
    tree: ast.Module
    tokens: list[tokenize.TokenInfo]
    package: str  # what relative imports are resolved against

    @classmethod
    def read(cls, path: Path, module: str, relative: str, is_package: bool) -> Source:
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text, filename=str(path))
        docstrings = _docstring_lines(tree)
        tokens = [  # a docstring's line keeps only its indentation (the block's structure)
            token
            for token in tokenize.generate_tokens(io.StringIO(text).readline)
            if token.type not in SKIPPED_TOKENS
            and (token.start[0] not in docstrings or token.type in (tokenize.INDENT, tokenize.DEDENT))
        ]
        return cls(module, relative, tree, tokens, module if is_package else module.rpartition(".")[0])

    def text(self, first: int, last: int) -> str:
        """The normalised code of lines first..last: token types and strings, no comments."""
        return "\x00".join(f"{t.type}:{t.string}" for t in self.tokens if first <= t.start[0] <= last)

    def digest(self) -> str:
        return _sha256(self.text(1, 1 << 30))


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_digest(path: Path, source: Source | None) -> str:
    """A file's hash: a Python file's normalised code, any other file's bytes."""
    if source is not None:
        return source.digest()
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ------------------------------------------------------------------------------ analysis


def _first_line(node: ast.AST) -> int:
    """A statement's first line, its decorators included."""
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    first: int = getattr(node, "lineno", 1)
    return min([first, *(d.lineno for d in decorators)])


def _is_def(node: ast.AST) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))


@dataclass
class Package:
    """The Python modules of a benchmark's code, by dotted name, and the units the analysis keeps."""

    module: str
    root: Path
    sources: dict[str, Source] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)  # unit id -> normalised code
    dynamic: str | None = None  # why the analysis cannot follow the code (the whole package counts)

    @classmethod
    def load(cls, module: str) -> Package:
        root = code_root(module)
        package = cls(module, root)
        if root.is_file():
            package.sources[module] = Source.read(root, module, root.name, is_package=False)
            return package
        for path in package_files(root):
            if path.suffix != ".py":
                continue
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            dotted = ".".join([module, *parts])
            package.sources[dotted] = Source.read(path, dotted, path.relative_to(root).as_posix(), is_package)
        return package

    # -- resolving names

    def _imported(self, source: Source, name: str) -> tuple[str, str | None] | None:
        """What a module-level name of `source` is bound to by an import inside the package:
        (module, None) for a module, (module, attribute) for a name taken from one."""
        found: tuple[str, str | None] | None = None
        for node in source.tree.body:
            if isinstance(node, ast.ImportFrom):
                base = importlib.util.resolve_name("." * node.level + (node.module or ""), source.package)
                for alias in node.names:
                    if (alias.asname or alias.name) == name and alias.name != "*":
                        submodule = f"{base}.{alias.name}"
                        found = (submodule, None) if submodule in self.sources else (base, alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname == name or (alias.asname is None and alias.name.split(".")[0] == name):
                        found = (alias.name if alias.asname else name, None)
        if found is not None and found[0] in self.sources:
            return found
        return None

    def _dotted_imports(self, source: Source, name: str) -> list[str]:
        """The package's modules an `import a.b.c` binding `name` (as `a`) loads below the top:
        `a.b.c.f` reaches them through `name`, which the walk sees only as `a.b`."""
        out = []
        for node in source.tree.body:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname is None and alias.name.split(".")[0] == name:
                        parts = alias.name.split(".")
                        out += [".".join(parts[:n]) for n in range(2, len(parts) + 1)]
        return [module for module in out if module in self.sources and module != self.module]

    def _star_imports(self, source: Source) -> list[str]:
        out = []
        for node in source.tree.body:
            if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
                base = importlib.util.resolve_name("." * node.level + (node.module or ""), source.package)
                if base in self.sources:
                    out.append(base)
        return out

    def _definition(self, source: Source, name: str) -> ast.AST | None:
        for node in source.tree.body:
            if _is_def(node) and node.name == name:  # type: ignore[attr-defined]
                return node
        return None

    # -- walking

    def keep_module(self, module: str) -> None:
        """A module's statements other than definitions (imports, constants, calls at import)."""
        unit = f"{self.sources[module].relative}:<module>"
        if unit in self.units:
            return
        source = self.sources[module]
        statements = [node for node in source.tree.body if not _is_def(node)]
        self.units[unit] = "\x01".join(source.text(_first_line(n), n.end_lineno or n.lineno) for n in statements)
        for node in statements:
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                self.follow(source, node)
        for star in self._star_imports(source):
            self.keep_whole(star)

    def keep_whole(self, module: str) -> None:
        """Every definition of a module (a module used as a value, or imported with *)."""
        self.keep_module(module)
        source = self.sources[module]
        for node in source.tree.body:
            if _is_def(node):
                self.keep_definition(module, node)

    def keep_definition(self, module: str, node: ast.AST, name: str | None = None) -> None:
        source = self.sources[module]
        unit = f"{source.relative}:{name or node.name}"  # type: ignore[attr-defined]
        if unit in self.units:
            return
        self.units[unit] = source.text(_first_line(node), node.end_lineno or node.lineno)  # type: ignore[attr-defined]
        self.follow(source, node)

    def keep_name(self, module: str, name: str, attribute: str | None = None) -> None:
        """What `name` (or `name.attribute`) means in `module`, and what that uses."""
        source = self.sources[module]
        self.keep_module(module)
        definition = self._definition(source, name)
        if definition is not None:
            self.keep_definition(module, definition)
            return
        for dotted in self._dotted_imports(source, name):
            self.keep_whole(dotted)
        imported = self._imported(source, name)
        if imported is None:
            return  # a builtin, a module-level value (kept with the module) or outside the package
        target, taken = imported
        if taken is None:  # a module of the package
            if attribute is None:
                self.keep_whole(target)
            elif f"{target}.{attribute}" in self.sources:  # `package.submodule.name`: that module, whole
                self.keep_whole(f"{target}.{attribute}")
            else:
                self.keep_name(target, attribute)
        else:
            self.keep_name(target, taken, attribute)

    def follow(self, source: Source, node: ast.AST, within: ast.ClassDef | None = None) -> None:
        """Every name `node` uses, kept (with `self.<method>` of the class it belongs to). For
        `module.name` only that name of the module is kept, not the whole module."""
        stack = [node]
        while stack:
            inner = stack.pop()
            if isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name):
                owner, attribute = inner.value.id, inner.attr
                if attribute in DYNAMIC:
                    self.dynamic = self.dynamic or f"{source.relative} uses {owner}.{attribute}"
                if within is not None and owner in ("self", "cls"):
                    method = next((n for n in within.body if _is_def(n) and n.name == attribute), None)  # type: ignore[attr-defined]
                    if method is not None:
                        self.keep_method(source, within, method)
                else:
                    self.keep_name(source.module, owner, attribute)
                continue  # not the bare name below it: `module.name` keeps that name only
            if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Load):
                if inner.id in DYNAMIC:
                    self.dynamic = self.dynamic or f"{source.relative} uses {inner.id}"
                self.keep_name(source.module, inner.id)
            stack.extend(ast.iter_child_nodes(inner))

    def keep_method(self, source: Source, cls: ast.ClassDef, method: ast.AST) -> None:
        unit = f"{source.relative}:{cls.name}.{method.name}"  # type: ignore[attr-defined]
        if unit in self.units:
            return
        self.units[unit] = source.text(_first_line(method), method.end_lineno or method.lineno)  # type: ignore[attr-defined]
        self.follow(source, method, within=cls)


def data_units(module: str, class_module: str, class_name: str) -> tuple[dict[str, str], str | None]:
    """The code the data stages (acquire, build, render) reach, as unit id -> normalised code,
    starting from the benchmark class's data hooks and class attributes (not those only later
    stages read), following names through the package's modules. Returns (units, why the
    analysis gave up): where it gives up (the class is not a plain top-level class of the
    package, a base class of the package, dynamic imports) the caller takes the whole package."""
    package = Package.load(module)
    source = package.sources.get(class_module)
    if source is None:
        return {}, f"the benchmark class {class_name} is not defined in the package"
    cls = next((n for n in source.tree.body if isinstance(n, ast.ClassDef) and n.name == class_name), None)
    if cls is None:
        return {}, f"{class_name} is not a top-level class of {source.relative}"
    # The class itself is its data hooks and attributes (below), wherever its module names it
    # (`BENCHMARK = Toy()`): never the whole class, whose other hooks are the later stages'.
    package.units[f"{source.relative}:{cls.name}"] = ""
    package.keep_module(class_module)
    for base in cls.bases:  # a base class of the package holds hooks too: whole, as a definition
        package.follow(source, base)
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name in DATA_HOOKS:
                package.keep_method(source, cls, node)
        elif isinstance(node, ast.ClassDef):
            package.keep_method(source, cls, node)
        elif not _assigns_only(node, LATER_ATTRIBUTES):
            unit = f"{source.relative}:{cls.name}.<attributes>"
            text = source.text(_first_line(node), node.end_lineno or node.lineno)
            package.units[unit] = package.units.get(unit, "") + "\x01" + text
            package.follow(source, node, within=cls)
    return package.units, package.dynamic


def _assigns_only(node: ast.AST, names: Iterable[str]) -> bool:
    """An assignment to class attributes that are all among `names`."""
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign):
        targets = [node.target]
    else:
        return False
    return bool(targets) and all(isinstance(t, ast.Name) and t.id in names for t in targets)


# ------------------------------------------------------------------------------ records


def distribution(name: str) -> dict[str, str] | None:
    """A plugin's distribution (name, version), None for a built-in benchmark."""
    found = DISTRIBUTIONS.get(name)
    return None if found is None else {"name": found[0], "version": found[1]}


def declared_identity(name: str) -> dict[str, object]:
    """What a declared benchmark is besides the code every declaration shares: its declaration
    and its local data files, each by its path in the project and the sha256 of its bytes now
    (a file not there: None). Both head its records, so editing the declaration or changing a
    data file reruns its stages, from acquire (which checks each file against the declared
    sha256), and no other benchmark's."""
    bench = get_benchmark(name)
    local = bench.local_data() if isinstance(bench, DeclaredBenchmark) else []
    path = DECLARED[name]
    return {
        "declaration": {"file": path.as_posix(), "sha256": hashlib.sha256(path.read_bytes()).hexdigest()},
        "data": {
            file.as_posix(): hashlib.sha256(file.read_bytes()).hexdigest() if file.is_file() else None for file in local
        },
    }


def code_records(name: str, cache: Path | None = None) -> dict[str, dict[str, object]]:
    """The benchmark's two code records, `package` and `data`, as JSON bodies (no path in them
    but a declared benchmark's files in the project); taken from `cache` (a folder) where the
    same code made them before (`cached_records`)."""
    bench = get_benchmark(name)
    identity: dict[str, object] = {"benchmark": name, "module": MODULES[name], "distribution": distribution(name)}
    if name in DECLARED:
        identity.update(declared_identity(name))
        # its class is made per declaration: the code is the class every declaration shares
        return cached_records(MODULES[name], DeclaredBenchmark.__module__, DeclaredBenchmark.__name__, identity, cache)
    return cached_records(MODULES[name], type(bench).__module__, type(bench).__name__, identity, cache)


def records_key(module: str, class_module: str, class_name: str, identity: Mapping[str, object]) -> str:
    """Everything the records of `records_for` are computed from, hashed: this analysis' own code
    and the Python that tokenises, the benchmark class and identity, and every file of the code,
    byte for byte. Reading the bytes takes milliseconds; the analysis about a second."""
    root = code_root(module)
    digest = hashlib.sha256()
    digest.update(Path(__file__).read_bytes())
    digest.update(
        json.dumps([sys.version_info[:2], module, class_module, class_name, identity], sort_keys=True).encode()
    )
    for relative, path in named_files(root):
        digest.update(f"\n{relative}\n".encode() + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def cached_records(
    module: str, class_module: str, class_name: str, identity: Mapping[str, object], cache: Path | None
) -> dict[str, dict[str, object]]:
    """`records_for`, through a cache folder of earlier results by `records_key`. The cache is
    a shortcut, never a source of truth: an entry that cannot be read, or whose key is not the
    one asked for, is computed again, and one that cannot be written is left out."""
    if cache is None:
        return records_for(module, class_module, class_name, identity)
    key = records_key(module, class_module, class_name, identity)
    entry = cache / f"{key}.json"
    try:
        found = json.loads(entry.read_text(encoding="utf-8"))
        if isinstance(found, dict) and found.get("key") == key and isinstance(found.get("records"), dict):
            return found["records"]  # type: ignore[no-any-return]
    except (OSError, ValueError):
        pass
    records = records_for(module, class_module, class_name, identity)
    try:
        write_text(entry, dumps_json({"key": key, "records": records}))
    except OSError:
        pass  # a read-only or full disk: the records are right, only the next run is slower
    return records


def records_for(
    module: str, class_module: str, class_name: str, identity: Mapping[str, object]
) -> dict[str, dict[str, object]]:
    """The `package` and `data` records of the code of `module`, whose benchmark class is
    `class_module.class_name`; `identity` heads both."""
    root = code_root(module)
    package = Package.load(module)
    by_path = {source.relative: source for source in package.sources.values()}
    files = {}
    for relative, path in named_files(root):
        files[relative] = file_digest(path, by_path.get(relative))
    whole = _sha256("\n".join(f"{relative} {digest}" for relative, digest in sorted(files.items())))
    package_record = {
        **identity,
        "covers": "every file of the benchmark's code (score, aggregate, construct, attention, noise)",
        "sha256": whole,
        "files": files,
    }
    units, given_up = data_units(module, class_module, class_name)
    data_files = {relative: digest for relative, digest in files.items() if not relative.endswith(".py")}
    if given_up is None:
        data_digest = _sha256(
            "\n".join(f"{unit} {_sha256(text)}" for unit, text in sorted(units.items()))
            + "\n"
            + "\n".join(f"{relative} {digest}" for relative, digest in sorted(data_files.items()))
        )
        data_record = {
            **identity,
            "covers": "the code acquire, build and render reach, and every file that is not Python",
            "sha256": data_digest,
            "units": sorted(units),
            "files": data_files,
        }
    else:
        data_record = {
            **identity,
            "covers": f"every file of the benchmark's code ({given_up})",
            "sha256": whole,
            "files": files,
        }
    return {"package": package_record, "data": data_record}


def record_paths(name: str) -> dict[str, Path]:
    """Where the records of a benchmark live (relative to the project root)."""
    out = {kind: paths.code_record(name, kind) for kind in ("data", "package")}
    if name not in BUILTIN:
        out["params"] = paths.plugin_params(name)
    return out


def plugin_params(name: str, params: Params) -> dict[str, object]:
    """A plugin's params section as the pipeline reads it (params.yaml's, over the benchmark's
    defaults), under the same keys as in params.yaml (`benchmarks.<name>.<section>`): what DVC
    reads for the plugin's stages."""
    section = params.benchmark(name).model_dump(mode="json", by_alias=True)
    return {"benchmarks": {name: section}}


def _write_if_changed(path: Path, body: Mapping[str, object], output: Output) -> bool:
    """Write `body` (stamped as `output`'s) unless the file holds it already: its time is then
    kept (Snakemake dates files). A file there that is not `output`'s is refused, never replaced."""
    text = dumps_json(stamp(body, output))
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    check_output_file(path, lambda found: stamped_by(found, output), f"a {output.kind} of {output.who}")
    write_text(path, text)
    return True


def write_records(name: str, params: Params | None = None, root: Path = Path(".")) -> list[Path]:
    """Write the benchmark's code records (and a plugin's params, when `params` are given) where
    they changed; returns the files written."""
    written = []
    targets = record_paths(name)
    for kind, body in code_records(name, root / paths.CODE_RECORDS_CACHE).items():
        if _write_if_changed(root / targets[kind], body, paths.CODE_OUTPUT):
            written.append(targets[kind])
    if params is not None and "params" in targets:
        if _write_if_changed(root / targets["params"], plugin_params(name, params), paths.PLUGIN_PARAMS_OUTPUT):
            written.append(targets["params"])
    return written


def refresh(root: Path = Path("."), params: Params | None = None, names: Iterable[str] | None = None) -> list[Path]:
    """Every registered benchmark's records brought in step (see write_records)."""
    return [path for name in (NAMES if names is None else names) for path in write_records(name, params, root)]
