# render: data/processed/<benchmark>/ (+ the benchmark's templates) -> results/prompts/<benchmark>/
#         one <setting>.parquet per rendered setting + render_stats.json


rule render:
    input:
        # the items, the data part of the benchmark's code (its record), and the templates: the
        # package's prompts/ folder, SemanticQA's acquired release, or a plugin's data record
        lambda wc: dag.snakemake_inputs(dag.render_deps(NODES[wc.benchmark])),
    output:
        directory("results/prompts/{benchmark}"),
    params:
        render=lambda wc: section("benchmarks", wc.benchmark, "render"),
        enabled=lambda wc: section("benchmarks", wc.benchmark, "enabled"),
        # generate.extra where the option-order pass's rotations are rendered (not the rest of generate)
        rotations=lambda wc: section("benchmarks", wc.benchmark, *NODES[wc.benchmark].render_generate_params.split(".")),
    shell:
        "{CLI} render {wildcards.benchmark:q} --params {PARAMS_FILE:q}"
