"""The threads a job that uses every core declares (pipeline/threads.py), in each place
Snakemake evaluates a rule: the main process of a local run (all of --cores), the main process
of a Slurm run (jobs are submitted: no --cores, and workflow.cores raises), and inside a Slurm
job (--cores all: the node's CPUs). Under Slurm both give the same value, so the job step
never asks srun for more CPUs than sbatch allocated; the profile's set-threads replaces it
everywhere. Real Snakemake runs: tests/integration/test_score_threads.py (local) and
tests/integration/test_slurm.py (Slurm)."""

from __future__ import annotations

from dataclasses import dataclass

from idiombench.pipeline.threads import job_threads


@dataclass
class Workflow:
    local_exec: bool
    remote_exec: bool
    _cores: int | None

    @property
    def cores(self) -> int:
        if self._cores is None:  # as snakemake.workflow.Workflow.cores
            raise RuntimeError("Workflow requires a total number of cores to be defined")
        return self._cores


def test_a_local_run_gives_the_job_every_core_snakemake_has():
    assert job_threads(Workflow(local_exec=True, remote_exec=False, _cores=8)) == 8
    assert job_threads(Workflow(local_exec=True, remote_exec=False, _cores=1)) == 1


def test_slurm_submission_and_the_job_agree_without_reading_the_cores():
    submitting = Workflow(local_exec=False, remote_exec=False, _cores=None)  # `executor: slurm`
    job_step = Workflow(local_exec=False, remote_exec=True, _cores=2)  # the jobstep executor, --cores all
    inner = Workflow(local_exec=True, remote_exec=True, _cores=64)  # the job's own snakemake, a big node
    assert job_threads(submitting) == job_threads(job_step) == job_threads(inner) == 1
