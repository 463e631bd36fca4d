"""One record across Snakemake and DVC.

Snakemake and DVC describe the same stages (tests/integration/test_dag_sync.py) but keep
separate records of what ran: `.snakemake/metadata/` (per output: params, code, input
list, end time) and `dvc.lock` (per stage: hashes of deps, params and outs). Without a
bridge, whichever tool did not run a stage plans it again. This module is that bridge;
the Snakefile calls it in both directions.

Snakemake -> DVC (`record_snakemake_run`, from the Snakefile's `onsuccess:`). After a
successful run, every job in Snakemake's DAG is current (it ran, or Snakemake found it up
to date). The DVC stages whose outputs are all outputs of those jobs are committed with
`dvc commit -f <stages>`: DVC hashes their deps, params and outs as they are now and
writes them to dvc.lock, without running anything. Stages outside the DAG are left alone:
their outputs may exist but be stale, and committing them would make dvc.lock lie.
`dvc commit` may re-link an output from the cache (a new mtime, same content), so the
Snakemake records of the committed outputs get the new mtime as their end time.
A commit records the stage with params.yaml's values, so it is only made for the stages that
ran with them: a run with another params file (`--config params=strict.yaml`, an overlay)
or with values that params.yaml no longer has (edited during the run) leaves out every stage
whose DVC params (the keys dvc.yaml lists for it) have other values in the run than in
params.yaml, and every stage downstream of one (its inputs are that run's products). Those
stay as dvc.lock had them, so `dvc status` reports them changed, and the sync says which
and why (`withheld`).

DVC -> Snakemake (`reconcile_snakemake_records`, when the Snakefile is parsed, before
Snakemake plans). Snakemake reruns a job when its output is older than an input (mtime)
or when the params / code / input list in the output's record differ from the rule's
(the workflow profile's rerun-triggers). After `dvc repro`, the outputs DVC rewrote carry
Snakemake records of an older run (or none), so the params trigger would fire on them
forever, or (no record) a params edit would go unnoticed. An output whose Snakemake
record does not describe it (no record, or the record's end time is not the output's
mtime) was last written by someone else; for those outputs DVC is asked (`dvc status
<stages>`, hashes against dvc.lock) and its verdict is written into Snakemake's record:
  * DVC says the stage is current: the record keeps no params / code / input (Snakemake
    then compares mtimes only: in dependency order, see below);
  * DVC says the stage changed (a params edit, a changed dep or out): the record gets a
    params entry no rule produces, so Snakemake's params trigger reruns the job.
DVC's verdict is on content, Snakemake's mtime trigger is on time: outputs that DVC
wrote out of dependency order (`dvc pull` / `dvc checkout` write them in any order, all at
about the same time) can be older than their inputs, and Snakemake would rerun them. So
the outputs of current stages that are not newer than everything their stage depends on
are given, upstream first, an mtime just above the newest of those inputs (`os.utime`;
contents and DVC's hashes unchanged): after a fresh clone's `dvc pull`, `snakemake -n`
plans nothing. After `dvc repro` they are already in order and nothing is touched.
Records Snakemake wrote itself for the output on disk are never touched. The check costs
one `dvc status` of the DVC-made outputs' stages per Snakemake invocation (none when
Snakemake made everything), until Snakemake reruns those jobs and writes full records.
"""

from __future__ import annotations

import bisect
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..core import paths
from ..core.errors import ConfigError
from ..core.yamlfile import TOOL_FILE, YamlError, load_yaml_file
from ..params.overlay import read_yaml_mapping


class SnakemakeRecord(Protocol):
    """What this module reads and sets of Snakemake's MetadataRecord (snakemake.persistence)."""

    record_format_version: int
    incomplete: bool
    starttime: float | None
    endtime: float | None
    params: list[str] | None
    input: list[str] | None
    code: str | None
    shellcmd: str | None
    software_stack_hash: str | None
    input_checksums: dict[str, str]


