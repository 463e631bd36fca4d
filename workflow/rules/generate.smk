# generate: results/prompts/<benchmark>/ x model -> results/generations/<model>/
# One job per model serves every benchmark and setting (weights loaded once). The job
# claims `gpus` free device ids itself (Snakemake assigns none locally) and sets
# CUDA_VISIBLE_DEVICES, so `--resources gpu=2` runs two 1-GPU models side by side.
# Under Snakemake a job whose GPUs are busy queues (IDIOMBENCH_GPU_QUEUE=1, inherited by
# the jobs; the command stays dvc.yaml's) and names the holder, instead of failing as a
# standalone `idiombench generate` does; the Snakefile warns when --resources gpu=N
# exceeds the GPUs present.
# The generation cache (results/cache/<model>/) is not a declared output: it survives
# the deletion of outputs before a rerun, so reruns and resumed runs are free.
import os
import re

os.environ["IDIOMBENCH_GPU_QUEUE"] = "1"

MODEL_NAMES = list(P.models)


wildcard_constraints:
    model="|".join(re.escape(name) for name in MODEL_NAMES) or "(?!)",


def generate_inputs():
    # Every benchmark, as in dvc.yaml (which cannot filter by `enabled`); the command
    # reads only the enabled ones the model runs.
    return [f"results/prompts/{b}" for b in BENCHMARK_NAMES] + [f"data/processed/{b}" for b in BENCHMARK_NAMES]


def generate_params():
    """The params sections generate reads, as listed in dvc.yaml's generate stage."""
    return json.dumps(
        {b: {key: PARAMS_DUMP["benchmarks"][b][key] for key in ("enabled", "generate")} for b in BENCHMARK_NAMES},
        sort_keys=True, ensure_ascii=False,
    )


def generated_targets():
    return [f"results/generations/{name}" for name in MODEL_NAMES]


rule generate:
    input:
        generate_inputs(),
    output:
        directory("results/generations/{model}"),
    params:
        model=lambda wc: section("models", wc.model),
        seed=lambda wc: section("seed"),
        benchmarks=lambda wc: generate_params(),
    # A model on the CPU (hf without GPUs) uses every core through torch: it takes all of
    # them, so Snakemake does not run scoring jobs beside it on oversubscribed cores.
    threads: lambda wc: workflow.cores if P.models[wc.model].backend == "hf" and P.models[wc.model].gpus == 0 else 1
    resources:
        gpu=lambda wc: P.models[wc.model].gpus,
    shell:
        "{CLI} generate --model {wildcards.model} {PARAMS_ARG}"
