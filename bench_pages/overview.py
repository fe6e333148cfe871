"""Benchmark page for `python -m lab bench`: the all-heads overview of a saved attention array."""

import os

import numpy as np
import streamlit as st

from viz.attention import overview_png

st.title("overview")
st.image(overview_png(np.load(os.environ["BENCH_ATTENTION_NPY"])), caption="all heads")
