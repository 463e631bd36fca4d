# code:    a built-in benchmark's code -> results/code/<benchmark>/{data,package}.json (its records)
# plugin:  a plugin's code and params -> its records + results/params/<benchmark>.json (DVC's params)
# acquire: release files -> data/raw/<benchmark>/ (sha256-checked)
# build:   data/raw/<benchmark>/ -> data/processed/<benchmark>/<task>.parquet + build_stats.json

# acquire runs where Snakemake runs (on a cluster: the login node), not as a cluster job:
# compute nodes often have no internet access, and copying from the mirror is light.
localrules:
    acquire,
    code,
    plugin,


# The records are brought in step when the Snakefile is parsed (common.smk), so these rules run
# only where a record is missing; they have no inputs, so Snakemake never dates them older than
# the code (dvc.yaml's code@<b> lists the package folder: DVC hashes it).
rule code:
    output:
        "results/code/{benchmark}/data.json",
        "results/code/{benchmark}/package.json",
    wildcard_constraints:
        benchmark="|".join(map(re.escape, BUILTIN_NAMES)),
    shell:
        "{CLI} code-record {wildcards.benchmark:q} --params params.yaml"


rule plugin:
    output:
        "results/code/{benchmark}/data.json",
        "results/code/{benchmark}/package.json",
        "results/params/{benchmark}.json",
    wildcard_constraints:
        benchmark="|".join(map(re.escape, PLUGIN_NAMES)) or "(?!)",
    shell:
        "{CLI} code-record {wildcards.benchmark:q} --params params.yaml"


rule acquire:
    input:
        lambda wc: NODES[wc.benchmark].files,
    output:
        directory("data/raw/{benchmark}"),
    params:
        data=lambda wc: section("data"),
    shell:
        "{CLI} acquire {wildcards.benchmark:q} --params {PARAMS_FILE:q}"


rule build:
    input:
        lambda wc: dag.build_deps(wc.benchmark),
    output:
        directory("data/processed/{benchmark}"),
    params:
        build=lambda wc: section("benchmarks", wc.benchmark, "build"),
    shell:
        "{CLI} build {wildcards.benchmark:q} --params {PARAMS_FILE:q}"
