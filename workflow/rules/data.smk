# acquire: release files -> data/raw/<benchmark>/ (sha256-checked)
# build:   data/raw/<benchmark>/ -> data/processed/<benchmark>/<task>.parquet + build_stats.json

# acquire runs where Snakemake runs (on a cluster: the login node), not as a cluster job:
# compute nodes often have no internet access, and copying from the mirror is light.
localrules:
    acquire,


rule acquire:
    input:
        lambda wc: f"{NODES[wc.benchmark].package}/files.json",
    output:
        directory("data/raw/{benchmark}"),
    params:
        data=lambda wc: section("data"),
    shell:
        "{CLI} acquire {wildcards.benchmark:q} --params {PARAMS_FILE:q}"


rule build:
    input:
        "data/raw/{benchmark}",
        lambda wc: dag.snakemake_inputs([NODES[wc.benchmark].package]),
    output:
        directory("data/processed/{benchmark}"),
    params:
        build=lambda wc: section("benchmarks", wc.benchmark, "build"),
    shell:
        "{CLI} build {wildcards.benchmark:q} --params {PARAMS_FILE:q}"
