"""Credentials never reach a record: scrub URLs and texts before they are written or logged.

A URL such as `http://user:secret@host/v1?api_key=...` in params.yaml is needed to call the
endpoint, but generation_info.json, identity/metrics JSON, MLflow params, the report, logs
and error messages only ever get its scrubbed form: the userinfo and the values of
query parameters named like a credential are replaced by REDACTED.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any
from urllib.parse import urlsplit, urlunsplit

REDACTED = "[redacted]"
# Query parameter names that carry credentials (case-insensitive; "api-key", "X-Api-Key", "access_token" ...).
SECRET_NAME = re.compile(r"key|token|secret|passw|pwd|auth|credential|signature|sig$|session", re.IGNORECASE)
URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+")
# "Authorization: Bearer abc" / "Basic dXNlcjpwdw==" in a server's echo of our request.
AUTH_VALUE = re.compile(r"\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{4,}", re.IGNORECASE)


def _scrub_query(query: str) -> str:
    pairs = []
    for pair in query.split("&"):
        name, sep, value = pair.partition("=")
        pairs.append(f"{name}={REDACTED}" if sep and value and SECRET_NAME.search(name) else pair)
    return "&".join(pairs)


def scrub_url(url: str) -> str:
    """`url` without its userinfo and with credential-like query values replaced."""
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. an unbalanced "[" in the host: keep nothing that could be a secret
        return REDACTED
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rsplit('@', 1)[1]}"
    return urlunsplit((parts.scheme, netloc, parts.path, _scrub_query(parts.query), parts.fragment))


def scrub_urls(text: str) -> str:
    """Every URL in `text` scrubbed (scrub_url); the rest unchanged."""
    return URL.sub(lambda match: scrub_url(match.group(0)), text)


def scrub_text(text: str, secrets: tuple[str, ...] = ()) -> str:
    """For error texts and log lines: URLs scrubbed, authorization header values and the given
    `secrets` (in any case) replaced."""
    text = scrub_urls(text)
    text = AUTH_VALUE.sub(lambda match: f"{match.group(1)}{match.group(2)}{REDACTED}", text)
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = re.sub(re.escape(secret), REDACTED, text, flags=re.IGNORECASE)
    return text


def scrub(value: Any) -> Any:
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

        def scrubbed_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
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
