"""What the container tests share (tests/test_container*.py): the image built once per run (a lock keeps two
pytest workers from building it at once), detached containers that are always removed, the health check and exit
waited for, a build context as the repository's, and every page opened through a container in Chromium."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest

from lab import lessons
from lab.testing import container as podman_
from lab.testing.browser import ROOT, wait_idle
from tests.pages import outside, page_paths

MODES = {"en": "lang=en", "pt": "lang=pt", "present": "lang=pt&present=1"}
CONTEXT = ("app.py", "requirements.txt", ".streamlit", "app_pages", "assets", "lab", "lessons", "models", "ui", "viz",
           "deploy", "docs/course-models-run")
_built: dict[str, str] = {}


def require_podman() -> None:
    """Skip without podman; fail instead with REQUIRE_CONTAINERS=1 (CI)."""
    why = podman_.missing()
    if why:
        if os.environ.get("REQUIRE_CONTAINERS") == "1":
            pytest.fail(f"REQUIRE_CONTAINERS=1 but {why}")
        pytest.skip(why)


def built(tag: str, context: Path = ROOT) -> str:
    """`tag` built from `context` by deploy/build-image.sh (once per run and tag; cached layers after), at the
    port its Dockerfile names."""
    require_podman()
    if tag not in _built:
        with open("/tmp/lab-image-build.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            _built[tag] = podman_.build(tag, None, context)
    return tag


@contextmanager
def detached(image: str, *args: str):
    """A detached container of `image` (`args` before the image: -e, --memory...); its name; removed after."""
    name = f"lab-{uuid.uuid4().hex[:10]}"
    podman_.podman("run", "-d", "--name", name, *args, image)
    try:
        yield name
    finally:
        podman_.podman("rm", "--force", "--time", "0", name, check=False)


def healthy_within(name: str, seconds: float) -> bool:
    """Run the image's HEALTHCHECK (podman runs it on demand where no systemd timer does) until it passes."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if podman_.podman("healthcheck", "run", name, check=False).returncode == 0:
            return True
        time.sleep(1)
    return False


def wait_exit(name: str, seconds: float) -> int:
    """The container's exit code once it has stopped (fails the test if it still runs after `seconds`)."""
    deadline, failed = time.monotonic() + seconds, ""
    while time.monotonic() < deadline:
        out = podman_.podman("inspect", name, "--format", "{{.State.Status}} {{.State.ExitCode}}", check=False)
        state = out.stdout.split()  # podman itself fails now and then while another container stops (exit 125)
        if out.returncode == 0 and state[0] in ("exited", "stopped"):
            return int(state[1])
        failed = out.stderr.strip() if out.returncode else failed
        time.sleep(0.2)
    pytest.fail(f"{name} still running after {seconds} s" + (f"; podman inspect last said: {failed}" if failed else ""))


def build_context(dest: Path) -> Path:
    """A copy of what the image is built from (hard links where possible: the torch wheel is 183 MB)."""
    dest.mkdir(parents=True)
    for name in CONTEXT:
        src = ROOT / name
        if src.is_dir():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(src, dest / name, copy_function=_link_or_copy,
                            ignore=shutil.ignore_patterns("__pycache__"))
        else:
            _link_or_copy(src, dest / name)
    return dest


def _link_or_copy(src, dst):
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def visit(page, url: str, tries: int = 3) -> None:
    """Open `url` and wait for its run to end, trying again when the load fails: Chromium aborts requests in flight
    with ERR_NETWORK_CHANGED when the host's network changes (podman adds or removes a veth for each container it
    starts or stops). A page that fails every try fails the test, with each try's failed requests."""
    failed: list[str] = []

    def listener(request):
        failed.append(f"{request.url} ({request.failure})")

    page.on("requestfailed", listener)
    try:
        for attempt in range(1, tries + 1):
            try:
                page.goto(url)
                page.wait_for_selector("h1, .st-key-lesson-bar p", timeout=40_000)  # a page, or a lesson's bar
                wait_idle(page, 120_000)
                skip = page.get_by_role("button", name=re.compile("^Mostrar a página sem|^Show the page without"))
                if skip.count():  # a step whose question withholds the page (ui/answers.py): the page, then
                    skip.first.click()
                    page.wait_for_selector("h1", timeout=40_000)
                    wait_idle(page, 120_000)
                return
            except Exception as e:
                if attempt == tries:
                    raise AssertionError(f"{url} did not load in {tries} tries; failed requests: {failed}") from e
                podman_.settle()
    finally:
        page.remove_listener("requestfailed", listener)


def page_problems(page, url: str, modes: dict[str, str] = MODES) -> list[str]:
    """Every page of the navigation in every mode, and each shipped lesson's first step, through `url`: one line
    per page that shows an exception or no page, and one per request that would leave the machine."""
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url))
    page.on("requestfailed", lambda r: seen.append(r.url))
    problems = []
    visits = [(path, mode, query) for path in page_paths() for mode, query in modes.items()]
    visits += [("", "lesson", f"lesson={name}&step=1&lang=pt") for name in lessons.shipped()]
    for path, mode, query in visits:
        visit(page, f"{url}/{path}?{query}")
        where = f"/{path}?{query} ({mode})"
        if page.locator('[data-testid="stException"]').count():
            problems.append(f"{where}: {page.locator('[data-testid=stException]').first.inner_text()[:300]}")
        if page.get_by_text("Page not found").count():
            problems.append(f"{where}: page not found")
    problems += [f"left the machine: {u}" for u in outside(seen, url)]
    return problems
