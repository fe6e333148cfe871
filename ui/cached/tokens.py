"""What the tokens page computes (chapter 01): token counts cached with st.cache_data, keyed by text +
encoding (a click on the encoding radio or a page switch never recounts a long text), and the texts
its sample selector loads. ui.draw.tokens draws its sections."""

from __future__ import annotations

import streamlit as st

from lab import tokens


@st.cache_data(max_entries=32, show_spinner=False)
def costs(text: str) -> dict[str, dict]:
    """lab.tokens.token_costs of text, every encoding."""
    return tokens.token_costs(text)


@st.cache_data(max_entries=32, show_spinner=False)
def chips(name: str, text: str, limit: int) -> list[dict]:
    """Records of the first `limit` tokens of text (only those the page shows)."""
    return tokens.token_records(name, text, limit=limit)


@st.cache_data(max_entries=32, show_spinner=False)
def costliest(text: str, name: str, n: int = 10) -> list[dict]:
    """lab.tokens.costliest_words of text under one encoding."""
    return tokens.costliest_words(text, name, n)


@st.cache_data(max_entries=32, show_spinner=False)
def premium(en: str, pt: str) -> dict[str, float | None]:
    """{encoding: premium} of a Portuguese text over its English version."""
    return {name: p["premium"] for name, p in tokens.premium(en, pt).items()}


@st.cache_data(show_spinner=False)
def sample_premium() -> dict[str, float | None]:
    """{encoding: premium} of the bundled sample set."""
    return {name: p["premium"] for name, p in tokens.sample_premium().items()}


@st.cache_data(max_entries=16, show_spinner=False)
def sample(choice) -> tuple[str, str]:
    """(pt, en) for a choice of the page's sample selector: "course", "all" or a pair's index."""
    if choice == "course":
        passage = tokens.course_passage()
        return passage["pt"], passage["en"]
    if choice == "all":
        en, pt = tokens.sample_texts()
        return pt, en
    pair = tokens.sample_pairs()[choice]
    return pair["pt"], pair["en"]