class SnakemakePersistence(Protocol):
    """Snakemake's FilePersistence, through the private methods that read and write one record."""

    def _read_record(self, key: str) -> SnakemakeRecord | None: ...

    def _write_record(self, key: str, record: SnakemakeRecord) -> None: ...

    def _clear_cache(self) -> None: ...


class SnakemakeJob(Protocol):
    @property
    def output(self) -> Iterable[object]: ...


class SnakemakeDAG(Protocol):
    @property
    def jobs(self) -> Iterable[SnakemakeJob]: ...


class SnakemakeWorkflow(Protocol):
    """What dag_outputs reads of Snakemake's workflow object (its DAG, None before one is built)."""

    @property
    def dag(self) -> SnakemakeDAG | None: ...


# The params entry written for a DVC-changed stage: no rule's params serialize to it, so
# Snakemake's params trigger always sees a difference.
DVC_CHANGED = "idiombench: dvc status reports this stage changed since dvc.lock"
# Set to 0 to skip the reconciliation (e.g. while debugging Snakemake's own records).
SYNC_ENV = "IDIOMBENCH_DVC_SYNC"
# Snakemake's mtime carrier inside directory outputs (snakemake.io); .dvcignore lists it
# so that an output's DVC hash is the same whichever tool wrote it.
TIMESTAMP_FILE = ".snakemake_timestamp"
MTIME_TOLERANCE_S = 1e-3
# How much newer than its newest input an output is made when mtimes are put in DAG order:
# above MTIME_TOLERANCE_S and the sub-second mtime resolution of common filesystems.
ORDER_STEP_S = 0.01


@dataclass
class SyncReport:
    """What one reconciliation did, by DVC stage name (printed by the Snakefile)."""

    current: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    committed: list[str] = field(default_factory=list)
    reordered: list[str] = field(default_factory=list)
    # stages not committed: ran with other params values than params.yaml's (stage -> the keys)
    # or built on such a stage's outputs (stage -> [])
    withheld: dict[str, list[str]] = field(default_factory=dict)
    params_file: str = "params.yaml"  # the params file of the run (for the withheld line)

    def lines(self) -> list[str]:
        out = []
        if self.current:
            out.append(f"dvc-sync: Snakemake records take DVC's word (current in dvc.lock): {', '.join(self.current)}")
        if self.reordered:
            out.append(
                f"dvc-sync: outputs older than their inputs (written out of order, e.g. by dvc pull) "
                f"given mtimes in DAG order: {', '.join(self.reordered)}"
            )
        if self.changed:
            out.append(f"dvc-sync: DVC reports changed, Snakemake will rerun: {', '.join(self.changed)}")
        if self.committed:
            out.append(
                f"dvc-sync: dvc commit recorded {len(self.committed)} stage(s) in dvc.lock: {', '.join(self.committed)}"
            )
        if self.withheld:
            ran = sorted(name for name, keys in self.withheld.items() if keys)
            keys = sorted({key for name in ran for key in self.withheld[name]})
            built_on = sorted(name for name, keys in self.withheld.items() if not keys)
            source = (
                "params.yaml as it was when the run started" if self.params_file == PARAMS_FILE else self.params_file
            )
            names = " ".join(sorted(self.withheld))
            record = (
                "run Snakemake again: it reruns them with params.yaml's values and records them"
                if self.params_file == PARAMS_FILE
                else f"`idiombench merge-params {self.params_file} --out params.yaml && dvc commit -f {names}`"
            )
            out.append(
                f"dvc-sync: not recorded in dvc.lock, as they did not run with params.yaml's values, which DVC "
                f"reads: {', '.join(ran)} (other values in {source}: {', '.join(keys[:4])}"
                f"{' ...' if len(keys) > 4 else ''})"
                + (f", and the stages built on them: {', '.join(built_on)}" if built_on else "")
                + f"; `dvc status` reports them changed. To record this run: {record}"
            )
        return out


