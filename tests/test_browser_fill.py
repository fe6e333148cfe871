"""The fill-in-the-blank page in a real Chromium, on the shipped course models (offline): typing a text with a mask
fills it, the button adds a mask, the epoch slider moves the masking chips, and hostile text stays text."""


import pytest

from tests.streamlit_server import chromium, new_page, wait_idle

pytestmark = pytest.mark.browser

EVIL = 'Um <img src=x onerror=alert(1)> e <b>negrito</b> com <mask>.'


def test_fill_insert_and_step_through_epochs(app_url):
    with chromium() as browser:
        page = new_page(browser, height=2400)
        page.goto(f"{app_url}/fill")
        page.wait_for_selector(".fill-sentence mark", timeout=180_000)
        wait_idle(page)
        assert page.locator(".fill-sentence mark").inner_text().strip() == "package"
        box = page.get_by_role("textbox", name="Text with <mask> (or [MASK])")
        box.fill("Debian is a free")
        box.press("Control+Enter")
        page.get_by_text("The text has no mask").wait_for(timeout=60_000)
        page.get_by_role("button", name="Insert <mask>").click()
        page.locator(".fill-sentence mark").wait_for(timeout=60_000)
        wait_idle(page)
        assert box.input_value() == "Debian is a free <mask>"
        first = page.locator(".fill-chip").evaluate_all("els => els.map(e => e.dataset.action)")
        slider = page.get_by_role("slider", name="Epoch")
        for _ in range(3):  # a key pressed while a run was ending can be lost: press again only if it was
            if slider.input_value() != "1":
                break
            slider.focus()
            page.keyboard.press("ArrowRight")
            page.wait_for_timeout(2000)
        assert slider.input_value() == "2"
        page.wait_for_function("(a) => JSON.stringify([...document.querySelectorAll('.fill-chip')]"
                               ".map(e => e.dataset.action)) !== a", arg=str(first).replace("'", '"'),
                               timeout=60_000)
        page.wait_for_url("**fill_epoch=2**", timeout=60_000)
        assert page.locator('[data-testid="stException"]').count() == 0


def test_a_hostile_text_is_text(app_url):
    with chromium() as browser:
        page = new_page(browser, height=1600)
        page.goto(f"{app_url}/fill")
        page.wait_for_selector(".fill-sentence mark", timeout=180_000)
        box = page.get_by_role("textbox", name="Text with <mask> (or [MASK])")
        box.fill(EVIL)
        box.press("Control+Enter")
        page.locator(".fill-sentence").filter(has_text="<img src=x").wait_for(timeout=60_000)
        wait_idle(page)
        assert page.locator(".fill-sentence img, .fill-sentence b").count() == 0 and page.dialogs == []
