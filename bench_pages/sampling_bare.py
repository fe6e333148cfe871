"""Benchmark page for `python -m lab bench`: a bare sampler doing what the sampling page computes after a seed
change (the streamed generation, its first step's candidates, comparison B: greedy, so cached whatever the seed,
as the page does), drawn with plain st.markdown and st.altair_chart. The reference for lab/benchmarks/pages.py;
?samp_seed= sets the seed, as on the app's page."""

import altair as alt
import pandas as pd
import streamlit as st

from bench_pages import loaded
from lab import sampling
from lab.text import encode

m = loaded.model("course-gpt2")
st.title("bare sampler")
prompt = sampling.PROMPTS["en"]
seed = st.number_input("Seed", 0, 2**31 - 1, int(st.query_params.get("samp_seed", 0)), key="samp_seed")
ids = encode(m.tokenizer, prompt, "prompt")
box, new, steps = st.container(key="samp_stream").empty(), [], []
for step in sampling.steps(m.model, ids, 32, 1.0, 50, 0.9, int(seed)):
    steps.append(step)
    new.append(step["id"])
    box.markdown(prompt + m.tokenizer.decode(new))
first = steps[0]["candidates"]
st.altair_chart(alt.Chart(pd.DataFrame({"id": first["id"], "p": first["p_raw"]})).mark_bar().encode(x="p", y="id:N"))
greedy = st.cache_data(lambda p: sampling.sample(m.model, m.tokenizer, p, 32, 0.0, 0, 1.0, 0)["text"])  # no seed
st.markdown(greedy(prompt))
