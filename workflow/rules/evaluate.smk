# score:     results/generations/<model>/ -> results/scores/<model>/<benchmark>/<setting>.parquet
# aggregate: per-item scores -> results/metrics/<benchmark>/<model>.json (DVC metrics)
# track:     metrics + artifacts -> MLflow runs (one per model x setting), record in results/tracking/
# construct: a benchmark's own construction pipeline -> results/construction/<benchmark>/
# plots:     every metrics file -> results/plots/ (per-pattern Recovery, Acc@t; `dvc plots show`)
#            and results/headline.json (headline metrics; `dvc exp show`)
# report:    every metrics file -> reports/all_tables.pdf, reports/tables/, reports/figures/
# A (model, benchmark) pair that does not apply (benchmark disabled, or not in the model's
# `benchmarks:` list) still has its jobs: they record "skipped" with the reason.


# A score job asks for one GPU when the scorer roles run on CUDA (params `scoring.device:
# cuda`), else none (`auto` finds no GPU in a job that was granted none): on Slurm that is
# `sbatch --gpus=1` or a CPU job; locally it counts against `--resources gpu=N`.
# Its threads: every core Snakemake gives it where the benchmark's scoring runs worker processes
# for these params (OrderProbe's lexical terms, on a first setting of 2,000 rows or more), else 1.
# The job starts one worker per thread granted (Snakemake exports them as OMP_NUM_THREADS;
# core.workers.worker_count), so score jobs side by side never oversubscribe the cores:
# `--set-threads score=1` runs two at once, one worker each. On Slurm the profile's set-threads is
# what sbatch asks for (pipeline/threads.py).
rule score:
    input:
        "results/generations/{model}",
        "data/processed/{benchmark}",
        lambda wc: dag.snakemake_inputs(dag.score_deps(wc.benchmark)),
    output:
        directory("results/scores/{model}/{benchmark}"),
    params:
        score=lambda wc: stage_params(wc.benchmark, "score"),
    threads: lambda wc: all_cores() if SCORE_WORKERS[wc.benchmark] else 1
    resources:
        gpu=SCORE_GPUS,
    shell:
        "{CLI} score {wildcards.benchmark:q} --model {wildcards.model:q} --params {PARAMS_FILE:q}"


rule aggregate:
    input:
        lambda wc: dag.aggregate_deps(benchmark=wc.benchmark, model=wc.model),
    output:
        "results/metrics/{benchmark}/{model}.json",
    params:
        score=lambda wc: section("benchmarks", wc.benchmark, "score"),
    shell:
        "{CLI} aggregate {wildcards.benchmark:q} --model {wildcards.model:q} --params {PARAMS_FILE:q}"


rule track:
    input:
        lambda wc: dag.track_deps(benchmark=wc.benchmark, model=wc.model),
    output:
        "results/tracking/{benchmark}/{model}.json",
    params:
        tracking=lambda wc: section("tracking"),
    shell:
        "{CLI} track {wildcards.benchmark:q} --model {wildcards.model:q} --params {PARAMS_FILE:q}"


rule track_comparison:
    input:
        lambda wc: comparison_inputs(wc.benchmark),
    output:
        "results/comparison/{benchmark}.json",
    params:
        models=section("models"),  # the models compared (dvc.yaml's track-comparison stage lists them)
        uncertainty=section("report", "uncertainty"),
    shell:
        "{CLI} track-comparison {wildcards.benchmark:q} --params {PARAMS_FILE:q}"


rule construct:
    input:
        lambda wc: dag.snakemake_inputs(dag.construct_deps(NODES[wc.benchmark])),
    output:
        directory("results/construction/{benchmark}"),
    wildcard_constraints:
        benchmark="|".join(CONSTRUCTION_NAMES),
    params:
        construct=lambda wc: stage_params(wc.benchmark, "construct"),
    shell:
        "{CLI} construct {wildcards.benchmark:q} --params {PARAMS_FILE:q}"


rule report:
    input:
        metrics_targets(),
        tracking_targets(),
        comparison_targets(),
        score_targets(),
        noise_targets(),
        generated_targets(),
        construction_targets(),
        analysis_targets(),
    output:
        "reports/all_tables.pdf",
        directory("reports/tables"),
        directory("reports/figures"),
    params:
        report=section("report"),  # the intervals and tests (dvc.yaml's report stage lists it too)
    shell:
        "{CLI} report --params {PARAMS_FILE:q}"


rule plots:
    input:
        metrics_targets(),
    output:
        directory("results/plots"),
        "results/headline.json",
    shell:
        "{CLI} plot-data --params {PARAMS_FILE:q}"
