# Every helper the rules use: the params file, the grid, and each stage's inputs and params.
# The inputs come from idiombench.pipeline.dag, which also writes dvc.yaml (`idiombench dvc-yaml`),
# so both graphs have one source.
import json
import os
import re
import sys
from pathlib import Path

from idiombench.benchmarks.registry import NAMES as BENCHMARK_NAMES, get_benchmark
from idiombench.pipeline.config import load_params
from idiombench.core.errors import IdiombenchError
from idiombench.params.overlay import read_params_raw
from idiombench.pipeline import dag
from idiombench.pipeline import records as code_records
from idiombench.pipeline.threads import job_threads

# Any path (`--config params=...`): the rules quote it (`{PARAMS_FILE:q}`), as every value
# they put in a command (wildcards are names the params schema validated, quoted all the same).
PARAMS_FILE = str(config.get("params", "params.yaml"))
try:
    P = load_params(PARAMS_FILE)
    # the values this run reads (an overlay merged onto its base): the sync to DVC in onsuccess
    # records only the stages that ran with params.yaml's values (idiombench.pipeline.dvc_sync)
    PARAMS_RAW = read_params_raw(PARAMS_FILE)
except IdiombenchError as _error:  # bad params: one line and exit 2, as the CLI says it
    print(f"error: {' '.join(str(_error).split())}", file=sys.stderr)
    sys.exit(2)
# Dumped with aliases so the keys read as in params.yaml.
PARAMS_DUMP = P.model_dump(mode="json", by_alias=True)
CLI = "idiombench"

MODEL_NAMES = list(P.models)
# GPUs of a score job: one when the scorer roles run on CUDA (workflow/rules/evaluate.smk)
SCORE_GPUS = 1 if P.scoring.device == "cuda" else 0
NODES = {node.name: node for node in dag.benchmark_nodes()}
BUILTIN_NAMES = [name for name, node in NODES.items() if node.builtin]
PLUGIN_NAMES = [name for name, node in NODES.items() if not node.builtin]
# benchmarks whose own data-construction pipeline is rebuilt (G-IdiomAlign's gloss alignment)
CONSTRUCTION_NAMES = [name for name, node in NODES.items() if node.constructs]
# benchmarks with attention diagnostics (an attention job per model; G-IdiomAlign)
ATTENTION_NAMES = [name for name, node in NODES.items() if node.attention]
# benchmarks whose score jobs run worker processes with these params (their threads: all cores)
SCORE_WORKERS = {name: get_benchmark(name).score_workers_for(P.benchmark(name)) for name in BENCHMARK_NAMES}

# The records of every benchmark's code (results/code/<benchmark>/: what its stages depend on in
# both graphs, pipeline/records.py), brought in step now, before Snakemake dates its inputs: a
# record is rewritten only when the code it covers changed, so editing a benchmark's scoring code
# reruns its score jobs and not its build, nor (through the prompts' times) any generate job.
# With a plugin, also its params section with its defaults, from params.yaml: what DVC reads.
if workflow.is_main_process:
    try:
        _dvc_params = None
        if PLUGIN_NAMES and Path("params.yaml").is_file():
            _same = Path(PARAMS_FILE).resolve() == Path("params.yaml").resolve()
            _dvc_params = P if _same else load_params("params.yaml")
        code_records.refresh(Path.cwd(), _dvc_params)
    except IdiombenchError as _error:
        print(f"error: {' '.join(str(_error).split())}", file=sys.stderr)
        sys.exit(2)

# Under Snakemake a generate job whose GPUs are busy queues and names the holder, instead of
# failing as a standalone `idiombench generate` does (inherited by the jobs; the command
# stays dvc.yaml's).
os.environ["IDIOMBENCH_GPU_QUEUE"] = "1"


wildcard_constraints:
    benchmark="|".join(BENCHMARK_NAMES),
    model="|".join(re.escape(name) for name in MODEL_NAMES) or "(?!)",


def cpu_model(model):
    """A model that computes on the CPU (hf or vLLM without GPUs): torch on every core it is given."""
    return P.models[model].backend in ("hf", "vllm") and P.models[model].gpus == 0


def all_cores():
    """The threads of a job that uses every core it is given: all of --cores locally; 1 under
    the Slurm executor unless the profile's set-threads says more (pipeline/threads.py). Never
    workflow.cores directly: it raises when Slurm jobs are submitted (no --cores there)."""
    return job_threads(workflow)


def section(*keys):
    """A params section as canonical JSON: listed in a rule's `params:` so that Snakemake
    reruns the rule when (and only when) that section changes."""
    value = PARAMS_DUMP
    for key in keys:
        value = value[key]
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def stage_params(benchmark, key):
    """The params a benchmark stage reads (its section `key`, `enabled` and the scorer roles),
    as listed in that stage of dvc.yaml."""
    return json.dumps(
        {key: PARAMS_DUMP["benchmarks"][benchmark][key],
         "enabled": PARAMS_DUMP["benchmarks"][benchmark]["enabled"],
         "scoring": PARAMS_DUMP["scoring"]},
        sort_keys=True, ensure_ascii=False,
    )


def generate_params():
    """The params sections generate reads, as listed in dvc.yaml's generate stage."""
    return json.dumps(
        {b: {key: PARAMS_DUMP["benchmarks"][b][key] for key in ("enabled", "generate")} for b in BENCHMARK_NAMES},
        sort_keys=True, ensure_ascii=False,
    )


def noise_params():
    """The params sections a noise job reads besides the model's own (dvc.yaml's noise stage)."""
    return json.dumps(
        {"seed": PARAMS_DUMP["seed"], "serving_noise": PARAMS_DUMP["serving_noise"], "report": PARAMS_DUMP["report"],
         "scoring": PARAMS_DUMP["scoring"],
         "benchmarks": {b: {key: PARAMS_DUMP["benchmarks"][b][key] for key in ("enabled", "generate", "score")}
                        for b in BENCHMARK_NAMES}},
        sort_keys=True, ensure_ascii=False,
    )


def noise_targets():
    return [f"results/noise/{name}" for name in MODEL_NAMES]


def built_targets():
    return [f"data/processed/{b}" for b in BENCHMARK_NAMES]


def rendered_targets():
    return [f"results/prompts/{b}" for b in BENCHMARK_NAMES]


def generated_targets():
    return [f"results/generations/{name}" for name in MODEL_NAMES]


def metrics_targets():
    return [f"results/metrics/{b}/{m}.json" for b in BENCHMARK_NAMES for m in MODEL_NAMES]


def tracking_targets():
    return [f"results/tracking/{b}/{m}.json" for b in BENCHMARK_NAMES for m in MODEL_NAMES]


def comparison_targets():
    return [f"results/comparison/{b}.json" for b in BENCHMARK_NAMES]


def comparison_inputs(benchmark):
    """dag.comparison_deps with DVC's folders as their outputs: every model's metrics and
    tracking record of the benchmark."""
    return [f"results/{kind}/{benchmark}/{m}.json" for kind in ("metrics", "tracking") for m in MODEL_NAMES]


def construction_targets():
    return [f"results/construction/{b}" for b in CONSTRUCTION_NAMES]


def score_targets():
    return [f"results/scores/{m}/{b}" for b in BENCHMARK_NAMES for m in MODEL_NAMES]


def analysis_targets():
    return [f"results/analysis/{b}/attention/{m}" for b in ATTENTION_NAMES for m in MODEL_NAMES]
