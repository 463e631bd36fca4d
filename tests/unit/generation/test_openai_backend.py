"""The openai backend end to end against a small OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from idiombench.core.errors import ConfigError
from idiombench.core.generation_types import ItemContext, Message, Request, Sampling
from idiombench.generation.backends.openai import OpenAIBackend, make
from idiombench.generation.config import OpenAIModel

KEY = "sk-test-5f1d0c9a-do-not-leak"
KEY_ENV = "IDIOMBENCH_TEST_OPENAI_KEY"


@dataclass
class FakeServer:
    """Scripted /v1/chat/completions. The reply echoes the last user message.

    failures[content]: statuses to answer (in order) before succeeding for that content;
    a status 0 means "never succeed" (always 503). delay_s: every answer waits this long.
    hold_until: the first requests wait (up to 30 s) until this many are in flight at once, so
    that a concurrency limit is reached however busy the machine is."""

    port: int = 0
    failures: dict[str, list[int]] = field(default_factory=dict)
    delay_s: float = 0.0
    drip_s: float = 0.05  # content "drip-body" / "drip-all": the body / the whole response, a byte per drip_s
    paths: list[str] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)
    bodies: list[dict] = field(default_factory=list)
    attempts: dict[str, int] = field(default_factory=dict)
    in_flight: int = 0
    max_in_flight: int = 0
    hold_until: int = 0
    reached: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


def make_handler(server: FakeServer):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # keep test output quiet
            pass

        def do_POST(self) -> None:
            if not self.path.endswith("/v1/chat/completions"):  # any gateway prefix: /<route>/v1/...
                return self.reply(404, {"error": {"message": f"no route {self.path}"}})
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            content = body["messages"][-1]["content"]
            if content.startswith("drip-"):
                return self.drip(content)
            with server.lock:
                server.paths.append(self.path)
                server.authorizations.append(self.headers.get("Authorization"))
                server.bodies.append(body)
                server.attempts[content] = server.attempts.get(content, 0) + 1
                attempt = server.attempts[content]
                server.in_flight += 1
                server.max_in_flight = max(server.max_in_flight, server.in_flight)
                if server.in_flight >= server.hold_until:
                    server.reached.set()
            try:
                server.reached.wait(timeout=30)
                time.sleep(server.delay_s)
                script = server.failures.get(content, [])
                if script == [0]:
                    return self.reply(503, {"error": {"message": "overloaded"}})
                if attempt <= len(script):
                    status = script[attempt - 1]
                    if content == "echo-auth":  # a careless server that echoes the credentials
                        return self.reply(status, {"error": {"message": f"bad key {self.headers['Authorization']}"}})
                    headers = {"Retry-After": "0"} if status == 429 else {}
                    return self.reply(status, {"error": {"message": f"scripted {status}"}}, headers)
                words = content.split()
                limit = body.get("max_tokens") or body.get("max_completion_tokens")
                finish = "length" if len(words) > limit else "stop"
                self.reply(
                    200,
                    {
                        "id": f"chatcmpl-{attempt}",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": " ".join(words[:limit])},
                                "finish_reason": finish,
                                "logprobs": None,
                            }
                        ],
                        "usage": {
                            "prompt_tokens": 10 + len(body["messages"]),
                            "completion_tokens": min(len(words), limit),
                            "total_tokens": 10 + len(body["messages"]) + min(len(words), limit),
                        },
                    },
                )
            finally:
                with server.lock:
                    server.in_flight -= 1

        def drip(self, content: str) -> None:
            """A valid answer sent a byte every drip_s (well under any per-read timeout): only a
            deadline on the whole response stops it. Stops when the client hangs up."""
            data = json.dumps(
                {
                    "id": "drip",
                    "object": "chat.completion",
                    "created": 0,
                    "model": "m",
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": "x" * 200}, "finish_reason": "stop"}
                    ],
                }
            ).encode()
            head = (
                f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
            ).encode()
            if content == "drip-body":
                self.wfile.write(head)
            try:
                for byte in head + data if content == "drip-all" else data:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(server.drip_s)
            except OSError:  # the client gave up: the connection is closed
                pass

        def reply(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv(KEY_ENV, KEY)
    state = FakeServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
    httpd.daemon_threads = True
    state.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield state
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


def config(server: FakeServer, **overrides) -> OpenAIModel:
    values = {
        "backend": "openai",
        "model": "served-model",
        "base_url": server.base_url,
        "api_key_env": KEY_ENV,
        "concurrency": 2,
        "max_retries": 3,
        "timeout_s": 5.0,
        "retry_backoff_s": 0.01,
        **overrides,
    }
    return OpenAIModel(**values)


def request(text: str, *, index: int = 0, seed: int = 11, sampling: Sampling | None = None) -> Request:
    return Request(
        key=f"key-{text}-{index}",
        prompt_id=f"prompt-{text}",
        messages=(Message("system", "answer briefly"), Message("user", text)),
        sampling=sampling or Sampling(),
        seed=seed,
        sample_index=index,
        item=ItemContext(benchmark="b", task="t", setting="s", item_id=text, input=text),
    )


def test_end_to_end_in_order_with_usage_and_bearer_key(server):
    backend = OpenAIBackend(config(server))
    texts = [f"item {i} " + "word " * i for i in range(6)]
    completions = backend.generate([request(t) for t in texts])
    assert [c.text for c in completions] == [" ".join(t.split()) for t in texts]
    assert [c.completion_tokens for c in completions] == [2 + i for i in range(6)]
    assert all(c.prompt_tokens == 12 for c in completions)  # 10 + two messages
    assert all(c.finish_reason == "stop" and c.error is None and c.latency_s > 0 for c in completions)
    assert server.authorizations == [f"Bearer {KEY}"] * 6
    backend.close()


def test_request_body_carries_sampling_seed_and_stop(server):
    backend = OpenAIBackend(config(server))
    sampled = Sampling(temperature=0.8, top_p=0.95, max_new_tokens=64, stop=("\n",))
    backend.generate([request("greedy one"), request("sampled", index=2, sampling=sampled)])
    bodies = {body["messages"][-1]["content"]: body for body in server.bodies}
    greedy = bodies["greedy one"]
    assert greedy == {
        "model": "served-model",
        "messages": [{"role": "system", "content": "answer briefly"}, {"role": "user", "content": "greedy one"}],
        "temperature": 0.0,
        "top_p": 1.0,
        "max_tokens": 256,
        "seed": 11,
        "n": 1,
    }
    sampled_body = bodies["sampled"]
    assert (sampled_body["temperature"], sampled_body["top_p"], sampled_body["max_tokens"]) == (0.8, 0.95, 64)
    assert sampled_body["seed"] == 13  # run seed + sample index
    assert sampled_body["stop"] == ["\n"]


def test_max_completion_tokens_param(server):
    backend = OpenAIBackend(config(server, max_tokens_param="max_completion_tokens"))
    (completion,) = backend.generate([request("a b c", sampling=Sampling(max_new_tokens=2))])
    (body,) = server.bodies
    assert "max_tokens" not in body and body["max_completion_tokens"] == 2
    assert (completion.text, completion.finish_reason) == ("a b", "length")


def test_429_then_500_then_success_is_retried(server):
    server.failures["flaky"] = [429, 500]
    delays: list[float] = []
    backend = OpenAIBackend(config(server, retry_backoff_s=0.25), sleep=delays.append)
    steady, flaky = backend.generate([request("steady"), request("flaky")])
    assert (flaky.text, flaky.error) == ("flaky", None)
    assert steady.text == "steady"
    assert server.attempts == {"steady": 1, "flaky": 3}
    # Retry-After: 0 on the 429 is honoured; the 500 has none: backoff 0.25 * 2**1
    assert delays == [0.0, 0.5]
    assert backend.report() == [f"openai 127.0.0.1:{server.port} model served-model: 2 requests, 2 retries, 0 failed"]


def test_failure_after_retries_is_an_error_completion_not_a_crash(server, caplog):
    server.failures["doomed"] = [0]
    backend = OpenAIBackend(config(server, max_retries=2))
    with caplog.at_level(logging.WARNING):
        ok, doomed = backend.generate([request("fine"), request("doomed")])
    assert ok.text == "fine" and not ok.failed
    assert doomed.failed and doomed.finish_reason == "error" and doomed.text == ""
    assert "HTTP 503" in doomed.error and "overloaded" in doomed.error and "3 attempts" in doomed.error
    assert server.attempts["doomed"] == 3
    assert "retry 2/2" in caplog.text
    assert backend.report()[0].endswith("2 requests, 2 retries, 1 failed")


def test_client_errors_are_not_retried(server):
    server.failures["bad"] = [400]
    backend = OpenAIBackend(config(server))
    (bad,) = backend.generate([request("bad")])
    assert bad.failed and "HTTP 400" in bad.error and "1 attempt" in bad.error
    assert server.attempts["bad"] == 1


def test_timeouts_are_retried_then_reported(server):
    server.delay_s = 0.5
    delays: list[float] = []
    backend = OpenAIBackend(config(server, timeout_s=0.1, max_retries=1), sleep=delays.append)
    (slow,) = backend.generate([request("slow")])
    assert slow.failed and "timed out after 0.1 s" in slow.error and "2 attempts" in slow.error
    assert len(delays) == 1


@pytest.mark.parametrize("content", ["drip-body", "drip-all"])
def test_a_server_that_drips_bytes_is_cut_off_at_the_deadline(server, content):
    # One byte every 0.05 s: no single read ever waits 0.5 s, so a per-read timeout never fires
    # (the whole answer would take ~15-20 s); the attempt's deadline does.
    backend = OpenAIBackend(config(server, timeout_s=0.5, max_retries=1), sleep=lambda s: None)
    started = time.perf_counter()
    (dripped,) = backend.generate([request(content)])
    elapsed = time.perf_counter() - started
    assert dripped.failed and "timed out after 0.5 s" in dripped.error and "2 attempts" in dripped.error
    assert elapsed < 8, f"took {elapsed:.1f} s: the deadline did not cut the response off"


def test_generate_works_from_inside_a_running_event_loop(server):
    """A caller already in an event loop (a notebook): the batch runs in a loop of its own thread."""
    import asyncio

    async def caller() -> list:
        return OpenAIBackend(config(server)).generate([request("inside a loop")])

    assert [c.text for c in asyncio.run(caller())] == ["inside a loop"]


def test_concurrency_limit_holds(server):
    server.delay_s = 0.05
    server.hold_until = 3  # the first three wait for each other: the limit is reached on a busy machine too
    backend = OpenAIBackend(config(server, concurrency=3))
    completions = backend.generate([request(f"r{i}") for i in range(9)])
    assert [c.text for c in completions] == [f"r{i}" for i in range(9)]
    assert server.max_in_flight == 3  # reached, never exceeded


def test_the_key_never_appears_in_errors_logs_or_identity(server, caplog):
    server.failures["echo-auth"] = [401]
    server.failures["retried"] = [0]
    backend = OpenAIBackend(config(server, max_retries=1))
    with caplog.at_level(logging.DEBUG):
        (failed,) = backend.generate([request("echo-auth")])
        backend.generate([request("retried")])
    assert failed.failed and "HTTP 401" in failed.error
    assert "bad key Bearer [redacted]" in failed.error  # the server did echo it; we scrubbed it
    assert KEY not in failed.error
    assert KEY not in caplog.text
    assert KEY not in json.dumps(backend.identity())
    assert KEY not in repr(backend)
    assert server.authorizations[0] == f"Bearer {KEY}"  # it was sent, only to the server


def test_identity_is_the_scrubbed_endpoint_the_model_and_the_fixed_request_fields(server):
    backend = OpenAIBackend(config(server, base_url=f"http://user:pw@127.0.0.1:{server.port}/qwen/v1/?api_key=k&v=2"))
    assert backend.identity() == {
        "backend": "openai",
        "endpoint": f"http://[redacted]@127.0.0.1:{server.port}/qwen/v1/?api_key=[redacted]&v=2",
        "model": "served-model",
        "request": {"token_limit_field": "max_tokens", "n": 1, "seed": "seed + sample_index"},
    }
    hosted = OpenAIBackend(config(server, base_url="https://api.example.com/v1/"))
    assert hosted.identity()["endpoint"] == "https://api.example.com/v1"  # the SDK adds the '/' anyway


# (what changes, the model entry's change): each decides what the endpoint answers
OPENAI_FIELDS = [
    ("gateway route", {"base_url": "/llama/v1"}),
    ("model", {"model": "other-model"}),
    ("token limit field", {"max_tokens_param": "max_completion_tokens"}),
]


@pytest.fixture
def generated_once(server, tmp_path_factory):
    """(a project whose openai model behind a gateway route generated everything once, its model
    entry): an unchanged rerun is all cache hits, the same base URL with a trailing '/' too."""
    from gen_project import write_project

    entry = {
        "backend": "openai",
        "model": "served-model",
        "base_url": f"{server.base_url.removesuffix('/v1')}/qwen/v1",
        "api_key_env": KEY_ENV,
        "concurrency": 4,
        "max_retries": 0,
        "batch_size": 16,
    }
    project = write_project(tmp_path_factory.mktemp("openai-project"), {"api": entry}, consistency_n=1)
    first = run_stage(project)
    assert first["generated"] == first["requests"] > 0
    write_project(project, {"api": {**entry, "base_url": entry["base_url"] + "/"}}, consistency_n=1)
    assert run_stage(project)["cached"] == first["requests"]
    return project, entry, first["requests"]


def run_stage(project) -> dict:
    from idiombench.pipeline.config import load_params
    from idiombench.stages.generate import run_generate

    params = load_params(project / "params.yaml")
    return run_generate(
        params,
        "api",
        cache_dir=project / "cache",
        out_dir=project / "out",
        prompts_root=project / "results" / "prompts",
        items_root=project / "data" / "processed",
        logs_dir=project / "logs",
        echo=lambda line: None,
    ).summary["total"]


@pytest.mark.parametrize("change", [c for _, c in OPENAI_FIELDS], ids=[name for name, _ in OPENAI_FIELDS])
def test_a_field_that_decides_the_answer_misses_the_cache(server, generated_once, change):
    from gen_project import write_project

    project, entry, requests = generated_once
    if "base_url" in change:
        change = {"base_url": server.base_url.removesuffix("/v1") + change["base_url"]}
    write_project(project, {"api": {**entry, **change}}, consistency_n=1)
    server.paths.clear()
    totals = run_stage(project)
    assert totals["cached"] == 0 and totals["generated"] == requests
    if "base_url" in change:
        assert set(server.paths) == {"/llama/v1/chat/completions"}


def test_missing_key_variable_is_a_clear_error(server, monkeypatch):
    monkeypatch.delenv(KEY_ENV)
    with pytest.raises(ConfigError, match=f"model judge: the environment variable {KEY_ENV} .* is not set"):
        OpenAIBackend(config(server), name="judge")


def test_no_key_for_endpoints_without_auth(server):
    backend = OpenAIBackend(config(server, api_key_env=None))
    (completion,) = backend.generate([request("open")])
    assert completion.text == "open"
    assert server.authorizations == ["Bearer EMPTY"]


def test_unreachable_endpoint_is_an_error_completion(server):
    backend = OpenAIBackend(config(server, base_url="http://127.0.0.1:9/v1", max_retries=1), sleep=lambda s: None)
    (completion,) = backend.generate([request("nobody home")])
    assert completion.failed and "connection error: [Errno 111] Connection refused" in completion.error


def test_make_builds_the_backend_by_model_name(server, monkeypatch):
    backend = make("judge", config(server), seed=3, cache_root=None)
    assert backend.generate([request("via make")])[0].text == "via make"
    monkeypatch.delenv(KEY_ENV)
    with pytest.raises(ConfigError, match="model judge:"):
        make("judge", config(server))
