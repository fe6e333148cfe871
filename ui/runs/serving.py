"""What the serving page measures (chapter 14): lab.serving.loadtest.compare, run when the reader asks and kept in the
session (a measurement, not a cached value: each run measures again); the page's words for the modes."""

from __future__ import annotations

import streamlit as st

from lab.serving import loadtest
from ui.i18n import t

RESULTS = "serve_results"  # session key: the last measurement's rows and its settings


def modes() -> dict[str, str]:
    return {"function": t("function call (no HTTP)", "chamada de função (sem HTTP)"),
            "http": t("HTTP, no batching", "HTTP, sem lotes"), "http_batched": t("HTTP, batching", "HTTP, com lotes"),
            "no_cache": t("HTTP, batching, no key-value cache", "HTTP, com lotes, sem cache KV"),
            "url": t("your server", "o seu servidor")}


def measure(model: str, url: str | None, concurrencies: list[int], requests: int, max_tokens: int, bar) -> list[dict]:
    """Every mode (or, with a URL, that server beside the function call) at every concurrency; the rows are kept
    in the session under RESULTS. `bar` is a st.progress to move."""
    def progress(share, mode, c):
        bar.progress(share, text=t(f"{modes()[mode]}, concurrency {c}", f"{modes()[mode]}, concorrência {c}"))

    if url:
        rows = loadtest.compare(model, concurrencies, requests, max_tokens, progress, modes=loadtest.MODES[:1])
        for k, c in enumerate(concurrencies):
            rows.append({"mode": "url", **loadtest.run(url, c, requests, max_tokens)})
            progress((k + 1) / len(concurrencies), "url", c)
    else:
        rows = loadtest.compare(model, concurrencies, requests, max_tokens, progress)
    st.session_state[RESULTS] = {"rows": rows, "model": model, "requests": requests, "max_tokens": max_tokens}
    return rows
