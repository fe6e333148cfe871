"""Benchmark page for `python -m lab bench`: a bare perplexity page doing what the app's perplexity page computes on
its default text (the three course decoders, stride half the context), each result cached with st.cache_data and
drawn with plain st.dataframe and st.altair_chart. The reference for lab/benchmarks/pages.py."""

import altair as alt
import pandas as pd
import streamlit as st

from bench_pages import loaded
from lab import perplexity

MODELS = ["course-gpt2-1x64", "course-gpt2-2x128", "course-gpt2"]
TEXT = perplexity.unseen_texts()["en"][:6_000]  # the page's default text, cut where the page cuts it


@st.cache_data
def evaluate(name: str, text: str) -> dict:
    m = loaded.model(name)
    return perplexity.evaluate(m, text, max(1, m.context // 2))


st.title("bare perplexity")
results = [evaluate(name, TEXT) for name in MODELS]
table = pd.DataFrame([{k: r[k] for k in ("model", "tokens", "ppl", "bits_per_byte", "ppl_per_word")} for r in results])
st.dataframe(table)
st.altair_chart(alt.Chart(table).mark_bar().encode(x="model", y="bits_per_byte"))
st.dataframe(pd.DataFrame(results[-1]["surprisal"])[["token", "bits"]])
