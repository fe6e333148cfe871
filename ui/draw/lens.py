"""What the logit-lens page draws beside its charts (chapter 05): the followed token's numbers, and the
text box's callback; ui.cached.lens computes.
"""

from __future__ import annotations

import streamlit as st

from lab import lens
from ui.i18n import lang, num, t
from viz.lens import prob_text


def reset_position() -> None:
    """Widget callback: a new text starts the followed position at its last token again."""
    for key in ("lens_position", "lens_position_saved"):
        st.session_state.pop(key, None)


def metrics(rank, p) -> None:
    """Four numbers for the followed token: first layer at rank 1, the layer it settles, its rank and
    probability at the output."""
    first, settled = lens.first_and_settled(rank)
    c1, c2, c3, c4 = st.columns(4)
    c1.metric(t("First at rank 1: layer", "Primeiro no topo: camada"), "—" if first is None else str(first))
    c2.metric(t("Settled from layer", "Estável a partir da camada"), "—" if settled is None else str(settled),
              help=t("The layer from which it stays at rank 1 up to the output.",
                     "A camada a partir da qual ele fica em 1º lugar até a saída."))
    c3.metric(t("Rank at the output", "Ranking na saída"), num(int(rank[-1])))
    c4.metric(t("Probability at the output", "Probabilidade na saída"), prob_text(float(p[-1]), lang()))