def enabled() -> bool:
    return os.environ.get(SYNC_ENV, "1") != "0"


def is_dvc_repo(root: Path) -> bool:
    return (root / ".dvc").is_dir() and (root / "dvc.yaml").is_file()


def dvc_command() -> list[str]:
    """The dvc of this environment (the venv's bin next to the interpreter), else `python -m dvc`."""
    local = Path(sys.executable).parent / "dvc"
    if local.exists():
        return [str(local)]
    found = shutil.which("dvc")
    return [found] if found else [sys.executable, "-m", "dvc"]


def run_dvc(root: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [*dvc_command(), *args], cwd=root, capture_output=True, text=True, env={**os.environ, "DVC_NO_ANALYTICS": "1"}
    )
    if result.returncode != 0:
        raise RuntimeError(
            f"dvc {' '.join(args)} failed in {root} ({result.returncode}):\n{result.stdout}\n{result.stderr}"
        )
    return result


# ---------------------------------------------------------------------------- stages


def _read_lock(lock: Path) -> dict[str, object]:
    """dvc.lock's mapping, read within the limits of a file the tools write (core/yamlfile.py);
    one it refuses is a RuntimeError (the Snakefile then plans from Snakemake's own records)."""
    try:
        body = load_yaml_file(lock, TOOL_FILE, expected="dvc.lock")
    except YamlError as exc:
        raise RuntimeError(str(exc)) from None
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise RuntimeError(f"{lock}: expected a mapping at the top level (dvc.lock schema 2.0)")
    return body


def locked_stage_outs(root: Path) -> dict[str, list[str]]:
    """Stage name -> output paths, as recorded in dvc.lock (empty without a lock)."""
    lock = root / "dvc.lock"
    if not lock.is_file():
        return {}
    body = _read_lock(lock)
    stages = body.get("stages")
    if not isinstance(stages, dict):
        raise ValueError(f"{lock}: expected a mapping under 'stages:' (dvc.lock schema 2.0)")
    return {name: [str(out["path"]) for out in stage.get("outs", [])] for name, stage in stages.items()}


def locked_stage_deps(root: Path) -> dict[str, list[str]]:
    """Stage name -> dependency paths, as recorded in dvc.lock (empty without a lock)."""
    lock = root / "dvc.lock"
    if not lock.is_file():
        return {}
    stages = _read_lock(lock).get("stages") or {}
    if not isinstance(stages, dict):
        raise ValueError(f"{lock}: expected a mapping under 'stages:' (dvc.lock schema 2.0)")
    return {name: [str(dep["path"]) for dep in stage.get("deps", [])] for name, stage in stages.items()}


@dataclass
class DefinedStage:
    """A stage as dvc.yaml defines it (foreach/matrix expanded by DVC)."""

    outs: list[str]
    deps: list[str]  # paths (not params)
    params: dict[str, list[str]]  # params file -> the keys it lists (empty: the whole file)


def defined_stages(root: Path) -> dict[str, DefinedStage]:
    """Every stage dvc.yaml defines that has outputs, by name."""
    from dvc.dependency.param import ParamsDependency
    from dvc.repo import Repo

    out = {}
    with Repo(str(root)) as repo:
        for stage in repo.index.stages:
            if not stage.outs:
                continue
            params: dict[str, list[str]] = {}
            for dep in stage.deps:
                if isinstance(dep, ParamsDependency):
                    params.setdefault(os.path.relpath(dep.fs_path, root), []).extend(dep.params)
            out[stage.addressing] = DefinedStage(
                outs=[str(o.def_path) for o in stage.outs],
                deps=[str(d.def_path) for d in stage.deps if not isinstance(d, ParamsDependency)],
                params=params,
            )
    return out


def defined_stage_outs(root: Path) -> dict[str, list[str]]:
    """Stage name -> output paths for every stage dvc.yaml defines (foreach/matrix expanded by DVC)."""
    return {name: stage.outs for name, stage in defined_stages(root).items()}


