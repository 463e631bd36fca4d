"""Any OpenAI-compatible chat completions endpoint: hosted APIs, `vllm serve`, llama.cpp server...

Built on the official `openai` SDK with the SDK's own retries off (max_retries=0): this
module retries itself, so that the policy is the one documented here and tested:
  - retried: HTTP 429 and 5xx, timeouts, connection errors; at most `max_retries` times;
  - delay: the server's Retry-After (or retry-after-ms) when present, else
    `retry_backoff_s * 2**retry`; both capped at `max_backoff_s`;
  - anything else (400, 401, 404, ...) or a request still failing after the retries becomes
    a Completion with `error` set and finish_reason "error": the driver counts it; one bad
    request never stops the run.
Requests of a batch run concurrently (at most `concurrency` in flight) on the SDK's async
client, in one event loop per batch; completions come back in request order.

`timeout_s` is a deadline for the whole attempt (connecting, sending, and receiving the full
response), not only httpx's per-read timeout: a server that sends its response a few bytes at
a time never trips a per-read timeout, so each attempt runs under `asyncio.wait_for`, whose
cancellation closes the connection (the total timeout httpx's maintainers point to,
encode/httpx#1450: a thread cannot abandon a blocking read cleanly).

Identity: the endpoint (the base URL, scrubbed: a gateway routes `/qwen/v1` and `/llama/v1` to
different models), the model name and the request fields this backend fixes (the token-limit
field's name, n, the seed rule); the messages, sampling and seed are in every request's key.

The API key is read only from the environment variable named by `api_key_env`, handed to
the client and nowhere else: it is not in identity(), not in any log line, and error texts
are scrubbed of it (a server could echo it back), as of any credential in `base_url`'s
userinfo (params refuse one; a base_url given in code may still hold one) and of the
environment's other credentials (idiombench.core.redact).
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import logging
import os
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote, urlsplit

from ...core.errors import ConfigError
from ...core.generation_types import BackendBase, Completion, Request
from ...core.redact import environment_secrets, scrub_logs, scrub_text, scrub_url
from ..config import OpenAIModel
from .seeds import sample_seed

if TYPE_CHECKING:
    from openai import AsyncOpenAI
    from openai.types.chat import ChatCompletion

log = logging.getLogger(__name__)

# Sent when `api_key_env` is null: the SDK insists on a key, servers without auth ignore it.
NO_KEY = "EMPTY"
ERROR_DETAIL_CHARS = 300
SAMPLES_PER_REQUEST = 1  # `n`: one sample per request, each with its own seed (seeds.sample_seed)
SEED_RULE = "seed + sample_index"  # the `seed` sent (seeds.sample_seed), named in the identity
T = TypeVar("T")


class OpenAIBackend(BackendBase):
    """`types.Backend` over an OpenAI-compatible `/chat/completions` endpoint."""

    def __init__(
        self,
        config: OpenAIModel,
        *,
        name: str | None = None,
        environ: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        import openai  # deferred: only generate jobs on this backend need the SDK loaded

        self._openai = openai
        self._config = config
        self._sleep = sleep  # None: asyncio.sleep (the other requests go on meanwhile)
        self._key = _read_key(config, name or config.model, os.environ if environ is None else environ)
        self._secrets = (
            *((self._key,) if self._key != NO_KEY else ()),
            *url_secrets(config.base_url),
            *environment_secrets(),
        )
        scrub_logs(self._secrets)  # the SDK and httpx log request URLs (userinfo included)
        self._counts = {"requests": 0, "retries": 0, "failed": 0}

    def identity(self) -> dict[str, object]:
        return {
            "backend": "openai",
            "endpoint": endpoint(self._config.base_url),
            "model": self._config.model,
            "request": {
                "token_limit_field": self._config.max_tokens_param,
                "n": SAMPLES_PER_REQUEST,
                "seed": SEED_RULE,
            },
        }

    def generate(self, requests: Sequence[Request]) -> list[Completion]:
        if not requests:
            return []
        return _run(self._generate(requests))

    async def _generate(self, requests: Sequence[Request]) -> list[Completion]:
        # A client per batch: its connections belong to this batch's event loop.
        client = self._openai.AsyncOpenAI(
            api_key=self._key,
            base_url=self._config.base_url,
            timeout=self._config.timeout_s,
            max_retries=0,
        )
        gate = asyncio.Semaphore(self._config.concurrency)

        async def complete(request: Request) -> Completion:
            async with gate:
                return await self._complete(client, request)

        try:
            return list(await asyncio.gather(*(complete(request) for request in requests)))
        finally:
            await client.close()

    def report(self) -> list[str]:
        counts = self._counts
        if not counts["requests"]:  # asked before any request (generate's preamble): nothing to say yet
            return []
        return [
            f"openai {_host(self._config.base_url)} model {self._config.model}: {counts['requests']} requests, "
            f"{counts['retries']} retries, {counts['failed']} failed"
        ]

    def close(self) -> None:
        pass  # each batch's client is closed with its batch

    def __repr__(self) -> str:
        return f"OpenAIBackend(host={_host(self._config.base_url)!r}, model={self._config.model!r})"

    async def _complete(self, client: AsyncOpenAI, request: Request) -> Completion:
        completion = await self._attempts(client, request)
        self._counts["requests"] += 1  # one event loop: no lock needed
        self._counts["failed"] += completion.failed
        return completion

    async def _attempts(self, client: AsyncOpenAI, request: Request) -> Completion:
        openai = self._openai
        attempts = self._config.max_retries + 1
        started = time.perf_counter()
        for attempt in range(attempts):
            attempt_started = time.perf_counter()
            retry_after: float | None = None
            try:
                # The deadline of the whole attempt: cancelling closes the connection.
                response = await asyncio.wait_for(
                    client.chat.completions.create(**self._payload(request)), timeout=self._config.timeout_s
                )
            except TimeoutError:  # asyncio.wait_for's deadline (asyncio.TimeoutError is TimeoutError)
                problem = f"timed out after {self._config.timeout_s:g} s"
            except openai.APIStatusError as error:
                problem = f"HTTP {error.status_code}: {self._detail(error.message)}"
                if not _retryable_status(error.status_code):
                    return self._failure(problem, attempt + 1, started)
                retry_after = _retry_after(error.response.headers)
            except openai.APITimeoutError:
                problem = f"timed out after {self._config.timeout_s:g} s"
            except openai.APIConnectionError as error:
                problem = f"connection error: {self._detail(_root_cause(error))}"
            except openai.APIError as error:  # e.g. a body that is not a chat completion
                return self._failure(f"{type(error).__name__}: {self._detail(str(error))}", attempt + 1, started)
            else:
                return self._success(response, time.perf_counter() - attempt_started)
            if attempt + 1 < attempts:
                delay = self._delay(attempt, retry_after)
                log.warning(
                    "openai backend: %s from %s (model %s); retry %d/%d in %.2f s",
                    problem,
                    _host(self._config.base_url),
                    self._config.model,
                    attempt + 1,
                    attempts - 1,
                    delay,
                )
                self._counts["retries"] += 1
                if self._sleep is None:
                    await asyncio.sleep(delay)
                else:
                    self._sleep(delay)
        return self._failure(problem, attempts, started)

    def _payload(self, request: Request) -> dict[str, Any]:
        """The keywords of the SDK's `create` (loosely typed: the token limit's keyword is the
        config's `max_tokens_param`)."""
        sampling = request.sampling
        payload: dict[str, object] = {
            "model": self._config.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "temperature": sampling.temperature,  # 0 is greedy
            "top_p": sampling.top_p,
            self._config.max_tokens_param: sampling.max_new_tokens,
            "seed": sample_seed(request),
            "n": SAMPLES_PER_REQUEST,
        }
        if sampling.stop:
            payload["stop"] = list(sampling.stop)
        return payload

    def _delay(self, retry: int, retry_after: float | None) -> float:
        wanted = retry_after if retry_after is not None else self._config.retry_backoff_s * 2**retry
        return max(0.0, min(wanted, self._config.max_backoff_s))

    def _success(self, response: ChatCompletion, latency_s: float) -> Completion:
        if not response.choices:
            return Completion("", None, None, "error", latency_s, error="the response has no choices")
        choice = response.choices[0]
        usage = response.usage
        return Completion(
            text=choice.message.content or "",
            prompt_tokens=usage.prompt_tokens if usage else None,
            completion_tokens=usage.completion_tokens if usage else None,
            finish_reason=choice.finish_reason or "unknown",
            latency_s=latency_s,
        )

    def _failure(self, problem: str, attempts: int, started: float) -> Completion:
        tries = "1 attempt" if attempts == 1 else f"{attempts} attempts"
        error = self._scrub(f"{problem} ({tries}, {_host(self._config.base_url)}, model {self._config.model})")
        return Completion("", None, None, "error", time.perf_counter() - started, error=error)

    def _detail(self, text: str) -> str:
        text = self._scrub(" ".join(str(text).split()))
        return text if len(text) <= ERROR_DETAIL_CHARS else text[:ERROR_DETAIL_CHARS] + "..."

    def _scrub(self, text: str) -> str:
        # The key, the URL's userinfo (plain, %-encoded and as a Basic credential), any URL and
        # any Authorization value a server echoes back.
        return scrub_text(text, self._secrets)


