# One record across Snakemake and DVC (idiombench.pipeline.dvc_sync explains the mechanism).
#
# DVC -> Snakemake, here at parse time (before Snakemake plans): outputs that `dvc repro`
# wrote get DVC's verdict in Snakemake's records: current in dvc.lock -> compared by mtime
# only; changed -> Snakemake's params trigger reruns them. So `snakemake -n` after
# `dvc repro` plans nothing, and a params edit after it still reruns what it invalidates.
# Snakemake -> DVC, in `onsuccess:` (Snakefile): `dvc commit -f` of exactly the stages
# made of this run's outputs, so `dvc status` is clean and `dvc repro` reruns only what a
# later edit invalidates. IDIOMBENCH_DVC_SYNC=0 turns both off.
import sys
from pathlib import Path

from idiombench.pipeline import dvc_sync

if workflow.is_main_process:
    try:
        for _line in dvc_sync.reconcile_snakemake_records(Path.cwd()).lines():
            print(_line, file=sys.stderr)
    except RuntimeError as _error:  # e.g. a `dvc repro` holds DVC's lock: plan with Snakemake's records
        print(f"dvc-sync: skipped, Snakemake plans from its own records: {_error}", file=sys.stderr)
