"""What the analogies page computes (chapter 02); ui.draw.analogies draws it.

The scores of every token for one query are cached with st.cache_data, keyed by model name + words +
options that change the scores (method, leading space, mean of pieces). Widgets that only change the
view — exclusion, rarely trained rows, how many results, the expected word — re-slice those scores (view, cached
too: the query's scores hash in about a millisecond). No forward
pass runs on this page; the unit-normalised embedding matrix is cached per model by lab.embeddings.
"""

from __future__ import annotations

import streamlit as st

from lab import embeddings
from ui.model_loader import get_model

PICTURE_RESULTS = 5  # best answers drawn in the 2D picture (more crowd the labels)


@st.cache_data(max_entries=64, show_spinner=False)
def analogy_query(model_name: str, a: str, b: str, c: str, method: str, space: bool, mean_pieces: bool) -> dict:
    """lab.embeddings.analogy_scores on the named model: every token's score, the words' ids and pieces."""
    m = get_model(model_name)
    return embeddings.analogy_scores(m.model, m.tokenizer, a, b, c, method, space, mean_pieces)


@st.cache_data(max_entries=64, show_spinner=False)
def neighbour_query(model_name: str, word: str, space: bool, mean_pieces: bool) -> dict:
    """lab.embeddings.neighbour_scores on the named model."""
    m = get_model(model_name)
    return embeddings.neighbour_scores(m.model, m.tokenizer, word, space, mean_pieces)


@st.cache_data(max_entries=64, show_spinner=False)
def view(model_name: str, query: dict, k: int, exclude: bool, expected: str, space: bool,
         all_tokens: bool = False) -> dict:
    """The cached scores re-sliced: result rows, the expected word's ranks, the 2D picture, and what was
    left out as rarely trained (lab.learned; nothing with all_tokens)."""
    m = get_model(model_name)
    rare, left_out = embeddings.rare_rows(m.model, m.tokenizer, all_tokens)
    best = embeddings.top(query["scores"], k, (embeddings.excluded(query) if exclude else set()) | rare)
    exp = embeddings.expected_rank(m.tokenizer, query, expected, space, rare) if expected.strip() else None
    target = exp["ids"][0] if exp and exp["rank_all"] is not None else None
    pic = (embeddings.picture(m.model, query, best[:PICTURE_RESULTS], m.tokenizer, target)
           if len(query["vectors"]) == 3 else None)
    return {"results": embeddings.results(m.tokenizer, best), "expected": exp, "picture": pic, "left_out": left_out}
