"""Layer 7, the pipeline: the params schema with the registered benchmarks' sections,
the DAG (each stage's inputs, dvc.yaml) and the record shared by Snakemake and DVC."""
