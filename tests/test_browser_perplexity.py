"""The perplexity page in a real Chromium, on the shipped course models (offline)."""

from pathlib import Path

import pytest

from tests.streamlit_server import chromium, new_page, require_browser, streamlit_server, wait_idle

CHARTS = '[data-testid="stVegaLiteChart"] canvas, [data-testid="stVegaLiteChart"] svg'
APP = str(Path(__file__).resolve().parents[1] / "app.py")
EVIL = 'Hi <img src=x onerror="alert(1)"> and <b>bold</b> text, then more words to read.'


@pytest.fixture(scope="module")
def app_url():
    require_browser()
    with streamlit_server(APP, env={"HF_HUB_OFFLINE": "1"}) as url:
        yield url


def wait_for_count(page, selector: str, n: int, timeout_ms: float = 120_000) -> None:
    """Wait until at least n elements match (Vega charts draw after the script run ends)."""
    page.wait_for_function(f"document.querySelectorAll({selector!r}).length >= {n}", timeout=timeout_ms)


def test_table_and_chart_render_and_user_text_is_shown_not_run(app_url):
    with chromium() as browser:
        page = new_page(browser, height=2200)
        page.goto(f"{app_url}/perplexity")
        page.wait_for_selector('[data-testid="stDataFrame"]', timeout=180_000)
        wait_for_count(page, CHARTS, 1)
        wait_idle(page)
        assert page.get_by_role("heading", name="Perplexity, compared fairly").count() == 1
        page.get_by_role("combobox", name="Text", exact=True).click()
        page.get_by_role("option", name="Your own text").click()
        page.wait_for_timeout(300)
        wait_idle(page)
        box = page.get_by_role("textbox", name="Your text")
        box.fill(EVIL)
        box.press("Control+Enter")
        # the default passage's view is on screen until the rerun replaces it: wait for the typed text itself
        page.locator(".surprisal").filter(has_text="<img src=x").first.wait_for(timeout=120_000)
        wait_idle(page)
        shown = page.locator(".surprisal").first
        assert "<img src=x" in shown.inner_text() and "<b>bold</b>" in shown.inner_text()
        assert page.locator(".surprisal img, .surprisal b, .surprisal-compare img, .surprisal-compare b").count() == 0
        assert page.locator('img[src="x"]').count() == 0
        assert page.dialogs == []
        assert page.locator('[data-testid="stException"]').count() == 0
