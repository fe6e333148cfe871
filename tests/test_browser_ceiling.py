"""The ceiling page in a real Chromium, on the shipped course decoders (offline): the curves and tables render,
the forced-error view colours the tokens after the forced one, a hostile text is shown as text; the home page's
chapter map links to the pages."""


import pytest

from tests.pages import CHARTS
from tests.streamlit_server import chromium, new_page, wait_for_page, wait_idle

pytestmark = pytest.mark.browser

EVIL = "Texto <img src=x onerror=alert(1)> com <b>marcas</b> & mais " + "palavras do texto " * 20


def test_curves_tables_and_the_forced_view(app_url):
    with chromium() as browser:
        page = new_page(browser, height=2600)
        page.goto(f"{app_url}/ceiling")
        page.wait_for_selector(".ceil-text", timeout=180_000)
        page.wait_for_function(f"document.querySelectorAll({CHARTS!r}).length >= 1", timeout=120_000)
        page.get_by_text("The argument on the course models").wait_for(timeout=180_000)
        wait_idle(page)
        assert page.get_by_role("heading", name="The ceiling of this path").count() == 1
        assert page.locator(".ceil-forced").count() == 1 and page.locator(".ceil-text s").count() == 1
        colours = page.locator(".ceil-text .ceil-tok").evaluate_all(
            "els => els.map(e => getComputedStyle(e).backgroundColor)")
        assert colours and set(colours) <= {"rgb(198, 236, 191)", "rgb(240, 138, 120)"}  # viz.ceiling RIGHT, WRONG
        assert page.locator('[data-testid="stDataFrame"]').count() >= 2
        assert page.locator('[data-testid="stException"]').count() == 0


def test_a_hostile_text_is_text(app_url):
    with chromium() as browser:
        page = new_page(browser, height=2000)
        page.goto(f"{app_url}/ceiling?ceil_source=own&ceil_pos=3")
        page.wait_for_selector(".ceil-text", timeout=180_000)
        box = page.get_by_role("textbox", name="Your text")
        box.fill(EVIL)
        box.press("Control+Enter")
        page.locator(".ceil-text").filter(has_text="<img src=x").first.wait_for(timeout=120_000)
        wait_idle(page)
        assert page.locator(".ceil-text img, .ceil-text b").count() == 0 and page.dialogs == []
        assert page.locator('img[src="x"]').count() == 0


def test_the_home_page_maps_every_chapter_to_a_link(app_url):
    with chromium() as browser:
        page = new_page(browser, height=3000)
        page.goto(app_url)
        page.get_by_text("Chapter 16").first.wait_for(timeout=120_000)
        for n in [f"{i:02d}" for i in range(17)]:  # the map may still be drawing when chapter 16 shows
            page.get_by_text(f"Chapter {n} ·").first.wait_for(timeout=30_000)
        page.get_by_role("link", name="Chapter 16 · The ceiling of this path").click()
        wait_for_page(page, "ceiling")
        page.get_by_role("heading", name="The ceiling of this path").wait_for(timeout=120_000)
        wait_idle(page, 120_000)  # a reader presses Back on a page that has drawn
        page.go_back()
        wait_for_page(page, "")
        page.get_by_text("Chapter 16").first.wait_for(timeout=120_000)  # the map drawn again, as on arrival
        page.get_by_role("link", name="Chapter 12 · The detector").click(timeout=60_000)
        wait_for_page(page, "detector")
