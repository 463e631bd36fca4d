"""No credential is ever recorded (issue 13, item 5): a canary secret in base_url's userinfo,
in the API key (a header) and echoed back in HTTP error bodies (also upper-cased) never
appears, in any case, in any file written under the project, the logs, the console, the
metrics model_info, the MLflow params, the report's model lines or check-params' output."""

from __future__ import annotations

import base64
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gen_project import write_project
from idiombench.cli import app
from idiombench.config import load_params
from idiombench.evaluation import model_info
from idiombench.generation.stage import run_generate
from idiombench.io import read_parquet, write_json
from idiombench.redact import REDACTED, scrub, scrub_text, scrub_url
from idiombench.report.build import model_lines
from idiombench.tracking.mlflow_runs import run_params

CANARY = "CaNaRy-q7Zx41k9Wv"
KEY_ENV = "IDIOMBENCH_TEST_CANARY_KEY"


class Echo(BaseHTTPRequestHandler):
    """Every other request fails with 401 and a careless body that echoes every request
    header, as sent and upper-cased, plus any Basic credentials decoded."""

    calls = 0
    seen: list[str] = []

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        headers = "; ".join(f"{name}: {value}" for name, value in self.headers.items())
        auth = self.headers.get("Authorization", "")
        decoded = base64.b64decode(auth.split()[1]).decode() if auth.startswith("Basic ") else ""
        Echo.seen.append(headers + " " + decoded)
        Echo.calls += 1
        if Echo.calls % 2:
            message = f"denied for {headers} / {headers.upper()} / user {decoded} at http://{decoded}@127.0.0.1/"
            return self.reply(401, {"error": {"message": message}})
        text = body["messages"][-1]["content"][:20]
        self.reply(200, {
            "id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop",
                         "logprobs": None}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        })

    def reply(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def port(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    Echo.calls, Echo.seen = 0, []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


def hits(text: str) -> int:
    return text.lower().count(CANARY.lower())


def written_text(path: Path) -> str:
    """A file's bytes as text, and for Parquet (compressed) its rows as JSON too."""
    text = path.read_bytes().decode("utf-8", errors="replace")
    if path.suffix == ".parquet":
        text += json.dumps(read_parquet(path).to_pylist(), ensure_ascii=False, default=str)
    return text


def test_a_canary_credential_reaches_no_record(tmp_path: Path, port: int, monkeypatch, caplog, capsys) -> None:
    monkeypatch.setenv(KEY_ENV, f"sk-{CANARY}-key")
    base_url = f"http://user-{CANARY}:{CANARY}-pw@127.0.0.1:{port}/v1"
    model = {"backend": "openai", "model": "served", "base_url": base_url, "api_key_env": KEY_ENV,
             "concurrency": 1, "max_retries": 0, "timeout_s": 10, "batch_size": 4, "max_failed_share": 1.0}
    project = write_project(tmp_path / "project", {"api": model})
    monkeypatch.chdir(project)
    params = load_params(project / "params.yaml")
    lines: list[str] = []
    with caplog.at_level(logging.DEBUG):
        result = run_generate(params, "api", echo=lines.append)
        info = model_info(params, "api")
        write_json(project / "results" / "metrics" / "orderprobe" / "api.json", {"model_info": info})
        records = [
            json.dumps(info), json.dumps(run_params(params, "orderprobe", "api", "zero_shot", {"model_info": info})),
            "\n".join(model_lines(params)),
            CliRunner().invoke(app, ["check-params", "--params", str(project / "params.yaml")]).output,
        ]
    # The canary did travel: to the server (the key, and the userinfo if the client sent it),
    # and back in the 401 bodies, which the generations record as scrubbed errors.
    assert any(hits(seen) for seen in Echo.seen)
    failed = result.summary["total"]["failed"]
    assert failed > 0 and result.summary["total"]["generated"] > 0
    errors = [row["error"] for path in (project / "results" / "generations").rglob("*.parquet")
              for row in read_parquet(path).to_pylist() if row["error"]]
    assert len(errors) >= failed and all("HTTP 401" in e and REDACTED in e for e in errors)
    # Nowhere recorded: every file written under the project (params.yaml is the input itself).
    written = {path: hits(written_text(path)) for path in sorted(project.rglob("*"))
               if path.is_file() and path.name != "params.yaml"}
    assert any(p.name == "generation_info.json" for p in written) and len(written) >= 6
    assert {str(p): n for p, n in written.items() if n} == {}
    captured = capsys.readouterr()
    shown = "\n".join([*lines, caplog.text, captured.out, captured.err, *records])
    assert hits(shown) == 0
    # ... while the endpoint is still recognisable in the records.
    assert f"127.0.0.1:{port}" in json.dumps(info)


def test_scrub_url_removes_userinfo_and_credential_query_values() -> None:
    url = "https://u:pw@api.example.org:8443/v1?API-Key=k1&access_token=t2&Secret=s&model=m&password=p&x=1"
    assert scrub_url(url) == (
        f"https://{REDACTED}@api.example.org:8443/v1?API-Key={REDACTED}&access_token={REDACTED}"
        f"&Secret={REDACTED}&model=m&password={REDACTED}&x=1"
    )
    assert scrub_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    assert scrub({"a": ["see http://me:pw@h/v1", 3], "b": None}) == {"a": [f"see http://{REDACTED}@h/v1", 3], "b": None}
    assert scrub_text("header Authorization: Bearer sk-abc123 and PW-Xy", ("pw-xy",)) == (
        f"header Authorization: Bearer {REDACTED} and {REDACTED}")
