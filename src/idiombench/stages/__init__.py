"""Layer 6, the stage drivers: one module per stage (acquire and build live in data/ and
benchmarks/base.py), helpers of one stage named `<stage>_<what>`. Each reads its
inputs, calls the benchmark's hooks through the registry and writes its owned output."""
