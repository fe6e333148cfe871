"""The analogies page in a real Chromium, on the shipped course models (offline)."""


import pytest

from tests.pages import CHARTS
from tests.streamlit_server import chromium, new_page, wait_for_count, wait_idle

pytestmark = pytest.mark.browser

EVIL = '<img src=x onerror="alert(1)">'


def metric(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text().strip()


def test_preset_opens_chart_renders_and_text_is_escaped(app_url):
    with chromium() as browser:
        page = new_page(browser, height=1600)
        page.goto(app_url)
        wait_idle(page)
        page.get_by_text("Embedding analogies").first.click()
        wait_for_count(page, CHARTS, 3)
        wait_idle(page)
        page.get_by_role("combobox", name="Preset").click()
        page.get_by_role("option", name="files − file + user → users", exact=False).click()
        page.wait_for_timeout(300)
        wait_idle(page)
        assert metric(page, "Top answer") == "␣users"
        assert metric(page, "inputs excluded") == "1"
        wait_for_count(page, CHARTS, 3)
        pca = page.locator('[data-testid="stVegaLiteChart"]').nth(1)
        assert pca.bounding_box()["width"] > 200 and pca.bounding_box()["height"] > 200
        box = page.get_by_role("textbox", name="A", exact=True)
        box.fill(EVIL)
        box.press("Enter")
        page.wait_for_timeout(500)
        wait_idle(page)
        assert page.get_by_text("A word is").count() >= 1  # several tokens: said in words...
        assert page.get_by_text(EVIL, exact=False).count() >= 1  # ...and the word shown as typed
        assert page.locator('img[src="x"]').count() == 0
        assert page.dialogs == []
        assert page.locator('[data-testid="stException"]').count() == 0


def test_shared_link_opens_the_page_in_portuguese(app_url):
    with chromium() as browser:
        page = new_page(browser)
        page.goto(f"{app_url}/analogies?lang=pt")
        page.wait_for_selector('[data-testid="stHeading"]', timeout=60_000)
        wait_idle(page)
        assert page.get_by_role("heading", name="Analogias de embeddings").count() == 1
        assert page.locator('[data-testid="stSidebar"]').count() == 1  # app.py ran: sidebar, navigation
        wait_for_count(page, CHARTS, 3)
        assert page.locator('[data-testid="stException"]').count() == 0
