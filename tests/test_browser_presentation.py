"""Presentation mode in a real Chromium at 1280 x 720 (issue 21, part 3), by computed sizes: headline numbers,
what the reader types, slider values and chart text are larger than in normal mode, a slider's value clears its
handle, and each page's main view starts on the first screen (at least MIN_VISIBLE pixels of it shown)."""

import time

import pytest

from tests.pages import CHART, matrix
from tests.streamlit_server import chromium, new_page, wait_idle

pytestmark = pytest.mark.browser

SCREEN = (1280, 720)
MIN_VISIBLE = 150  # pixels of the main view on the first screen, at least
READ_PX = 18  # every text a class must read, in presentation mode (issue 34, item 7)
PAGES = matrix("presentation")  # every page of the manifest (tests/pages.py)
# Each page's main view, by the element that draws it; a page not named here by its main view's container (the
# manifest's first view: ui.presentation.view)
MAIN = {"tokens": '[data-testid="stTable"]', "analogies": CHART, "attention": CHART, "causal_mask": CHART,
        "logit_lens": CHART, "perplexity": '[data-testid="stDataFrame"]', "sampling": ".samp-text",
        "code": ".lab-code", "fill": CHART, "serving": '[data-testid="stCode"]', "ceiling": CHART,
        "fossils": '[data-testid="stDataFrame"]',
        "detector": '[class*="st-key-det_verdict"] [data-testid="stMetric"]'}
# main views that are text, not charts
TEXT = {"tokens": '[data-testid="stTable"] td', "sampling": ".samp-text", "code": ".lab-code pre"}
# Issue 34, item 7: the smallest size of each kind of text a class must read (null: none on the page), the
# tables' effective size (st.dataframe draws 14 px on a canvas: times the zoom it is drawn at, which presentation mode
# sets on the table's element container: issue 48), and how many pixels
# of the sidebar show.
READABLE = r"""(() => {
  const shown = (sel) => [...document.querySelectorAll(sel)].filter(e => e.getBoundingClientRect().height > 0
    && e.textContent.trim());
  const least = (sel) => { const s = shown(sel).map(e => parseFloat(getComputedStyle(e).fontSize));
    return s.length ? Math.min(...s) : null; };
  const tables = [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stDataFrame"] canvas')]
    .filter(c => c.offsetWidth > 0).map(c => { let z = 1;  // the zoom of the table's boxes, multiplied up the tree
      for (let e = c; e; e = e.parentElement) z *= parseFloat(getComputedStyle(e).zoom) || 1;
      return 14 * z; });
  const bar = document.querySelector('[data-testid="stSidebar"]');
  const r = bar && bar.getBoundingClientRect();
  return {caption_min: least('[data-testid="stCaptionContainer"] p, [data-testid="stCaptionContainer"]'),
          code_min: least('[data-testid="stMain"] [data-testid="stCode"] code'),
          inline_min: least('[data-testid="stMain"] [data-testid="stMarkdownContainer"] code'),
          table_min: tables.length ? Math.min(...tables) : null,
          sidebar_px: r ? Math.max(0, Math.min(r.right, innerWidth) - Math.max(r.left, 0)) : 0}; })()"""
MEASURE = r"""([main, text]) => { const READABLE = """ + READABLE + r""";
  const px = (sel) => {
    const e = sel && document.querySelector(sel);
    return e ? parseFloat(getComputedStyle(e).fontSize) : null; };
  const texts = [...document.querySelectorAll('[data-testid="stVegaLiteChart"] svg text')]
    .map(e => parseFloat(getComputedStyle(e).fontSize)).sort((a, b) => a - b);
  const thumb = document.querySelector('[data-testid="stSliderThumbValue"]');
  const handle = thumb && thumb.parentElement.getBoundingClientRect();
  const m = [...document.querySelectorAll(main)].find(e => e.getBoundingClientRect().height > 0);
  return {metric: px('[data-testid="stMetricValue"] p'),
          box: px('[data-testid="stMain"] textarea, [data-testid="stMain"] input[type="text"]'),
          thumb: px('[data-testid="stSliderThumbValue"] p'), chart_text: texts.length ? texts[texts.length >> 1] : null,
          chart_text_min: texts.length ? texts[0] : null,
          thumb_clear: thumb ? thumb.getBoundingClientRect().bottom <= handle.top + 1 : null,
          main_top: m ? m.getBoundingClientRect().top + window.scrollY : null, main_font: px(text),
          ...READABLE};
}"""


def main(page_name: str) -> str:
    """The CSS selector of the page's main view."""
    from lab.pages import by_slug
    from ui.presentation import VIEW_PREFIX

    return MAIN.get(page_name) or f'[class*="st-key-{VIEW_PREFIX}-{by_slug(page_name).views[0]}"]'


def sizes(browser, url: str, page_name: str, present: bool) -> dict:
    page = new_page(browser, *SCREEN)
    page.goto(f"{url}/{page_name}?present={int(present)}")
    page.wait_for_function("(s) => [...document.querySelectorAll(s)].some(e => e.getBoundingClientRect().height > 0)",
                           arg=main(page_name), timeout=90_000)
    wait_idle(page)
    time.sleep(1.5)  # charts finish drawing their SVG
    wait_idle(page)
    out = page.evaluate(MEASURE, [main(page_name), TEXT.get(page_name)])
    page.close()
    return out


@pytest.mark.parametrize("page_name", PAGES)
def test_presentation_mode_is_larger_and_the_main_view_is_on_the_first_screen(app_url, page_name):
    with chromium() as browser:
        normal, present = (sizes(browser, app_url, page_name, mode) for mode in (False, True))
    print(page_name, "normal", normal, "present", present)  # the figures, for the record
    for what in ("metric", "box", "thumb", "chart_text", "chart_text_min", "main_font"):
        assert (normal[what] is None) == (present[what] is None), what
        if normal[what] is not None:
            assert present[what] > normal[what], (what, normal[what], present[what])
    assert present["thumb_clear"] in (True, None), "a slider's value covers its handle"
    assert present["main_top"] is not None and present["main_top"] <= SCREEN[1] - MIN_VISIBLE, present
    small = {k: present[k] for k in ("caption_min", "code_min", "inline_min", "table_min")
             if present[k] is not None and present[k] < READ_PX}
    assert small == {}, f"text a class must read under {READ_PX} px: {small}"
    assert present["sidebar_px"] == 0 and normal["sidebar_px"] > 0, (normal["sidebar_px"], present["sidebar_px"])
