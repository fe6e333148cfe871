"""What the detector page computes (chapter 12): one text's per-token ranks and scores (st.cache_data per
model, observer, text and buckets) and the sample texts. ui.draw.detect draws.

The evaluation set's scores (drawn with a progress bar while they are computed) are ui.runs.detect's.
"""

from __future__ import annotations

import streamlit as st

from lab.detect import labelled_set as detect_set
from lab.detect import scoring as detect
from lab.text import readable
from ui.model_loader import get_model

BUCKET_CHOICES = {"10/100/1000": (10, 100, 1000), "5/50/500": (5, 50, 500), "1/10/100": (1, 10, 100),
                  "20/200/2000": (20, 200, 2000)}
PAGE_CHARS = 4_000  # the page scores a text's first 4,000 characters (the CLI takes it whole)
SAMPLES = ("human", *detect_set.SETTINGS)  # the project's own passage, then course-gpt2's continuations of it


@st.cache_data(max_entries=4, show_spinner=False)
def samples(language: str) -> dict[str, str]:
    """{option: text}: the set's first passage written by the project in `language`, and course-gpt2's
    continuations of its opening under each decoding setting."""
    texts = detect_set.load()["texts"]
    human = next(t for t in texts if t["source"] == "written-by-the-project" and t["lang"] == language)
    out = {"human": human["text"]}
    for t in texts:
        if t["pair"] == human["id"] and t.get("generator") == detect_set.GENERATORS[0]:
            out[t["setting"]] = t["text"]
    return out


@st.cache_data(max_entries=32, show_spinner=False)
def text_view(model: str, observer: str | None, text: str, buckets: tuple) -> dict:
    """lab.detect.scoring.detect's result for one text (DetectError on bad input), with its readable runs."""
    m = get_model(model)
    result = detect.detect(m, text, get_model(observer) if observer else None, buckets)
    return result | {"runs": readable(m.tokenizer, result["ids"])}
