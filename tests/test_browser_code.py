"""The code page in a real Chromium, on the shipped course-gpt2 (offline): moving the step slider moves the marked
line of the source and the tensor beside it, and reaches the link. (Presentation mode's larger source:
tests/test_browser_presentation.py.)"""


import pytest

from tests.streamlit_server import chromium, new_page, wait_idle

pytestmark = pytest.mark.browser

MARKED = ".lab-code .lab-step"


def test_selecting_a_step_moves_the_marked_line_and_the_tensor(app_url):
    with chromium() as browser:
        page = new_page(browser, height=1400)
        page.goto(f"{app_url}/code")
        page.wait_for_selector(MARKED, timeout=180_000)
        wait_idle(page)
        assert 'rec("attn.weights"' in page.locator(MARKED).inner_text()
        assert page.get_by_text("8 heads × 12 queries × 12 keys").count() == 1
        page.get_by_role("slider", name="Step of the pass").focus()
        page.keyboard.press("ArrowRight")
        page.locator(MARKED).filter(has_text='rec("attn.mixed"').wait_for(timeout=60_000)
        page.get_by_text("8 heads × 12 tokens × 32 numbers").wait_for(timeout=60_000)
        wait_idle(page)
        assert "code_step=attn.mixed" in page.url
        assert page.locator('[data-testid="stVegaLiteChart"]').count() >= 3
        assert page.locator('[data-testid="stException"]').count() == 0
