"""Headless Chromium driven over the DevTools protocol (aiohttp's websocket client), for the
MLflow UI tests and bench/tracking.py: open a page, wait until a text appears (timed), read the
page's text, click, type, take a screenshot. Needs Debian's `chromium` on PATH."""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _cjk_fontconfig(directory: Path) -> dict[str, str]:
    """Environment for Chromium with the project's Noto Sans CJK (PyPI, make setup) added to
    the system's fonts, so that Chinese, Japanese and Korean items render (Debian's chromium
    brings no CJK font); the system's fonts only where the package is missing."""
    import importlib.util
    import os

    spec = importlib.util.find_spec("rinoh_typeface_notosanscjk")
    if spec is None or not spec.submodule_search_locations:
        return dict(os.environ)
    fonts = next(iter(spec.submodule_search_locations))
    config = directory / "fonts.conf"
    config.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n'
        '  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n'
        f"  <dir>{fonts}</dir>\n  <cachedir>{directory / 'fontcache'}</cachedir>\n</fontconfig>\n",
        encoding="utf-8",
    )
    return {**os.environ, "FONTCONFIG_FILE": str(config)}


class Browser:
    """One headless Chromium with one page. Use as a context manager."""

    def __init__(self, width: int = 1600, height: int = 1000) -> None:
        if CHROMIUM is None:
            raise RuntimeError("chromium is not on PATH (`make browser` installs it)")
        self._profile = tempfile.TemporaryDirectory(prefix="idiombench-chromium-", ignore_cleanup_errors=True)
        self._process = subprocess.Popen(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-port=0",
                f"--user-data-dir={self._profile.name}",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=_cjk_fontconfig(Path(self._profile.name)),
        )
        self._loop = asyncio.new_event_loop()
        self._next_id = 0
        port_file = Path(self._profile.name) / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not port_file.is_file() or not port_file.read_text().strip():
            if time.monotonic() > deadline or self._process.poll() is not None:
                self.close()
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as response:
            page = next(t for t in json.loads(response.read()) if t["type"] == "page")
        self._loop.run_until_complete(self._connect(page["webSocketDebuggerUrl"]))
        self.call("Page.enable")
        self.call("Runtime.enable")

    async def _connect(self, url: str) -> None:
        import aiohttp

        self._session = aiohttp.ClientSession()
        self._socket = await self._session.ws_connect(url, max_msg_size=0)

    async def _call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        mine = self._next_id
        await self._socket.send_str(json.dumps({"id": mine, "method": method, "params": params}))
        while True:
            message = json.loads((await self._socket.receive()).data)
            if message.get("id") == mine:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        return self._loop.run_until_complete(self._call(method, params))

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return result.get("result", {}).get("value")

    def open(self, url: str) -> None:
        self.call("Page.navigate", url=url)

    def text(self) -> str:
        return self.evaluate("document.body ? document.body.innerText : ''") or ""

    def wait_for_text(self, *texts: str, timeout: float = 120.0) -> float:
        """Seconds until every text is on the page (innerText); TimeoutError with the page's text."""
        started = time.monotonic()
        while True:
            page = self.text()
            if all(t in page for t in texts):
                return time.monotonic() - started
            if time.monotonic() - started > timeout:
                raise TimeoutError(
                    f"not on the page after {timeout:.0f} s: "
                    f"{[t for t in texts if t not in page]}; page text: {page[:3000]!r}"
                )
            time.sleep(0.2)

    def click_text(self, text: str, selector: str = "*") -> bool:
        """Click the innermost visible element whose text is exactly `text`."""
        return bool(
            self.evaluate(f"""(() => {{
            const all = [...document.querySelectorAll({json.dumps(selector)})].filter(
                e => e.innerText && e.innerText.trim() === {json.dumps(text)} && e.offsetParent !== null);
            const inner = all.filter(e => !all.some(o => o !== e && e.contains(o)));
            if (!inner.length) return false;
            inner[0].click(); return true; }})()""")
        )

    def tidy(self) -> None:
        """Close what MLflow's UI opens over the page on a first visit: its assistant panel and hints."""
        self.click_text("Got it")
        self.evaluate("""[...document.querySelectorAll('button[aria-label=Close]')].filter(
            b => (b.closest('aside, section, div[class*=panel], div') || document.body)
                .innerText.includes('MLflow Assistant')
        ).slice(0, 1).forEach(b => b.click())""")

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        if getattr(self, "_socket", None) is not None:
            self._loop.run_until_complete(self._socket.close())
            self._loop.run_until_complete(self._session.close())
        self._loop.close()
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
        self._profile.cleanup()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
