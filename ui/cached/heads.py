"""What the heads page computes (chapters 04, 05): one cached result per (model, text or seed, options).

The model comes from ui.model_loader by name, never hashed; lab.heads does every number. Sorting the table or
switching the grid shown only re-slices these results: no new forward pass.
"""

from __future__ import annotations

import streamlit as st

from lab import heads, patching
from ui.model_loader import get_model


@st.cache_data(max_entries=16, show_spinner=False)
def copying(model_name: str, text: str | None, length: int, seed: int) -> dict:
    """lab.heads.copying on the repeated sequence (text None) or the reader's text; HeadsError for a bad text."""
    m = get_model(model_name)
    ids = None if text is None else heads.ids_of(m.tokenizer, text)
    return heads.copying(m.model, m.tokenizer, ids, length, seed)


@st.cache_data(max_entries=16, show_spinner=False)
def knockout(model_name: str, ids: tuple[int, ...], knocked: tuple[tuple[int, int], ...], mode: str) -> dict:
    """lab.heads.knockout of `knocked` on ids, and the grid of each head knocked out alone (cached apart: choosing
    other heads does not make it again)."""
    m = get_model(model_name)
    out = heads.knockout(m.model, list(ids), list(knocked), mode)
    return out | {"grid": grid(model_name, ids, mode)}


@st.cache_data(max_entries=16, show_spinner=False)
def grid(model_name: str, ids: tuple[int, ...], mode: str):
    """lab.heads.knockout_grid on ids (L x H): 12 s of one core on GPT-2 small's shapes for the default sequence."""
    return heads.knockout_grid(get_model(model_name).model, list(ids), mode)


@st.cache_data(max_entries=8, show_spinner=False)
def family(names: tuple[str, ...], length: int, seed: int) -> list[dict]:
    """Per model: layers, the loss on each copy and the best induction and previous-token scores."""
    rows = []
    for name in names:
        m = get_model(name)
        try:
            r = heads.copying(m.model, m.tokenizer, None, length, seed)
        except heads.HeadsError:  # neither GPT-2 nor GPT-1 (lab writes no forward for it): left out of the row set
            continue
        rows.append({"model": name, "layers": m.n_layer, "first": r["first_half"], "second": r["second_half"],
                     "induction": float(r["induction"].max()), "previous": float(r["previous"].max())})
    return rows


@st.cache_data(max_entries=16, show_spinner=False)
def patch(model_name: str, clean: str, corrupt: str, clean_answer: str | None, corrupt_answer: str | None) -> dict:
    """lab.patching.patching on the pair (its grids of the residual stream and of the heads); HeadsError for a bad
    pair."""
    m = get_model(model_name)
    return patching.patching(m.model, m.tokenizer, clean, corrupt, clean_answer, corrupt_answer)
