"""Real-browser machinery: `streamlit run` on a free loopback port, and Debian's headless Chromium.

Used by the browser tests (tests/streamlit_server.py) and by `python -m lab bench` (render times).

    with streamlit_server() as url, chromium() as browser:
        page = new_page(browser)            # page.dialogs collects any alert/confirm/prompt
        page.goto(f"{url}/tokens")
        wait_idle(page)

`browser_missing()` says why no browser can run here (None when one can).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository (app.py)
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(url: str) -> bool:
    """True when Streamlit's health endpoint answers ok."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
            return r.status == 200 and r.read().strip() == b"ok"
    except OSError:
        return False


@contextmanager
def streamlit_server(script: str = "app.py", timeout: float = 90, env: dict | None = None) -> Iterator[str]:
    """Run `streamlit run script` headless on a free 127.0.0.1 port; yield its base URL; stop it after."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true",
           "--server.port", str(port), "--server.address", "127.0.0.1",
           "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                env={**os.environ, **(env or {})})
        try:
            deadline = time.monotonic() + timeout
            while not _healthy(url):
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    tail = log.read().decode("utf-8", "replace")[-2000:]
                    raise RuntimeError(f"streamlit did not become healthy at {url}:\n{tail}")
                time.sleep(0.25)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def browser_missing() -> str | None:
    """Why Chromium + Playwright cannot run here, or None when they can."""
    if not os.path.exists(CHROMIUM):
        return f"{CHROMIUM} is missing"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Python Playwright is not installed"
    return None


@contextmanager
def chromium() -> Iterator[object]:
    """A headless Debian Chromium driven by Playwright (a playwright Browser); closed after."""
    missing = browser_missing()
    if missing:
        raise RuntimeError(missing)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def new_page(browser, width: int = 1400, height: int = 1000):
    """A fresh page whose `dialogs` list records (and dismisses) every alert/confirm/prompt."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.dialogs = []

    def on_dialog(dialog):
        page.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    return page


def wait_idle(page, timeout_ms: float = 60_000) -> None:
    """Wait until the Streamlit script has finished its run (the app reports 'notRunning')."""
    page.wait_for_selector(IDLE, timeout=timeout_ms)
