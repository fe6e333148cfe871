"""One way to open the app under Streamlit's AppTest, for every page test (a plain helper, not a fixture:
tests/conftest.py holds the fixtures, among them course_standins for the tiny course models and app_url for the
browser tests' shared server), and the constants the page and browser tests share."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")  # absolute: works whatever cwd a server or AppTest gets
CHART = '[data-testid="stVegaLiteChart"]'  # a Vega-Lite chart's box, in a real browser
CHARTS = f"{CHART} canvas, {CHART} svg"  # a chart once Vega has drawn it (after the script run ends)


def open_page(page: str | None = None, *, timeout: int = 60, state: dict | None = None, check: bool = True,
              **params) -> AppTest:
    """The app as a visitor arrives from a link carrying `params` (query parameters) with `state` already in
    its session: first run on the entry page, then switched to `page` (a path such as "app_pages/tokens.py";
    None stays on the entry page) and run again. `timeout` is AppTest's default per run; `check` asserts
    that no exception is shown (off where a test collects the problems itself)."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for k, v in params.items():
        at.query_params[k] = v
    for k, v in (state or {}).items():
        at.session_state[k] = v
    at.run()
    if page is not None:
        at.switch_page(page)
        at.run()
    if check:
        assert not at.exception, at.exception
    return at


LOCAL_SCHEMES = {"data", "blob", "about"}  # URLs made inside the page: no network at all


def page_paths() -> list[str]:
    """The URL path of every page of the app's navigation, in its order (the page manifest, lab/pages.py, which
    app.py's navigation reads): "" for the default page, else its url path."""
    from lab import pages as manifest

    return ["" if p.default else p.slug for p in manifest.PAGES]


def outside(urls: list[str], base: str) -> list[str]:
    """The URLs among `urls` that would leave the machine: neither the app's own host:port nor made in the page."""
    own = urlparse(base)
    here = {f"127.0.0.1:{own.port}", f"localhost:{own.port}"}
    return [u for u in urls if urlparse(u).scheme not in LOCAL_SCHEMES and urlparse(u).netloc not in here]


# The per-page test matrices (issue 58): each one is every page of the manifest (lab/pages.py) that its rule
# admits, less the pages LEFT_OUT names with the reason, so a new page is tested everywhere by its entry alone.
# tests/test_page_manifest.py checks that each test module's page list is its matrix, that LEFT_OUT names real
# pages, and that a throwaway page added at run time is in every matrix.
MATRICES = {
    "translations": "every page, in both languages (tests/test_translations.py)",
    "language_switch": "every page, switched to Portuguese in the sidebar (tests/test_language_switch.py)",
    "portuguese_bytes": "every page in Portuguese, scanned for \\xNN (tests/test_portuguese_bytes.py)",
    "shared_links": "every page, its link inputs fuzzed (tests/test_shared_links.py)",
    "presentation": "every page at 1280 x 720 in presentation mode (tests/test_browser_presentation.py)",
    "classroom": "every page on a zoomed projector (tests/test_browser_classroom.py)",
    "bad_inputs": "every page with an input: the bad-input matrix (tests/bad_inputs.py)",
    "reproduce": "every page with a command: its 'reproduce this view' block run (tests/test_reproduce.py)",
}
# Pages a matrix's rule admits but that cannot join it (yet): {matrix: {slug: why}}. A page with no input is outside
# bad_inputs, one with no command outside reproduce, by the rule itself, as the manifest and the catalogue say.
LEFT_OUT: dict[str, dict[str, str]] = {name: {} for name in MATRICES} | {
    "presentation": {"home": "its course map (view 'map') starts at 1,192 px at 1280 x 720 in presentation mode, "
                             "under the introduction: a page change, reported in issue 58 (2026-12-06)"},
}


def matrix(name: str) -> list[str]:
    """The url paths (slugs) of the pages in the test matrix `name` (one of MATRICES), in the navigation's order."""
    from lab import pages as manifest

    if name == "bad_inputs":
        from tests.bad_inputs import matrix as inputs

        admitted = list(inputs())
    elif name == "reproduce":
        admitted = [p.slug for p in manifest.PAGES if p.commands]
    else:
        admitted = list(manifest.slugs())
    return [slug for slug in admitted if slug not in LEFT_OUT[name]]


def script(slug: str) -> str:
    """The script of the page at /slug (the manifest's: app_pages/<slug>.py unless its entry says otherwise)."""
    from lab import pages as manifest

    return manifest.by_slug(slug).script
