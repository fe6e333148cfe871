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


def test_a_page_that_lost_the_apps_code_on_the_way_is_reloaded(app_url, recwarn):
    """A container started beside the tests makes Chromium abort every request in flight (net::ERR_NETWORK_CHANGED);
    a tab that lost the slider's code never draws a slider (CI, 2026-12-06). The first request for it fails here the
    way a network change fails it; the wait reloads the page once and the slider comes."""
    with chromium() as browser:
        page = new_page(browser)
        failed = []

        def lose_once(route):
            if failed:
                route.continue_()
            else:
                failed.append(route.request.url)
                route.abort("connectionreset")

        page.route("**/static/js/Slider.*.js", lose_once)
        page.goto(f"{app_url}/sampling?lang=pt")
        page.wait_for_selector('[data-testid="stSliderThumbValue"]', timeout=60_000)
        wait_idle(page, 60_000)
        assert len(failed) == 1 and page.recoveries == 1, (failed, page.troubles)
        assert [w for w in recwarn if "Slider." in str(w.message) and "reloaded" in str(w.message)]
        assert page.locator('[data-testid="stSlider"]').count() >= 3


def test_an_error_the_server_answers_is_not_retried(app_url):
    """Only a request lost on the way reloads a page: a 404 for the app's code is the app's fault and stays seen."""
    with chromium() as browser:
        page = new_page(browser)
        page.route("**/static/js/Slider.*.js", lambda route: route.fulfill(status=404, body="gone"))
        page.goto(f"{app_url}/sampling?lang=pt")
        with pytest.raises(Exception, match="Timeout"):
            page.wait_for_selector('[data-testid="stSliderThumbValue"]', timeout=8_000)
        assert page.recoveries == 0 and any("HTTP 404" in t for t in page.troubles)


def test_a_report_names_the_lost_request_before_its_echoes():
    """CI's report showed ten console lines 'Failed to fetch dynamically imported module' and not the request that
    failed (net::ERR_NETWORK_CHANGED); the cause now comes first, and Streamlit's probes of a path are left out."""
    troubles = (["HTTP 404: http://h/sampling/_stcore/health"] + [f"console: echo {i}" for i in range(30)]
                + ["request failed: http://h/static/js/Slider.js (net::ERR_NETWORK_CHANGED)"]
                + [f"console: echo {i}" for i in range(30, 60)])
    shown = machinery._causes_first(troubles)
    assert shown[0] == "request failed: http://h/static/js/Slider.js (net::ERR_NETWORK_CHANGED)"
    assert len(shown) == 12 and shown[-1] == "console: echo 59" and not any("_stcore" in t for t in shown)
