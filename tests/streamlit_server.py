"""Real-browser test machinery (see lab/testing/browser.py), plus the skip-or-fail rule for tests.

    with streamlit_server() as url, chromium() as browser:
        page = new_page(browser)            # page.dialogs collects any alert/confirm/prompt
        page.goto(f"{url}/tokens")
        wait_idle(page)

Without /usr/bin/chromium (or Playwright) the browser tests are skipped, unless REQUIRE_BROWSER=1
(CI), where they fail instead.
"""

import os

import pytest

from lab.testing.browser import (  # noqa: F401  (re-exported for the tests)
    CHROMIUM,
    CHROMIUM_ARGS,
    IDLE,
    ROOT,
    browser_missing,
    chromium,
    free_port,
    new_page,
    steady_box,
    streamlit_server,
    wait_for_count,
    wait_for_page,
    wait_idle,
)


def require_browser() -> None:
    """Skip the calling test when Chromium or Playwright is missing; fail instead if REQUIRE_BROWSER=1."""
    missing = browser_missing()
    if missing:
        if os.environ.get("REQUIRE_BROWSER") == "1":
            pytest.fail(f"REQUIRE_BROWSER=1 but {missing}")
        pytest.skip(missing)
