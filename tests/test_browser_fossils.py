"""The fossils page in a real Chromium (offline): tables and charts render, a link with a choice of models opens
that view, the command to reproduce it is shown with its copy button, and the home page's chapter 00 opens it."""

import pytest

from tests.streamlit_server import chromium, new_page, wait_for_page, wait_idle

pytestmark = pytest.mark.browser
CHARTS = '[data-testid="stVegaLiteChart"] canvas, [data-testid="stVegaLiteChart"] svg'
# app_url: the one shared server (tests/conftest.py), offline on the course models


def test_a_link_opens_the_view_and_shows_its_command(app_url):
    with chromium() as browser:
        page = new_page(browser, height=3200)
        page.goto(f"{app_url}/fossils?fos_models=gpt2,gpt2-xl&lang=pt")
        page.wait_for_function(f"document.querySelectorAll({CHARTS!r}).length >= 3", timeout=180_000)
        wait_idle(page)
        assert page.get_by_role("heading", name="Os fósseis").count() == 1
        assert page.locator('[data-testid="stDataFrame"]').count() == 4
        assert page.locator('[data-testid="stMetricValue"]').first.inner_text() == "1.557.611.200"
        page.get_by_text("Reproduza esta vista no terminal").click()
        code = page.locator('[data-testid="stCode"]').first
        code.wait_for(timeout=30_000)
        assert code.inner_text().strip() == "python -m lab fossils --json --model gpt2 --model gpt2-xl"
        code.hover()
        assert page.locator('[data-testid="stCode"] button').count() >= 1  # the copy button
        assert page.locator('[data-testid="stException"]').count() == 0


def test_chapter_00_on_the_home_page_opens_it(app_url):
    with chromium() as browser:
        page = new_page(browser, height=3000)
        page.goto(app_url)
        page.get_by_role("link", name="Chapter 00 · The fossils: a cross-section of history").click()
        wait_for_page(page, "fossils")
        page.get_by_role("heading", name="The fossils").wait_for(timeout=120_000)
