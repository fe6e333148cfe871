"""WCAG 2.2 AA in a real Chromium (issue 42; docs/accessibility.md says what is checked and why), and nothing
leaves the machine.

axe-core (the npm package pinned in tests/a11y/package.json, installed by `make test` with `npm ci`) runs
on every page of the app in English, in Portuguese and in presentation mode, with the WCAG 2.0, 2.1 and 2.2
A and AA rules; any violation fails, except the Streamlit-drawn elements listed in EXCEPTIONS (each named,
with its reason, in docs/accessibility.md). Beyond axe's rules: every chart's SVG has a text alternative,
`<html lang>` follows the reader's language, every input of one page of each kind (slider, select, text
area, button) is reached with Tab and changed with keys alone, with a visible focus, and at a 640 px wide
viewport (200 % zoom of a 1280 px screen) no page scrolls sideways and no text is cut off. A lesson step's
answerable question (issue 52) gets the same axe run, for a reader alone, before answering and after the reveal.
The same visits record every request the tab sends or fails on: each must go to the app's own server (offline
in a classroom an outside request fails; on a hosted demo it tells that outside host who visits), and every
page's tab shows the shipped icon, sent inline. The pages are app.py's navigation (tests.pages.page_paths).
One server, one browser, one tab for the whole module.
"""

from __future__ import annotations

import contextlib
import json
import os
import time

import pytest

from tests.pages import outside, page_paths
from tests.streamlit_server import ROOT, chromium, new_page, require_browser, streamlit_server, wait_idle

pytestmark = pytest.mark.browser

AXE_DIR = ROOT / "tests" / "a11y"
AXE = AXE_DIR / "node_modules" / "axe-core" / "axe.min.js"
AXE_VERSION = json.loads((AXE_DIR / "package.json").read_text())["dependencies"]["axe-core"]
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
PAGES = page_paths()  # every page of app.py's navigation: app_pages/X.py is served at /X, the home page at /
MODES = {"en": "lang=en", "pt": "lang=pt", "present": "lang=pt&present=1"}
# rule id -> CSS selectors of elements Streamlit itself draws that the app cannot reach (docs/accessibility.md)
EXCEPTIONS: dict[str, tuple[str, ...]] = {}
CHARTS = '[data-testid="stVegaLiteChart"]'
RUN_AXE = """async (tags) => {
  const r = await axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
  return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => ({target: n.target.join(' '), html: n.html.slice(0, 160),
                             why: n.failureSummary.split('\\n').slice(-1)[0]}))}));
}"""


@pytest.fixture(scope="module")
def tab():
    """(base URL, one Chromium tab) shared by every test here."""
    require_browser()
    if not AXE.exists():
        why = f"{AXE} is missing: run `npm ci` in tests/a11y (make test does)"
        if os.environ.get("REQUIRE_BROWSER") == "1":
            pytest.fail(why)
        pytest.skip(why)
    with streamlit_server(env={"HF_HUB_OFFLINE": "1"}) as url, chromium() as browser:
        yield url, new_page(browser, 1280, 900)


def settle(page) -> None:
    """Wait for the script run to end and every chart to draw its SVG."""
    page.wait_for_selector("h1", timeout=120_000)
    wait_idle(page, 120_000)
    time.sleep(1.0)
    wait_idle(page, 120_000)
    page.wait_for_function(f"() => [...document.querySelectorAll('{CHARTS}')].every(c => c.querySelector('svg'))",
                           timeout=60_000)


def open_view(tab, path: str, query: str):
    url, page = tab
    page.goto(f"{url}/{path}?{query}")
    settle(page)
    return page


@contextlib.contextmanager
def recording(page, seen: list[str]):
    """Every URL the tab asks for (sent, or failed) while inside, into `seen`."""
    page.on("request", record := lambda r: seen.append(r.url))
    page.on("requestfailed", record)
    try:
        yield
    finally:
        page.remove_listener("request", record)
        page.remove_listener("requestfailed", record)


def excepted(rule: str, target: str, page) -> bool:
    """True when the node is an element EXCEPTIONS allows for this rule."""
    return any(page.evaluate("([t, s]) => !!document.querySelector(t)?.closest(s)", [target, sel])
               for sel in EXCEPTIONS.get(rule, ()))


def axe_violations(page) -> list[str]:
    """axe-core's WCAG A/AA violations on the page as it is now, one line per element, EXCEPTIONS left out."""
    page.add_script_tag(path=str(AXE))
    assert page.evaluate("() => axe.version") == AXE_VERSION
    found = []
    for v in page.evaluate(RUN_AXE, TAGS):
        nodes = [n for n in v["nodes"] if not excepted(v["id"], n["target"], page)]
        found += [f"{v['id']} ({v['impact']}): {n['target']} {n['html']} -- {n['why']}" for n in nodes]
    return found


