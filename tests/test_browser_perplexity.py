"""The perplexity page in a real Chromium, on the shipped course models (offline)."""


import pytest

from tests.pages import CHARTS
from tests.streamlit_server import chromium, new_page, wait_for_count, wait_idle

pytestmark = pytest.mark.browser

EVIL = 'Hi <img src=x onerror="alert(1)"> and <b>bold</b> text, then more words to read.'


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


BITS_TITLE = "Bits per byte, smaller models first"


def test_the_bits_chart_shows_its_labels_whole_and_its_title_clear_of_the_info_box(app_url):
    """Issue 21, 7: the bar chart's model labels were cut ("…") and its title sat under the info box above it."""
    from lab.models import registry

    with chromium() as browser:
        page = new_page(browser, height=2200)
        page.goto(f"{app_url}/perplexity")
        wait_for_count(page, '[data-testid="stVegaLiteChart"] svg', 2)
        wait_idle(page)
        page.wait_for_timeout(500)
        chart = page.locator('[data-testid="stVegaLiteChart"]').filter(has_text=BITS_TITLE)
        texts = chart.locator("svg text").evaluate_all("els => els.map(e => e.textContent)")
        assert BITS_TITLE in texts and not [x for x in texts if "…" in x]
        for name in ("course-gpt2-1x64", "course-gpt2-2x128", "course-gpt2"):
            assert registry.info(name).label in texts  # each model's label whole
        title = chart.locator("svg text", has_text=BITS_TITLE).first.bounding_box()
        info = page.locator('[data-testid="stAlert"]', has_text="Which column to compare").bounding_box()
        box = chart.bounding_box()
        apart = title["y"] >= info["y"] + info["height"] or title["y"] + title["height"] <= info["y"]
        assert apart, (title, info)
        assert box["y"] <= title["y"] and title["y"] + title["height"] <= box["y"] + box["height"]  # inside its chart
