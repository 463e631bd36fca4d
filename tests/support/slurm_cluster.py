"""A throwaway single-node Slurm cluster on this machine, for tests/integration/test_slurm.py.

Debian's packages (`make slurm`: slurm-wlm, slurmdbd, munge, mariadb-server) run from one
temporary directory: a MUNGE daemon with its own key and socket, a MariaDB server (TCP on
127.0.0.1, no grant tables) as slurmdbd's job accounting store, so that `sacct` lists the
jobs, slurmdbd, slurmctld and one slurmd (node `localhost`, this machine's CPUs and memory
from `slurmd -C`, two fake GPUs as GRES). Nothing outside the directory is written or
read; clients find the cluster through SLURM_CONF (`cluster.env`). Every daemon is stopped
by pid when the cluster is stopped.

The two GPUs are regular files named as GRES devices (gres.conf `File=`): Slurm schedules
them, counts them in TRES and sets CUDA_VISIBLE_DEVICES for a job that asks for them, as it
does on a GPU node, but nothing can compute on them. With TaskPlugin=task/none and
ProctrackType=proctrack/linuxproc there are no cgroups (this container has no usable ones):
devices are not fenced off and memory is not enforced.

Root only (slurmd starts jobs as their user; the daemons run as root). As a script:

    python tests/support/slurm_cluster.py DIR      # start, print the env, wait for Ctrl-C
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

DAEMONS = ("munged", "mariadbd", "mariadb-install-db", "slurmdbd", "slurmctld", "slurmd")
CLUSTER = "idiombench"
PARTITION = "debug"
FAKE_GPUS = 2
GPU_TYPE = "fake"  # the GRES type of the fake GPUs: `sbatch --gpus=fake:1`


class ClusterUnavailable(RuntimeError):
    """The cluster cannot start here (a reason a test can skip with)."""


def missing_tools() -> list[str]:
    tools = [
        "munged",
        "mariadbd",
        "mariadb-install-db",
        "mariadb",
        "slurmdbd",
        "slurmctld",
        "slurmd",
        "sbatch",
        "sacct",
        "sinfo",
        "srun",
        "sacctmgr",
    ]
    return [tool for tool in tools if shutil.which(tool) is None and not Path("/usr/sbin", tool).exists()]


def _which(tool: str) -> str:
    return shutil.which(tool) or str(Path("/usr/sbin", tool))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _hardware() -> dict[str, str]:
    """`slurmd -C`: this node as slurmd sees it (CPUs, sockets, cores, threads, RealMemory)."""
    out = subprocess.run([_which("slurmd"), "-C"], capture_output=True, text=True, timeout=60).stdout
    line = next((line for line in out.splitlines() if line.startswith("NodeName=")), "")
    fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
    if "CPUs" not in fields:
        raise ClusterUnavailable(f"`slurmd -C` printed no node description: {out.strip()!r}")
    return fields


@dataclass
class SlurmCluster:
    root: Path
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)

    @property
    def conf(self) -> Path:
        return self.root / "etc" / "slurm.conf"

    @property
    def env(self) -> dict[str, str]:
        """What a client (sbatch, sacct, Snakemake's Slurm executor) needs: SLURM_CONF, and
        bin/ first on PATH (the srun wrapper that jobs use; see _write_configs)."""
        return {"SLURM_CONF": str(self.conf), "PATH": f"{self.root / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}

    def env_over(self, env: dict[str, str]) -> dict[str, str]:
        """`env` with this cluster's SLURM_CONF and bin/ first on its PATH."""
        return {**env, "SLURM_CONF": str(self.conf), "PATH": f"{self.root / 'bin'}{os.pathsep}{env.get('PATH', '')}"}

    def client_env(self) -> dict[str, str]:
        return {**os.environ, **self.env}

    # -- start ---------------------------------------------------------------------------
    def start(self, timeout_s: float = 120) -> SlurmCluster:
        if os.geteuid() != 0:
            raise ClusterUnavailable(
                "the test cluster's daemons run as root (slurmd starts jobs as their user): "
                "run the tests as root, `sudo make test`"
            )
        missing = missing_tools()
        if missing:
            raise ClusterUnavailable(f"not installed: {', '.join(missing)} (run `make slurm`)")
        for sub in ("etc", "log", "run", "state", "spool", "mysql", "dev"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o755)
        self.ports = {name: _free_port() for name in ("mysql", "dbd", "ctld", "slurmd")}
        try:
            self._start_munge()
            self._start_mariadb(timeout_s)
            self._write_configs()
            # slurmdbd reads slurmdbd.conf beside SLURM_CONF
            self._start("slurmdbd", [_which("slurmdbd"), "-D"])
            self._wait_port("slurmdbd", self.ports["dbd"], timeout_s)
            self._start("slurmctld", [_which("slurmctld"), "-D", "-i", "-f", str(self.conf)])
            self._wait_port("slurmctld", self.ports["ctld"], timeout_s)
            self._start("slurmd", [_which("slurmd"), "-D", "-N", "localhost", "-f", str(self.conf)])
            self._wait_node_idle(timeout_s)
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self, name: str, argv: list[str], **kwargs) -> subprocess.Popen:
        log = open(self.root / "log" / f"{name}.out", "ab")
        proc = subprocess.Popen(
            argv, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **self.env}, start_new_session=True, **kwargs
        )
        log.close()
        self.procs[name] = proc
        return proc

    def _check_alive(self, name: str) -> None:
        proc = self.procs.get(name)
        if proc is not None and proc.poll() is not None:
            raise ClusterUnavailable(f"{name} exited with status {proc.returncode}: {self.log_tail(name)}")

    def log_tail(self, name: str, lines: int = 15) -> str:
        text = ""
        for path in (self.root / "log" / f"{name}.out", self.root / "log" / f"{name}.log"):
            if path.exists():
                text += path.read_text(errors="replace")
        return " | ".join(text.strip().splitlines()[-lines:]) or "(no log)"

    def _wait_port(self, name: str, port: int, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self._check_alive(name)
            with socket.socket() as sock:
                sock.settimeout(1)
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    return
            time.sleep(0.3)
        raise ClusterUnavailable(
            f"{name} does not listen on port {port} after {timeout_s:.0f} s: {self.log_tail(name)}"
        )

    def _start_munge(self) -> None:
        key = self.root / "etc" / "munge.key"
        key.write_bytes(os.urandom(1024))
        os.chmod(key, 0o600)
        os.chmod(self.root / "etc", 0o755)
        sock = self.root / "run" / "munge.socket"
        self._start(
            "munged",
            [
                _which("munged"),
                "--foreground",
                "--force",
                f"--socket={sock}",
                f"--key-file={key}",
                f"--pid-file={self.root / 'run' / 'munged.pid'}",
                f"--log-file={self.root / 'log' / 'munged.log'}",
                f"--seed-file={self.root / 'run' / 'munged.seed'}",
            ],
        )
        deadline = time.monotonic() + 30
        while not sock.exists():
            self._check_alive("munged")
            if time.monotonic() > deadline:
                raise ClusterUnavailable(f"munged made no socket: {self.log_tail('munged')}")
            time.sleep(0.2)

    def _start_mariadb(self, timeout_s: float) -> None:
        data = self.root / "mysql"
        init = subprocess.run(
            [
                _which("mariadb-install-db"),
                "--no-defaults",
                f"--datadir={data}",
                "--user=root",
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if init.returncode:
            raise ClusterUnavailable(f"mariadb-install-db failed: {(init.stdout + init.stderr)[-800:]}")
        # no grant tables: slurmdbd connects as any user over TCP on 127.0.0.1 only
        self._start(
            "mariadbd",
            [
                _which("mariadbd"),
                "--no-defaults",
                f"--datadir={data}",
                "--user=root",
                f"--socket={self.root / 'run' / 'mysql.sock'}",
                f"--port={self.ports['mysql']}",
                "--bind-address=127.0.0.1",
                "--skip-grant-tables",
                f"--pid-file={self.root / 'run' / 'mariadbd.pid'}",
                "--innodb-buffer-pool-size=64M",
                "--skip-log-bin",
            ],
        )
        self._wait_port("mariadbd", self.ports["mysql"], timeout_s)

    def _write_configs(self) -> None:
        hw = _hardware()
        real_memory = int(hw.get("RealMemory", "1024"))
        gpus = [self.root / "dev" / f"nvidia{i}" for i in range(FAKE_GPUS)]
        for dev in gpus:
            # character devices (slurmd rejects other files in gres.conf), with /dev/null's
            # numbers (1, 3): harmless to open, and Slurm then sets CUDA_VISIBLE_DEVICES
            try:
                os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            except OSError as error:
                raise ClusterUnavailable(f"cannot make the fake GPU device {dev} (mknod: {error})") from error
        auth = f"AuthInfo=socket={self.root / 'run' / 'munge.socket'}"
        etc, log, run = self.root / "etc", self.root / "log", self.root / "run"
        dbd_conf = etc / "slurmdbd.conf"
        dbd_conf.write_text(
            "\n".join(
                [
                    "AuthType=auth/munge",
                    auth,
                    "DbdHost=localhost",
                    "DbdAddr=127.0.0.1",
                    f"DbdPort={self.ports['dbd']}",
                    "SlurmUser=root",
                    f"LogFile={log / 'slurmdbd.log'}",
                    f"PidFile={run / 'slurmdbd.pid'}",
                    "StorageType=accounting_storage/mysql",
                    "StorageHost=127.0.0.1",
                    f"StoragePort={self.ports['mysql']}",
                    "StorageUser=root",
                    "StorageLoc=slurm_acct_db",
                    "DebugLevel=info",
                    "",
                ]
            )
        )
        os.chmod(dbd_conf, 0o600)
        self.conf.write_text(
            "\n".join(
                [
                    f"ClusterName={CLUSTER}",
                    "SlurmctldHost=localhost(127.0.0.1)",
                    "SlurmUser=root",
                    "AuthType=auth/munge",
                    "CredType=cred/munge",
                    auth,
                    f"SlurmctldPort={self.ports['ctld']}",
                    f"SlurmdPort={self.ports['slurmd']}",
                    f"StateSaveLocation={self.root / 'state'}",
                    f"SlurmdSpoolDir={self.root / 'spool'}",
                    f"SlurmctldPidFile={run / 'slurmctld.pid'}",
                    f"SlurmdPidFile={run / 'slurmd.pid'}",
                    f"SlurmctldLogFile={log / 'slurmctld.log'}",
                    f"SlurmdLogFile={log / 'slurmd.log'}",
                    "SlurmctldDebug=info",
                    "SlurmdDebug=info",
                    "ProctrackType=proctrack/linuxproc",
                    "TaskPlugin=task/none",
                    "MpiDefault=none",
                    "SelectType=select/cons_tres",
                    "SelectTypeParameters=CR_Core_Memory",
                    "GresTypes=gpu",
                    "AccountingStorageTRES=gres/gpu",
                    "AccountingStorageType=accounting_storage/slurmdbd",
                    "AccountingStorageHost=localhost",
                    f"AccountingStoragePort={self.ports['dbd']}",
                    # the MUNGE socket for slurmdbd connections (AuthInfo covers the others)
                    f"AccountingStoragePass={self.root / 'run' / 'munge.socket'}",
                    "JobAcctGatherType=jobacct_gather/linux",
                    "JobAcctGatherFrequency=30",
                    # sacct's Comment column: the Slurm executor puts rule_<rule>_wildcards_<...> there
                    "AccountingStoreFlags=job_comment",
                    "DefMemPerCPU=512",
                    "ReturnToService=2",
                    "SchedulerType=sched/backfill",
                    "SchedulerParameters=sched_interval=2",
                    "MinJobAge=600",
                    "KillWait=5",
                    "InactiveLimit=0",
                    "SlurmdTimeout=120",
                    f"NodeName=localhost NodeAddr=127.0.0.1 CPUs={hw['CPUs']} Boards={hw.get('Boards', 1)} "
                    f"SocketsPerBoard={hw.get('SocketsPerBoard', 1)} "
                    f"CoresPerSocket={hw.get('CoresPerSocket', hw['CPUs'])} "
                    f"ThreadsPerCore={hw.get('ThreadsPerCore', 1)} RealMemory={real_memory} "
                    f"Gres=gpu:{GPU_TYPE}:{FAKE_GPUS} State=UNKNOWN",
                    f"PartitionName={PARTITION} Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO",
                    "",
                ]
            )
        )
        # Inside a job, the Slurm executor's jobstep plugin (0.6.1) runs `srun` with every
        # SLURM_* variable but the job's ids removed, SLURM_CONF included: on a cluster whose
        # config is at the default path or served configless that is harmless, here srun would
        # find no cluster. bin/srun (first on the jobs' PATH: self.env) puts it back.
        wrapper = self.root / "bin" / "srun"
        wrapper.parent.mkdir(exist_ok=True)
        wrapper.write_text(f'#!/bin/sh\nSLURM_CONF={self.conf} exec {shutil.which("srun") or "/usr/bin/srun"} "$@"\n')
        os.chmod(wrapper, 0o755)
        (etc / "gres.conf").write_text(
            f"AutoDetect=off\nNodeName=localhost Name=gpu Type={GPU_TYPE} "
            f"File={self.root / 'dev'}/nvidia[0-{FAKE_GPUS - 1}]\n"
        )

    def _wait_node_idle(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        state = ""
        while time.monotonic() < deadline:
            for name in ("slurmctld", "slurmd", "slurmdbd"):
                self._check_alive(name)
            out = subprocess.run(
                ["sinfo", "-h", "-N", "-o", "%N %t"], capture_output=True, text=True, env=self.client_env(), timeout=30
            )
            state = (out.stdout + out.stderr).strip()
            if state.startswith("localhost idle"):
                return
            time.sleep(0.5)
        raise ClusterUnavailable(
            f"node localhost not idle after {timeout_s:.0f} s (sinfo: {state!r}): {self.log_tail('slurmd')}"
        )

    # -- use -----------------------------------------------------------------------------
    def run(self, *argv: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
        result = subprocess.run(list(argv), capture_output=True, text=True, env=self.client_env(), timeout=timeout)
        if check and result.returncode:
            raise RuntimeError(f"{' '.join(argv)} exited {result.returncode}: {result.stdout}{result.stderr}")
        return result

    # -- stop ------------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop the daemons that this object started, newest first, by pid."""
        for name in reversed(list(self.procs)):
            proc = self.procs[name]
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=10)
        self.procs.clear()


if __name__ == "__main__":
    cluster = SlurmCluster(Path(sys.argv[1]).resolve())
    try:
        cluster.start()
        print(f"export SLURM_CONF={cluster.conf}", flush=True)
        signal.sigwait({signal.SIGINT, signal.SIGTERM})
    finally:
        cluster.stop()
