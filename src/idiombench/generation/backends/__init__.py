"""Generation backends: one module per backend, each implementing `types.Backend`.

Backends whose libraries are optional (vllm) import them lazily, in their constructor,
so importing this package never needs them."""
