# Shared definitions: the params file, the benchmark list and helpers.
import json

from idiombench.benchmarks import MODULES, NAMES as BENCHMARK_NAMES
from idiombench.config import load_params
from idiombench.evaluation import construction_benchmarks
from idiombench.render import template_dependency

PARAMS_FILE = config.get("params", "params.yaml")
P = load_params(PARAMS_FILE)
# Dumped with aliases so the keys read as in params.yaml.
PARAMS_DUMP = P.model_dump(mode="json", by_alias=True)
CLI = f"idiombench"
PARAMS_ARG = f"--params {PARAMS_FILE}"


# benchmarks whose own data-construction pipeline is rebuilt (G-IdiomAlign's gloss alignment)
CONSTRUCTION_NAMES = construction_benchmarks()


wildcard_constraints:
    benchmark="|".join(BENCHMARK_NAMES),


def section(*keys):
    """A params section as canonical JSON: listed in a rule's `params:` so that Snakemake
    reruns the rule when (and only when) that section changes."""
    value = PARAMS_DUMP
    for key in keys:
        value = value[key]
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def built_targets():
    return [f"data/processed/{b}" for b in BENCHMARK_NAMES]


def rendered_targets():
    return [f"results/prompts/{b}" for b in BENCHMARK_NAMES]
