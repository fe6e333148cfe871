"""Benchmark page for `python -m lab bench`: a bare Streamlit page, the render-time reference."""

import streamlit as st

st.title("bare")
