"""The sidebar in a real Chromium at 1280 x 720 (issue 34, item 10): every page listed (no "View more"), in the
course's order, one list a screen reader reads as a list (no sections: Streamlit 1.67 draws them as <div>s inside
the <ul>), in English, Portuguese and Portuguese presentation mode; no page name cut with an ellipsis."""

import pytest

from tests.streamlit_server import chromium, new_page, wait_idle
from ui.chapters import TITLES

pytestmark = pytest.mark.browser
CUT = """els => els.filter(e => e.offsetParent !== null && e.children.length === 0 && e.textContent.trim()
                             && e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)"""  # a cut text


# app_url: the one shared server (tests/conftest.py), offline on the course models

@pytest.mark.parametrize("query,names", [
    ("lang=en", ["The fossils", "Glossary", "Tokenization costs", "The ceiling"]),
    ("lang=pt", ["Glossário", "A máscara causal", "O guia do laboratório"]),
    ("lang=pt&present=1", ["Lente dos logits"]),
])
def test_every_page_is_listed_and_nothing_in_the_sidebar_is_cut(app_url, query, names):
    with chromium() as browser:
        page = new_page(browser, 1280, 720)
        page.goto(f"{app_url}/?{query}")
        page.wait_for_selector('[data-testid="stSidebarNavLink"]', timeout=90_000)
        wait_idle(page)
        nav = page.locator('[data-testid="stSidebarNav"]')
        links = nav.locator('[data-testid="stSidebarNavLink"]')
        pages = len(TITLES)
        assert links.count() == pages and page.locator('[data-testid="stSidebarNavViewButton"]').count() == 0
        assert all(links.nth(i).is_visible() for i in range(pages))
        text = nav.inner_text()
        assert all(s in text for s in names), text
        # one list: every item's parent is the list itself
        assert nav.locator("li").evaluate_all("els => els.every(e => e.parentElement.tagName === 'UL')")
        assert nav.locator("span, p, div").evaluate_all(CUT) == []  # no page or section name cut
