"""Real-browser machinery: `streamlit run` on a free loopback port, and Debian's headless Chromium.

Used by the browser tests (tests/streamlit_server.py) and by `python -m lab bench` (render times).

    with streamlit_server() as url, chromium() as browser:
        page = new_page(browser)            # page.dialogs collects any alert/confirm/prompt
        page.goto(f"{url}/tokens")
        wait_idle(page)

`browser_missing()` says why no browser can run here (None when one can). The URL a server yields
also carries its process (`url.proc`) and its output so far (`url.log()`); `port=` reuses a port, so
a test can kill a server and start another where the open tabs expect it.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lab.replicas import healthy

ROOT = Path(__file__).resolve().parents[2]  # the repository (app.py)
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
LOADING = '[data-testid="stSkeleton"]'  # an element whose code is still on its way (wait_idle)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerURL(str):
    """The base URL of a running server (a str), with its process and its output so far."""

    proc: subprocess.Popen
    log_file: object

    def log(self) -> str:
        """Everything the server printed so far (stdout and stderr)."""
        fd = self.log_file.fileno()  # pread: the server shares this file's offset, which must not move
        return os.pread(fd, os.fstat(fd).st_size, 0).decode("utf-8", "replace")


_healthy = healthy  # Streamlit's health endpoint answers ok (one function for the replicas and the tests' servers)


@contextmanager
def streamlit_server(script: str = "app.py", timeout: float = 90, env: dict | None = None,
                     port: int | None = None) -> Iterator[ServerURL]:
    """Run `streamlit run script` headless on 127.0.0.1 (`port`, else a free one); yield its base URL; stop it after."""
    port = port or free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true",
           "--server.port", str(port), "--server.address", "127.0.0.1",
           "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    with served(cmd, port, timeout, env) as url:
        yield url


@contextmanager
def served(cmd: list[str], port: int, timeout: float = 90, env: dict | None = None) -> Iterator[ServerURL]:
    """Start `cmd` (a Streamlit server on 127.0.0.1:port, cwd = the repository), wait until it is healthy, yield its
    base URL (with .proc and .log()); stop it after, killed if it does not stop within 10 s."""
    url = ServerURL(f"http://127.0.0.1:{port}")
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                env={**os.environ, **(env or {})})
        url.proc, url.log_file = proc, log
        try:
            deadline = time.monotonic() + timeout
            while not _healthy(url):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"streamlit did not become healthy at {url}:\n{url.log()[-2000:]}")
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
        except Exception as e:  # what each open tab showed when the test failed, in its report (CI keeps no screen)
            e.add_note(shown(browser))
            raise
        finally:
            browser.close()


def shown(browser, most: int = 1500) -> str:
    """Each open tab's address, whether the app was running, and the start of its text: what a failed test saw."""
    lines = []
    for context in browser.contexts:
        for page in context.pages:
            try:
                running = page.locator(IDLE).count() == 0
                text = page.locator("body").inner_text(timeout=2_000)
            except Exception as e:  # a closed or crashed tab
                lines.append(f"tab {page.url}: unreadable ({type(e).__name__})")
                continue
            words = " | ".join(line for line in text.splitlines() if line.strip())
            lines.append(f"tab {page.url} ({'running' if running else 'idle'}): {words[:most]}")
            lines += [f"  {trouble}" for trouble in _causes_first(getattr(page, "troubles", []))]
    return "\n".join(lines) or "no tab open"


