"""Credentials never reach a record: refuse them in params, scrub texts before they are written or logged.

Params are copied verbatim by DVC (dvc.lock) and Snakemake (.snakemake/), so they must hold no
credential at all: `credential_in` says what in a configured string carries one (a URL's
userinfo, a credential-named query parameter, a string shaped like a provider's API key), in
words that never repeat it, and the params schema refuses such a value naming its key. Keys
live in the environment (an openai model's `api_key_env`).

Texts that may quote a credential anyway (an error quoting user input, a server echoing our
request, a log line of an HTTP library) are scrubbed: URLs lose their userinfo and the values
of credential-named query parameters, Authorization values and key-shaped strings are
replaced, and so are the values of the key variables (`environment_secrets`: the variables
params name in `api_key_env`, and those named like a credential, e.g. OPENAI_API_KEY, HF_TOKEN).
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Iterable, Mapping
from typing import overload
from urllib.parse import unquote

REDACTED = "[redacted]"
# Query parameter names that carry credentials (case-insensitive; "api-key", "X-Api-Key", "access_token" ...).
SECRET_NAME = re.compile(r"key|token|secret|passw|pwd|auth|credential|signature|sig$|session", re.IGNORECASE)
URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+")
# "Authorization: Bearer abc" / "Basic dXNlcjpwdw==" in a server's echo of our request.
AUTH_VALUE = re.compile(r"\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{4,}", re.IGNORECASE)
# Strings shaped like a provider's API key or token: OpenAI/Anthropic `sk-`, Hugging Face `hf_`,
# GitHub `ghp_`.../`github_pat_`, GitLab `glpat-`, an AWS access key id, Slack `xox?-`, Google `AIza`.
TOKEN = re.compile(
    r"(?<![A-Za-z0-9])(?:sk-[A-Za-z0-9_-]{16,}|hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9-]{10,}"
    r"|AIza[0-9A-Za-z_-]{35})"
)
# Environment variables whose values are credentials by their name (a word of the name, so
# TOKENIZERS_PARALLELISM and TIKTOKEN_CACHE_DIR are not).
SECRET_VARIABLE = re.compile(
    r"(?:^|_)(?:API_?KEY|ACCESS_?KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIALS?)(?:_|$)", re.IGNORECASE
)
MIN_NAMED_SECRET = 8  # a shorter value of a variable named like a credential is a flag ("1", "false"), not a key
MIN_KEY_SECRET = 4  # the value of a configured api_key_env


def _scrub_query(query: str) -> str:
    pairs = []
    for pair in query.split("&"):
        name, sep, value = pair.partition("=")
        pairs.append(f"{name}={REDACTED}" if sep and value and SECRET_NAME.search(unquote(name)) else pair)
    return "&".join(pairs)


def _split_url(url: str) -> tuple[str, str, str, str | None]:
    """(scheme, netloc, path, query or None; the fragment stays in the query or path). By hand,
    not urlsplit: that refuses a netloc such as "[redacted]@host", so scrubbing would not be
    idempotent, and it must cope with any text a URL pattern matched."""
    scheme, _, rest = url.partition("://")
    ends = [index for index in (rest.find(c) for c in "/?#") if index >= 0]
    netloc, tail = rest[: min(ends, default=len(rest))], rest[min(ends, default=len(rest)) :]
    path, mark, query = tail.partition("?")
    return scheme, netloc, path, query if mark else None


def scrub_url(url: str) -> str:
    """`url` without its userinfo and with credential-like query values replaced."""
    if "://" not in url:
        return url
    scheme, netloc, path, query = _split_url(url)
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rsplit('@', 1)[1]}"
    return f"{scheme}://{netloc}{path}" + ("" if query is None else f"?{_scrub_query(query)}")


def scrub_urls(text: str) -> str:
    """Every URL in `text` scrubbed (scrub_url); the rest unchanged."""
    return URL.sub(lambda match: scrub_url(match.group(0)), text)


def scrub_text(text: str, secrets: Iterable[str] = ()) -> str:
    """For error texts and log lines: URLs scrubbed, authorization header values, key-shaped
    strings and the given `secrets` (in any case) replaced."""
    text = scrub_urls(text)
    text = AUTH_VALUE.sub(lambda match: f"{match.group(1)}{match.group(2)}{REDACTED}", text)
    text = TOKEN.sub(REDACTED, text)
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = re.sub(re.escape(secret), REDACTED, text, flags=re.IGNORECASE)
    return text


def credential_in(text: str) -> str | None:
    """What in a configured string carries a credential, in words that do not repeat it
    (the URL is shown scrubbed); None when nothing does."""
    for match in URL.finditer(text):
        url = match.group(0)
        _, netloc, _, query = _split_url(url)
        if "@" in netloc:
            return f"a user name or password in the URL '{scrub_url(url)}'"
        names = [
            unquote(name)
            for name, sep, value in (pair.partition("=") for pair in (query or "").split("&"))
            if sep and value and SECRET_NAME.search(unquote(name))
        ]
        if names:
            return f"the query parameter {names[0]!r} of the URL '{scrub_url(url)}'"
    if TOKEN.search(text):
        return "a string shaped like an API key or token"
    return None


_KEY_VARIABLES: set[str] = set()  # environment variables params name as api_key_env


def note_key_variables(names: Iterable[str]) -> None:
    """Remember the environment variables params name as holding keys (`api_key_env`): their
    values are scrubbed from every error text from now on (environment_secrets)."""
    _KEY_VARIABLES.update(name for name in names if name)


def environment_secrets(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The credentials this process can see: the values of the key variables params named
    (note_key_variables) and of the variables named like a credential (SECRET_VARIABLE)."""
    environ = os.environ if environ is None else environ
    found = []
    for name, value in environ.items():
        value = value.strip()
        if (name in _KEY_VARIABLES and len(value) >= MIN_KEY_SECRET) or (
            len(value) >= MIN_NAMED_SECRET and SECRET_VARIABLE.search(name)
        ):
            found.append(value)
    return tuple(found)


def scrub_message(text: str) -> str:
    """An error text as the user may see it: scrub_text with the environment's credentials."""
    return scrub_text(text, environment_secrets())


@overload
def scrub(value: str) -> str: ...


@overload
def scrub(value: Mapping[str, object]) -> dict[str, object]: ...


@overload
def scrub(value: object) -> object: ...


def scrub(value: object) -> object:
    """A JSON-like record (dicts, lists, strings) with the URLs in every string scrubbed."""
    if isinstance(value, str):
        return scrub_urls(value)
    if isinstance(value, dict):
        return {key: scrub(inner) for key, inner in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub(inner) for inner in value]
    return value


_LOG_SECRETS: set[str] = set()
_log_lock = threading.Lock()
_log_installed = False


def scrub_logs(secrets: tuple[str, ...] = ()) -> None:
    """Scrub every log record made from now on, in any library (httpx logs each request's full
    URL, userinfo included): URLs, authorization values and `secrets` are replaced."""
    global _log_installed
    with _log_lock:
        _LOG_SECRETS.update(s for s in secrets if s)
        if _log_installed:
            return
        _log_installed = True
        make_record = logging.getLogRecordFactory()

        def scrubbed_record(*args: object, **kwargs: object) -> logging.LogRecord:
            record = make_record(*args, **kwargs)
            try:
                message = record.getMessage()
            except Exception:  # a malformed record is the logging module's to report, not ours
                return record
            clean = scrub_text(message, tuple(_LOG_SECRETS))
            if clean != message:
                record.msg, record.args = clean, ()
            return record

        logging.setLogRecordFactory(scrubbed_record)