def chart_labels(page) -> list[str | None]:
    """Each chart's text alternative: Vega writes the spec's description as its container's aria-label."""
    return page.eval_on_selector_all(CHARTS, "cs => cs.map(c => c.closest('[role=graphics-document]')"
                                             "?.getAttribute('aria-label'))")


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("path", PAGES)
def test_axe_finds_no_wcag_violation_and_every_chart_is_described(tab, path, mode):
    url, page = tab
    seen: list[str] = []
    with recording(page, seen):
        open_view(tab, path, MODES[mode])
        page.wait_for_load_state("networkidle")  # late fetches: icons, fonts and charts drawn after the run ends
    assert f"{url}/{path}?{MODES[mode]}" in seen, "the page's own request was not recorded"
    assert outside(seen, url) == [], "requests that would leave the machine"
    # the shipped icon, sent inline (not a missing or default one)
    assert page.eval_on_selector('link[rel~="icon"]', "e => e.href").startswith("data:image/svg+xml")
    found = axe_violations(page)
    assert not found, f"/{path}?{MODES[mode]}:\n" + "\n".join(found)
    # every chart says what it shows: Vega writes the spec's description as its container's aria-label
    labels = chart_labels(page)
    assert all(label and len(label) > 12 for label in labels), labels
    # and no legend label is cut with an ellipsis (issue 34, item 11: "mostrado como um toke…")
    cut = page.eval_on_selector_all(f"{CHARTS} svg g.role-legend-label text",
                                    "ts => ts.map(t => t.textContent).filter(s => s.endsWith('…'))")
    assert cut == [], cut


def test_html_lang_follows_the_readers_language(tab):
    page = open_view(tab, "attention", "lang=pt")
    assert page.evaluate("() => document.documentElement.lang") == "pt-BR"
    page.locator('[data-testid="stSidebar"]').get_by_text("English", exact=True).click()
    page.wait_for_function("() => document.documentElement.lang === 'en'", timeout=60_000)
    page.locator('[data-testid="stSidebar"]').get_by_text("Português (Brasil)", exact=True).click()
    page.wait_for_function("() => document.documentElement.lang === 'pt-BR'", timeout=60_000)


# --- a step's answerable question (issue 52), for a reader alone: the answer box, then the reveal ---------------------
QUESTION_STEP = "?lesson=01-tokens-and-embeddings&step=3&lang="  # a number: GPT-2's token count of a sentence
WORDS = {  # the bar's step, the box, the button, the info line while the page is withheld, the reveal's sentence
    "en": ("step 3 of", "Your answer (a number)", "Check my answer", "The page appears when the answer is revealed.",
           "The true value:"),
    "pt": ("passo 3 de", "Sua resposta (um número)", "Conferir minha resposta",
           "A página aparece quando a resposta for revelada.", "O valor verdadeiro:"),
}


@pytest.mark.parametrize("moment", ["before", "revealed"])
@pytest.mark.parametrize("lang", list(WORDS))
def test_axe_finds_no_wcag_violation_on_an_answerable_question(tab, lang, moment):
    url, page = tab
    bar, label, check, withheld, truth = WORDS[lang]
    page.goto(f"{url}/{QUESTION_STEP}{lang}")
    page.wait_for_selector(f"text={bar}", timeout=120_000)
    wait_idle(page, 120_000)
    box = page.get_by_label(label)
    box.wait_for(timeout=60_000)
    page.get_by_text(withheld).wait_for(timeout=60_000)  # the info line: the page is withheld, not run
    if moment == "revealed":
        box.fill("24")
        page.get_by_role("button", name=check).click()
        page.get_by_text(truth).wait_for(timeout=120_000)
        settle(page)  # the tokens page, run now, and the class's estimate beside the true value
        assert page.get_by_text(withheld).count() == 0
        assert page.locator(CHARTS).count() >= 1, "no chart drawn on the reveal"
    else:
        time.sleep(1.0)
        wait_idle(page, 120_000)
        assert page.locator(CHARTS).count() == 0, "the tokens page ran before the answer"
    found = axe_violations(page)
    assert not found, f"{QUESTION_STEP}{lang} ({moment}):\n" + "\n".join(found)
    labels = chart_labels(page)
    assert all(label and len(label) > 12 for label in labels), labels


# --- keyboard: Tab reaches an input, with a visible focus, and keys alone change it ---------------------------------
def tab_to(page, predicate: str, limit: int = 250) -> int:
    """Press Tab until the focused element satisfies `predicate` (JS over `e`); how many presses it took."""
    for n in range(1, limit + 1):
        page.keyboard.press("Tab")
        if page.evaluate(f"() => {{ const e = document.activeElement; return !!e && ({predicate}); }}"):
            return n
    raise AssertionError(f"{limit} Tabs never reached {predicate}")


