"""Snakemake on a real Slurm cluster (issue 15): a single-node cluster from Debian's packages
(tests/support/slurm_cluster.py: munged, MariaDB + slurmdbd for sacct, slurmctld, slurmd with
two fake GPUs as GRES) runs the embedded default's DAG on a small sample through
`snakemake --workflow-profile workflow/profiles/slurm` (Snakemake's Slurm executor plugin).

Checked: every job but the local `acquire` went through sbatch (sacct lists one COMPLETED
job per rule and wildcards), the report's tables equal a local run's, generate jobs ask
Slurm for their model's GPUs (`--gpus=fake:1` -> gres/gpu in sacct's ReqTRES; none for a
gpus: 0 model) and claim exactly the device Slurm granted (CUDA_VISIBLE_DEVICES), one log
per job, the track jobs log to an `mlflow server` whose artifacts go to its
--artifacts-destination, and after `dvc push` to a local-path remote a second clone pulls
the results and has nothing to run.

The reference models `oracle` and `echo` stand in for SmolLM2 (its generate job alone takes
minutes on 2 CPU cores); `oracle` gets `gpus: 1`, which for the reference backends only
means claiming a device. Skipped, with the reason, where the cluster cannot start (not root,
`make slurm` not run: no slurm-wlm/slurmdbd/munge/mariadb or no executor plugin)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from helpers import mlflow_server, run, tool_env
from idiombench.benchmarks.registry import NAMES, attention_names
from idiombench.core.workers import usable_cores

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "support"))
from slurm_cluster import GPU_TYPE, PARTITION, ClusterUnavailable, SlurmCluster  # noqa: E402

pytestmark = [pytest.mark.mirror, pytest.mark.slow]

MODELS = {"oracle": 1, "echo": 0}  # model -> gpus
SACCT_FORMAT = "JobID,State,ExitCode,Partition,ReqTRES%60,Comment%70,ReqCPUS"
# The score jobs' threads in the fitted profile: echo's OrderProbe job (its lexical terms run a
# worker process per thread) as many as the node has, up to 2, so that a job asks sbatch and srun
# for more than one CPU, where the rules' own threads (1 under Slurm) and the job step must agree;
# every other score job 1, so that two run at a time on the node as before.
NODE_CPUS = usable_cores()  # the CPUs a job may run on: this machine's (the test node; no task affinity)
WIDE_MODEL, WIDE_THREADS = "echo", min(2, NODE_CPUS)
WIDE_SCORE = f"{WIDE_MODEL}_orderprobe"  # <model>_<benchmark>, as in the job's sacct comment


@pytest.fixture(scope="module")
def slurm(tmp_path_factory: pytest.TempPathFactory):
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        pytest.skip(f"Snakemake's Slurm executor plugin is not installed in {sys.prefix} (run `make slurm`)")
    cluster = SlurmCluster(tmp_path_factory.mktemp("slurm"))
    try:
        cluster.start()
    except ClusterUnavailable as error:
        pytest.skip(f"no single-node Slurm cluster here: {error}" + ("" if "`" in str(error) else " (`make slurm`)"))
    try:
        yield cluster
    finally:
        cluster.stop()


def wait_for_jobs(cluster: SlurmCluster, job_ids: list[str], timeout_s: float = 120) -> dict[str, str]:
    """Job id -> final state, from sacct, once every job has ended."""
    deadline = time.monotonic() + timeout_s
    while True:
        out = cluster.run("sacct", "-X", "-n", "-P", "-o", "JobID,State", "-j", ",".join(job_ids)).stdout
        states = dict(line.split("|", 1) for line in out.split())
        if len(states) == len(job_ids) and all(s not in ("PENDING", "RUNNING", "REQUEUED") for s in states.values()):
            return states
        assert time.monotonic() < deadline, f"jobs still running after {timeout_s:.0f} s: {states}"
        time.sleep(1)


CLAIM = """
import json, os, sys, time
from idiombench.generation.gpus import claim_gpus, default_lock_dir
granted = os.environ.get("CUDA_VISIBLE_DEVICES")
with claim_gpus(int(sys.argv[1]), who=sys.argv[2]) as ids:
    print(json.dumps({"granted": granted, "claimed": ids, "locks": str(default_lock_dir())}), flush=True)
    time.sleep(4)
