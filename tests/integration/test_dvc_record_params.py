"""Issue 30, principle 4: DVC's record never claims what did not happen. A Snakemake run with
another params file (an overlay) than params.yaml, which DVC reads, must not be committed to
dvc.lock as params.yaml's: the `onsuccess` sync commits only the stages that ran with
params.yaml's values, says which it left out and why, and `dvc status` reports those changed.

The issue's example, on the default project after `dvc repro render` (the session's shared
project): `snakemake results/metrics/orderprobe/oracle.json --config params=strict.yaml` with an
overlay setting OrderProbe's headline mode to strict. Before, the sync committed score and
aggregate with params.yaml's `headline_mode: default` and `dvc status` called them up to date."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from helpers import run, tool_env

pytestmark = [pytest.mark.mirror, pytest.mark.slow]

TARGET = "results/metrics/orderprobe/oracle.json"
RAN_WITH_OVERLAY = ["aggregate@oracle-orderprobe", "score@oracle-orderprobe"]


def line(output: str, prefix: str) -> str:
    found = [text for text in output.splitlines() if text.startswith(prefix)]
    assert len(found) == 1, output
    return found[0]


def test_an_overlay_run_is_not_recorded_as_params_yamls(rendered_project: tuple[Path, str], mirrors: list[Path]):
    project, _ = rendered_project
    env = tool_env(mirrors)
    (project / "strict.yaml").write_text(
        "overlay_of: params.yaml\nbenchmarks:\n  orderprobe:\n    score:\n"
        "      recovery:\n        headline_mode: strict\n",
        encoding="utf-8",
    )
    ran = run(
        ["snakemake", TARGET, "--cores", "2", "--resources", "gpu=0", "--config", "params=strict.yaml"], project, env
    )
    out = ran.stdout + ran.stderr
    # generate ran with params.yaml's values for the keys DVC lists for it: committed
    committed = line(out, "dvc-sync: dvc commit recorded").split(": ", 2)[-1].split(", ")
    assert "generate@oracle" in committed and not set(RAN_WITH_OVERLAY) & set(committed), out
    withheld = line(out, "dvc-sync: not recorded in dvc.lock")
    assert withheld == (
        "dvc-sync: not recorded in dvc.lock, as they did not run with params.yaml's values, which DVC reads: "
        "aggregate@oracle-orderprobe, score@oracle-orderprobe (other values in strict.yaml: "
        "benchmarks.orderprobe.score); `dvc status` reports them changed. To record this run: `idiombench "
        "merge-params strict.yaml --out params.yaml && dvc commit -f aggregate@oracle-orderprobe "
        "score@oracle-orderprobe`"
    )
    status = json.loads(run(["dvc", "status", "--json"], project, env).stdout or "{}")
    assert set(RAN_WITH_OVERLAY) <= set(status) and "generate@oracle" not in status, status
    lock = yaml.safe_load((project / "dvc.lock").read_text(encoding="utf-8"))["stages"]
    assert not set(RAN_WITH_OVERLAY) & set(lock)  # never recorded, with any params
    assert lock["generate@oracle"]["outs"]

    # the line's remedy makes that run DVC's record, truthfully: params.yaml now has its values
    run(["idiombench", "merge-params", "strict.yaml", "--out", "params.yaml"], project, env)
    run(["dvc", "commit", "-f", *RAN_WITH_OVERLAY], project, env)
    assert json.loads(run(["dvc", "status", "--json", *RAN_WITH_OVERLAY], project, env).stdout or "{}") == {}
    lock = yaml.safe_load((project / "dvc.lock").read_text(encoding="utf-8"))["stages"]
    recorded = lock["score@oracle-orderprobe"]["params"]["params.yaml"]["benchmarks.orderprobe.score"]
    assert recorded["recovery"]["headline_mode"] == "strict"
