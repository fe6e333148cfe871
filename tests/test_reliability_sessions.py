"""Many sessions at once on one shared model, through the real server (issue 12): a classroom opening
the teacher's links together.

22 Chromium tabs (one browser, one context; each tab is its own Streamlit session) open at once on
the shipped course model, offline: 20 on the sampling page with their own seeds and settings (two
share a seed), one on the causal-mask page (the mask off, and the trophy beside an encoder), one
computing perplexity. While they run, a new visitor opens the tokens page and is timed. Then:

- no exception on any tab, no dialog, no traceback in the server's output;
- each model loaded once (the server appends a line per real load to $LAB_LOAD_LOG);
- no cross-talk: each tab shows exactly what the lab CLI computes for its settings alone
  (`python -m lab sample --json ...` for every seed, `trophy`, `perplexity`; run in this process
  through lab.cli.main, and one of them through a real `python -m lab` for good measure).

The figures (sessions at once, scripts running at once, the visitor's wait, the wall time) are printed
on one line (pytest -s) and kept in docs/RELIABILITY.md.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from lab import causal, perplexity
from lab.cli import main
from lab.models import DEFAULT_OFFLINE, load
from lab.sampling import PROMPTS
from lab.text import encode
from tests.pages import APP
from tests.streamlit_server import chromium, new_page, require_browser, streamlit_server
from viz.format import number

pytestmark = [pytest.mark.slow, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[1]
N_NEW = 12
# (seed, (temperature, top-k, top-p)): the page's defaults, or cooler and narrower every third seed; the last
# repeats seed 5. Seed 15 draws the end-of-text token first: that tab must stop after one token, as the CLI does.
SAMPLERS = [(seed, (1.0, 50, 0.9) if seed % 3 else (0.7, 20, 0.9)) for seed in range(19)] + [(5, (1.0, 50, 0.9))]
TOKENS = ".st-key-samp_stream .samp-tok"
VISITOR_LIMIT_S = 120  # the new visitor's page, while 22 sessions and their 22 Chromium tabs share 2 cores:
# measured 16-53 s (RELIABILITY.md); the bound catches a server that stops answering, not a slow CPU
READY_S = 170


def cli(*args: str) -> dict:
    """`python -m lab ARGS --json` run in this process (lab.cli.main: the same code), its JSON."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*args, "--json"]) == 0
    return json.loads(out.getvalue())


def sample_link(seed: int, s: tuple[float, int, float]) -> str:
    """The sampling page for one seed and settings, as a teacher's shared link."""
    t, k, p = s
    return (f"/sampling?model={DEFAULT_OFFLINE}&samp_seed={seed}&samp_n={N_NEW}"
            f"&samp_temperature={t}&samp_top_k={k}&samp_top_p={p}")


def alone_sample(seed: int, s: tuple[float, int, float]) -> list[str]:
    """The new text the CLI draws for this seed and settings, as the page's chips show it: one per run of tokens
    that makes whole characters (the CLI's "runs"; a character split into byte tokens is one chip)."""
    t, k, p = s
    out = cli("sample", "--model", DEFAULT_OFFLINE, "--prompt", PROMPTS["en"], "--seed", str(seed),
              "--max-new-tokens", str(N_NEW), "--temperature", str(t), "--top-k", str(k), "--top-p", str(p))
    return [r["text"] for r in out["runs"]]


def alone_causal() -> list[str]:
    """The causal page's four metric values, from the CLI (trophy) and lab.causal (the loss), alone."""
    from viz.attention import diff_text

    a, b, word = causal.TROPHY["en"]
    m = load(DEFAULT_OFFLINE)
    ids = encode(m.tokenizer, a)
    on, off = (causal.view(m.model, ids, causal=c)["loss"] for c in (True, False))
    trophy = [cli("trophy", "--model", name, "--a", a, "--b", b, "--word", word, *extra)["max_abs_diff"]
              for name, extra in ((DEFAULT_OFFLINE, []), (DEFAULT_OFFLINE, ["--no-causal"]), ("course-roberta", []))]
    delta = f"{'+' if off >= on else ''}{number(off - on, 'en', 3)}"
    return [number(off, "en", 3), f"{delta} vs {number(on, 'en', 3)} with it",
            *(diff_text(d) for d in trophy)]