def _causes_first(troubles: list[str], most: int = 12) -> list[str]:
    """A tab's troubles worth a report: the failed requests and error responses (the cause) before the console's
    echoes of them, which can number hundreds; Streamlit's own probes of a page's path (its 404s) left out."""
    troubles = [t for t in troubles if not (t.startswith("HTTP 404") and "/_stcore/" in t)]
    failed = [t for t in troubles if t.startswith(("request failed", "HTTP"))][: most // 2]
    return failed + [t for t in troubles if t not in failed][-(most - len(failed)):]


SHELL_S = 30  # an app page whose frontend has not drawn its shell this long after loading is blank: reloaded once


def new_page(browser, width: int = 1400, height: int = 1000, **options):
    """A fresh page whose `dialogs` list records (and dismisses) every alert/confirm/prompt, and whose `troubles`
    list records every failed request, error response, uncaught error and console error (shown in a failed test's
    report).

    Its `goto` reloads once an app page that loaded but stayed blank (no Streamlit shell after SHELL_S): in three
    full runs on two busy cores a fresh tab loaded the app's files and then drew nothing for 90 s, while the server
    answered (a stopped server leaves the shell drawn, "Skip to main content"). What the tab met is kept in
    `troubles`, and the reload is a warning in the test run's summary. Its `wait_for_selector`, `wait_for_function`
    and `wait_idle` reload a page that lost some of the app's code on the way (`_recovering`: what made those tabs
    blank, measured later)."""
    page = browser.new_page(viewport={"width": width, "height": height}, **options)  # its own context (a locale...)
    page.dialogs, page.troubles = [], []

    def on_dialog(dialog):
        page.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.lost, page.recoveries = [], 0  # the app's own code lost on the way (see _recovering)

    def on_failed(request):
        page.troubles.append(f"request failed: {request.url} ({request.failure})")
        if (request.failure or "").partition(" ")[0] in LOST and "/static/" in request.url \
                and request.url.startswith(origin(page.url)):
            page.lost.append(f"{request.url.rsplit('/', 1)[-1]} ({request.failure})")

    page.on("requestfailed", on_failed)
    page.on("pageerror", lambda e: page.troubles.append(f"uncaught: {e}"[:300]))
    page.on("console", lambda m: m.type == "error" and page.troubles.append(f"console: {m.text}"[:300]))
    page.on("response", lambda r: r.status >= 400 and page.troubles.append(f"HTTP {r.status}: {r.url}"[:300]))
    page.goto = _reloading_blank(page, page.goto)
    page.wait_for_selector = _recovering(page, page.wait_for_selector)
    page.wait_for_function = _recovering(page, page.wait_for_function)
    return page


def origin(url: str) -> str:
    """scheme://host:port of a URL (for about:blank and the like, a string no URL starts with)."""
    found = re.match(r"[a-z]+://[^/?#]+", url)
    return found.group(0) if found else "\0"


# what a request lost on the way fails with (a network change, a connection cut); not net::ERR_ABORTED (the page's own
# navigation, or a module the server answered with an error) nor ERR_CONNECTION_REFUSED (a stopped server)
LOST = {"net::ERR_NETWORK_CHANGED", "net::ERR_CONNECTION_RESET", "net::ERR_CONNECTION_CLOSED",
        "net::ERR_EMPTY_RESPONSE"}
RECOVERIES = 3  # reloads a page may take after losing the app's code (see _recovering)
SLICE_MS = 2_000  # how often a wait looks for lost code


def _recovering(page, wait):
    """`wait` (a page's wait_for_selector or wait_for_function), which reloads the page, at most RECOVERIES times,
    when the app's own code (a file under /static/) failed on the way: a tab that lost one of Streamlit's element
    chunks draws that element never (its import fails for good: 'Failed to fetch dynamically imported module').
    Measured here (2026-12-06): each container podman starts or stops adds or removes a network interface, and
    Chromium then aborts every request in flight, loopback too, with net::ERR_NETWORK_CHANGED; CI's slider test lost
    its slider that way while the other worker ran containers. A failure the server answers (an HTTP 404 or 500) is
    no lost request and is never retried. Each reload is a warning in the run's summary."""
    def waiting(*args, timeout: float | None = None, **kwargs):
        deadline = time.monotonic() + (30_000 if timeout is None else timeout) / 1000
        while True:
            left = (deadline - time.monotonic()) * 1000
            try:
                return wait(*args, timeout=max(1.0, min(left, SLICE_MS)), **kwargs)
            except Exception as e:  # Playwright's TimeoutError (its class lives in an optional package)
                if type(e).__name__ != "TimeoutError":
                    raise
                if page.lost and page.recoveries < RECOVERIES:
                    _reload_lost(page)
                elif left <= SLICE_MS:
                    e.add_note(f"waited {timeout} ms in all, in slices of {SLICE_MS} ms")
                    raise
    return waiting


def _reload_lost(page) -> None:
    """Reload a page that lost some of the app's code, with a warning naming what it lost."""
    import warnings

    warnings.warn(f"{page.url}: the app's code lost on the way ({'; '.join(page.lost[:4])}); reloaded", stacklevel=3)
    page.lost.clear()
    page.recoveries += 1
    page.reload()


def _reloading_blank(page, goto):
    """`goto`, then one reload when an app page stays blank (see new_page)."""
    def go(url: str, **kwargs):
        page.lost.clear()
        for attempt in range(RECOVERIES + 1):
            try:
                response = goto(url, **kwargs)
                break
            except Exception as e:  # Playwright's Error: the page itself lost on the way (see _recovering)
                if "ERR_NETWORK_CHANGED" not in str(e) or attempt == RECOVERIES:
                    raise
        if page.locator("#root").count() == 0:  # not the app's index (a file, a JSON endpoint): as it came
            return response
        try:
            page.wait_for_selector('[data-testid="stApp"]', state="attached", timeout=SHELL_S * 1000)
        except Exception:  # Playwright's TimeoutError
            import warnings

            warnings.warn(f"{url}: the app's shell not drawn {SHELL_S} s after loading; reloaded. The tab met: "
                          f"{page.troubles[-8:] or 'no failed request, no error'}", stacklevel=2)
            page.reload()
        return response
    return go


def wait_idle(page, timeout_ms: float = 60_000) -> None:
    """Wait until the Streamlit script has finished its run (the app reports 'notRunning') and every element's code
    has loaded. Streamlit loads a table's, a chart's, a metric's or an HTML block's code (DataFrame.*.js and the
    like) the first time a tab shows one and draws a placeholder (`stSkeleton`) until it comes: a fresh browser on a
    busy server can be idle with a page of placeholders (CI, 2026-12-06: the ceiling page's tables)."""
    for _ in range(RECOVERIES + 1):  # a page that lost some of the app's code on the way is reloaded (_recovering)
        page.wait_for_selector(IDLE, timeout=timeout_ms)
        page.wait_for_function(f"!document.querySelector({LOADING!r})", timeout=timeout_ms)
        if not getattr(page, "lost", None) or page.recoveries >= RECOVERIES:
            return
        _reload_lost(page)


def wait_for_count(page, selector: str, n: int, timeout_ms: float = 120_000) -> None:
    """Wait until at least n elements match `selector` (Vega charts draw after the script's run has ended)."""
    page.wait_for_function(f"document.querySelectorAll({selector!r}).length >= {n}", timeout=timeout_ms)


def wait_for_page(page, url_path: str, timeout_ms: float = 60_000) -> None:
    """Wait until the browser is on the app's page `url_path` ("ceiling"), whatever its query string. A glob like
    "**/ceiling" matches only the bare path, and Streamlit may write the new page's query string before it moves
    the path (measured: "/?view=ceiling&..." then "/ceiling?view=ceiling&...", never "/ceiling" alone)."""
    page.wait_for_url(re.compile(rf"/{re.escape(url_path)}(\?.*)?$"), timeout=timeout_ms)


def steady_box(locator, timeout_ms: float = 20_000, every_ms: int = 250) -> dict:
    """The element's bounding box once it has stopped moving (two reads `every_ms` apart agree): charts above it
    draw after the script run ends and can push it down or pull it up, and a click at coordinates read before
    that lands on another row or cell."""
    page, last = locator.page, None
    deadline = time.monotonic() + timeout_ms / 1000
    while time.monotonic() < deadline:
        box = locator.bounding_box()
        if box is not None and box == last:
            return box
        last = box
        page.wait_for_timeout(every_ms)
    raise TimeoutError(f"{locator} kept moving for {timeout_ms / 1000:.0f} s (last box {last})")
