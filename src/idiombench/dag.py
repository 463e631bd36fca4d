"""The DAG's shape, written once: what each stage depends on, derived from the benchmark
registry. The Snakemake rules (workflow/rules/common.smk) call these functions, and
`idiombench dvc-yaml` writes dvc.yaml from them, so adding a benchmark to the registry
changes both graphs without editing either by hand."""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from .benchmarks.registry import MODULES, NAMES, all_plots, get_benchmark
from .paths import ANNOTATIONS, PLOTS

PACKAGE_DIR = "src/idiombench/benchmarks"
SCORING_DIR = "src/idiombench/scoring"
ANALYSIS_DIR = "src/idiombench/analysis"
ANNOTATIONS_DIR = ANNOTATIONS.as_posix()


@dataclass(frozen=True)
class BenchmarkNode:
    """What the DAG needs to know about one registered benchmark."""

    name: str
    package: str  # the folder of its code: a dependency of its build, render and construct stages
    templates: str
    constructs: bool
    attention: bool  # it has attention diagnostics: an attention stage per (model, benchmark)


def package_dir(module: str) -> str:
    """A benchmark module's folder as the graphs name it: src/idiombench/benchmarks/<pkg> for
    the built-in ones, else (a registered package) relative to the working directory when
    inside it, else absolute."""
    builtin = f"{__package__}.benchmarks."
    if module.startswith(builtin):
        return f"{PACKAGE_DIR}/{module[len(builtin):].split('.')[0]}"
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise RuntimeError(f"benchmark module {module} has no source folder")
    folder = Path(spec.origin).resolve().parent
    try:
        return folder.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return folder.as_posix()


def benchmark_nodes() -> list[BenchmarkNode]:
    """Every registered benchmark, in registry order."""
    nodes = []
    for name in NAMES:
        bench = get_benchmark(name)
        nodes.append(BenchmarkNode(
            name=name,
            package=package_dir(MODULES[name]),
            templates=str(bench.render_templates),
            constructs=bench.constructs,
            attention=bench.attention_diagnostics,
        ))
    return nodes


def attention_deps(model: str, benchmark: str) -> list[str]:
    """An attention job reads the model's generations and scores (the groups), the benchmark's
    prompts and items (the spans), the benchmark packages (as score_deps: DVC's matrix cannot
    name one package), the analysis code and the human-label directory (its optional labels)."""
    return [f"results/generations/{model}", f"results/scores/{model}/{benchmark}", f"results/prompts/{benchmark}",
            f"data/processed/{benchmark}", PACKAGE_DIR, ANALYSIS_DIR, ANNOTATIONS_DIR]


def generate_deps() -> list[str]:
    """Inputs of a model's generate job: every benchmark's prompts and items (dvc.yaml cannot
    filter by `enabled`; the command reads only the enabled ones the model runs)."""
    return [f"results/prompts/{name}" for name in NAMES] + [f"data/processed/{name}" for name in NAMES]


def generate_param_keys() -> list[str]:
    """The per-benchmark params sections generate reads (besides `seed` and the model's own)."""
    return [f"benchmarks.{name}.{key}" for name in NAMES for key in ("enabled", "generate")]


def construct_deps(node: BenchmarkNode) -> list[str]:
    """A construction run reads the benchmark's items, its own package and the scorers."""
    return [f"data/processed/{node.name}", node.package, SCORING_DIR]


def score_deps(benchmark: str) -> list[str]:
    """Inputs of a score job besides the generations and items. All benchmark packages: DVC's
    `matrix` (models x benchmarks) can name a benchmark but not its package folder
    (`chengyu-bench` lives in `chengyu_bench`), and both graphs must list the same inputs."""
    return [PACKAGE_DIR, SCORING_DIR]


