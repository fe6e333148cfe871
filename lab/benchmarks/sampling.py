"""Sampling: 64 tokens through lab against transformers' generate, and the streamed page's first token.

1. `lab.sampling.steps` (key-value cache, per-call generator, every step's top candidates, stages,
   entropies recorded for the page) against `model.generate(do_sample=True)` with the same settings
   (T 0.8, top-k 50, top-p 0.95), 64 new tokens after a 16-token prompt, GPT-2 small's shapes with
   random weights (lab.testing.random_models, size "small"), both without stopping at end-of-text;
   then the same on GPT-1's shapes, which has no key-value cache in transformers 5.x (lab and
   generate both re-read the whole sequence each step). Target ratio 1.1 for both.
2. The sampling page in headless Chromium on the offline course model: seconds from navigation to
   the first generated token on screen, against one bare forward pass of the same prompt through
   the same model (reported, no target: a page load is not a forward pass). Needs /usr/bin/chromium
   and Playwright; without them the entry says why.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from lab.benchmarks import entry, side_by_side

APP = Path(__file__).resolve().parents[2] / "app.py"  # the app the page belongs to, by absolute path

SETTINGS = dict(temperature=0.8, top_k=50, top_p=0.95)
NEW_TOKENS = 64
FIRST_TOKEN = '.st-key-samp_stream .samp-tok'  # a generated token drawn by the page (viz.sampling)


def _generation(arch: str = "gpt2", repeats: int = 5) -> dict:
    """lab.sampling.steps vs generate, 64 tokens, GPT-2 small's shapes (GPT-1's when arch is openai-gpt)."""
    import torch

    from lab import sampling
    from lab.testing import random_models

    model, _ = random_models.build(arch, "small")
    model.set_attn_implementation("eager")  # a private model, loaded as lab.models.load loads them
    ids = torch.randint(0, model.config.vocab_size, (16,), generator=torch.Generator().manual_seed(0)).tolist()

    def lab_run():
        return list(sampling.steps(model, ids, NEW_TOKENS, seed=0, stop_at_eos=False, **SETTINGS))

    def reference():
        with torch.inference_mode():
            return model.generate(torch.tensor([ids]), do_sample=True, max_new_tokens=NEW_TOKENS,
                                  pad_token_id=0, eos_token_id=None, **SETTINGS)

    lab_s, ref_s = side_by_side(lab_run, reference, repeats=repeats)
    how = ("GPT-2 small shapes" if arch == "gpt2" else
           "GPT-1 shapes, no key-value cache in transformers 5.x: both re-read the sequence each step")
    return entry(f"sampling: {NEW_TOKENS} tokens through lab.sampling.steps (recording every step) vs "
                 f"transformers generate, same settings, {how}", lab_s, ref_s, 1.1)


def _first_token() -> dict:
    """Median seconds to the first streamed token on the page vs one bare forward of the prompt."""
    import torch

    from lab.models import load
    from lab.sampling import PROMPTS
    from lab.testing.browser import chromium, new_page, streamlit_server

    m = load("course-gpt2")
    ids = torch.tensor([m.tokenizer(PROMPTS["en"])["input_ids"]])

    def forward():
        with torch.inference_mode():
            return m.model(input_ids=ids).logits

    forward()
    times = []
    for _ in range(21):
        t0 = time.perf_counter()
        forward()
        times.append(time.perf_counter() - t0)
    bare_s = statistics.median(times)
    with streamlit_server(str(APP), env={"HF_HUB_OFFLINE": "1"}) as url, chromium() as browser:

        def visit() -> float:
            page = new_page(browser)
            t0 = time.perf_counter()
            page.goto(f"{url}/sampling")
            page.wait_for_selector(FIRST_TOKEN, timeout=120_000)
            seconds = time.perf_counter() - t0
            page.close()
            return seconds

        visit()  # the server loads the model once
        page_s = statistics.median(visit() for _ in range(5))
    result = entry("sampling: streamed page, navigation to first token on screen (Chromium, course-gpt2) vs one "
                   "bare forward pass of the prompt", page_s, bare_s, 1.0)
    return {**result, "target": None, "ok": None, "note": "reported, no target"}


def _crowd(model, tok, short: int, long_text: str | None, new: int = 32) -> float:
    """Seconds until the last of `short` short readers (and the long text's reader, if any) has its tokens, all
    submitted at once to the model's shared engine, one thread each (as readers' sessions run)."""
    import threading

    from lab.serving import shared

    texts = ([long_text] if long_text else []) + [f"Reader {i} writes that the weather today is" for i in range(short)]
    threads = [threading.Thread(target=lambda i=i, x=x: list(shared.steps(model, tok.encode(x), new, 1.0, 0, 1.0, i)))
               for i, x in enumerate(texts)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - t0


def _engine() -> list[dict]:
    """The shared engine: a lone reader through it vs alone in the session; 30 short readers beside a long text vs
    without it."""
    from lab import sampling
    from lab.serving import shared
    from lab.testing import random_models

    model, tok = random_models.build("gpt2", "small")
    ids = tok.encode(sampling.PROMPTS["en"])
    one_s, alone_s = side_by_side(lambda: list(shared.steps(model, ids, 40, 1.0, 0, 1.0, 3)),
                                  lambda: list(sampling.steps(model, ids, 40, 1.0, 0, 1.0, 3)), repeats=5)
    long_text = ("The quick brown fox jumps over the lazy dog near the river bank. " * 40)[:2000]
    with_s, without_s = side_by_side(lambda: _crowd(model, tok, 30, long_text), lambda: _crowd(model, tok, 30, None),
                                     repeats=2)
    groups = max(len(g) for g in shared.engine_for(model).groups)
    return [entry("sampling: one reader alone through the shared engine vs alone in the session (40 tokens, GPT-2 "
                  "small shapes)", one_s, alone_s, 1.1),
            entry("sampling: 30 short readers x 32 tokens on the shared engine beside one 2,000-character text vs "
                  "without it (GPT-2 small shapes)", with_s, without_s, 1.4, most_groups=groups)]


def benchmarks() -> list[dict]:
    from lab.testing.browser import browser_missing

    results = [_generation(), _generation("openai-gpt", repeats=3), *_engine()]
    missing = browser_missing()
    if missing:
        results.append({"name": "sampling: streamed page, first token in Chromium", "project_s": None,
                        "reference_s": None, "ratio": None, "target": None, "ok": None, "reason": missing})
    else:
        t0 = time.perf_counter()
        results.append({**_first_token(), "wall_s": round(time.perf_counter() - t0, 3)})
    return results
