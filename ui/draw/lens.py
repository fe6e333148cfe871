"""What the logit-lens page draws beside its charts (chapter 05): the grid's window, the followed token's
numbers, and the text box's callback; ui.cached.lens computes.
"""

from __future__ import annotations

import streamlit as st

from lab import lens
from ui import widgets
from ui.cached.lens import window_note
from ui.i18n import lang, num, t
from viz.lens import GRID_MAX, prob_text


def reset_position() -> None:
    """Widget callback: a new text starts the followed position at its last token again."""
    for key in ("lens_position", "lens_position_saved"):
        st.session_state.pop(key, None)


def window(view: dict) -> slice:
    """The grid's window: every token when the text has at most GRID_MAX, else a slider for its first token
    and a note naming what it hides."""
    n, start = len(view["ids"]), 0
    if n > GRID_MAX:
        start = widgets.Slider("lens_start", t("Grid starts at token", "A grade começa no token"), 0, n - GRID_MAX,
                               0).draw()
    if note := window_note(view, start, start + GRID_MAX):
        st.caption(note)
    return slice(start, start + GRID_MAX)


def floor(layer: int | None) -> str:
    """A floor for a metric: "embeddings" for 0 (as the charts and the table name it), "layer 3", "—" for none."""
    if layer is None:
        return "—"
    return t("embeddings", "embeddings") if layer == 0 else t(f"layer {layer}", f"camada {layer}")


def metrics(rank, p) -> None:
    """Four numbers for the followed token: first layer at rank 1, the layer it settles, its rank and
    probability at the output."""
    first, settled = lens.first_and_settled(rank)
    c1, c2, c3, c4 = st.columns(4)
    c1.metric(t("First at rank 1", "Primeiro no topo"), floor(first))
    c2.metric(t("Settled from", "Estável a partir de"), floor(settled),
              help=t("The layer from which it stays at rank 1 up to the output.",
                     "A camada a partir da qual ele fica em 1º lugar até a saída."))
    c3.metric(t("Rank at the output", "Ranking na saída"), num(int(rank[-1])))
    c4.metric(t("Probability at the output", "Probabilidade na saída"), prob_text(float(p[-1]), lang()))
