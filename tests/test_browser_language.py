"""A language switch in a real Chromium (issue 21, part 4): widgets that Streamlit keeps by their key alone
(a select_slider, the sidebar's model selectbox) are relabelled, not reset: the stride stays at 0.5 and the
model picker speaks Portuguese; the link carries no default text. (AppTest checks the values; this checks
what the browser shows and would send back.)"""

import time

import pytest

from tests.streamlit_server import chromium, new_page, wait_idle

pytestmark = pytest.mark.browser

SELECT_SLIDER = '[data-testid="stSlider"]'


def switched(browser, url: str, path: str, ready: str):
    """A tab on `path` in English, once drawn; then switched to Portuguese in the sidebar and settled."""
    page = new_page(browser, 1280, 720)
    page.goto(f"{url}{path}?lang=en")
    page.wait_for_selector(ready, timeout=90_000)
    wait_idle(page)
    page.get_by_text("Português (Brasil)").click()
    page.wait_for_function("() => document.querySelector('h1') && document.querySelector('h1').innerText"
                           " !== document.title && location.search.includes('lang=pt')", timeout=60_000)
    time.sleep(0.5)
    wait_idle(page)
    return page


def test_the_stride_stays_where_it_was_and_the_model_picker_follows(app_url):
    with chromium() as browser:
        page = switched(browser, app_url, "/perplexity", SELECT_SLIDER)
        page.wait_for_selector(f'{SELECT_SLIDER}:has-text("contexto")', timeout=60_000)
        slider = page.locator(SELECT_SLIDER).first
        shown = slider.locator('[data-testid="stSliderThumbValue"]').inner_text()
        said = slider.locator('input[type="range"]').get_attribute("aria-valuetext")
        assert (said, shown) == ("0,50 × contexto", "0,50 × contexto")
        picker = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first
        assert picker.locator("input").input_value().startswith("Modelo do curso")


def test_the_default_text_follows_and_stays_out_of_the_link(app_url):
    with chromium() as browser:
        page = switched(browser, app_url, "/attention", "textarea")
        page.wait_for_function("() => document.querySelector('textarea').value.startsWith('O troféu')",
                               timeout=60_000)
        assert "text" not in page.url.split("?", 1)[1].replace("view=", "")


def test_a_picker_kept_by_its_key_shows_its_portuguese_label(app_url):
    with chromium() as browser:
        page = switched(browser, app_url, "/tokens", '[data-testid="stTable"]')
        picker = page.locator('[data-testid="stMain"] [data-testid="stSelectbox"]').first
        page.wait_for_function("(e) => e.querySelector('input').value.startsWith('O trecho')",
                               arg=picker.element_handle(), timeout=60_000)
        assert picker.locator("input").input_value() == "O trecho do troféu, do curso"
