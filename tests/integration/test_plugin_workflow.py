"""A benchmark installed as an external plugin package (the toy benchmark, pip-installed with its
entry point into a folder of its own) runs under both workflow tools with no params section
written for it and no machine path in dvc.yaml or dvc.lock (issue 37):

- `idiombench dvc-yaml` names the plugin by its module and distribution, and writes its params
  section with the benchmark's own defaults (the profile's generation defaults included) where
  DVC reads its stages' params, so `dvc repro --dry` needs nothing from params.yaml;
- Snakemake runs its data stages, and records them in dvc.lock; DVC then plans only the plugin's
  record stage (DVC cannot see files outside the project, so that stage runs every time);
- the two graphs are the same, job by job, with the plugin (tests/integration/test_dag_sync.py);
- editing the plugin's scoring code leaves its data stages current in both tools (which code each
  record covers: tests/unit/pipeline/test_records.py).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from graphs import assert_same_graphs
from helpers import ran_stages, run, tool_env
from idiombench.core.yamlfile import load_yaml_file
from plugin import FIXTURE, install_plugin, plugin_env

pytestmark = pytest.mark.slow


def one_model(project: Path) -> None:
    """params.yaml with the oracle alone (fewer jobs to plan); no section for the plugin."""
    params = load_yaml_file(project / "params.yaml")
    params["models"] = {"oracle": params["models"]["oracle"]}
    (project / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_plugin_runs_under_snakemake_and_dvc_without_a_params_section_or_a_machine_path(
    make_project, tmp_path: Path
) -> None:
    site, mirror = tmp_path / "site", tmp_path / "mirror"
    installed = install_plugin(site)
    (mirror / "toy").mkdir(parents=True)
    shutil.copy2(FIXTURE / "capitals.csv", mirror / "toy" / "capitals.csv")
    project = make_project()
    one_model(project)
    assert "toy" not in (project / "params.yaml").read_text(encoding="utf-8")  # no section written for it
    env = plugin_env(tool_env(mirror), site)

    run(["idiombench", "dvc-yaml", "--out", "dvc.yaml"], project, env)
    dvc_yaml = (project / "dvc.yaml").read_text(encoding="utf-8")
    assert "      toy: {module: toybench, distribution: toybench}" in dvc_yaml
    assert str(tmp_path) not in dvc_yaml and "site-packages" not in dvc_yaml
    section = json.loads((project / "results/params/toy.json").read_text(encoding="utf-8"))["benchmarks"]["toy"]
    assert section["generate"]["main"]["max_new_tokens"] == 16  # params.yaml's generate_defaults, not 256
    assert section["build"] == {"strip": True} and section["render"]["settings"] == ["zero_shot"]
    record = json.loads((project / "results/code/toy/package.json").read_text(encoding="utf-8"))
    assert record["distribution"] == {"name": "toybench", "version": "0.1"} and str(tmp_path) not in json.dumps(record)

    # The two graphs, job by job, with the plugin's stages in them.
    names = [job.name for job in assert_same_graphs(project, env).values()]
    assert "plugin benchmark=toy" in names and any(n.startswith("score ") and "benchmark=toy" in n for n in names)

    # Snakemake runs the plugin's data stages and records them in dvc.lock ...
    run(["snakemake", "--cores", "1", "results/prompts/toy"], project, env)
    lock = (project / "dvc.lock").read_text(encoding="utf-8")
    assert "build@toy:" in lock and "render@toy:" in lock and str(tmp_path) not in lock
    # ... after which DVC plans only the plugin's record stage (it runs every time: DVC cannot see
    # the installed files), which rewrites nothing, so nothing after it runs.
    dry = run(["dvc", "repro", "--dry", "render@toy"], project, env).stdout
    assert ran_stages(dry) == ["plugin@toy"], dry
    status = json.loads(run(["dvc", "status", "--json", "render@toy", "--with-deps"], project, env).stdout)
    assert status == {"plugin@toy": ["always changed"]}, status

    # Its scoring code changes: its package record, not its data record; its data stages stay
    # current in both tools (so under Snakemake, which dates files, no generate job reruns).
    records = {kind: project / f"results/code/toy/{kind}.json" for kind in ("data", "package")}
    before = {kind: path.read_text(encoding="utf-8") for kind, path in records.items()}
    edit(installed / "__init__.py", "pd.isna(err) and same(", "pd.isna(err) and bool(text) and same(")
    again = run(["snakemake", "-n", "results/prompts/toy"], project, env)  # its parse refreshes the records
    assert "Nothing to be done" in again.stdout + again.stderr, again.stdout
    after = {kind: path.read_text(encoding="utf-8") for kind, path in records.items()}
    assert after["data"] == before["data"] and after["package"] != before["package"]
    status = json.loads(run(["dvc", "status", "--json", "render@toy", "--with-deps"], project, env).stdout)
    assert set(status) == {"plugin@toy"}, status  # its recorded outputs changed: DVC reruns only it
