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
from lab.text import encode, readable, token_texts, visible
from ui.i18n import lang, num, t
from ui.model_loader import get_model
from ui.token_words import worded
from viz.format import markdown_literal
from viz.lens import prob_text

TOP = 5  # guesses kept per cell: the grid's tooltip shows them all


@st.cache_data(max_entries=16, show_spinner=False)
def lens_view(model_name: str, text: str, word: str | None = None) -> dict:
    """The lens of text (cut at the model's context; `cut` says so) with every position's target:
    `word` (one token, as typed) or, for None, the model's final prediction at each position.
    `tokens` are each token's own text (a lone byte as \\xc3); `labels` the axis labels, read as text
    (axis_labels: "6 ã ·1/2", "7 ã ·2/2"); `runs` lab.text.readable's records.

    Raises LensError for a word that is not one token, before any forward pass.
    """
    m = get_model(model_name)
    target = None if word is None else lens.target_id(m.tokenizer, word)
    ids = encode(m.tokenizer, text)
    n_total, ids = len(ids), ids[:m.context]
    result = lens.lens(m.model, ids, top=TOP, target=target)
    names, runs = lens.token_names(m.tokenizer, result), readable(m.tokenizer, ids)
    top_tokens = np.vectorize(names.__getitem__, otypes=[object])(result["top_ids"])  # (L+1, T, K) str
    return {"ids": ids, "n_total": n_total, "cut": n_total > len(ids), "tokens": token_texts(m.tokenizer, ids),
            "labels": axis_labels(runs), "runs": runs,
            "n_layer": result["n_layer"], "top_tokens": top_tokens, "top_p": result["top_p"],
            "targets": [names[int(i)] for i in result["targets"]], "rank": result["rank"], "p": result["p"],
            "final_norm": lens.final_norm(m.model) is not None}


def axis_labels(runs: list[dict]) -> list[str]:
    """One label per token, read as text: its position, then its run's text with spaces, newlines and tabs made
    visible (␣ ↵ ⇥) and, for a character split over tokens, the part (" ·1/2"), as lab.text.readable_texts marks
    it (lab.text.labels over those would mark the space before "·" too)."""
    out = []
    for run in runs:
        n = run["stop"] - run["start"]
        out += [f"{run['start'] + k} {visible(run['text'])}" + (f" ·{k + 1}/{n}" if n > 1 else "") for k in range(n)]
    return out


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
