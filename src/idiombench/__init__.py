"""idiombench: a reproducible experiment DAG for idiom and multiword-expression benchmarks."""

__version__ = "0.1.0"
