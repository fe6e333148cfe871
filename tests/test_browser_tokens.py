"""The tokenization page in a real Chromium: typed text is counted like lab counts it, never run as HTML."""

import os
import time
from pathlib import Path

import pytest

from lab import tokens
from tests.streamlit_server import chromium, new_page, require_browser, streamlit_server, wait_idle
from ui.token_words import short
from viz.tokens import visible

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOT = ROOT / "docs" / "tokens.png"
TEXT = ("Olá! <img src=x onerror=alert(1)> O troféu não coube na mala porque era grande demais. "
        "A canção do coração: não há pão sem ação, nem ônibus sem água.")


def read_costs(page) -> dict[str, dict[str, str]]:
    """The first costs table on the page (Portuguese) as {row label: {encoding: cell}}."""
    table = page.locator('[data-testid="stTable"]').first
    heads = [h.inner_text().strip() for h in table.locator("thead th").all()][1:]
    rows = {}
    for tr in table.locator("tbody tr").all():
        label = tr.locator("th").inner_text().strip()
        rows[label] = dict(zip(heads, (td.inner_text().strip() for td in tr.locator("td").all()), strict=True))
    return rows


def expected(text: str) -> dict[str, dict[str, str]]:
    """Counts lab gives for text, formatted as the page formats them."""
    costs = tokens.token_costs(text)
    return {label: {name: f"{c[key]:,}" for name, c in costs.items()}
            for key, label in (("tokens", "tokens"), ("words", "words"), ("chars", "characters"))}


def test_typed_text_is_counted_and_never_rendered_as_html(app_url, tmp_path):
    with chromium() as browser:
        page = new_page(browser, height=2250)
        page.goto(f"{app_url}/")  # the entry page first; see test_direct_link_runs_the_entry_script
        page.get_by_text("Tokenization costs").first.click()
        page.wait_for_selector('[data-testid="stTable"]', timeout=60_000)
        page.wait_for_selector('[data-testid="stVegaLiteChart"]', timeout=60_000)
        wait_idle(page)
        page.wait_for_timeout(1000)  # let the chart finish drawing before the screenshot
        # docs/tokens.png is tracked: it is rewritten only on request (UPDATE_SCREENSHOTS=1 pytest ...);
        # otherwise the screenshot still runs (it must not fail) but lands in a temporary folder.
        shot = SCREENSHOT if os.environ.get("UPDATE_SCREENSHOTS") == "1" else tmp_path / SCREENSHOT.name
        page.screenshot(path=str(shot))

        box = page.get_by_label("Portuguese text")
        box.fill(TEXT)
        box.press("Control+Enter")  # Streamlit commits a text area on Ctrl+Enter (or on blur)
        want = expected(TEXT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            shown = read_costs(page)
            if shown.get("words") == want["words"]:  # the run for the new text has been drawn
                break
            page.wait_for_timeout(200)
        wait_idle(page)
        shown = read_costs(page)
        assert {k: shown[k] for k in want} == want

        # The chips show the typed markup as text, token by token (GPT-2 is the selected encoding).
        chip_texts = page.locator(".tok-chips .tok-chip > span:first-child").all_text_contents()
        # a lone byte named as the page names it ("byte C3": ui.token_words.short, its spaces no-break)
        assert chip_texts == [visible(short(r["text"])) for r in tokens.token_records("gpt2", TEXT)]
        assert "␣<" in chip_texts and "img" in chip_texts
        assert page.locator("img[src='x']").count() == 0
        assert page.locator('[data-testid="stMain"] img[onerror]').count() == 0
        assert page.dialogs == []


def test_direct_link_runs_the_entry_script():
    require_browser()
    with streamlit_server() as url, chromium() as browser:
        page = new_page(browser)
        page.goto(f"{url}/tokens")  # a teacher's shared link, on a server nobody has visited yet
        page.wait_for_selector('[data-testid="stTable"]', timeout=60_000)
        wait_idle(page)
        assert page.get_by_text("Language / Idioma").count() == 1  # app.py's sidebar ran


AXIS_TITLE = {"en": "pt tokens ÷ en tokens", "pt": "tokens pt ÷ tokens en"}


@pytest.mark.parametrize("query", ["lang=pt", "lang=pt&present=1", "lang=en&present=1"])
def test_premium_axis_title_is_whole_and_inside_the_chart(app_url, query):
    """The y-axis title reads whole (Vega cuts a long one with "…") and lies inside the drawn chart (a title
    longer than the plot's height runs off its top edge): in Portuguese and with presentation mode's fonts."""
    lang = "pt" if "lang=pt" in query else "en"
    with chromium() as browser:
        page = new_page(browser, height=2400)
        page.goto(f"{app_url}/tokens?{query}")
        page.wait_for_selector('[data-testid="stVegaLiteChart"] svg text', timeout=60_000)
        wait_idle(page)
        page.wait_for_timeout(1000)
        chart = page.locator('[data-testid="stVegaLiteChart"]').last
        found = chart.evaluate("""(e, want) => {
            const svg = e.querySelector('svg').getBoundingClientRect();
            const t = [...e.querySelectorAll('svg text')].find(x => x.textContent.includes('÷'));
            const r = t.getBoundingClientRect();
            // vertically exact; sideways the rotated text's box is its font's whole em box, a few px past the ink
            return {text: t.textContent, inside: r.top >= svg.top - 0.5 && r.bottom <= svg.bottom + 0.5
                    && r.left >= svg.left - 4, height: r.height};
        }""", AXIS_TITLE[lang])
        assert found["text"] == AXIS_TITLE[lang] and "…" not in found["text"]
        assert found["inside"], found
