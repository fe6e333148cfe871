"""Mistakes the code page once let through (issues #40 and #33), each caught: the key-value tensor's axes named
wrongly, the cache view showing head 0 whatever head was chosen, a row's norm taken over the 64 columns shown, and
the cache timings "with" and "without" swapped. References: transformers' own tensors (forward hooks on
course-gpt2's c_attn and c_fc), its config, and a fake model whose step time the test sets."""

import time

import numpy as np
import pytest
import streamlit as st
import torch

from lab import gpt2, trace
from lab.models import load
from tests import pages
from tests.test_tokens_page import chart_data

PAGE = "app_pages/code.py"
TEXT = "The package manager installs the package and its dependencies."


@pytest.fixture(autouse=True, scope="module")
def empty_caches():
    from ui.model_loader import model_cache

    for clear in (model_cache.clear, st.cache_data.clear):
        clear()
    yield
    for clear in (model_cache.clear, st.cache_data.clear):
        clear()


def open_page(**params):
    return pages.open_page(PAGE, timeout=180, **params)


def hooked(module_of, layer: int) -> np.ndarray:
    """The output of one of transformers' own modules in course-gpt2's block `layer`, for TEXT: [T, width]."""
    m = load("course-gpt2")
    got = {}
    handle = module_of(m.model.transformer.h[layer]).register_forward_hook(lambda mod, a, out: got.update(out=out))
    try:
        with torch.no_grad():
            m.model(input_ids=torch.tensor([m.tokenizer(TEXT)["input_ids"]]))
    finally:
        handle.remove()
    return got["out"][0].numpy()


def shape_line(at) -> str:
    return next(m.value for m in at.markdown if " × " in m.value)


def test_the_cache_tensors_axes_are_named_as_transformers_lays_them_out():
    cfg = load("course-gpt2").model.config
    t = len(load("course-gpt2").tokenizer(TEXT)["input_ids"])
    d = cfg.n_embd // cfg.n_head
    # transformers keeps, per layer, keys and values of shape (batch, heads, tokens, head width)
    at = open_page(code_step="present")
    assert shape_line(at) == (f"**{cfg.n_layer} layers × 2 keys and values × {cfg.n_head} heads × {t} tokens × "
                              f"{d} numbers**")
    at.select_slider(key="code_step").set_value("attn.present").run()
    assert not at.exception, at.exception  # the layer's step once crashed the page (its name has an "h0." prefix)
    assert shape_line(at) == f"**2 keys and values × {cfg.n_head} heads × {t} tokens × {d} numbers**"


@pytest.mark.parametrize("step,layer", [("attn.present", 1), ("present", 3)])  # present: the last layer's shown
def test_the_cache_view_shows_the_chosen_head(step, layer):
    head = 5
    qkv = hooked(lambda block: block.attn.c_attn, layer)  # [T, 3 * n_embd]: q, k, v side by side
    width = qkv.shape[1] // 3
    d = width // load("course-gpt2").model.config.n_head
    k = qkv[:, width:2 * width].reshape(len(qkv), -1, d)[:, head]  # [T, d]
    v = qkv[:, 2 * width:].reshape(len(qkv), -1, d)[:, head]
    at = open_page(code_step=step, code_layer=str(layer), code_head=str(head))
    (chart,) = [c for c in at.get("vega_lite_chart") if '"field": "column"' in c.proto.spec]
    frame = chart_data(chart)
    shown = np.full((int(frame["row"].max()) + 1, int(frame["column"].max()) + 1), np.nan)
    shown[frame["row"], frame["column"]] = frame["value"]
    want = np.concatenate([k, v], axis=1)[:, :shown.shape[1]]  # each token's key, then its value
    other = np.concatenate([qkv[:, width:2 * width].reshape(len(qkv), -1, d)[:, 0],
                            qkv[:, 2 * width:].reshape(len(qkv), -1, d)[:, 0]], axis=1)[:, :shown.shape[1]]
    assert np.abs(want - other).max() > 1e-2  # head 0 would show
    assert np.abs(shown - want).max() < 1e-4


def test_row_norms_are_over_every_column_not_the_shown_ones():
    c_fc = hooked(lambda block: block.mlp.c_fc, 0)  # [T, 4 * n_embd]: 1,024 columns, 64 shown
    assert c_fc.shape[1] > trace.COLUMNS
    at = open_page(code_step="mlp.c_fc")
    (chart,) = [c for c in at.get("vega_lite_chart") if '"field": "norm"' in c.proto.spec]
    norms = chart_data(chart).sort_values("row")["norm"].to_numpy()
    assert norms == pytest.approx(np.linalg.norm(c_fc, axis=1), rel=1e-4)
    assert not norms == pytest.approx(np.linalg.norm(c_fc[:, :trace.COLUMNS], axis=1), rel=1e-2)


SECONDS_PER_TOKEN = 0.004


def test_kv_timings_put_the_cache_on_the_cheap_side(tiny_model_dirs, monkeypatch):
    """A fake model whose step costs SECONDS_PER_TOKEN per token it is given: one new token through the cache costs
    one token's time, the whole sequence again costs the sequence's. "with" must be the faster, by about the
    sequence's length."""
    real = gpt2.model

    def slow(w, ids, past=None, rec=None):
        time.sleep(SECONDS_PER_TOKEN * len(ids))
        return real(w, ids, past) if rec is None else real(w, ids, past, rec)

    monkeypatch.setattr(trace.gpt2, "model", slow)
    loaded = load(str(tiny_model_dirs["gpt2"]))
    ids = list(range(20, 40))
    rows = trace.kv_steps(loaded, ids, new=3, repeats=3)  # best of 3: one pause of a loaded machine (CI: a cached
    # step at 0.094 s against its 0.004 s of sleep) cannot decide it
    assert [r["tokens"] for r in rows] == [20, 21, 22, 23]
    for r in rows[1:]:
        assert r["with_cache"] >= SECONDS_PER_TOKEN  # at least its one token's sleep
        assert r["without_cache"] >= SECONDS_PER_TOKEN * r["tokens"]  # at least the whole sequence's sleep
        assert r["with_cache"] < r["without_cache"] / 4  # 1 token against 21-23
