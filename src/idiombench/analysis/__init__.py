"""Optional analysis stages that look inside a model (attention diagnostics), beside the
score -> aggregate path. Benchmarks opt in through hooks on benchmarks.base.Benchmark."""