PARAMS_FILE = "params.yaml"  # the params file of every stage in dvc.yaml (a plugin's stages: see below)
# A plugin's params section with its defaults (pipeline/records.py), generated from params.yaml:
# its keys (`benchmarks.<plugin>.<section>`) are params.yaml's, as the pipeline reads them.
PLUGIN_PARAMS_DIR = paths.PLUGIN_PARAMS.as_posix()


def params_yaml_keys(stage: DefinedStage) -> list[str] | None:
    """The keys of params.yaml a stage reads (those of a plugin's generated file included, as
    they come from params.yaml); [] for the whole file, None when it reads none."""
    keys: list[str] | None = None
    for file, names in stage.params.items():
        if file == PARAMS_FILE or Path(file).parent.as_posix() == PLUGIN_PARAMS_DIR:
            if file == PARAMS_FILE and not names:
                return []
            keys = [*(keys or []), *names]
    return keys


def _param_value(values: object, key: str) -> object:
    """What DVC records for `key` of a params file (dpath's search, '.' separated, as DVC reads it)."""
    import dpath

    return dpath.search(values, key, separator=".") if isinstance(values, dict) else None


def params_differences(
    stages: Mapping[str, DefinedStage],
    names: Iterable[str],
    run_values: Mapping[str, object],
    file_values: Mapping[str, object],
) -> dict[str, list[str]]:
    """The stages among `names` whose params.yaml keys (as dvc.yaml lists them) have other values
    in the run (`run_values`) than in params.yaml (`file_values`), each with those keys."""
    differing: dict[str, list[str]] = {}
    for name in names:
        keys = params_yaml_keys(stages[name])
        if keys is None:
            continue
        changed = [
            key
            for key in (keys or sorted(set(run_values) | set(file_values)))
            if _param_value(run_values, key) != _param_value(file_values, key)
        ]
        if changed:
            differing[name] = sorted(changed)
    return differing


def downstream_of(stages: Mapping[str, DefinedStage], names: Iterable[str], among: Iterable[str]) -> list[str]:
    """The stages among `among` that depend, directly or through others among them, on an output
    of a stage in `names` (not those stages themselves)."""
    among = set(among)
    index = OutputIndex({name: stage.outs for name, stage in stages.items()})
    tainted = set(names)
    found: set[str] = set()
    grew = True
    while grew:
        grew = False
        for name in sorted(among - tainted - found):
            if any(other in tainted | found for dep in stages[name].deps for _, other in index.overlapping(dep)):
                found.add(name)
                grew = True
    return sorted(found)


def stages_covered_by(stage_outs: Mapping[str, list[str]], outputs: Iterable[str]) -> list[str]:
    """The stages whose outputs are all among `outputs` (paths as the rules write them)."""
    produced = {os.path.normpath(path) for path in outputs}
    return sorted(
        name for name, outs in stage_outs.items() if outs and all(os.path.normpath(out) in produced for out in outs)
    )


class OutputIndex:
    """Every stage output, sorted, to find the outputs a dep overlaps (the same path, one above
    it or inside it: the report's dep results/metrics holds the aggregate stages' files)
    without comparing it to all of them (hundreds of stages at paper scale, before every
    Snakemake plan)."""

    def __init__(self, stage_outs: Mapping[str, list[str]]) -> None:
        self.entries = sorted((os.path.normpath(out), name) for name, outs in stage_outs.items() for out in outs)
        self.paths = [path for path, _ in self.entries]

    def overlapping(self, dep: str) -> list[tuple[str, str]]:
        """(output, stage) for the outputs equal to `dep`, above it or inside it."""
        dep = os.path.normpath(dep)
        found: list[tuple[str, str]] = []
        parts = dep.split(os.sep)
        for depth in range(1, len(parts) + 1):  # dep itself and the directories above it
            path = os.sep.join(parts[:depth])
            at = bisect.bisect_left(self.paths, path)
            while at < len(self.paths) and self.paths[at] == path:
                found.append(self.entries[at])
                at += 1
        # inside dep: the paths from "dep/" up to (not including) "dep0", the next character
        low = bisect.bisect_left(self.paths, dep + os.sep)
        high = bisect.bisect_left(self.paths, dep + chr(ord(os.sep) + 1))
        return found + self.entries[low:high]


