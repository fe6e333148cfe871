"""Cached forward passes for the attention and causal-mask pages (st.cache_data, keyed by
model name + text + options). The model comes from ui.model_loader by name, never hashed; widgets
that only pick a layer or head re-slice these results without another forward pass.
"""

from __future__ import annotations

import streamlit as st

from lab import attention, causal
from ui.model_loader import get_model
from viz import attention as viz


@st.cache_data(max_entries=16, show_spinner=False)
def attention_view(model_name: str, text: str, start: int = 0) -> dict:
    """One forward pass over text (cut at the model's context): tokens, per-head summaries, the
    all-heads overview PNG and the weights of the heatmap window [start, start + HEATMAP_MAX)."""
    m = get_model(model_name)
    ids = attention.encode(m.tokenizer, text)
    n_total, ids = len(ids), ids[: m.context]
    att = attention.attention(m.model, ids)  # (L, H, T, T)
    window = slice(start, start + viz.HEATMAP_MAX)
    return {"ids": ids, "n_total": n_total, "tokens": attention.token_texts(m.tokenizer, ids),
            "summary": attention.head_summary(att), "overview": viz.overview_png(att),
            "window": att[:, :, window, window].copy(), "split": attention.split(m.model, len(ids))}


@st.cache_data(max_entries=16, show_spinner=False)
def mask_view(model_name: str, text: str, causal_mask: bool) -> dict:
    """Scores and weights [L, H, T, T] and the next-token loss, with or without the causal mask,
    for at most HEATMAP_MAX tokens."""
    m = get_model(model_name)
    ids = attention.encode(m.tokenizer, text)
    n_total, ids = len(ids), ids[:viz.HEATMAP_MAX]
    return {"ids": ids, "n_total": n_total, "tokens": attention.token_texts(m.tokenizer, ids),
            **causal.view(m.model, ids, causal=causal_mask)}


@st.cache_data(max_entries=32, show_spinner=False)
def trophy(model_name: str, a: str, b: str, word: str, causal_mask: bool) -> dict:
    """lab.causal.trophy on the named model (one batched forward pass)."""
    m = get_model(model_name)
    return causal.trophy(m.model, m.tokenizer, a, b, word, causal=causal_mask)
