"""What the fossils page computes (chapter 00): `python -m lab fossils`' report for the models chosen, cached
with st.cache_data (configurations only: no model is loaded). ui.draw.fossils draws."""

from __future__ import annotations

import streamlit as st

from lab import fossils


@st.cache_data(max_entries=32, show_spinner=False)
def report(names: tuple[str, ...]) -> dict:
    """lab.fossils.report for these names, in this order (the CLI's JSON, as a value)."""
    return fossils.report(list(names))