def dag_order(
    stages: Iterable[str], stage_deps: Mapping[str, list[str]], stage_outs: Mapping[str, list[str]]
) -> list[str]:
    """`stages` upstream first: a stage comes after every stage among them whose output
    overlaps one of its deps (ties by name, so the order is reproducible)."""
    names = set(stages)
    index = OutputIndex(stage_outs)
    upstream = {
        name: {
            other
            for dep in stage_deps.get(name, [])
            for _, other in index.overlapping(dep)
            if other != name and other in names
        }
        for name in names
    }
    ordered: list[str] = []
    done: set[str] = set()
    while len(done) < len(names):
        ready = sorted(name for name in names - done if upstream[name] <= done)
        if not ready:
            raise ValueError(f"dvc.lock: a dependency cycle among {sorted(names - done)}")
        ordered.extend(ready)
        done.update(ready)
    return ordered


# ---------------------------------------------------------------- Snakemake records


def snakemake_mtime(path: Path) -> float | None:
    """The mtime Snakemake uses for an output: a directory's .snakemake_timestamp when it has one."""
    try:
        if path.is_dir() and not path.is_symlink():
            stamp = path / TIMESTAMP_FILE
            if stamp.exists():
                return stamp.stat().st_mtime
        return path.lstat().st_mtime
    except FileNotFoundError:
        return None


def set_snakemake_mtime(path: Path, mtime: float) -> None:
    """Set the mtime `snakemake_mtime` reads (a symlink itself, not the cache file behind it)."""
    if path.is_dir() and not path.is_symlink() and (path / TIMESTAMP_FILE).exists():
        path = path / TIMESTAMP_FILE
    os.utime(path, (mtime, mtime), follow_symlinks=False)


def order_mtimes(
    root: Path, stages: Iterable[str], stage_deps: Mapping[str, list[str]], stage_outs: Mapping[str, list[str]]
) -> list[str]:
    """Make each output of `stages` (current in dvc.lock: their contents match their inputs)
    newer than every input of its stage, upstream first, so that Snakemake's mtime trigger
    agrees with DVC. Only outputs that are not newer already are touched; returns their stages."""
    index = OutputIndex(stage_outs)
    moved: list[str] = []
    for name in dag_order(stages, stage_deps, stage_outs):
        # a dep made by other stages stands for their outputs (Snakemake's inputs: the report
        # reads results/metrics/<benchmark>/<model>.json, not the folder); any other dep, itself
        inputs: set[str] = set()
        for dep in stage_deps.get(name, []):
            made = {out for out, other in index.overlapping(dep) if other != name}
            inputs |= made or {dep}
        newest = max((m for m in (snakemake_mtime(root / path) for path in inputs) if m is not None), default=None)
        if newest is None:
            continue
        stale = [
            out
            for out in stage_outs.get(name, [])
            if (mtime := snakemake_mtime(root / out)) is not None and mtime <= newest
        ]
        for out in stale:
            set_snakemake_mtime(root / out, newest + ORDER_STEP_S)
        if stale:
            moved.append(name)
    return moved


def _persistence(root: Path) -> SnakemakePersistence:
    """Snakemake's own file persistence (.snakemake/metadata), so records keep its format."""
    from snakemake.persistence.file import FilePersistence

    persistence: SnakemakePersistence = FilePersistence(path=root / ".snakemake")
    return persistence


def _describes(record: SnakemakeRecord | None, mtime: float) -> bool:
    """True when a full Snakemake record was written for the output now on disk (not a verdict
    of ours: those are re-asked every time, so a params edit after `dvc repro` is seen)."""
    return (
        record is not None
        and record.params not in (None, [DVC_CHANGED])
        and record.endtime is not None
        and abs(record.endtime - mtime) <= MTIME_TOLERANCE_S
    )


