"""Layer 3b: params.yaml's generic schema (every section but the benchmarks' own) and the
overlay reader. Below the contract: every stage is typed with `params.schema.Params`."""
