"""What the perplexity page computes (chapters 06, 08, 09): the surprisal views of evaluated models, made once per
(models, text, stride, language). The evaluations themselves (one per model, text and stride, with a progress
bar, kept process-wide) are ui.runs.perplexity's. ui.draw.perplexity draws.
"""

from __future__ import annotations

import streamlit as st

from lab import perplexity
from ui.runs.perplexity import stored
from viz import perplexity as viz

STRIDES = (0.125, 0.25, 0.5, 1.0)  # fractions of each model's context; the guide's default is 1/2
PAGE_CHARS = 6_000  # the unseen Debian text and the reader's own are cut here on the page (the CLI takes them whole)


@st.cache_data(max_entries=64, show_spinner=False)
def strip_html(name: str, text: str, fraction: float, language: str, joined: str) -> str:
    """The surprisal strip of one evaluated model (viz.perplexity.surprisal_html), made once per model, text,
    stride and language (keyed by those, never by the result's thousands of records); `joined`: the words for a
    character's tokens summed ("{n} tokens, summed")."""
    r = stored(name, text, fraction)
    return viz.surprisal_html(text, r["surprisal"], language, runs=r.get("runs"), joined=joined)


@st.cache_data(max_entries=64, show_spinner=False)
def compare_html(a: str, b: str, text: str, fraction: float, language: str) -> str:
    """Two evaluated models word by word (viz.perplexity.compare_html), made once per pair, text, stride, language."""
    n = len(text)
    words = viz.words_compare(text, perplexity.by_character(stored(a, text, fraction)["surprisal"], n),
                              perplexity.by_character(stored(b, text, fraction)["surprisal"], n))
    return viz.compare_html(text, words, language, (a, b))
