"""What the attention and causal-mask pages compute (chapters 03, 04 and 11); ui.draw.attention draws.

Forward passes are cached with st.cache_data, keyed by model name + text + options; the model comes
from ui.model_loader by name, never hashed. Widgets that only pick a layer, head or colour re-slice
these results without another forward pass. Nothing here draws: notes come back as strings.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from lab import attention, causal, models
from lab.models import hosting, hub
from lab.text import encode, readable_labels, token_texts
from ui.i18n import num, t
from ui.model_loader import get_model, model_cache
from viz import attention as viz

# The attention page keeps at most this many bytes of weights per text ([layer, head, T, T] float32,
# one layer at a time): GPT-2 small shows up to 721 tokens, GPT-2 XL 250.
MEMORY_BYTES = 300_000_000
BIG_ENCODER, SMALL_ENCODER = "roberta-base", "course-roberta"


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


def names() -> dict:
    """Chart and table titles in the UI language (viz.attention.NAMES keys)."""
    return {"query": "query", "key": "key", "query_axis": t("query (looking)", "query (quem olha)"),
            "key_axis": t("key (looked at)", "key (quem é olhado)"), "weight": t("weight", "peso"),
            "layer": t("layer", "camada"), "head": t("head", "cabeça"),
            "entropy": t("entropy (bits)", "entropia (bits)"), "previous": t("previous token", "token anterior"),
            "first": t("first token", "primeiro token"), "self": t("itself", "si mesmo"),
            "diff": t("max |difference|", "máx |diferença|"), "series": t("run", "execução")}


def cut_note(view: dict, m) -> str | None:
    """Why the attention page shows fewer tokens than the text has, or None."""
    n, total = len(view["ids"]), view["n_total"]
    if view["cut"] == "context":
        return t(f"{m.name} reads at most {num(m.context)} tokens: the first {num(n)} of {num(total)} are used.",
                 f"{m.name} lê no máximo {num(m.context)} tokens: usamos os primeiros {num(n)} de {num(total)}.")
    if view["cut"] == "memory":
        return t(f"First {num(n)} of {num(total)} tokens shown (memory): {m.n_layer} layers × {m.n_head} heads × "
                 f"{num(n)}² weights is as much as this page keeps.",
                 f"Primeiros {num(n)} de {num(total)} tokens mostrados (memória): {m.n_layer} camadas × {m.n_head} "
                 f"cabeças × {num(n)}² pesos é o máximo que esta página guarda.")
    return None


def default_encoder() -> str:
    """roberta-base when it is downloaded and fits in the model cache beside the models held now
    (so it never pushes the decoder out and back in on every rerun); otherwise the course encoder."""
    cache = model_cache()
    if not hub.is_available(BIG_ENCODER) or not hosting.offered(BIG_ENCODER):
        return SMALL_ENCODER
    if BIG_ENCODER in cache or cache.used_bytes + models.estimate_bytes(BIG_ENCODER) <= cache.budget:
        return BIG_ENCODER
    return SMALL_ENCODER


def trophy_series(decoder: str, encoder: str, a: str, b: str, word: str,
                  masks) -> tuple[dict[str, list[float]], str | None]:
    """Per-layer max |difference| of the word's row: the decoder with each mask setting, then the encoder;
    and a notice for the page when the encoder is not downloaded (its series is then left out), else None.

    Raises ValueError (TrophyError, a model that cannot load) for the page to show (ui.messages.text).
    """
    series = {}
    for on in masks:
        label = t("decoder, mask on", "decoder, com máscara") if on else t("decoder, mask off", "decoder, sem máscara")
        series[label] = trophy(decoder, a, b, word, on)["per_layer"]
    if not hub.is_available(encoder):
        return series, t(f"{encoder} is not downloaded here: pick it once in the sidebar to download it.",
                         f"{encoder} não está baixado aqui: escolha-o uma vez na barra lateral para baixá-lo.")
    series[f"encoder ({encoder})"] = trophy(encoder, a, b, word, False)["per_layer"]
    return series, None