def code_folders() -> set[str]:
    """The source folders the stages depend on: the benchmark packages (and their prompts/
    folders), the scorers and the analysis code."""
    folders = {PACKAGE_DIR, SCORING_DIR, ANALYSIS_DIR}
    for node in benchmark_nodes():
        folders.add(node.package)
        if node.templates.startswith(node.package + "/"):
            folders.add(node.templates)
    return folders


def source_files(folder: str) -> tuple[str, ...]:
    """Every file of a source folder, as DVC hashes it (.dvcignore: no __pycache__, no *.pyc)."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        found += [f"{root}/{name}" for name in sorted(files) if not name.endswith(".pyc")]
    return tuple(found)


def snakemake_inputs(deps: list[str]) -> list[str]:
    """A stage's dependencies as Snakemake's inputs: a source folder becomes its files.
    Snakemake dates a directory by the directory's own mtime, which an in-place edit of a
    file inside does not change; DVC hashes the folder's contents, so dvc.yaml keeps the
    folder (tests/integration/test_dag_sync.py matches the two)."""
    code = code_folders()
    return [path for dep in deps for path in (source_files(dep) if dep in code else (dep,))]


def plots_section() -> str:
    """dvc.yaml's `plots:` entries, one per curve family the plots stage writes."""
    return "\n".join(
        f"  - {PLOTS.as_posix()}/{plot.folder}:\n      title: {plot.title}\n      template: linear\n"
        f"      x: {plot.x}\n      y: [{', '.join(plot.series)}]"
        for _, plot in all_plots())


def _lines(items: list[str], indent: int) -> str:
    pad = " " * indent
    return "\n".join(f"{pad}- {item}" for item in items)


