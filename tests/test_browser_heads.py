"""The heads page (issue 60) in a real Chromium, on the shipped course model, offline: in English and in Portuguese
it opens, draws its charts (the loss per token, the layers x heads grid) and shows the two copies' loss as
transformers computes it, written the reader's way; and knocking out a head chosen in the multiselect shows the loss
change that the same head zeroed by a hook on transformers' own c_proj gives.

Presentation mode (the copy view first on the projector's screen) is tests/test_browser_presentation.py's matrix,
which holds every page of the manifest, this one included; every step of lesson 05 on it is
tests/test_browser_projector.py's."""

import math
from pathlib import Path

import pytest

from tests.pages import CHART
from tests.streamlit_server import chromium, new_page, wait_idle

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "models" / "course-gpt2"
COPY, KNOCKOUT = ".st-key-view-copy", ".st-key-view-knockout"
WORDS = {"en": {"title": "Heads at work", "first": "First copy", "second": "Second copy",
                "knock": "Heads to knock out", "head": "layer 2 · head 3", "out": "Loss with these heads out"},
         "pt": {"title": "Cabeças em ação", "first": "Primeira cópia", "second": "Segunda cópia",
                "knock": "Cabeças a desligar", "head": "camada 2 · cabeça 3", "out": "Perda sem essas cabeças"}}


def oracle(knocked: tuple[int, int] | None = None) -> list[float]:
    """Loss in bits per position (predicting ids[1:]) of the page's default sequence under transformers' own
    GPT2LMHeadModel in float32, with head (layer, head)'s slice of c_proj's input zeroed by a forward pre-hook."""
    import torch
    from transformers import AutoTokenizer, GPT2LMHeadModel

    from lab import heads

    model = GPT2LMHeadModel.from_pretrained(MODEL, dtype=torch.float32, attn_implementation="eager").eval()
    ids = heads.repeated(model, AutoTokenizer.from_pretrained(MODEL))  # the input: 20 tokens, seed 0, twice
    if knocked is not None:
        layer, head = knocked
        width = model.config.n_embd // model.config.n_head

        def zero(_module, args):
            x = args[0].clone()
            x[..., head * width:(head + 1) * width] = 0  # the heads' outputs side by side, before c_proj
            return (x,)

        model.transformer.h[layer].attn.c_proj.register_forward_pre_hook(zero)
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0].double()
    nats = -torch.log_softmax(logits[:-1], -1).gather(1, torch.tensor(ids[1:])[:, None])[:, 0]
    return (nats / math.log(2)).tolist()


def written(x: float, lang: str) -> str:
    """Two decimals, the reader's decimal mark (by hand: no thousands here)."""
    s = f"{x:.2f}"
    return s.replace(".", ",") if lang == "pt" else s


def metric(page, view: str, label: str) -> tuple[str, str]:
    """(value, delta) of the metric labelled `label` inside `view`."""
    m = page.locator(f'{view} [data-testid="stMetric"]').filter(has_text=label).first
    delta = m.locator('[data-testid="stMetricDelta"]')
    return (m.locator('[data-testid="stMetricValue"]').inner_text().strip(),
            delta.inner_text().strip() if delta.count() else "")


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_the_page_draws_and_its_two_copies_are_transformers_loss(app_url, lang):
    bits, w = oracle(), WORDS[lang]
    first, second = sum(bits[:20]) / 20, sum(bits[20:]) / 20
    assert first - second > 2  # the course model copies (19.74 -> 14.20 bits, measured 2026-12-06)
    with chromium() as browser:
        page = new_page(browser, height=2400)
        page.goto(f"{app_url}/heads?lang={lang}")
        page.get_by_role("heading", name=w["title"]).wait_for(timeout=180_000)
        page.wait_for_function(f"[...document.querySelectorAll('{COPY} {CHART} canvas, {COPY} {CHART} svg')]"
                               ".filter(c => c.getBoundingClientRect().width > 50).length >= 2", timeout=180_000)
        wait_idle(page, 180_000)
        assert metric(page, COPY, w["first"])[0] == f"{written(first, lang)} bits"
        value, delta = metric(page, COPY, w["second"])
        assert value == f"{written(second, lang)} bits" and written(second - first, lang) in delta
        assert page.locator(f'{KNOCKOUT} {CHART}').count() == 1  # the one-head-at-a-time grid
        assert page.locator('[data-testid="stException"]').count() == 0 and page.dialogs == []


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_a_head_chosen_shows_its_knockout_loss_change(app_url, lang):
    clean, knocked, w = oracle(), oracle((2, 3)), WORDS[lang]
    mean_knocked = sum(knocked) / len(knocked)
    change = mean_knocked - sum(clean) / len(clean)
    assert change > 0.3  # the previous-token head matters (0.64 bits per token, measured 2026-12-06)
    with chromium() as browser:
        page = new_page(browser, height=2400)
        page.goto(f"{app_url}/heads?lang={lang}")
        page.locator(f'{KNOCKOUT} [data-testid="stMetric"]').wait_for(timeout=180_000)
        wait_idle(page, 180_000)
        assert metric(page, KNOCKOUT, w["out"])[1].startswith(written(0, lang))  # nothing knocked out yet
        box = page.locator(".st-key-heads_knock input")
        box.click()
        box.fill(w["head"])
        page.get_by_role("option", name=w["head"]).first.click()
        page.keyboard.press("Escape")
        shown = (written(mean_knocked, lang), written(change, lang))
        page.wait_for_function(
            "([view, value]) => [...document.querySelectorAll(view + ' [data-testid=\"stMetricValue\"]')]"
            ".some(e => e.textContent.startsWith(value))", arg=[KNOCKOUT, shown[0]], timeout=120_000)
        wait_idle(page, 120_000)
        value, delta = metric(page, KNOCKOUT, w["out"])
        assert (value, delta.split()[-2:]) == (f"{shown[0]} bits", [shown[1], "bits"]), (value, delta)
        assert "heads_knock=2.3" in page.url  # the choice travels in the link
        assert page.locator('[data-testid="stException"]').count() == 0 and page.dialogs == []
