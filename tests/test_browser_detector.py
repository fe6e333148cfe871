"""The detector page in a real Chromium, on the shipped course models (offline): the coloured text, its hover
titles and the charts render; a hostile text is shown as text, never run; a threshold move updates the verdict."""


import pytest

from tests.pages import CHARTS
from tests.streamlit_server import chromium, new_page, wait_idle
from viz.detect import COLOURS

pytestmark = pytest.mark.browser

EVIL = 'Oi <img src=x onerror="alert(1)"> e <b>negrito</b> </textarea><svg onload=alert(2)> & mais texto aqui.'


def test_coloured_text_charts_and_a_hostile_text(app_url):
    with chromium() as browser:
        page = new_page(browser, height=2400)
        page.goto(f"{app_url}/detector")
        page.wait_for_selector(".det-text span", timeout=180_000)
        page.wait_for_function(f"document.querySelectorAll({CHARTS!r}).length >= 3", timeout=120_000)
        wait_idle(page)
        assert page.get_by_role("heading", name="The detector").count() == 1
        first = page.locator(".det-text span").first
        assert "rank" in first.get_attribute("title") and "top 5" in first.get_attribute("title")
        colour = first.evaluate("e => getComputedStyle(e).backgroundColor")
        assert colour in {"rgb({}, {}, {})".format(*bytes.fromhex(c[1:])) for c in COLOURS}  # one of GLTR's buckets
        page.get_by_role("combobox", name="Text", exact=True).click()
        page.get_by_role("option", name="my own text").click()
        page.wait_for_timeout(300)
        wait_idle(page)
        box = page.get_by_role("textbox", name="Your text")
        box.fill(EVIL)
        box.press("Control+Enter")
        page.locator(".det-text").filter(has_text="<img src=x").first.wait_for(timeout=120_000)
        wait_idle(page)
        shown = page.locator(".det-text").first.inner_text()
        assert shown == EVIL
        assert page.locator(".det-text img, .det-text b, .det-text svg, .det-text textarea").count() == 0
        assert page.locator('img[src="x"]').count() == 0 and page.dialogs == []
        assert page.locator('[data-testid="stException"]').count() == 0


def rates(page) -> dict[str, float]:
    """The verdict's rates by their labels, once the run that draws them has finished (read by label, not by
    position: in a full run the list once began with the FPR)."""
    values = {}
    for label in ("machine texts caught (TPR)", "human texts flagged (FPR)"):
        metric = page.locator('[data-testid="stMetric"]').filter(has_text=label)
        metric.first.wait_for(timeout=180_000)
        wait_idle(page)
        values[label] = float(metric.first.locator('[data-testid="stMetricValue"]').inner_text().rstrip(" %"))
    return values


def test_moving_the_threshold_changes_the_verdict(app_url):
    with chromium() as browser:
        page = new_page(browser, height=2400)
        page.goto(f"{app_url}/detector?det_threshold=95")
        before = rates(page)
        page.goto(f"{app_url}/detector?det_threshold=60")
        after = rates(page)
        tpr, fpr = "machine texts caught (TPR)", "human texts flagged (FPR)"
        assert after[tpr] > before[tpr] and after[fpr] > before[fpr]  # a lower threshold flags more of both
