"""The serving page in a real Chromium (offline): a click runs a small load test against real lab serve
processes on loopback, the progress bar moves and goes away, the three charts and the tables appear, and the link keeps
the settings."""


import pytest

from tests.streamlit_server import chromium, new_page, wait_idle

pytestmark = pytest.mark.browser



def test_a_click_measures_and_draws(app_url):
    with chromium() as browser:
        page = new_page(browser, height=2400)
        page.goto(f"{app_url}/serving?serve_conc=1,2&serve_requests=2&serve_tokens=4&serve_repeats=1")
        page.get_by_role("button", name="Run the load test").wait_for(timeout=120_000)
        wait_idle(page)
        page.get_by_role("button", name="Run the load test").click()
        page.locator('[data-testid="stProgress"]').wait_for(timeout=60_000)
        page.wait_for_function("document.querySelectorAll('[data-testid=\"stVegaLiteChart\"]').length === 3",
                               timeout=240_000)
        wait_idle(page, 240_000)
        assert page.locator('[data-testid="stDataFrame"]').count() == 3  # results, latency, what production adds
        assert page.locator('[data-testid="stProgress"]').count() == 0  # the bar goes away when done
        assert page.locator('[data-testid="stVegaLiteChart"]').count() == 3
        assert page.locator('[data-testid="stException"]').count() == 0
        assert "serve_requests=2" in page.url and "serve_conc=1%2C2" in page.url.replace(",", "%2C")
