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


COURSE_ROWS = [(name, lang) for name in COURSE_DECODERS for lang in ("en", "pt")]  # the course table's rows
LONGEST = 128  # the page's "longest run" slider ends here: measured once at it, every shorter run is a cut of it


@st.cache_data(max_entries=64, show_spinner=False)
def _longest(model: str, text: str) -> dict:
    """lab.ceiling.ceiling's result up to LONGEST: the one forward pass a text and a model need."""
    return ceiling.ceiling(get_model(model), text, LONGEST)


@st.cache_data(max_entries=64, show_spinner=False)
def measured(model: str, text: str, max_n: int) -> dict:
    """lab.ceiling.ceiling's result for max_n (CeilingError on bad input) plus the half-lives of both curves. For
    max_n up to LONGEST it is the LONGEST measurement cut to max_n (observed(n) does not depend on max_n), so
    moving the slider runs no model."""
    r = ceiling.ceiling(get_model(model), text, max_n) if max_n > LONGEST else _longest(model, text)
    r = r | {"curve": r["curve"][:max_n]}
    observed = [c["observed"] if c["observed"] is not None else float("nan") for c in r["curve"]]
    return r | {"half_observed": ceiling.half_life(observed),
                "half_predicted": ceiling.half_life([c["predicted"] for c in r["curve"]])}


@st.cache_data(max_entries=8, show_spinner=False)
def course_table(max_n: int) -> list[dict]:
    """lab.ceiling.course_row for every course decoder on the unseen documentation in each language, measured once
    at LONGEST (course_row, so the slider runs no model); a half-life beyond max_n is left out (None)."""
    rows = [dict(course_row(name, lang)) for name, lang in COURSE_ROWS]
    for r in rows:
        for key in ("half_observed", "half_predicted"):
            r[key] = r[key] if r[key] is None or r[key] <= max_n else None
    return rows


@st.cache_data(max_entries=16, show_spinner=False)
def course_row(model: str, lang: str) -> dict:
    """One row of the course table: lab.ceiling.course_row on the unseen documentation in `lang`, at LONGEST (one
    row at a time, so the start-up warm-up can give way to readers between rows: ui/warmup.py)."""
    text = ceiling.unseen_texts()[lang][:PAGE_CHARS]
    return {**ceiling.course_row(get_model(model), text, LONGEST, K, measured(model, text, LONGEST)), "lang": lang}


@st.cache_data(max_entries=32, show_spinner=False)
def forced_view(model: str, text: str, position: int) -> dict:
    """The forced-error experiment at one position, with the text as readable runs and the token texts."""
    m = get_model(model)
    ids = encode(m.tokenizer, text)[:m.context]  # the experiment reads one context's worth
    r = ceiling.forced(m, ids, position, K)
    return r | {"ids": ids, "runs": readable(m.tokenizer, ids),
                "forced_text": m.tokenizer.decode([r["forced"]]), "original_text": m.tokenizer.decode([r["original"]])}