def _write_verdict(persistence: SnakemakePersistence, key: str, mtime: float, changed: bool) -> None:
    from snakemake.persistence import RECORD_FORMAT_VERSION, MetadataRecord

    record = persistence._read_record(key) or MetadataRecord()
    record.record_format_version = RECORD_FORMAT_VERSION
    record.incomplete = False
    record.endtime = mtime
    record.starttime = record.starttime or mtime
    # None: Snakemake skips the params / input / code / software-env comparison for this output
    record.params = [DVC_CHANGED] if changed else None
    record.input = None
    record.code = None
    record.shellcmd = None
    record.software_stack_hash = None
    record.input_checksums = {}
    persistence._write_record(key, record)
    persistence._clear_cache()


def dvc_made_stages(root: Path, stage_outs: Mapping[str, list[str]]) -> list[str]:
    """Stages with an output on disk that Snakemake's records do not describe."""
    persistence = _persistence(root)
    found = []
    for name, outs in stage_outs.items():
        for out in outs:
            mtime = snakemake_mtime(root / out)
            if mtime is not None and not _describes(persistence._read_record(out), mtime):
                found.append(name)
                break
    return sorted(found)


def dvc_changed(root: Path, stages: list[str]) -> set[str]:
    """The stages among `stages` that `dvc status` reports changed against dvc.lock."""
    if not stages:
        return set()
    # One status of the whole pipeline, not of each stage: dvc collects its index once per
    # target, so `dvc status s1 ... s56` took 30 s where `dvc status` takes 4 s, and every
    # dry run after `dvc repro` or `dvc pull` paid it. A stage's status is its own either way.
    status = json.loads(run_dvc(root, ["status", "--json"]).stdout or "{}")
    return set(status) & set(stages)


def _readers_of(
    names: Iterable[str], stage_deps: Mapping[str, list[str]], stage_outs: Mapping[str, list[str]]
) -> list[str]:
    """The stages (not among `names`) that read an output of `names`, directly or through
    each other: the same closure as `downstream_of`, from dvc.lock's records."""
    stages = {
        name: DefinedStage(outs=list(outs), deps=list(stage_deps.get(name, [])), params={})
        for name, outs in stage_outs.items()
    }
    return downstream_of(stages, names, among=stages)


def is_record_stage(outs: list[str]) -> bool:
    """A stage that writes code records (code@<b>, plugin@<b>: pipeline/records.py)."""
    folders = (paths.CODE.as_posix() + "/", paths.PLUGIN_PARAMS.as_posix() + "/")
    return bool(outs) and all(out.startswith(folders) for out in outs)


def reconcile_snakemake_records(root: Path) -> SyncReport:
    """DVC -> Snakemake: write DVC's verdict into the records of the outputs DVC made."""
    report = SyncReport()
    if not enabled() or not is_dvc_repo(root):
        return report
    stage_outs = locked_stage_outs(root)
    # The code records (and a plugin's params) were brought in step as the Snakefile was parsed
    # (workflow/rules/common.smk): current by construction, whoever wrote them; Snakemake has no
    # rule to rerun for them (their rules have no inputs), and a verdict "changed" would make it
    # rerun every stage built on them.
    candidates = [name for name in dvc_made_stages(root, stage_outs) if not is_record_stage(stage_outs[name])]
    if not candidates:
        return report
    stage_deps = locked_stage_deps(root)
    # Stages Snakemake made that read what DVC rewrote: DVC reruns a stage whose output came
    # out byte-identical (e.g. a per-model stage that every benchmark's track reads) without
    # rerunning what reads it, so those outputs are now older than an input. Where DVC calls
    # them current they are reordered too, their own records kept (end time moved).
    readers = _readers_of(candidates, stage_deps, stage_outs)
    changed = dvc_changed(root, candidates + readers)
    # before the verdicts, which record each output's (possibly new) mtime as its end time
    report.reordered = order_mtimes(
        root, [name for name in candidates + readers if name not in changed], stage_deps, stage_outs
    )
    refresh_end_times(root, [out for name in report.reordered if name in readers for out in stage_outs[name]])
    persistence = _persistence(root)
    for name in candidates:
        for out in stage_outs[name]:
            mtime = snakemake_mtime(root / out)
            if mtime is not None:
                _write_verdict(persistence, out, mtime, name in changed)
        (report.changed if name in changed else report.current).append(name)
    return report