def alone_perplexity(tmp_path: Path) -> str:
    """Perplexity per token of the page's market passage under the course model, from the CLI, as the table
    writes it."""
    text = next(p["text"] for p in perplexity.passages() if (p["id"], p["lang"]) == ("market", "en"))
    (tmp_path / "market.txt").write_text(text, encoding="utf-8")
    out = cli("perplexity", "--model", DEFAULT_OFFLINE, "--file", str(tmp_path / "market.txt"))
    return number(out["results"][0]["ppl"], "en")


def script_state(page) -> str:
    """The tab's Streamlit script state: 'running', 'notRunning', or '' before the app is drawn (also while the tab
    is still leaving its blank page: the navigation is fired, not awaited, and reading a page that is being
    replaced raises "Execution context was destroyed")."""
    from playwright.sync_api import Error

    try:
        return page.evaluate("() => document.querySelector('[data-testid=\"stApp\"]')?.dataset.testScriptState || ''")
    except Error as e:
        if "Execution context was destroyed" in str(e) or "navigating" in str(e):
            return ""
        raise


def ready(kind: str, page) -> bool:
    """Has this tab finished its work (its script idle and its result drawn)?"""
    if script_state(page) != "notRunning":
        return False
    if kind == "sample":  # the caption under the text comes once the stream has ended
        return page.get_by_text("Each token's background").count() == 1
    if kind == "causal":
        return page.locator('[data-testid="stMetric"]').count() == 4
    tables = page.locator('[data-testid="stDataFrame"]').count()
    return tables >= 1 and page.get_by_text("Published figures").count() == 1


def metric_values(page) -> list[str]:
    """The causal page's metric values, and the first metric's delta line."""
    values = page.locator('[data-testid="stMetricValue"]').all_inner_texts()
    delta = page.locator('[data-testid="stMetricDelta"]').first.inner_text()
    return [values[0], delta.strip(), *values[1:]]


def table_ppl(page) -> str:
    """'ppl / token' of the perplexity page's first row, from its CSV export (the table as shown)."""
    with page.expect_download(timeout=60_000) as info:
        page.locator('[data-testid="stDownloadButton"] button').filter(has_text="CSV").first.click()
    frame = pd.read_csv(info.value.path(), encoding="utf-8-sig", dtype=str)
    return frame["ppl / token"].iloc[0]


