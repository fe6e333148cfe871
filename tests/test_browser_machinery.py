"""The browser tests' own machinery (lab/testing/browser.py): a tab that loads the app and stays blank is reloaded
once, with what it met recorded; a failed test's report names each open tab's troubles."""

from __future__ import annotations

import pytest

from lab.testing import browser as machinery
from tests.streamlit_server import chromium, new_page, wait_idle

pytestmark = pytest.mark.browser


def test_a_blank_tab_is_reloaded_once_and_what_it_met_is_kept(app_url, monkeypatch):
    monkeypatch.setattr(machinery, "SHELL_S", 5)
    with chromium() as browser:
        page = new_page(browser)
        aborted = []

        def once(route):  # the app's main script fails to arrive the first time: the tab loads and draws nothing
            if not aborted:
                aborted.append(route.request.url)
                return route.abort()
            return route.continue_()

        page.route("**/static/js/index.*.js", once)
        with pytest.warns(UserWarning, match="shell not drawn 5 s after loading; reloaded"):
            page.goto(f"{app_url}/")
        wait_idle(page)
        assert aborted and page.locator('[data-testid="stApp"]').count() == 1
        assert any("request failed" in t and "index" in t for t in page.troubles), page.troubles
        assert "request failed" in machinery.shown(browser)


def test_a_page_that_is_not_the_app_is_left_as_it_came(app_url, recwarn):
    with chromium() as browser:
        page = new_page(browser)
        page.goto(f"{app_url}/_stcore/health")
        assert page.locator("body").inner_text() == "ok"
    assert not [w for w in recwarn if "shell not drawn" in str(w.message)]


def test_idle_waits_for_the_tables_code_to_arrive(app_url):
    """The script's run ends before the table's code (DataFrame.*.js, loaded the first time a tab shows a table) has
    arrived; wait_idle waits for it, so a test that counts tables right after it counts them all (CI, 2026-12-06)."""
    with chromium() as browser:
        page = new_page(browser, height=3200)

        def late(route):  # a busy server: the table's code comes 6 s after it is asked for
            page.wait_for_timeout(6_000)
            route.continue_()

        page.route("**/static/js/DataFrame.*.js", late)
        page.goto(f"{app_url}/fossils?fos_models=gpt2,gpt2-xl")
        wait_idle(page, 120_000)
        assert page.locator('[data-testid="stDataFrame"]').count() == 4
