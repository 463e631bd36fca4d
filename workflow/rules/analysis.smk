# attention: a model's recorded generations -> results/analysis/<benchmark>/attention/<model>/
# (benchmarks with attention diagnostics; the model's weights in transformers with eager attention:
# hf or vllm backend).
# A model that is not measured (another backend, not in the benchmark's attention.models, or
# attention.enabled false) records "skipped" with the reason, so the grid stays static.
def annotation_file(benchmark):
    """The benchmark's configured label file, besides dvc.yaml's data/annotations directory:
    Snakemake dates a directory by its own mtime, which an edit inside it does not change."""
    path = PARAMS_DUMP["benchmarks"][benchmark].get("attention", {}).get("annotations")
    return [path] if path else []


rule attention:
    input:
        lambda wc: dag.snakemake_inputs(dag.attention_deps(benchmark=wc.benchmark, model=wc.model)) + annotation_file(wc.benchmark),
    output:
        directory("results/analysis/{benchmark}/attention/{model}"),
    wildcard_constraints:
        benchmark="|".join(ATTENTION_NAMES) or "(?!)",
    params:
        attention=lambda wc: json.dumps(
            {key: PARAMS_DUMP["benchmarks"][wc.benchmark][key] for key in ("attention", "score", "enabled")}
            | {"model": PARAMS_DUMP["models"][wc.model]},
            sort_keys=True, ensure_ascii=False,
        ),
    # A model on the CPU runs torch on every core, as its generate job does.
    threads: lambda wc: all_cores() if cpu_model(wc.model) else 1
    resources:
        gpu=lambda wc: min(P.models[wc.model].gpus, 1) if P.models[wc.model].backend in ("hf", "vllm") else 0,
    shell:
        "{CLI} attention {wildcards.benchmark:q} --model {wildcards.model:q} --params {PARAMS_FILE:q}"