"""


def test_gpu_claims_take_the_gpus_slurm_grants(slurm: SlurmCluster, tmp_path: Path):
    """Three jobs ask Slurm for GPUs (1, 1, 2): Slurm sets CUDA_VISIBLE_DEVICES in each, and
    claim_gpus takes exactly those devices; the two 1-GPU jobs run at once on different GPUs."""
    env = {**tool_env(), "PYTHONPATH": str(ROOT / "src")}
    for key in ("CUDA_VISIBLE_DEVICES", "IDIOMBENCH_GPUS", "IDIOMBENCH_GPU_LOCK_DIR"):
        env.pop(key, None)
    env["TMPDIR"] = str(tmp_path)  # the jobs' temp dir: their lock directories go there
    script = tmp_path / "claim.py"
    script.write_text(CLAIM, encoding="utf-8")
    jobs = {}
    for name, gpus in (("a", 1), ("b", 1), ("both", 2)):
        out = subprocess.run(
            [
                "sbatch",
                "--parsable",
                f"--gpus={GPU_TYPE}:{gpus}",
                "--mem=500",
                "-o",
                str(tmp_path / f"{name}.out"),
                "--wrap",
                f"{sys.executable} {script} {gpus} {name}",
            ],
            env=slurm.env_over(env),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr
        jobs[name] = out.stdout.strip()
    states = wait_for_jobs(slurm, list(jobs.values()))
    assert set(states.values()) == {"COMPLETED"}, states
    seen = {name: json.loads((tmp_path / f"{name}.out").read_text().strip().splitlines()[-1]) for name in jobs}
    for name, record in seen.items():
        assert record["claimed"] == record["granted"].split(","), record  # the claim is Slurm's grant
        assert record["locks"] == str(tmp_path / f"idiombench-gpu-locks-slurm-{jobs[name]}")
    assert {seen["a"]["granted"], seen["b"]["granted"]} == {"0", "1"}
    assert seen["both"]["claimed"] == ["0", "1"]
    req = slurm.run("sacct", "-X", "-n", "-P", "-o", "JobID,ReqTRES", "-j", ",".join(jobs.values())).stdout
    assert req.count("gres/gpu=1") == 2 and req.count("gres/gpu=2") == 1, req


def sample(params: dict) -> dict:
    """The embedded default on a small sample, with the reference models only."""
    params["models"] = {name: {**params["models"][name], "gpus": gpus} for name, gpus in MODELS.items()}
    bench = params["benchmarks"]
    bench["orderprobe"]["build"]["languages"] = ["zh-CN", "ko"]
    bench["g-idiomalign"]["render"]["settings"] = ["mcq", "no_gloss"]
    bench["g-idiomalign"]["construct"]["pairs"] = ["French_Japanese"]
    bench["semanticqa"]["render"]["settings"] = ["0-shot"]
    bench["semanticqa"]["render"]["sample"]["items_per_task"] = 1
    bench["chengyu-bench"]["render"]["sample"]["items_per_task"] = 2
    return params


def fitted_profile(dest: Path, cluster: SlurmCluster) -> dict:
    """workflow/profiles/slurm with the lines it marks "cluster:" filled in for the test cluster
    (partition, GPU type) and memory/CPUs cut to its one small node; the rest as shipped."""
    profile = yaml.safe_load((ROOT / "workflow/profiles/slurm/config.yaml").read_text(encoding="utf-8"))
    profile["default-resources"].update({"slurm_partition": PARTITION, "mem_mb": 1000})
    rules = profile["set-resources"]
    rules["generate"].update({"slurm_partition": PARTITION, "gpu_model": GPU_TYPE})
    # threads (CPUs per job) cut to the node, one score job's set by wildcards as a profile may
    profile["set-threads"] = {
        "generate": 1,
        "score": f"{WIDE_THREADS} if (wildcards.model, wildcards.benchmark) == ('{WIDE_MODEL}', 'orderprobe') else 1",
    }
    for resources in rules.values():
        if "mem_mb" in resources:
            resources["mem_mb"] = 1500
    dest.mkdir(parents=True)
    (dest / "config.yaml").write_text(yaml.safe_dump(profile, sort_keys=False), encoding="utf-8")
    return profile


def tables(project: Path) -> dict[str, bytes]:
    return {
        p.relative_to(project).as_posix(): p.read_bytes()
        for p in sorted((project / "reports/tables").rglob("*"))
        if p.is_file() and p.name != ".snakemake_timestamp"
    }


def rest(base: str, path: str, body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


@pytest.mark.timeout(2400)
def test_the_dag_runs_on_slurm_like_locally(
    slurm: SlurmCluster, make_project, rendered_project: tuple[Path, str], mirrors: list[Path], tmp_path: Path
):
    started = time.monotonic()
    base_env = {
        **tool_env(mirrors),
        "PYTHONPATH": os.pathsep.join(p for p in [str(ROOT / "src"), os.environ.get("PYTHONPATH", "")] if p),
    }
    for key in ("CUDA_VISIBLE_DEVICES", "IDIOMBENCH_GPUS", "IDIOMBENCH_GPU_LOCK_DIR", "MLFLOW_TRACKING_URI"):
        base_env.pop(key, None)
    # The Slurm run from a fresh project; the local run it is compared with from a copy of the
    # session's project after `dvc repro render` on the default params (shared with other tests):
    # locally Snakemake reruns only the data and prompt stages the sample changes (OrderProbe's
    # build, the renders) and takes DVC's word for the rest, which the same commands made.
    projects = {"slurm": make_project("slurm"), "local": rendered_project[0]}
    for project in projects.values():
        params = sample(yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8")))
        (project / "params.yaml").write_text(
            yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8"
        )
        run(["git", "commit", "-qam", "small sample, reference models"], project, base_env)

    slurm_s = run_on_slurm(slurm, projects["slurm"], base_env, tmp_path)
    slurm_done = time.monotonic()

    # The local run the Slurm run's tables are compared with (the default workflow profile; one
    # fake GPU for oracle's claim), after the Slurm run rather than beside it: beside it, its
    # jobs took the two cores from the Slurm jobs, and the executor's status checks back off
    # (10 s more after each check that finds no job finished), so the Slurm run waited longer.
    local = projects["local"]
    local_env = {
        **base_env,
        "IDIOMBENCH_GPUS": "0",
        "IDIOMBENCH_GPU_LOCK_DIR": str(tmp_path / "local-gpu-locks"),
        "MLFLOW_TRACKING_URI": f"sqlite:///{local / 'mlflow.db'}",
    }
    local_started = time.monotonic()
    run(["snakemake", "--cores", "2", "--resources", "gpu=1"], local, local_env, timeout=1800)
    print(
        f"\nSlurm run {slurm_s:.0f} s (with the projects, its checks, push and pull {slurm_done - started:.0f} s), "
        f"then the local run {time.monotonic() - local_started:.0f} s: {time.monotonic() - started:.0f} s in all"
    )
    assert tables(projects["slurm"]) == tables(local)


def run_on_slurm(slurm: SlurmCluster, project: Path, base_env: dict[str, str], tmp_path: Path) -> float:
    started = time.monotonic()
    # The Slurm run: the track jobs log to an MLflow server (artifacts in a directory it serves),
    # the results go to a DVC remote on "shared storage" (a local path here).
    remote = tmp_path / "dvc-remote"
    run(["dvc", "remote", "add", "-d", "shared", str(remote)], project, base_env)
    run(["git", "add", ".dvc/config"], project, base_env)
    run(["git", "commit", "-qm", "DVC remote on shared storage"], project, base_env)
    profile_dir = tmp_path / "profile"
    fitted_profile(profile_dir, slurm)
    artifacts = tmp_path / "mlflow-artifacts"
    job_tmp = tmp_path / "job-tmp"  # the jobs' temp dir (TMPDIR), where GPU claims keep their locks
    job_tmp.mkdir()
    with mlflow_server(
        f"sqlite:///{tmp_path / 'mlflow-server.db'}", tmp_path, "--artifacts-destination", str(artifacts)
    ) as server:
        env = {**slurm.env_over(base_env), "MLFLOW_TRACKING_URI": server, "TMPDIR": str(job_tmp)}
        ran = run(
            ["snakemake", "--workflow-profile", str(profile_dir), "--slurm-init-seconds-before-status-checks", "2"],
            project,
            env,
            timeout=1800,
        )
        out = ran.stdout + ran.stderr
        slurm_s = time.monotonic() - started

        # MLflow: one parent run per model and one per setting, in the server's store; the
        # artifacts in its --artifacts-destination, nothing in the project.
        every = []
        for benchmark in NAMES:
            experiment = rest(server, f"/api/2.0/mlflow/experiments/get-by-name?experiment_name={benchmark}")
            found = rest(
                server,
                "/api/2.0/mlflow/runs/search",
                {"experiment_ids": [experiment["experiment"]["experiment_id"]], "max_results": 1000},
            )
            every += found["runs"]
        levels = [{t["key"]: t["value"] for t in r["data"]["tags"]}.get("idiombench.level") for r in every]
        parents = [r for r, level in zip(every, levels, strict=True) if level == "model"]
        assert len(parents) == len(NAMES) * len(MODELS) and len(every) > len(parents)
        assert levels.count("comparison") == len(NAMES)  # track-comparison's run, one per benchmark
        assert all(r["info"]["artifact_uri"].startswith("mlflow-artifacts:/") for r in every)
    assert any(p.is_file() for p in artifacts.rglob("*")), "no artifact reached the server's store"
    assert not any((project / name).exists() for name in ("mlflow.db", "mlruns", "mlartifacts"))

    # sbatch: every job but the local acquire is a Slurm job; sacct lists them all, COMPLETED.
    sacct = slurm.run("sacct", "-X", "-a", "-o", SACCT_FORMAT).stdout
    print(f"\nsacct after the Slurm run ({slurm_s:.0f} s):\n{sacct}", flush=True)
    (tmp_path / "sacct.txt").write_text(sacct, encoding="utf-8")
    rows = [line.split("|") for line in slurm.run("sacct", "-X", "-a", "-n", "-P", "-o", SACCT_FORMAT).stdout.split()]
    dag_jobs = [r for r in rows if r[5].startswith("rule_")]
    rules = sorted(re.match(r"rule_([a-z_]+?)(?:_wildcards_|$)", r[5]).group(1) for r in dag_jobs)
    pairs = len(NAMES) * len(MODELS)
    expected = sorted(
        ["build"] * len(NAMES)
        + ["render"] * len(NAMES)
        + ["generate", "noise"] * len(MODELS)
        + ["score", "aggregate", "track"] * pairs
        + ["track_comparison"] * len(NAMES)
        + ["construct", "plots", "report"]
        + ["attention"] * (len(attention_names()) * len(MODELS))
    )  # reference models: "skipped" records
    assert rules == expected, sacct
    assert {r[1] for r in dag_jobs} == {"COMPLETED"} and {r[3] for r in dag_jobs} == {PARTITION}, sacct
    assert "localrule acquire:" in out and "rule acquire:" not in out.replace("localrule acquire:", "")

    # GPUs: oracle's generate job asked for one GPU of the profile's type, echo's for none. The
    # jobs' environment has neither IDIOMBENCH_GPUS nor a CUDA_VISIBLE_DEVICES of its own (and
    # there is no nvidia-smi), so the device oracle claimed is the one Slurm granted; its lock
    # is in that Slurm job's own lock directory.
    generate = {r[5].rsplit("_", 1)[-1]: r for r in dag_jobs if r[5].startswith("rule_generate_")}
    assert "gres/gpu=1" in generate["oracle"][4] and "gres/gpu" not in generate["echo"][4], generate
    claimed = json.loads((project / "results/logs/generate-oracle.json").read_text(encoding="utf-8"))["gpus"]
    assert len(claimed) == 1 and claimed[0] in ("0", "1"), claimed
    locks = job_tmp / f"idiombench-gpu-locks-slurm-{generate['oracle'][0]}"
    assert sorted(p.name for p in locks.iterdir()) == [f"gpu-{claimed[0]}.lock"]
    assert json.loads((project / "results/logs/generate-echo.json").read_text(encoding="utf-8"))["gpus"] == []

    # CPUs: each score job asked Slurm for the threads the profile sets for it (sbatch; the job
    # step's srun asked the same, or it would have failed), and its OrderProbe job announced as
    # many worker processes (Snakemake exports the threads as OMP_NUM_THREADS; with
    # TaskPlugin=task/none the job could run on every CPU of the node).
    score = {r[5].removeprefix("rule_score_wildcards_"): r for r in dag_jobs if r[5].startswith("rule_score_")}
    threads = {name: WIDE_THREADS if name == WIDE_SCORE else 1 for name in score}
    assert len(score) == pairs and {name: int(r[6]) for name, r in score.items()} == threads, score
    for model in MODELS:
        name = f"{model}_orderprobe"
        (log,) = (project / "logs/slurm/rule_score").glob(f"*/{score[name][0]}.log")
        workers = f"{threads[name]} worker process" + ("es" if threads[name] > 1 else "")
        announced = " ".join(log.read_text(encoding="utf-8").split())
        assert (
            f"score orderprobe {model}: at most {workers} "
            f"(OMP_NUM_THREADS={threads[name]}: the threads granted; {NODE_CPUS} usable cores)" in announced
        ), announced

    # One log per job: logs/slurm/rule_<rule>/<wildcards>/<job id>.log
    logs = sorted(p.relative_to(project / "logs/slurm").as_posix() for p in (project / "logs/slurm").rglob("*.log"))
    assert len(logs) == len(dag_jobs) and f"rule_generate/oracle/{generate['oracle'][0]}.log" in logs, logs

    # The report's tables (compared with the local run's by the caller)
    slurm_tables = tables(project)
    assert {"reports/tables/orderprobe_table3.csv", "reports/tables/chengyu_bench_table7.csv"} <= set(slurm_tables)

    # DVC: onsuccess recorded the run in dvc.lock; push to the shared remote, and a second clone
    # pulls the results instead of recomputing them.
    assert json.loads(run(["dvc", "status", "--json"], project, base_env).stdout or "{}") == {}
    run(["git", "add", "-A"], project, base_env)
    run(["git", "commit", "-qm", "results from Slurm"], project, base_env)
    run(["dvc", "push"], project, base_env)
    clone = tmp_path / "clone"
    run(["git", "clone", "-q", str(project), str(clone)], tmp_path, base_env)
    run(["dvc", "pull"], clone, base_env)
    assert json.loads(run(["dvc", "status", "--json"], clone, base_env).stdout or "{}") == {}
    planned = run(["snakemake", "-n", "--cores", "2"], clone, base_env)
    assert "Nothing to be done" in planned.stdout + planned.stderr
    assert tables(clone) == slurm_tables
    return slurm_s