# ---------------------------------------------------------------- Snakemake -> DVC


def refresh_end_times(root: Path, outputs: Iterable[str]) -> None:
    """After `dvc commit` re-linked outputs (same content, new mtime), Snakemake's records of
    them still describe them: move their end time to the new mtime."""
    persistence = _persistence(root)
    for out in outputs:
        record = persistence._read_record(out)
        mtime = snakemake_mtime(root / out)
        if record is not None and mtime is not None and record.endtime != mtime:
            record.endtime = mtime
            persistence._write_record(out, record)
            persistence._clear_cache()


def record_snakemake_run(
    root: Path,
    outputs: Iterable[str],
    params_file: str = PARAMS_FILE,
    run_values: Mapping[str, object] | None = None,
) -> SyncReport:
    """Snakemake -> DVC: `dvc commit -f` the stages made entirely of this run's (current) outputs
    that ran with params.yaml's values. `run_values` are the params the run read from
    `params_file` (an overlay merged onto its base, as overlay.read_params_raw gives them);
    None: the run read params.yaml as it is now."""
    report = SyncReport(params_file=params_file)
    if not enabled() or not is_dvc_repo(root):
        return report
    outputs = [out for out in outputs if (root / out).exists()]
    defined = defined_stages(root)
    stages = stages_covered_by({name: stage.outs for name, stage in defined.items()}, outputs)
    if run_values is not None:
        try:
            file_values = read_yaml_mapping(root / PARAMS_FILE)
        except ConfigError as exc:
            raise RuntimeError(str(exc)) from None
        differing = params_differences(defined, stages, run_values, file_values)
        report.withheld = {**differing, **{name: [] for name in downstream_of(defined, differing, stages)}}
        stages = [name for name in stages if name not in report.withheld]
    if not stages:
        return report
    commit_stages(root, stages)
    refresh_end_times(root, [out for name in stages for out in defined[name].outs])
    report.committed = stages
    return report


def commit_stages(root: Path, names: Sequence[str]) -> None:
    """`dvc commit --force <names>` in one pass: one index and one dvc.lock write, as DVC's
    own commit does for a single target. The CLI collects the index and rewrites dvc.lock once
    per target: 54 stages took 97 s that way, 11 s here (and hundreds at paper scale)."""
    from itertools import groupby

    from dvc.repo import Repo, lock_repo

    wanted = set(names)
    with Repo(str(root)) as repo, lock_repo(repo):
        stages = [stage for stage in repo.index.stages if stage.addressing in wanted]
        missing = sorted(wanted - {stage.addressing for stage in stages})
        if missing:
            raise RuntimeError(f"dvc.yaml in {root} has no stage(s) {', '.join(missing)}")
        by_file = groupby(sorted(stages, key=lambda stage: stage.dvcfile.relpath), key=lambda stage: stage.dvcfile)
        for dvcfile, group in by_file:
            to_dump = list(group)
            for stage in to_dump:
                stage.save()
                stage.commit()
            dvcfile.dump_stages(to_dump, update_pipeline=False)


def dag_outputs(workflow: SnakemakeWorkflow) -> list[str]:
    """Every output of every job in Snakemake's DAG of this run (ran, or found up to date)."""
    dag = workflow.dag
    if dag is None:
        return []
    return sorted({str(out) for job in dag.jobs for out in job.output})