def _read_key(config: OpenAIModel, name: str, environ: Mapping[str, str]) -> str:
    if config.api_key_env is None:
        return NO_KEY
    key = environ.get(config.api_key_env, "").strip()
    if not key:
        raise ConfigError(
            f"model {name}: the environment variable {config.api_key_env} (its api_key_env) is not set; "
            f"export the API key there, or set api_key_env: null for an endpoint without authentication"
        )
    return key


def url_secrets(base_url: str) -> tuple[str, ...]:
    """The credentials in a URL's userinfo, in every form a server could echo them."""
    parts = urlsplit(base_url)
    if "@" not in parts.netloc:
        return ()
    userinfo = parts.netloc.rsplit("@", 1)[0]
    user, _, password = userinfo.partition(":")
    plain = f"{unquote(user)}:{unquote(password)}"
    basic = base64.b64encode(plain.encode("utf-8")).decode("ascii")
    return tuple(s for s in {userinfo, plain, basic, unquote(password), password} if len(s) >= 4)


def endpoint(base_url: str) -> str:
    """The endpoint as the identity names it: the base URL scrubbed (redact.scrub_url), without
    a trailing '/' (the SDK adds one: `.../v1` and `.../v1/` are one endpoint)."""
    return scrub_url(base_url.strip()).rstrip("/")


