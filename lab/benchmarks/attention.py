"""Attention: the forward pass through lab, and the all-heads overview rendered in Chromium.

1. `lab.attention.attention(model, ids)` (explicit 4D mask, weights stacked into one float32
   array) against a bare eager forward of the same base model with `output_attentions=True`,
   both under torch.inference_mode, 128 tokens, GPT-2 small's shapes with random weights
   (lab.testing.random_models, size "small"). Target ratio 1.2.
2. The all-heads overview (viz.attention.overview_png: 12 x 12 heads x 64 x 64 tokens, as the
   attention page draws it) opened in headless Chromium, from navigation until the image has
   loaded, against a bare Streamlit page (a title) measured the same way in the same run.
   Target ratio 3. Needs /usr/bin/chromium and Playwright; without them the entry says why.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from lab.benchmarks import entry, side_by_side

ROOT = Path(__file__).resolve().parents[2]
# The two pages `streamlit run` serves for the render benchmark (lab itself never imports streamlit).
PAGES = ROOT / "bench_pages"
IMAGE_LOADED = ("() => { const i = document.querySelector('[data-testid=\"stImage\"] img');"
                " return !!i && i.complete && i.naturalWidth > 0; }")


def _forward() -> tuple[dict, np.ndarray]:
    """The forward-pass benchmark entry, and 64-token attention of the same model for the overview."""
    import torch

    from lab import attention
    from lab.testing import random_models

    model, _ = random_models.build("gpt2", "small")
    model.set_attn_implementation("eager")  # a private model: changing it here is fine
    ids = torch.randint(0, model.config.vocab_size, (128,), generator=torch.Generator().manual_seed(0)).tolist()
    base = model.base_model

    def bare():
        with torch.inference_mode():
            return base(torch.tensor([ids]), output_attentions=True).attentions

    lab_s, ref_s = side_by_side(lambda: attention.attention(model, ids), bare, repeats=7)
    result = entry("attention: lab.attention.attention vs bare eager forward with output_attentions, "
                   "GPT-2 small shapes, 128 tokens", lab_s, ref_s, 1.2)
    return result, attention.attention(model, ids[:64])


def _render(att: np.ndarray) -> dict:
    """Median seconds from navigation to a finished page: the overview page vs the bare page."""
    from lab.testing.browser import IDLE, chromium, streamlit_server

    name = "attention: all-heads overview (12 x 12 heads, 64 tokens) vs a bare page, rendered in Chromium"
    with tempfile.TemporaryDirectory() as tmp:
        np.save(Path(tmp) / "att.npy", att)
        env = {"PYTHONPATH": str(ROOT), "BENCH_ATTENTION_NPY": str(Path(tmp) / "att.npy")}
        with (streamlit_server(str(PAGES / "overview.py"), env=env) as over_url,
              streamlit_server(str(PAGES / "bare.py"), env=env) as bare_url,
              chromium() as browser):

            def visit(url: str, ready: str | None):
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.goto(url)
                page.wait_for_selector('[data-testid="stHeading"]', timeout=60_000)
                if ready:
                    page.wait_for_function(ready, timeout=60_000)
                page.wait_for_selector(IDLE, timeout=60_000)
                page.close()

            over_s, bare_s = side_by_side(lambda: visit(over_url, IMAGE_LOADED),
                                          lambda: visit(bare_url, None), repeats=5)
    return entry(name, over_s, bare_s, 3.0)


def benchmarks() -> list[dict]:
    forward, att = _forward()
    from lab.testing.browser import browser_missing

    missing = browser_missing()
    if missing:
        render = {"name": "attention: all-heads overview rendered in Chromium", "project_s": None,
                  "reference_s": None, "ratio": None, "target": 3.0, "ok": False, "reason": missing}
    else:
        t0 = time.perf_counter()
        render = _render(att)
        render["wall_s"] = round(time.perf_counter() - t0, 3)
    return [forward, render]
