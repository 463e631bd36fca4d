"""MLflow tracking: one experiment per benchmark, one run per (model, setting)."""
