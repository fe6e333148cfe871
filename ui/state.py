"""Widget values that outlive a page switch: Streamlit forgets a widget's value once its page is left."""

import streamlit as st


def persist(key: str, default) -> None:
    """Call just before drawing the widget `key`: save its value, or restore it on a return visit.

    On the first visit the widget starts at `default`. The copy lives under a plain key
    (`<key>_saved`) that Streamlit keeps while other pages run.
    """
    saved = f"{key}_saved"
    if key in st.session_state:
        st.session_state[saved] = st.session_state[key]
    else:
        st.session_state[key] = st.session_state.get(saved, default)
