"""Layer 1, core: errors, paths, atomic I/O, the items schema, the params base model,
parsing, credentials scrubbing, progress, hardware, environment, value types. Imports no
other folder of the package (docs/ARCHITECTURE.md, "Layers")."""