def _run(coroutine: Coroutine[object, None, T]) -> T:
    """Run a batch's coroutine to completion: in a loop of its own, on a thread of its own when
    the caller is itself inside an event loop (e.g. a notebook)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="openai-backend") as pool:
        return pool.submit(asyncio.run, coroutine).result()


def _root_cause(error: BaseException) -> str:
    """What happened under the SDK's "Connection error.": the innermost cause, an OS error as
    errno and its text ("[Errno 111] Connection refused"), whatever the HTTP stack wraps it in
    (anyio raises "All connection attempts failed" while handling the refused connection: an OS
    error in the context counts; other context, e.g. an event-loop probe's, does not)."""
    root = error
    while (inner := root.__cause__ or _os_error(root.__context__)) is not None and inner is not root:
        root = inner
    if isinstance(root, OSError) and root.errno:
        return f"[Errno {root.errno}] {os.strerror(root.errno)}"
    return str(root) or str(error)


def _os_error(error: BaseException | None) -> OSError | None:
    return error if isinstance(error, OSError) else None


def _host(base_url: str) -> str:
    """host[:port] of the endpoint, never the user:password part of the URL."""
    parts = urlsplit(base_url)
    host = parts.hostname or base_url
    return f"{host}:{parts.port}" if parts.port else host


def _retryable_status(status: int) -> bool:
    return status == 429 or status >= 500


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asks us to wait: retry-after-ms, or Retry-After as seconds or a date."""
    if (millis := headers.get("retry-after-ms")) is not None:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return email.utils.parsedate_to_datetime(value).timestamp() - time.time()
    except (TypeError, ValueError):
        return None


def make(name: str, config: OpenAIModel, **_: object) -> OpenAIBackend:
    """Entry point for backends.make_backend."""
    return OpenAIBackend(config, name=name)
