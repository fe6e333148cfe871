"""UI language: English or Brazilian Portuguese, chosen in the sidebar, kept in the URL (?lang=pt)."""

import streamlit as st

from viz.format import number

LANGUAGES = {"en": "English", "pt": "Português (Brasil)"}


def lang() -> str:
    """The current UI language code ('en' or 'pt')."""
    code = st.session_state.get("ui_lang") or st.query_params.get("lang", "en")
    return code if code in LANGUAGES else "en"


def t(en: str, pt: str) -> str:
    """The string for the current UI language."""
    return pt if lang() == "pt" else en


def num(x) -> str:
    """A number as the current UI language writes it (1,024 / 1.024; 2.20 / 2,20)."""
    return number(x, lang())
