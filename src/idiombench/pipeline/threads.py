"""The threads a Snakemake job that can use every core declares (workflow/rules/*.smk):
`threads: lambda wc: job_threads(workflow)` for a CPU model's generate, noise and attention
jobs and for the score jobs of benchmarks whose scoring runs worker processes.

The job's threads are what its process is given: Snakemake exports them as OMP_NUM_THREADS
to the job's shell, which sizes torch's thread pool and the score stage's worker processes
(core.workers.worker_count). Two executors, one rule:

- local (`snakemake --cores N`): every core Snakemake has, `workflow.cores` (scaled down by
  `--max-threads`; `--set-threads <rule>=K` replaces it). Snakemake runs jobs side by side
  only while their threads fit in N, so their workers never oversubscribe the cores.
- a cluster executor (Slurm): 1, unless the profile's `set-threads` says more. There is no
  `--cores` when the jobs are submitted (`workflow.cores` raises), and the same rule is
  evaluated again inside the job (`--cores all`: the node's CPUs, which may exceed the
  allocation); a value that differs there makes the job step ask srun for more CPUs than
  sbatch allocated. `set-threads` reaches the submission (sbatch --cpus-per-task), the job
  step (srun --cpus-per-task) and the job's shell (OMP_NUM_THREADS) alike.
"""

from __future__ import annotations

from typing import Protocol


class Workflow(Protocol):
    """What this reads of Snakemake's `workflow` object (snakemake.workflow.Workflow, untyped)."""

    @property
    def local_exec(self) -> bool: ...
    @property
    def remote_exec(self) -> bool: ...
    @property
    def cores(self) -> int: ...


def job_threads(workflow: Workflow) -> int:
    """All of Snakemake's cores for a job run by the local executor in the main process; 1
    under a cluster executor (at submission and inside the job alike: the profile's
    set-threads, which Snakemake passes to the job, replaces this)."""
    if workflow.local_exec and not workflow.remote_exec:
        return int(workflow.cores)
    return 1
