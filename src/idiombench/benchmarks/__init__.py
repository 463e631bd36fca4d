"""The benchmarks: the contract every benchmark meets (base.py, contexts.py), one package per
built-in benchmark, and the registry that lists them (registry.py)."""
