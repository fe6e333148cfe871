"""What the serving page measures (chapter 14): lab.serving.loadtest.compare, run when the reader asks and kept in the
session (a measurement, not a cached value: each run measures again); the page's words for the modes."""

from __future__ import annotations

import time

import streamlit as st

from lab.serving import loadtest
from ui.i18n import t

RESULTS = "serve_results"  # session key: the last measurement's rows and its settings


def modes() -> dict[str, str]:
    return {"function": t("function call (no HTTP)", "chamada de função (sem HTTP)"),
            "http": t("HTTP, no batching", "HTTP, sem lotes"), "http_batched": t("HTTP, batching", "HTTP, com lotes"),
            "http_continuous": t("HTTP, continuous batching", "HTTP, lotes contínuos"),
            "no_cache": t("HTTP, batching, no key-value cache", "HTTP, com lotes, sem cache KV"),
            "url": t("your server", "o seu servidor")}


def measure(model: str, url: str | None, concurrencies: list[int], requests: int, max_tokens: int, bar,
            repeats: int = 2) -> list[dict]:
    """Every mode (or, with a URL, that server beside the function call) at every concurrency, warmed up,
    interleaved and repeated (lab.serving.loadtest.compare); the rows are kept in the session under RESULTS with
    the seconds the run took. `bar` is a st.progress to move; it is removed when the run ends."""
    def progress(share, mode, c):
        bar.progress(share, text=t(f"{modes()[mode]}, concurrency {c}", f"{modes()[mode]}, concorrência {c}"))

    start = time.monotonic()
    try:
        if url:
            rows = loadtest.compare(model, concurrencies, requests, max_tokens, progress, modes=loadtest.MODES[:1],
                                    repeats=repeats)
            for k, c in enumerate(concurrencies):
                runs = [loadtest.run(url, c, requests, loadtest.lengths(max_tokens)) for _ in range(repeats)]
                rows.append(loadtest.spread("url", c, runs))
                progress((k + 1) / len(concurrencies), "url", c)
        else:
            rows = loadtest.compare(model, concurrencies, requests, max_tokens, progress, repeats=repeats)
    finally:
        bar.empty()
    st.session_state[RESULTS] = {"rows": rows, "model": model, "requests": requests, "max_tokens": max_tokens,
                                 "repeats": repeats, "seconds": time.monotonic() - start}
    return rows
