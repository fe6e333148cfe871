"""The classroom in a real Chromium (issue 11): exports that produce real files, a projector-sized window,
presentation mode. The app runs offline on its shipped course model."""

import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

from tests.pages import matrix, script
from tests.streamlit_server import chromium, new_page, wait_idle

pytestmark = pytest.mark.browser

# 1280 x 720 at 150 % browser zoom leaves 853 x 480 CSS pixels: what a projector laptop shows.
PROJECTOR_ZOOMED = (853, 480)


def open_link(browser, url: str, path: str, ready: str, size=(1400, 1400)):
    """A fresh tab on a shared link, once `ready` is drawn and the script is idle."""
    page = new_page(browser, *size)
    page.goto(f"{url}{path}")
    page.wait_for_selector(ready, timeout=90_000)
    wait_idle(page)
    return page


def download(page, label: str, within=None) -> bytes:
    """Click the first download button labelled `label` (inside `within`, if given); the file's bytes."""
    scope = within or page
    with page.expect_download(timeout=60_000) as info:
        scope.locator('[data-testid="stDownloadButton"] button').filter(has_text=label).first.click()
    return open(info.value.path(), "rb").read()


def test_exports_give_an_svg_a_png_and_a_csv(app_url):
    with chromium() as browser:
        page = open_link(browser, app_url, "/tokens", '[data-testid="stVegaLiteChart"]')
        svg = download(page, "SVG")
        root = ET.fromstring(svg)
        assert root.tag.endswith("svg")
        assert "pt tokens ÷ en tokens" in {"".join(e.itertext()) for e in root.iter() if e.tag.endswith("text")}
        png = Image.open(io.BytesIO(download(page, "PNG")))
        assert png.format == "PNG" and png.size[0] > 400
        csv = pd.read_csv(io.BytesIO(download(page, "CSV")), encoding="utf-8-sig")
        assert list(csv.columns) == ["measure", "gpt2", "cl100k_base", "o200k_base", "course"]
        assert csv["measure"].tolist()[0] == "tokens"
        assert page.locator('[data-testid="stException"]').count() == 0 and page.dialogs == []


def test_attention_page_stacks_on_a_zoomed_projector_and_exports_the_overview(app_url):
    with chromium() as browser:
        page = open_link(browser, app_url, "/attention", '[data-testid="stImage"] img', PROJECTOR_ZOOMED)
        block = page.locator('[class*="st-key-stack-narrow-attention"] [data-testid="stHorizontalBlock"]').first
        left, right = block.locator(':scope > [data-testid="stColumn"]').all()
        a, b = left.bounding_box(), right.bounding_box()
        assert b["y"] >= a["y"] + a["height"] - 1  # "All heads" sits under the heatmap, not squeezed beside it
        assert b["width"] >= 0.9 * a["width"]
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        png = Image.open(io.BytesIO(download(page, "PNG", right)))
        assert png.format == "PNG" and png.size[0] > 100
        wide = open_link(browser, app_url, "/attention", '[data-testid="stImage"] img')
        block = wide.locator('[class*="st-key-stack-narrow-attention"] [data-testid="stHorizontalBlock"]').first
        left, right = block.locator(':scope > [data-testid="stColumn"]').all()
        assert right.bounding_box()["x"] > left.bounding_box()["x"] + 100  # side by side on a wide screen
        assert page.locator('[data-testid="stException"]').count() == 0 and page.dialogs == []


def test_presentation_link_hides_explanations_and_enlarges_type(app_url):
    intro = "Each token asks a question"
    with chromium() as browser:
        normal = open_link(browser, app_url, "/attention", '[data-testid="stImage"] img')
        present = open_link(browser, app_url, "/attention?present=1", '[data-testid="stImage"] img')
        assert normal.get_by_text(intro).count() == 1 and present.get_by_text(intro).count() == 0

        def body_px(page):
            split = page.locator('[data-testid="stMarkdownContainer"] p').filter(has_text="Split:").first
            return split.evaluate("p => parseFloat(getComputedStyle(p).fontSize)")

        assert body_px(present) >= 1.25 * body_px(normal)
        block = present.locator('[class*="st-key-stack-narrow-attention"] [data-testid="stHorizontalBlock"]').first
        left, right = block.locator(':scope > [data-testid="stColumn"]').all()
        assert right.bounding_box()["y"] >= left.bounding_box()["y"] + left.bounding_box()["height"] - 1
        assert present.get_by_role("switch", name="Presentation mode").is_checked()
        assert present.locator('[data-testid="stException"]').count() == 0 and present.dialogs == []


PAGES = matrix("classroom")  # every page of the manifest (tests/pages.py)


def heading(slug: str) -> str:
    """The page's English title, as its script writes it (st.title(t("...", ...)))."""
    source = (Path(__file__).resolve().parents[1] / script(slug)).read_text(encoding="utf-8")  # or an absolute path
    return re.search(r'st\.title\(t\(\s*"([^"]+)"', source).group(1)


@pytest.mark.parametrize("slug", PAGES)
def test_every_page_fits_a_zoomed_projector(app_url, slug):
    """At 853 x 480 CSS pixels nothing pushes the page sideways: wide charts scroll inside their own box."""
    from lab.pages import by_slug

    with chromium() as browser:
        page = open_link(browser, app_url, "/" if by_slug(slug).default else f"/{slug}", "h1", PROJECTOR_ZOOMED)
        page.wait_for_timeout(1500)  # Vega draws after the script run
        assert heading(slug).lower() in page.locator("h1").first.inner_text().lower()
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
        main = page.locator('[data-testid="stMainBlockContainer"]').bounding_box()
        assert main["x"] + main["width"] <= PROJECTOR_ZOOMED[0] + 1
        assert page.locator('[data-testid="stException"]').count() == 0 and page.dialogs == []


def test_a_room_taken_back_in_a_second_tab_leaves_the_first_unable_to_move_the_class(app_url):
    """Issue 56, item 6: the teacher key typed in a second tab takes the room; the first tab says so (its count's
    tick, every 2 s) and follows the room, and its Next (the clicker's PageDown) no longer moves a student."""
    from tests.test_browser_lessons import LESSON, TIMEOUT, at_step, start_room

    with chromium() as browser:
        first = new_page(browser)
        code = start_room(first, app_url)
        key = download(first, "Teacher key").decode().split("Teacher key: ")[1].split()[0]
        student = new_page(browser)
        student.goto(f"{app_url}/?room={code}")
        at_step(student, 1)
        second = new_page(browser)
        second.goto(f"{app_url}/?lesson={LESSON}&step=1")
        at_step(second, 1)
        second.locator(".st-key-lesson-bar button").filter(has_text="More").click()
        second.locator(".st-key-room_back_code input").fill(code)
        second.locator(".st-key-room_back_key input").fill(key)
        second.get_by_role("button", name="Take a room back").click()
        second.get_by_text(f"Room {code} · 1 following").wait_for(timeout=TIMEOUT)  # the first is no student
        first.keyboard.press("PageDown")  # before or after its tick: either way the class stays
        first.get_by_text(f"Room {code} was taken back in another tab").wait_for(timeout=TIMEOUT)
        first.keyboard.press("PageDown")
        first.wait_for_timeout(3000)
        at_step(student, 1)
        at_step(first, 1)
        assert first.locator(".st-key-lesson_next button").is_disabled()
        second.keyboard.press("PageDown")
        at_step(second, 2)
        at_step(student, 2)
        at_step(first, 2)  # the first tab now follows the room
        for page in (first, second, student):
            assert page.locator('[data-testid="stException"]').count() == 0 and page.dialogs == []
