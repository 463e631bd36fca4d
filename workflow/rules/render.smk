# render: data/processed/<benchmark>/ (+ the benchmark's templates) -> results/prompts/<benchmark>/
#         one <setting>.parquet per rendered setting + render_stats.json


rule render:
    input:
        "data/processed/{benchmark}",
        # the package, and its prompts/ folder or SemanticQA's acquired release (its templates)
        lambda wc: dag.snakemake_inputs([NODES[wc.benchmark].package, NODES[wc.benchmark].templates]),
    output:
        directory("results/prompts/{benchmark}"),
    params:
        render=lambda wc: section("benchmarks", wc.benchmark, "render"),
        enabled=lambda wc: section("benchmarks", wc.benchmark, "enabled"),
        # generate.extra where the option-order pass's rotations are rendered (not the rest of generate)
        rotations=lambda wc: section("benchmarks", wc.benchmark, *NODES[wc.benchmark].render_generate_params.split(".")),
    shell:
        "{CLI} render {wildcards.benchmark:q} --params {PARAMS_FILE:q}"
