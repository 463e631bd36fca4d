# idiombench workflow. Rules only call the `idiombench` CLI with explicit paths;
# dvc.yaml describes the same stages (tests/integration/test_dag_sync.py keeps them in step).
#
#   snakemake --cores 8 --resources gpu=2                                # default target: reports/all_tables.pdf
#   snakemake reports/all_tables.pdf --cores 8 --resources gpu=2         # a target: before --resources (it takes a list)
#   snakemake --cores 2 --config params=overlays/paper.yaml              # another params file (an overlay)
#   snakemake --workflow-profile workflow/profiles/paper                 # the paper profile (sets that params file)
#
# The grid comes from params.yaml, loaded through idiombench's schema (not a bare
# `configfile:`), so Snakemake and the CLI see the same validated, defaulted values; bad
# params stop the parse with one line. Every value a rule puts into a command is quoted (:q).

import sys

include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/render.smk"
include: "workflow/rules/generate.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/dvc_sync.smk"


onstart:
    from idiombench.generation.gpus import gpu_oversubscription_warning

    # Only when a gpu resource is given: discovering devices may call nvidia-smi.
    _gpus = workflow.global_resources.get("gpu")
    _gpus = int(getattr(_gpus, "value", _gpus) or 0)  # a Resource in Snakemake 9, an int before
    _warning = gpu_oversubscription_warning(_gpus) if _gpus else None
    if _warning:
        print(_warning, file=sys.stderr)


onsuccess:
    # Snakemake -> DVC: record in dvc.lock the stages made of this run's outputs (every job
    # in the DAG is current after a successful run), so `dvc status` is clean afterwards;
    # only those that ran with params.yaml's values (DVC reads params.yaml): with another
    # params file, the others are left out and named. A failure here leaves dvc.lock as it
    # was (DVC would rerun those stages once); the Snakemake run itself succeeded, so it is
    # reported, not raised.
    try:
        _report = dvc_sync.record_snakemake_run(Path.cwd(), dvc_sync.dag_outputs(workflow), PARAMS_FILE, PARAMS_RAW)
        for _line in _report.lines():
            print(_line, file=sys.stderr)
    except RuntimeError as _error:
        print(f"dvc-sync: dvc.lock not updated (`dvc commit -f <stages>` records them): {_error}", file=sys.stderr)


rule all:
    default_target: True
    input:
        "reports/all_tables.pdf",
        "results/plots",
        "results/headline.json",
