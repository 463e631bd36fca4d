"""A canary credential and a careless OpenAI-compatible server that echoes it back, for the
tests that no credential reaches any output (tests/unit/test_credential_canary.py,
tests/integration/test_credential_canary_tools.py)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CANARY = "CaNaRy-q7Zx41k9Wv"
KEY_ENV = "IDIOMBENCH_TEST_CANARY_KEY"


class Echo(BaseHTTPRequestHandler):
    """Every other request fails with 401 and a careless body that echoes every request header,
    as sent and upper-cased, and the bearer token as a URL's userinfo; the others are answered
    with the first 20 characters of the last message."""

    calls = 0
    seen: list[str] = []

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        headers = "; ".join(f"{name}: {value}" for name, value in self.headers.items())
        token = self.headers.get("Authorization", "").removeprefix("Bearer ")
        Echo.seen.append(headers)
        Echo.calls += 1
        if Echo.calls % 2:
            message = f"denied for {headers} / {headers.upper()} / retry at http://{token}@127.0.0.1/"
            return self.reply(401, {"error": {"message": message}})
        text = body["messages"][-1]["content"][:20]
        self.reply(
            200,
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                        "logprobs": None,
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            },
        )

    def reply(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def echo_server() -> Iterator[int]:
    """The Echo server on a free 127.0.0.1 port (yielded), stopped on exit."""
    Echo.calls, Echo.seen = 0, []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def hits(text: str) -> int:
    """How often the canary occurs in `text`, in any case."""
    return text.lower().count(CANARY.lower())


def written_text(path: Path) -> str:
    """A file's bytes as text, and for Parquet (compressed) its rows as JSON too."""
    from idiombench.core.io import read_parquet

    text = path.read_bytes().decode("utf-8", errors="replace")
    if path.suffix == ".parquet":
        text += json.dumps(read_parquet(path).to_pylist(), ensure_ascii=False, default=str)
    return text


def files_with_canary(root: Path, skip: tuple[str, ...] = ()) -> dict[str, int]:
    """Every file under `root` (but those named in `skip`) whose text holds the canary, with its count."""
    found = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink() and path.name not in skip and (n := hits(written_text(path))):
            found[path.relative_to(root).as_posix()] = n
    return found
