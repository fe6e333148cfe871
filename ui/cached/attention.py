"""What the attention and causal-mask pages compute (chapters 03, 04 and 11); ui.draw.attention draws.

Forward passes are cached with st.cache_data, keyed by model name + text + options; the model comes
from ui.model_loader by name, never hashed. Widgets that only pick a layer, head or colour re-slice
these results without another forward pass. Nothing here draws or words.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from lab import attention, causal
from lab.text import encode, readable_labels, token_texts
from ui.model_loader import get_model
from viz import attention as viz

# The attention page keeps at most this many bytes of weights per text ([layer, head, T, T] float32,
# one layer at a time): GPT-2 small shows up to 721 tokens, GPT-2 XL 250.
MEMORY_BYTES = 300_000_000


@st.cache_data(max_entries=16, show_spinner=False)
def attention_view(model_name: str, text: str, start: int = 0) -> dict:
    """One forward pass over text, processed layer by layer: tokens, per-head summaries, the
    all-heads overview PNG (bytes, for the page to show) and the weights of the heatmap window
    [start, start + HEATMAP_MAX). "tokens" are each token's own text (bytes as \\xc3); "labels" the axis
    labels, where the byte tokens of one character show that character (lab.text.readable_labels).

    The text is cut at the model's context and at MEMORY_BYTES of weights (`cut` says which).
    """
    m = get_model(model_name)
    ids = encode(m.tokenizer, text)
    fits = min(m.context, attention.max_tokens(m.n_layer, m.n_head, MEMORY_BYTES))
    n_total, ids = len(ids), ids[:fits]
    cut = None if n_total <= fits else "context" if fits == m.context else "memory"
    w = slice(start, start + viz.HEATMAP_MAX)
    side = max(0, min(len(ids) - start, viz.HEATMAP_MAX))
    window = np.empty((m.n_layer, m.n_head, side, side), np.float32)  # (L, H, W, W)
    tiles = np.empty((m.n_layer, m.n_head, viz.OVERVIEW_CELL, viz.OVERVIEW_CELL))  # (L, H, cell, cell)
    summary = []
    for i, layer in enumerate(attention.attention_by_layer(m.model, ids)):  # (H, T, T), one at a time
        window[i] = layer[:, w, w]
        tiles[i] = [viz.overview_tile(head) for head in layer]
        summary += attention.layer_summary(layer, i)
    return {"ids": ids, "n_total": n_total, "cut": cut, "tokens": token_texts(m.tokenizer, ids),
            "labels": readable_labels(m.tokenizer, ids), "summary": summary, "overview": viz.overview_image(tiles),
            "window": window, "split": attention.split(m.model, len(ids))}


@st.cache_data(max_entries=16, show_spinner=False)
def mask_view(model_name: str, text: str, causal_mask: bool) -> dict:
    """Scores and weights [L, H, T, T] and the next-token loss, with or without the causal mask,
    for at most HEATMAP_MAX tokens."""
    m = get_model(model_name)
    ids = encode(m.tokenizer, text)
    n_total, ids = len(ids), ids[:viz.HEATMAP_MAX]
    return {"ids": ids, "n_total": n_total, "tokens": token_texts(m.tokenizer, ids),
            "labels": readable_labels(m.tokenizer, ids), **causal.view(m.model, ids, causal=causal_mask)}


@st.cache_data(max_entries=32, show_spinner=False)
def trophy(model_name: str, a: str, b: str, word: str, causal_mask: bool) -> dict:
    """lab.causal.trophy on the named model (one batched forward pass)."""
    m = get_model(model_name)
    return causal.trophy(m.model, m.tokenizer, a, b, word, causal=causal_mask)
