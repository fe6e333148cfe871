"""The sidebar every page shares: UI language (and, once the loader lands, the model picker)."""

import streamlit as st

from ui.i18n import LANGUAGES, lang


def draw() -> None:
    """Draw the shared sidebar widgets; their state survives page switches and lives in the URL."""
    with st.sidebar:
        current = lang()
        choice = st.radio("Language / Idioma", list(LANGUAGES), index=list(LANGUAGES).index(current),
                          format_func=LANGUAGES.get, key="ui_lang", horizontal=True)
        if st.query_params.get("lang") != choice:
            st.query_params["lang"] = choice
