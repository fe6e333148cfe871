"""What the logit-lens page draws beside its charts (chapter 05): the grid's window, the followed token's
numbers, the notes, titles and the per-floor table, and the text box's callback; ui.cached.lens computes.
"""

from __future__ import annotations

import streamlit as st

from lab import lens
from ui import url_state, widgets
from ui.draw.cuts import cut_note as _cut_note
from ui.i18n import lang, num, t
from ui.token_words import worded
from viz.format import markdown_literal
from viz.lens import GRID_MAX, prob_text


def reset_position() -> None:
    """Widget callback: a new text starts the followed position at its last token again."""
    url_state.forget("lens_position")


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


def hidden_text(runs: list[dict], lo: int, hi: int) -> str:
    """The text of the tokens lo..hi-1, read as text: whole runs (a character split over the edge counts whole),
    quoted for Markdown (viz.format.markdown_literal)."""
    return markdown_literal("".join(r["text"] for r in runs if r["start"] < hi and r["stop"] > lo))


def window_note(view: dict, start: int, stop: int) -> str | None:
    """What the grid's window leaves out, quoted: "The grid shows tokens 9–24 of 25 (numbered 0–24); hidden: the
    first 9 («O troféu não»)."; None when the grid shows every token."""
    n = len(view["ids"])
    stop = min(stop, n)
    if start == 0 and stop == n:
        return None
    before, after = hidden_text(view["runs"], 0, start), hidden_text(view["runs"], stop, n)
    en, pt = [], []
    if start:
        en.append(f"the first {num(start)} («{before}»)" if start > 1 else f"the first one («{before}»)")
        pt.append(f"os {num(start)} primeiros («{before}»)" if start > 1 else f"o primeiro («{before}»)")
    if stop < n:
        en.append(f"the last {num(n - stop)} («{after}»)" if n - stop > 1 else f"the last one («{after}»)")
        pt.append(f"os {num(n - stop)} últimos («{after}»)" if n - stop > 1 else f"o último («{after}»)")
    return t(f"The grid shows tokens {num(start)}–{num(stop - 1)} of {num(n)} (numbered 0–{num(n - 1)}); hidden: "
             f"{' and '.join(en)}. Move the slider to see them.",
             f"A grade mostra os tokens {num(start)}–{num(stop - 1)} de {num(n)} (numerados de 0 a {num(n - 1)}); "
             f"ficam de fora {' e '.join(pt)}. Mova o controle para vê-los.")


def names() -> dict:
    """Chart titles in the UI language (viz.lens.NAMES keys)."""
    return {"layer": t("layer", "camada"), "position": t("position", "posição"),
            "input": t("input token", "token de entrada"), "top": t("top token", "token do topo"),
            "p": t("probability", "probabilidade"), "embeddings": t("embeddings", "embeddings"),
            "rank": t("rank of the target", "posição do alvo no ranking"),
            "target_p": t("probability of the target", "probabilidade do alvo"), "guess": t("guess", "palpite")}


def cut_note(view: dict, m) -> str | None:
    """Why the page shows fewer tokens than the text has, or None."""
    return _cut_note(m, len(view["ids"]), view["n_total"], "context" if view["cut"] else None)


def norm_note(view: dict, m) -> str | None:
    """For GPT-1, which has no final layer norm: what its lens is instead; None for GPT-2."""
    if view["final_norm"]:
        return None
    return t(f"{m.name} (GPT-1) has no final layer norm (its blocks normalise after themselves): its lens is the "
             "unembedding alone.",
             f"{m.name} (GPT-1) não tem normalização final (seus blocos normalizam depois de si mesmos): a lente "
             "dele é só a projeção para o vocabulário (unembedding).")


def trace_columns() -> dict:
    """st.dataframe column_config for trace_table: probabilities in three significant figures (in Portuguese
    trace_table has written them already, with a decimal comma)."""
    if lang() == "pt":
        return {}
    return {c: st.column_config.NumberColumn(c, format="%.3g") for c in ("p", t("target p", "p do alvo"))}


def trace_table(view: dict, position: int):
    """Per floor at one position (floor 0 named as the charts name it, "embeddings"): the top guess, its
    probability, the target's rank and probability."""
    import pandas as pd

    def probs(p):  # Streamlit writes 0.5 whatever the language: Portuguese gets text, 0,5
        return [prob_text(float(x), "pt") for x in p] if lang() == "pt" else p

    floors = [lens.floor_name(i, t("embeddings", "embeddings")) for i in range(view["n_layer"] + 1)]
    guesses = [worded(s, marked=True) for s in view["top_tokens"][:, position, 0]]  # a lone byte in words
    return pd.DataFrame({t("layer", "camada"): floors, t("top guess", "palpite do topo"): guesses,
                         "p": probs(view["top_p"][:, position, 0]),
                         t("target rank", "ranking do alvo"): view["rank"][:, position],
                         t("target p", "p do alvo"): probs(view["p"][:, position])})
