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
        # the option-order pass (generate.extra.<pass>.rotate_options) has its rotations rendered
        generate=lambda wc: section("benchmarks", wc.benchmark, "generate"),
    shell:
        "{CLI} render {wildcards.benchmark:q} --params {PARAMS_FILE:q}"
