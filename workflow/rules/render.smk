# render: data/processed/<benchmark>/ (+ the benchmark's templates) -> results/prompts/<benchmark>/
#         one <setting>.parquet per rendered setting + render_stats.json


rule render:
    input:
        "data/processed/{benchmark}",
        lambda wc: f"src/idiombench/benchmarks/{MODULES[wc.benchmark]}",
        # the package's prompts/ folder, or SemanticQA's acquired release (its templates)
        lambda wc: template_dependency(wc.benchmark),
    output:
        directory("results/prompts/{benchmark}"),
    params:
        render=lambda wc: section("benchmarks", wc.benchmark, "render"),
        enabled=lambda wc: section("benchmarks", wc.benchmark, "enabled"),
    shell:
        "{CLI} render {wildcards.benchmark} {PARAMS_ARG}"