def dvc_yaml() -> str:
    """The text of dvc.yaml for the registered benchmarks."""
    nodes = benchmark_nodes()
    bench_vars = "\n".join(
        f"      {node.name}: {{package: {node.package}, templates: {node.templates}}}" for node in nodes)
    constructing = [node for node in nodes if node.constructs]
    construct_vars = "\n".join(f"      {node.name}: {{package: {node.package}}}" for node in constructing)
    construct_stage = "" if not constructing else f"""
  # A benchmark's own data-construction pipeline rebuilt from its release (the benchmarks
  # whose package has run_construction).
  construct:
    foreach: ${{construction}}
    do:
      cmd: idiombench construct ${{key}} --params params.yaml
      deps:
        - data/processed/${{key}}
        - ${{item.package}}
        - {SCORING_DIR}
      params:
        - benchmarks.${{key}}.construct
        - benchmarks.${{key}}.enabled
        - scoring
      outs:
        - results/construction/${{key}}
"""
    construct_dep = "      - results/construction\n" if constructing else ""
    attending = [node for node in nodes if node.attention]
    attention_vars = "\n".join(f"      {node.name}: {{package: {node.package}}}" for node in attending)
    attention_stage = "" if not attending else f"""
  # Attention diagnostics of a model's recorded generations (benchmarks with attention_diagnostics;
  # hf backend). A model that is not measured records "skipped" with the reason.
  attention:
    matrix:
      model: ${{models}}
      bench: ${{attention}}
    cmd: idiombench attention ${{item.bench}} --model ${{item.model}} --params params.yaml
    deps:
{_lines(attention_deps("${item.model}", "${item.bench}"), 6)}
    params:
      - benchmarks.${{item.bench}}.attention
      - benchmarks.${{item.bench}}.score
      - benchmarks.${{item.bench}}.enabled
      - models.${{item.model}}
    outs:
      - results/analysis/${{item.bench}}/attention/${{item.model}}
"""
    attention_dep = "      - results/analysis\n" if attending else ""
    return f"""\
# GENERATED by `idiombench dvc-yaml` from the benchmark registry (src/idiombench/dag.py):
# edit that, not this file. The Snakefile runs the same stages (tests/integration/test_dag_sync.py).
# Every stage calls the `idiombench` CLI and lists only the params sections it reads,
# so editing one benchmark's build options reruns only that benchmark's build.
vars:
  - bench:
      # templates: where render reads the benchmark's prompt templates (the package's prompts/
      # folder, or the acquired release)
{bench_vars}
  - construction:
{construct_vars or "      {}"}
  - attention:
{attention_vars or "      {}"}

stages:
  acquire:
    foreach: ${{bench}}
    do:
      cmd: idiombench acquire ${{key}} --params params.yaml
      deps:
        - ${{item.package}}/files.json
      params:
        - data
      outs:
        - data/raw/${{key}}

  build:
    foreach: ${{bench}}
    do:
      cmd: idiombench build ${{key}} --params params.yaml
      deps:
        - data/raw/${{key}}
        - ${{item.package}}
      params:
        - benchmarks.${{key}}.build
      outs:
        - data/processed/${{key}}

  render:
    foreach: ${{bench}}
    do:
      cmd: idiombench render ${{key}} --params params.yaml
      deps:
        - data/processed/${{key}}
        - ${{item.package}}
        - ${{item.templates}}
      params:
        - benchmarks.${{key}}.render
        - benchmarks.${{key}}.enabled
      outs:
        - results/prompts/${{key}}

  generate:
    foreach: ${{models}}
    do:
      cmd: idiombench generate --model ${{key}} --params params.yaml
      deps:
{_lines(generate_deps(), 8)}
      params:
        - seed
        - models.${{key}}
{_lines(generate_param_keys(), 8)}
      outs:
        - results/generations/${{key}}

  # A (model, benchmark) pair that does not apply is scored, aggregated and tracked as
  # "skipped" with the reason, so every stage of this static grid has a truthful output.
  score:
    matrix:
      model: ${{models}}
      bench: ${{bench}}
    cmd: idiombench score ${{item.bench}} --model ${{item.model}} --params params.yaml
    deps:
      - results/generations/${{item.model}}
      - data/processed/${{item.bench}}
{_lines(score_deps("${item.bench}"), 6)}
    params:
      - benchmarks.${{item.bench}}.score
      - benchmarks.${{item.bench}}.enabled
      - scoring
    outs:
      - results/scores/${{item.model}}/${{item.bench}}

  aggregate:
    matrix:
      model: ${{models}}
      bench: ${{bench}}
    cmd: idiombench aggregate ${{item.bench}} --model ${{item.model}} --params params.yaml
    deps:
      - results/scores/${{item.model}}/${{item.bench}}
      - data/processed/${{item.bench}}
    params:
      - benchmarks.${{item.bench}}.score
    # cached (not git-tracked: .gitignore ignores results/*), so `dvc push` / `dvc pull` carry them
    metrics:
      - results/metrics/${{item.bench}}/${{item.model}}.json

  track:
    matrix:
      model: ${{models}}
      bench: ${{bench}}
    cmd: idiombench track ${{item.bench}} --model ${{item.model}} --params params.yaml
    deps:
      - results/metrics/${{item.bench}}/${{item.model}}.json
      - results/scores/${{item.model}}/${{item.bench}}
    outs:
      - results/tracking/${{item.bench}}/${{item.model}}.json
{construct_stage}{attention_stage}
  # plot data for `dvc plots show` / `dvc plots diff` (the `plots:` section below), and the
  # headline metrics (one number per benchmark x model x setting) for `dvc exp show`
  plots:
    cmd: idiombench plot-data --params params.yaml
    deps:
      - results/metrics
    outs:
      - results/plots
    metrics:
      - results/headline.json

  report:
    cmd: idiombench report --params params.yaml
    deps:
      - results/metrics
      - results/tracking
      - results/scores
{construct_dep}{attention_dep}    params:
      - report
    outs:
      - reports/all_tables.pdf
      - reports/tables
      - reports/figures

# `dvc plots show` (HTML in dvc_plots/) and `dvc plots diff <rev>...` compare experiments.
# One file per model in each folder: every model x setting is a curve of its own.
plots:
{plots_section()}
"""