def test_twenty_two_sessions_at_once_on_one_shared_model(tmp_path):
    require_browser()
    expected = {i: alone_sample(seed, s) for i, (seed, s) in enumerate(SAMPLERS)}
    assert len({tuple(v) for v in expected.values()}) == len(SAMPLERS) - 1  # only the shared seed repeats
    shell = subprocess.run(  # one of them through the real command line, for good measure
        [sys.executable, "-m", "lab", "sample", "--json", "--model", DEFAULT_OFFLINE, "--prompt", PROMPTS["en"],
         "--seed", str(SAMPLERS[0][0]), "--max-new-tokens", str(N_NEW), "--temperature", "0.7", "--top-k", "20",
         "--top-p", "0.9"], capture_output=True, text=True, cwd=ROOT, timeout=120, check=True)
    assert [r["text"] for r in json.loads(shell.stdout)["runs"]] == expected[0]
    expected_causal, expected_ppl = alone_causal(), alone_perplexity(tmp_path)

    loads = tmp_path / "loads.jsonl"
    env = {"HF_HUB_OFFLINE": "1", "LAB_LOAD_LOG": str(loads)}
    with streamlit_server(APP, env=env) as url, chromium() as browser:
        context = browser.new_context(viewport={"width": 1280, "height": 1600}, accept_downloads=True)
        context.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        dialogs: list[str] = []
        links = {("sample", i): sample_link(seed, s) for i, (seed, s) in enumerate(SAMPLERS)}
        links[("causal", 0)] = f"/causal_mask?model={DEFAULT_OFFLINE}"
        links[("ppl", 0)] = f"/perplexity?model={DEFAULT_OFFLINE}&ppl_models={DEFAULT_OFFLINE}&ppl_source=market:en"
        tabs = {key: context.new_page() for key in links}  # blank tabs first: opening a tab is the slow part (27 s
        # for 22 tabs on a loaded CI machine, where each tab's script had ended before the next tab opened)
        t0 = time.monotonic()
        for key, link in links.items():  # then every tab asks at once: the navigation is fired, not awaited
            tabs[key].evaluate("u => { setTimeout(() => { window.location.href = u; }, 0); }", url + link)
        opened_s = time.monotonic() - t0

        # A new visitor arrives while they run: once their scripts have started (a tab just opened may not have
        # drawn its app yet, and a count then would say none runs although all are about to).
        started_by = time.monotonic() + READY_S
        while not any(script_state(p) == "running" for p in tabs.values()) and time.monotonic() < started_by:
            time.sleep(0.1)
        running_at_visit = sum(script_state(p) == "running" for p in tabs.values())
        visitor = new_page(browser)
        t1 = time.monotonic()
        visitor.goto(f"{url}/tokens", timeout=VISITOR_LIMIT_S * 1000)  # the stated bound, not the 30 s default
        visitor.wait_for_selector('h1:has-text("Tokenization")', timeout=VISITOR_LIMIT_S * 1000)
        visitor.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]',
                                  timeout=VISITOR_LIMIT_S * 1000)
        visitor_s = time.monotonic() - t1
        running_after_visit = sum(script_state(p) == "running" for p in tabs.values())

        # every sample of scripts running at once counts: on a quick machine most tabs are done by now
        peak, done, deadline = max(running_at_visit, running_after_visit), set(), time.monotonic() + READY_S
        while len(done) < len(tabs) and time.monotonic() < deadline:
            states = {k: script_state(p) for k, p in tabs.items()}
            peak = max(peak, sum(s == "running" for s in states.values()))
            done |= {k for k, p in tabs.items() if k not in done and ready(k[0], p)}
            time.sleep(0.3)
        wall_s = time.monotonic() - t0
        shown = {i: tabs[("sample", i)].eval_on_selector_all(TOKENS, "els => els.map(e => e.textContent)")
                 for i in range(len(SAMPLERS))}
        crossed = [i for i in shown if shown[i] != expected[i]]
        figures = {"sessions": len(tabs) + 1, "opened_s": round(opened_s, 1), "peak_running": peak,
                   "running_at_visit": running_at_visit, "running_after_visit": running_after_visit,
                   "visitor_s": round(visitor_s, 1), "wall_s": round(wall_s, 1), "crossed": crossed,
                   "not_done": sorted(set(tabs) - done),
                   "loads": dict(Counter(json.loads(line)["name"] for line in loads.read_text().splitlines()))}
        print("\nRELIABILITY sessions", json.dumps(figures))
        assert done == set(tabs), f"not done after {READY_S} s: {figures['not_done']}"
        for key, page in tabs.items():
            assert page.locator('[data-testid="stException"]').count() == 0, key
        causal_shown, ppl_shown = metric_values(tabs[("causal", 0)]), table_ppl(tabs[("ppl", 0)])
        log = url.log()

    assert crossed == [], {i: (shown[i], expected[i]) for i in crossed}
    assert causal_shown == expected_causal
    assert ppl_shown == expected_ppl
    assert figures["loads"] == {DEFAULT_OFFLINE: 1, "course-roberta": 1}  # the shared model loaded once
    assert dialogs == [] and "Traceback" not in log
    assert running_at_visit >= 1 and visitor_s < VISITOR_LIMIT_S  # answered while the others still ran
    assert peak >= 2  # the sessions really ran at the same time
