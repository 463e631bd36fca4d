# generate: results/prompts/<benchmark>/ x model -> results/generations/<model>/
# One job per model serves every benchmark and setting (weights loaded once). The job
# claims `gpus` free device ids itself (Snakemake assigns none locally) and sets
# CUDA_VISIBLE_DEVICES, so `--resources gpu=2` runs two 1-GPU models side by side.
# On Slurm (workflow/profiles/slurm) `gpu` becomes `sbatch --gpus=N` (no GPUs when 0): Slurm
# grants the devices and sets CUDA_VISIBLE_DEVICES, and the claim takes exactly those.
# Under Snakemake a job whose GPUs are busy queues (IDIOMBENCH_GPU_QUEUE=1, set in
# common.smk) and names the holder; the Snakefile warns when --resources gpu=N exceeds the
# GPUs present.
# The generation cache (results/cache/<model>/) is not a declared output: it survives
# the deletion of outputs before a rerun, so reruns and resumed runs are free.
rule generate:
    input:
        dag.generate_deps(),
    output:
        directory("results/generations/{model}"),
    params:
        model=lambda wc: section("models", wc.model),
        seed=lambda wc: section("seed"),
        benchmarks=lambda wc: generate_params(),
    # A model on the CPU (hf without GPUs) uses every core through torch: it takes all of
    # them, so Snakemake does not run scoring jobs beside it on oversubscribed cores.
    threads: lambda wc: all_cores() if P.models[wc.model].backend == "hf" and P.models[wc.model].gpus == 0 else 1
    resources:
        gpu=lambda wc: P.models[wc.model].gpus,
    shell:
        "{CLI} generate --model {wildcards.model:q} --params {PARAMS_FILE:q}"


# noise: a seeded sample of every benchmark generated again under each perturbation of the
# model's serving settings (params serving_noise), scored by the benchmark's scorer ->
# results/noise/<model>/ (figures.json). Its requests go through the same cache as generate's,
# each under its perturbed identity, so a rerun generates nothing. A model without weights
# records "skipped" with the reason.
rule noise:
    input:
        lambda wc: dag.snakemake_inputs(dag.noise_deps(wc.model, scores_by_benchmark=True)),
    output:
        directory("results/noise/{model}"),
    params:
        model=lambda wc: section("models", wc.model),
        noise=lambda wc: noise_params(),
    threads: lambda wc: all_cores() if cpu_model(wc.model) else 1
    resources:
        gpu=lambda wc: P.models[wc.model].gpus if P.models[wc.model].backend in ("hf", "vllm") else 0,
    shell:
        "{CLI} noise --model {wildcards.model:q} --params {PARAMS_FILE:q}"