def focus_is_visible(page) -> bool:
    """The focused element's box (and 6 px around it) looks different focused than blurred."""
    box = page.evaluate("() => { const r = document.activeElement.getBoundingClientRect();"
                        " return {x: Math.max(0, r.x - 6), y: Math.max(0, r.y - 6), width: r.width + 12,"
                        " height: r.height + 12}; }")
    focused = page.screenshot(clip=box)
    page.evaluate("() => { window._a11yFocus = document.activeElement; document.activeElement.blur(); }")
    blurred = page.screenshot(clip=box)
    page.evaluate("() => window._a11yFocus.focus()")
    return focused != blurred


def in_widget(testid: str, label: str) -> str:
    """A JS predicate: `e` sits in a widget `testid` whose text includes `label`."""
    w = f"e.closest('[data-testid=\"{testid}\"]')"
    return f"!!{w} && {w}.innerText.includes({label!r})"


def test_a_slider_and_a_button_by_keyboard_alone(tab):
    page = open_view(tab, "fill", "lang=en")
    presses = tab_to(page, "e.getAttribute('aria-label') === 'Candidates per mask' && " +
                     in_widget("stSlider", "Candidates per mask"))
    assert focus_is_visible(page), "the slider's focus is not visible"
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => location.search.includes('fill_top=6')", timeout=60_000)
    settle(page)
    tab_to(page, "e.tagName === 'BUTTON' && e.innerText.includes('Insert <mask>')")
    assert focus_is_visible(page), "the button's focus is not visible"
    page.keyboard.press("Enter")
    page.wait_for_function("() => [...document.querySelectorAll('textarea')].some(t => t.value.endsWith('. <mask>'))",
                           timeout=60_000)  # the default text, then the mask the button inserts
    print("Tabs to the fill page's slider:", presses)


def test_a_text_area_and_a_select_by_keyboard_alone(tab):
    page = open_view(tab, "attention", "lang=en")
    tab_to(page, "e.tagName === 'TEXTAREA' && !!e.closest('[data-testid=\"stMain\"]')")
    assert focus_is_visible(page), "the text area's focus is not visible"
    page.keyboard.press("End")
    page.keyboard.type(" Keys alone.")
    page.keyboard.press("Control+Enter")
    page.wait_for_function("() => decodeURIComponent(location.search.replace(/\\+/g, ' ')).includes('Keys alone.')",
                           timeout=60_000)
    settle(page)
    tab_to(page, "e.getAttribute('role') === 'combobox' && e.getAttribute('aria-label') === 'Layer'")
    assert focus_is_visible(page), "the select's focus is not visible"
    before = page.evaluate("() => document.activeElement.value")
    page.keyboard.press("ArrowDown")  # opens the list
    page.wait_for_selector('[role="option"]', timeout=30_000)
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    page.wait_for_function("(b) => { const e = document.querySelector('input[aria-label=\"Layer\"]');"
                           " return e && e.value !== b; }", arg=before, timeout=60_000)
    after = page.evaluate("() => document.querySelector('input[aria-label=\"Layer\"]').value")
    page.wait_for_function("(v) => location.search.includes('attn_layer=' + v)", arg=after, timeout=60_000)
    assert after != before


# --- zoom: 200 % of a 1280 px screen is a 640 px wide viewport --------------------------------------------------------
# Elements that may scroll sideways inside their own frame: charts (wide heatmaps), data frames and code blocks.
OWN_FRAME = '[data-testid="stVegaLiteChart"], [data-testid="stFullScreenFrame"], [data-testid="stDataFrame"], ' \
            '[data-testid="stCode"], [data-testid="stTable"], .lab-code'
OVERFLOW = """(ownFrame) => {
  const out = {page: document.scrollingElement.scrollWidth - innerWidth, scrollers: [], cut: []};
  for (const e of document.querySelectorAll('[data-testid="stMain"] *')) {
    const s = getComputedStyle(e), r = e.getBoundingClientRect();
    if (!r.width || s.visibility === 'hidden' || e.closest(ownFrame)) continue;
    const text = [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (e.scrollWidth > e.clientWidth + 1 && ['auto', 'scroll'].includes(s.overflowX))
      out.scrollers.push(e.tagName + '.' + e.className.toString().slice(0, 60));
    else if (text && e.scrollWidth > e.clientWidth + 1 && s.overflowX !== 'visible')
      out.cut.push(e.innerText.slice(0, 60));
    else if (text && r.right > innerWidth + 1) out.cut.push('off screen: ' + e.innerText.slice(0, 60));
  }
  return out;
}"""


@pytest.mark.parametrize("path", PAGES)
def test_at_640_px_nothing_scrolls_sideways_and_no_text_is_cut(tab, path):
    url, page = tab
    page.set_viewport_size({"width": 640, "height": 900})
    try:
        page.goto(f"{url}/{path}?lang=en")
        settle(page)
        found = page.evaluate(OVERFLOW, OWN_FRAME)
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})
    assert found["page"] <= 0 and not found["scrollers"] and not found["cut"], found
