"""What the ceiling page computes (chapter 16): the compounding-error measurement per (model, text, longest
run) and the forced-error experiment per (model, text, position), cached with st.cache_data; models come
from ui.model_loader by name, never hashed. ui.draw.ceiling draws."""

from __future__ import annotations

import streamlit as st

from lab import ceiling
from lab.text import encode, readable
from ui.model_loader import get_model

COURSE_DECODERS, K = ceiling.COURSE_DECODERS, ceiling.K  # the course table's models; tokens after a forced one
PAGE_CHARS = ceiling.COURSE_CHARS  # the page measures a text's first 6,000 characters (the CLI takes it whole)


@st.cache_data(max_entries=64, show_spinner=False)
def measured(model: str, text: str, max_n: int) -> dict:
    """lab.ceiling.ceiling's result (CeilingError on bad input), half-lives included."""
    return ceiling.ceiling(get_model(model), text, max_n)


@st.cache_data(max_entries=8, show_spinner=False)
def course_table(max_n: int) -> list[dict]:
    """lab.ceiling.course_row for every course decoder on the unseen documentation in each language."""
    texts = ceiling.unseen_texts()
    return [{**ceiling.course_row(get_model(name), text[:PAGE_CHARS], max_n, K,
                                  measured(name, text[:PAGE_CHARS], max_n)), "lang": lang}
            for name in COURSE_DECODERS for lang, text in texts.items()]


@st.cache_data(max_entries=32, show_spinner=False)
def forced_view(model: str, text: str, position: int) -> dict:
    """The forced-error experiment at one position, with the text as readable runs and the token texts."""
    m = get_model(model)
    ids = encode(m.tokenizer, text)[:m.context]  # the experiment reads one context's worth
    r = ceiling.forced(m, ids, position, K)
    return r | {"ids": ids, "runs": readable(m.tokenizer, ids),
                "forced_text": m.tokenizer.decode([r["forced"]]), "original_text": m.tokenizer.decode([r["original"]])}
