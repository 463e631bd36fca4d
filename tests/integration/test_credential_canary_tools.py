"""No credential reaches the tools' records (issue 30, principle 2), in one project:

- params holding a credential (a canary in base_url's userinfo) are refused by every entry:
  `dvc repro` and Snakemake fail in one line that names the key and never the canary, and
  nothing they write (dvc.lock, .dvc/, .snakemake/) holds it;
- the API key (a canary, in the environment) that the endpoint echoes back in its error bodies
  reaches none of what the main job writes: Snakemake's records, dvc.lock (the onsuccess
  commit), `dvc repro`'s output, the MLflow store (runs' params, tags, artifacts), the report's
  PDF text and tables, the generations and scores.
The unit side (schema, CLI, error texts): tests/unit/test_credential_canary.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from canary import CANARY, KEY_ENV, Echo, echo_server, files_with_canary, hits
from helpers import pdf_text, run, tool_env
from idiombench.core.io import read_parquet

pytestmark = [pytest.mark.mirror, pytest.mark.slow]

BENCH = "chengyu-bench"  # the model's one benchmark: the smallest job that reaches the report


def write_params(project: Path, params: dict) -> None:
    (project / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")


def failing(cmd: list[str], project: Path, env: dict[str, str]) -> str:
    result = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode != 0, f"{' '.join(cmd)} accepted params holding a credential:\n{result.stdout}"
    return result.stdout + result.stderr


def test_no_credential_reaches_dvc_snakemake_mlflow_or_the_report(
    rendered_project: tuple[Path, str], mirrors: list[Path]
):
    project, _ = rendered_project
    env = {
        **tool_env(mirrors),
        "MLFLOW_TRACKING_URI": f"sqlite:///{project / 'mlflow.db'}",
        KEY_ENV: f"{CANARY}-key",
        "NO_PROXY": "127.0.0.1,localhost",
    }
    params = yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8"))
    params["benchmarks"]["g-idiomalign"]["construct"]["pairs"] = ["French_Japanese"]  # the smallest pair
    lock_before = (project / "dvc.lock").read_text(encoding="utf-8")
    with echo_server() as port:
        endpoint = f"http://127.0.0.1:{port}/gateway/v1?api-version=2024-06-01"
        model = {
            "backend": "openai",
            "display_name": "gateway model",
            "model": "served",
            "base_url": endpoint,
            "api_key_env": KEY_ENV,
            "concurrency": 2,
            "max_retries": 0,
            "timeout_s": 30,
            "batch_size": 64,
            "max_failed_share": 1.0,
            "benchmarks": [BENCH],
        }

        # Refused: the credential in params. DVC runs check-params first; Snakemake parses params.
        params["models"] = {"gw": {**model, "base_url": endpoint.replace("//", f"//al:{CANARY}@")}}
        write_params(project, params)
        outputs = [
            failing(["dvc", "repro"], project, env),
            failing(["snakemake", "-n", "--cores", "2", "reports/all_tables.pdf"], project, env),
        ]
        for output in outputs:
            assert hits(output) == 0, output
            assert "models.gw.base_url: holds a user name or password in the URL" in output, output
        assert (project / "dvc.lock").read_text(encoding="utf-8") == lock_before
        assert files_with_canary(project, skip=("params.yaml",)) == {}

        # Run: the key in the environment; the endpoint echoes it back in half of its answers.
        params["models"] = {"gw": model}
        write_params(project, params)
        ran = run(
            ["snakemake", "reports/all_tables.pdf", "--cores", "2", "--resources", "gpu=0"], project, env, timeout=1800
        )
        repro = run(["dvc", "repro"], project, env)
    assert any(hits(seen) for seen in Echo.seen), "the key never reached the endpoint"
    assert Echo.calls > 2
    assert hits(ran.stdout + ran.stderr + repro.stdout + repro.stderr) == 0
    assert "dvc-sync: dvc commit recorded" in ran.stdout + ran.stderr  # the onsuccess commit wrote dvc.lock
    assert f"127.0.0.1:{port}/gateway/v1?api-version=2024-06-01" in (project / "dvc.lock").read_text(encoding="utf-8")
    # What was written: Snakemake's and DVC's records, the MLflow store (its SQLite file and
    # artifacts), the results, the report's tables and figures.
    written = files_with_canary(project)
    assert written == {}, written
    assert any((project / ".snakemake" / "metadata").iterdir()) and (project / "mlflow.db").is_file()
    assert [p for p in (project / "mlruns").rglob("*.parquet")], "no MLflow artifact was written"
    # ... though the echoed key was there to leak: the generations record the 401s, scrubbed.
    errors = [
        row["error"]
        for path in (project / "results" / "generations" / "gw").rglob("*.parquet")
        for row in read_parquet(path).to_pylist()
        if row["error"]
    ]
    assert errors and all("HTTP 401" in error and "[redacted]" in error for error in errors)
    text = pdf_text(project / "reports" / "all_tables.pdf")
    assert hits(text) == 0 and "gateway model" in text
