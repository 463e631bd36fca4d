"""The Snakemake workflow and dvc.yaml describe the same stages: the same jobs (matched by
their outputs), the same inputs/dependencies, and the same commands."""

from __future__ import annotations

from pathlib import Path

from graphs import assert_same_graphs, snakemake_jobs
from helpers import run, tool_env

ROOT = Path(__file__).resolve().parents[2]


def test_snakemake_and_dvc_have_the_same_stages_edges_and_commands(make_project):
    project = make_project()
    snake = assert_same_graphs(project)
    # A stage depends on its own benchmark's code records, never on a benchmark's source folder.
    build = next(job for job in snake.values() if job.name == "build benchmark=orderprobe")
    assert build.inputs == {"data/raw/orderprobe", "results/code/orderprobe/data.json"}, build
    score = next(job for job in snake.values() if job.name.startswith("score ") and "benchmark=semanticqa" in job.name)
    assert "results/code/semanticqa/package.json" in score.inputs, score
    assert not any(path.startswith(("src/idiombench/benchmarks", "results/code/orderprobe")) for path in score.inputs)


def test_a_configured_label_file_is_an_input_of_snakemakes_attention_jobs(make_project):
    """Besides dvc.yaml's data/annotations directory (which the test above matches), Snakemake
    gets the label file itself: it dates a directory by its own mtime, so an edited file
    inside it would go unnoticed."""
    import yaml

    project = make_project()
    labels = "data/annotations/g-idiomalign-attention.csv"
    (project / labels).write_text("prompt_id,label\n", encoding="utf-8")
    params = yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8"))
    params["benchmarks"]["g-idiomalign"]["attention"]["annotations"] = labels
    (project / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")
    jobs = snakemake_jobs(project)
    attention = [job for job in jobs.values() if job.name.startswith("attention ")]
    assert attention and all({labels, "data/annotations"} <= job.inputs for job in attention), attention


def test_every_dvc_params_key_exists_in_params_yaml(make_project):
    """DVC fails on a params key that is missing from params.yaml: params.yaml spells out every section."""
    import yaml
    from dvc.repo import Repo

    project = make_project()
    params = yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8"))
    with Repo(str(project)) as repo:
        keys = {
            key
            for stage in repo.index.stages
            for dep in stage.deps
            if type(dep).__name__ == "ParamsDependency" and Path(dep.fs_path).name == "params.yaml"
            for key in dep.params
        }
    assert keys
    for key in keys:
        node = params
        for part in key.split("."):
            assert isinstance(node, dict) and part in node, f"params.yaml lacks {key}"
            node = node[part]


def test_dvc_yaml_is_what_the_registry_generates():
    """dvc.yaml is generated (`idiombench dvc-yaml`): the committed file is its output, so a
    benchmark added to the registry reaches DVC only through the generator."""
    from idiombench.pipeline.dag import dvc_yaml

    committed = (ROOT / "dvc.yaml").read_text(encoding="utf-8")
    assert committed == dvc_yaml(), "dvc.yaml differs from `idiombench dvc-yaml`'s output: rerun it"
    check = run(["idiombench", "dvc-yaml", "--check"], ROOT, tool_env())
    assert "up to date" in check.stdout + check.stderr


def test_dvc_yaml_check_fails_on_a_hand_edited_file(tmp_path: Path):
    import subprocess

    edited = tmp_path / "dvc.yaml"
    edited.write_text(
        (ROOT / "dvc.yaml").read_text(encoding="utf-8").replace("- data\n", "- data\n        - seed\n", 1),
        encoding="utf-8",
    )
    result = subprocess.run(
        ["idiombench", "dvc-yaml", "--check", "--out", str(edited)],
        cwd=tmp_path,
        env=tool_env(),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "is not what the registry generates" in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result.stderr


def test_construct_depends_on_its_own_package_only():
    from idiombench.pipeline.dag import benchmark_nodes, construct_deps, package_record

    for node in benchmark_nodes():
        if node.constructs:
            deps = construct_deps(node)
            assert package_record(node.name) in deps and not any(
                d.startswith("src/idiombench/benchmarks") for d in deps
            )
