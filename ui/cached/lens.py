"""What the logit-lens page computes (chapter 05); ui.draw.lens draws beside the page.

One forward pass per (model, text, target word), cached with st.cache_data; the model comes from
ui.model_loader by name, never hashed. Without a typed word the target at every position is the
model's own final prediction there, so picking a position or moving the grid's window only
re-slices the cached result: no new forward pass.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from lab import lens
from lab.text import encode, token_texts
from ui.i18n import lang, num, t
from ui.model_loader import get_model
from viz.lens import prob_text, shown

TOP = 5  # guesses kept per cell: the grid's tooltip shows them all


@st.cache_data(max_entries=16, show_spinner=False)
def lens_view(model_name: str, text: str, word: str | None = None) -> dict:
    """The lens of text (cut at the model's context; `cut` says so) with every position's target:
    `word` (one token, as typed) or, for None, the model's final prediction at each position.

    Raises LensError for a word that is not one token, before any forward pass.
    """
    m = get_model(model_name)
    target = None if word is None else lens.target_id(m.tokenizer, word)
    ids = encode(m.tokenizer, text)
    n_total, ids = len(ids), ids[:m.context]
    result = lens.lens(m.model, ids, top=TOP, target=target)
    names = lens.token_names(m.tokenizer, result)
    top_tokens = np.vectorize(names.__getitem__, otypes=[object])(result["top_ids"])  # (L+1, T, K) str
    return {"ids": ids, "n_total": n_total, "cut": n_total > len(ids), "tokens": token_texts(m.tokenizer, ids),
            "n_layer": result["n_layer"], "top_tokens": top_tokens, "top_p": result["top_p"],
            "targets": [names[int(i)] for i in result["targets"]], "rank": result["rank"], "p": result["p"],
            "final_norm": lens.final_norm(m.model) is not None}


def names() -> dict:
    """Chart titles in the UI language (viz.lens.NAMES keys)."""
    return {"layer": t("layer", "camada"), "position": t("position", "posição"),
            "input": t("input token", "token de entrada"), "top": t("top token", "token do topo"),
            "p": t("probability", "probabilidade"), "embeddings": t("embeddings", "embeddings"),
            "rank": t("rank of the target", "posição do alvo no ranking"),
            "target_p": t("probability of the target", "probabilidade do alvo"), "guess": t("guess", "palpite")}


def target_word(word: str, new_word: bool) -> str | None:
    """The token to follow as the reader typed it, a space in front when it starts a new word; None when empty."""
    if not word.strip():
        return None
    return " " + word if new_word and not word[0].isspace() else word


def cut_note(view: dict, m) -> str | None:
    """Why the page shows fewer tokens than the text has, or None."""
    if not view["cut"]:
        return None
    n, total = len(view["ids"]), view["n_total"]
    return t(f"{m.name} reads at most {num(m.context)} tokens: the first {num(n)} of {num(total)} are used.",
             f"{m.name} lê no máximo {num(m.context)} tokens: usamos os primeiros {num(n)} de {num(total)}.")


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
    """Per layer at one position: the top guess, its probability, the target's rank and probability."""
    import pandas as pd

    def probs(p):  # Streamlit writes 0.5 whatever the language: Portuguese gets text, 0,5
        return [prob_text(float(x), "pt") for x in p] if lang() == "pt" else p

    return pd.DataFrame({t("layer", "camada"): range(view["n_layer"] + 1),
                         t("top guess", "palpite do topo"): [shown(s) for s in view["top_tokens"][:, position, 0]],
                         "p": probs(view["top_p"][:, position, 0]),
                         t("target rank", "ranking do alvo"): view["rank"][:, position],
                         t("target p", "p do alvo"): probs(view["p"][:, position])})
