"""The two slow pages in Chromium, each beside a bare page doing the same computation.

1. The perplexity page on its default text (Debian documentation no course model saw, the three course
   decoders, stride half the context): seconds from navigation until the page has settled (the script
   has finished and nothing on the page has changed for QUIET_MS), a warm visit (the models loaded and the
   results computed by an earlier visit), against bench_pages/perplexity_bare.py: the same lab calls, its
   results cached with st.cache_data, drawn with st.dataframe and st.altair_chart. Target 2.0.
2. The sampling page (course-gpt2, default settings): after a click on the seed's + button, seconds to the
   first new token on screen and until the page has settled, against bench_pages/sampling_bare.py (the
   streamed generation, its first step's candidates as a chart, comparison B's greedy text, with plain
   st.markdown and st.altair_chart). Targets: first token 1.2, settled 2.0. Each visit opens its own seed
   (?samp_seed=), so no cached comparison from an earlier visit helps either page.

Visits alternate project / bare (the order swapped every round) in one run; medians. Timings come from
the page's own clock (performance.now(), a MutationObserver). Needs /usr/bin/chromium and Playwright.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from lab.benchmarks import entry

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "bench_pages"
QUIET_MS = 1000
REPEATS = 5
# Installed before any page script: the time of the last DOM change, and of the first streamed token after
# window.__mark() (the stream's text differs from what it showed at the mark, beyond the prompt).
WATCH = """
window.__last = performance.now(); window.__first = null; window.__mark = (before, prompt) => {
  window.__t0 = performance.now(); window.__before = before; window.__prompt = prompt; window.__first = null; };
const streamText = () => { const s = document.querySelector('.st-key-samp_stream');
  return s ? s.innerText.replace('\\u258d', '').trim() : ''; };
window.__streamText = streamText;
new MutationObserver(() => {
  window.__last = performance.now();
  if (window.__t0 !== undefined && window.__first === null) {
    const now = streamText();
    if (now !== window.__before && now.length > window.__prompt.length) window.__first = performance.now();
  }
}).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
"""
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'


def _settle(page, timeout_s: float = 300) -> None:
    """Wait until the script has finished and nothing on the page has changed for QUIET_MS."""
    page.wait_for_selector(IDLE, timeout=timeout_s * 1000)
    page.wait_for_function(f"performance.now() - window.__last > {QUIET_MS}", timeout=timeout_s * 1000,
                           polling=100)
    page.wait_for_selector(IDLE, timeout=timeout_s * 1000)


def _open(browser, url: str):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.add_init_script(WATCH)
    page.goto(url)
    return page


def _perplexity_visit(browser, url: str) -> float:
    """Seconds from navigation until the page has settled."""
    page = _open(browser, url)
    page.wait_for_selector('[data-testid="stDataFrame"]', timeout=300_000)
    _settle(page)
    seconds = page.evaluate("window.__last") / 1000  # performance.now() counts from navigation
    page.close()
    return seconds


def _sampling_visit(browser, url: str, seed: int) -> tuple[float, float]:
    """(first new token, settled) in seconds after a click on the seed's + button, the page opened at `seed`."""
    from lab.sampling import PROMPTS

    page = _open(browser, f"{url}{'&' if '?' in url else '?'}samp_seed={seed}")
    page.wait_for_selector('.st-key-samp_stream', timeout=300_000)
    _settle(page)
    page.evaluate("([p]) => window.__mark(window.__streamText(), p)", [PROMPTS["en"]])
    page.locator('.st-key-samp_seed button[data-testid="stNumberInputStepUp"]').click()
    page.wait_for_function("window.__first !== null", timeout=300_000, polling=50)
    page.wait_for_timeout(200)  # the click's rerun has started by now: idle means it has finished
    _settle(page)
    first, last, t0 = page.evaluate("[window.__first, window.__last, window.__t0]")
    page.close()
    return (first - t0) / 1000, (last - t0) / 1000


def _alternate(project, bare, repeats: int = REPEATS) -> tuple[list, list]:
    """Each function's results over `repeats` rounds after one warm-up round, the order swapped every round."""
    project(-1)
    bare(-1)
    p, b = [], []
    for i in range(repeats):
        order = ((project, p), (bare, b)) if i % 2 == 0 else ((bare, b), (project, p))
        for fn, out in order:
            out.append(fn(i))
    return p, b


def _perplexity(browser, app_url: str, bare_url: str) -> dict:
    p, b = _alternate(lambda i: _perplexity_visit(browser, f"{app_url}/perplexity"),
                      lambda i: _perplexity_visit(browser, bare_url))
    return entry("perplexity page settled: navigation until nothing changes (Chromium, default text, the three "
                 "course decoders, warm) vs a bare page with the same lab calls", statistics.median(p),
                 statistics.median(b), 2.0, project_runs=[round(x, 3) for x in p],
                 reference_runs=[round(x, 3) for x in b])


def _sampling(browser, app_url: str, bare_url: str) -> list[dict]:
    p, b = _alternate(lambda i: _sampling_visit(browser, f"{app_url}/sampling", 1000 + 2 * i),
                      lambda i: _sampling_visit(browser, bare_url, 1000 + 2 * i))
    out = []
    for k, what, target in ((0, "first new token on screen", 1.2), (1, "settled (nothing changes)", 2.0)):
        pk, bk = [x[k] for x in p], [x[k] for x in b]
        out.append(entry(f"sampling page after a seed click: {what} (Chromium, course-gpt2, 32 tokens) vs a bare "
                         "sampler with the same lab calls", statistics.median(pk), statistics.median(bk), target,
                         project_runs=[round(x, 3) for x in pk], reference_runs=[round(x, 3) for x in bk]))
    return out


def benchmarks() -> list[dict]:
    import time

    from lab.testing.browser import browser_missing, chromium, streamlit_server

    names = ["perplexity page settled", "sampling page after a seed click: first new token",
             "sampling page after a seed click: settled"]
    missing = browser_missing()
    if missing:
        return [{"name": n, "project_s": None, "reference_s": None, "ratio": None, "target": None, "ok": None,
                 "reason": missing} for n in names]
    env = {"PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    t0 = time.perf_counter()
    with (streamlit_server(str(ROOT / "app.py"), env=env) as app_url,
          streamlit_server(str(PAGES / "perplexity_bare.py"), env=env) as ppl_url,
          streamlit_server(str(PAGES / "sampling_bare.py"), env=env) as samp_url,
          chromium() as browser):
        results = [_perplexity(browser, app_url, ppl_url), *_sampling(browser, app_url, samp_url)]
    wall = round(time.perf_counter() - t0, 3)
    return [{**r, "wall_s": wall} for r in results]
